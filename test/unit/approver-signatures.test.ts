/**
 * Approvers' own signatures, without Temporal: the statement, signing and checking, the directory's keys and who must
 * sign, and how the worker's judgement and a receipt count approvals of people who must sign.
 */
import { ApproversDirectory, ApproversDirectoryError } from '../../src/records/directory';
import {
  checkApproverSignature,
  generateApproverKey,
  signStatement,
  statementOf,
  type ApproverSignature,
} from '../../src/records/approver-signatures';
import { canonicalJson, digestOf } from '../../src/records/canonical';
import { exportReceipt, verifyReceipt } from '../../src/records/receipt';
import type { DecisionStore, SignedDecisionRecord } from '../../src/contract/decision-records';
import { judgeApprovals } from '../../src/records/verify';
import { DecisionChallenges } from '../../src/approvals/decision-challenges';
import { bodyOf, chainOf, invoiceShown, testSigner, type Step } from '../helpers/decision-records';

const TASK = 'invoice-1';
const carol = generateApproverKey();
const dave = generateApproverKey();

function directory(extra: Record<string, unknown> = {}, carolEntry: Record<string, unknown> = {}) {
  return ApproversDirectory.of({
    people: [
      { name: 'carol', principals: ['carol', 'oauth:carol'], roles: ['ap-approver'], keys: [{ ed25519: carol.publicKey }], ...carolEntry },
      { name: 'dave', principals: ['dave'], roles: ['ap-approver'], keys: [{ ed25519: dave.publicKey }] },
      { name: 'olga', principals: ['olga'], roles: [] },
    ],
    ...extra,
  });
}

/** carol's (or `key`'s) signature of the step it is put into, at its place `seq` of the chain. */
function signedBy(key: { privateKeyPem: string }, step: Step, seq = 1): ApproverSignature {
  const body = bodyOf(TASK, seq, null, step);
  return signStatement(statementOf(body), key.privateKeyPem);
}

const approveBy = (who: string): Step => ({ decision: 'approve', by: who });
const expectation = { taskId: TASK, run: 'run-1', key: 'approval', subject: invoiceShown(), required: 1, requester: 'sam' };

test('the statement names the task, its run, the question, the subject digest, the decision and the challenge; its canonical text is fixed', () => {
  const body = bodyOf(TASK, 3, 'sha256:x', { decision: 'delegate', delegatedTo: 'dave' });
  const statement = statementOf(body);
  expect(statement).toEqual({
    format: 'temporal-mcp-tasks/approver-statement',
    v: 2,
    taskId: TASK,
    run: 'run-1',
    key: 'approval',
    subject: digestOf(invoiceShown()),
    decision: 'delegate',
    delegatedTo: 'dave',
  });
  expect(statementOf(body, { version: 2, challenge: 'abc.def' })).toEqual({ ...statement, challenge: 'abc.def' });
  // Version 1, as signatures were made before statements named the run.
  const { run: _run, ...unbound } = statement;
  expect(statementOf(body, { version: 1 })).toEqual({ ...unbound, v: 1 });
  // Neither the chain position nor the time is signed: the approver signs before the record exists.
  expect(canonicalJson(statement)).not.toContain('seq');
  expect(canonicalJson(statementOf(bodyOf(TASK, 9, 'sha256:y', { decision: 'delegate', delegatedTo: 'dave' })))).toBe(
    canonicalJson(statement),
  );
});

test('a signature checks out under its person’s listed key only, and for exactly what it was made over', () => {
  const keyring = directory().signatures();
  const signature = signedBy(carol, approveBy('carol'));
  const body = { ...bodyOf(TASK, 1, null, approveBy('carol')), approverSignature: signature };
  expect(checkApproverSignature(body, 'carol', keyring)).toEqual({ status: 'valid', keyId: carol.keyId, version: 2 });
  // A principal of carol's is carol.
  expect(checkApproverSignature(body, 'oauth:carol', keyring)).toEqual({ status: 'valid', keyId: carol.keyId, version: 2 });
  // dave cannot use carol's signature, nor carol's key stand for dave.
  expect(checkApproverSignature(body, 'dave', keyring)).toEqual({ status: 'unknown-key', keyId: carol.keyId });
  // Another decision, another subject, another task, another run of the same task id: the same signature does not verify.
  for (const changed of [
    { ...body, decision: 'reject' as const },
    { ...body, subject: digestOf(invoiceShown(99)) },
    { ...body, taskId: 'invoice-2' },
    { ...body, run: 'run-2' },
  ]) {
    expect(checkApproverSignature(changed, 'carol', keyring)).toMatchObject({ status: 'invalid' });
  }
  expect(checkApproverSignature({ ...body, approverSignature: { ...signature, alg: 'rsa' } as never }, 'carol', keyring)).toMatchObject({
    status: 'invalid',
  });
  expect(checkApproverSignature(bodyOf(TASK, 1, null, approveBy('carol')), 'carol', keyring)).toEqual({ status: 'absent' });
});

test('who must sign: everyone, the people marked, or holders of a role (listed, or as the record says)', () => {
  expect(directory().signatures().mustSign('carol', [])).toBe(false);
  expect(directory({}, { mustSign: true }).signatures().mustSign('oauth:carol', [])).toBe(true);
  const byRole = directory({ mustSignRoles: ['ap-approver'] }).signatures();
  expect(byRole.mustSign('dave', [])).toBe(true);
  expect(byRole.mustSign('olga', [])).toBe(false);
  expect(byRole.mustSign('stranger', ['ap-approver'])).toBe(true);
  expect(directory({ mustSign: true }).signatures().mustSign('stranger', [])).toBe(true);
});

test('the directory refuses a key that is not an Ed25519 public key, a key listed twice, and someone who must sign without a key', () => {
  expect(() => ApproversDirectory.of({ people: [{ name: 'x', keys: [{ ed25519: 'not-a-key' }] }] })).toThrow(
    /people\[0\] \("x"\)\.keys\.0\.ed25519: use the raw 32-byte Ed25519 public key in base64url/,
  );
  expect(() =>
    ApproversDirectory.of({
      people: [
        { name: 'x', keys: [{ ed25519: carol.publicKey }] },
        { name: 'y', keys: [{ ed25519: carol.publicKey }] },
      ],
    }),
  ).toThrow(/people\[1\] \("y"\)\.keys\.0\.ed25519: this key is listed by people\[0\] \("x"\) too/);
  expect(() => ApproversDirectory.of({ people: [{ name: 'x', mustSign: true }] })).toThrow(ApproversDirectoryError);
  expect(() => ApproversDirectory.of({ people: [{ name: 'x', mustSign: true }] })).toThrow(/a person who must sign needs a key/);
});

describe('who may count: only people the directory lists, whom the question addressed', () => {
  const { signer, keys } = testSigner();
  const keyring = directory().signatures();
  const asked = { roles: ['ap-approver'] };
  // Records a replica holding the bridge key can write: the record says what it likes of the approver.
  const zed = { principal: 'zed', person: 'zed', auth: 'token', roles: ['ap-approver'] };

  test('an approval by someone the directory does not list never counts, whatever roles its record claims', () => {
    const records = chainOf(TASK, signer, [{ decision: 'approve', by: zed }]);
    expect(judgeApprovals(records, { ...expectation, audience: asked, signatures: keyring })).toEqual({
      ok: false,
      reason: expect.stringContaining('the approval by zed (principal zed) does not count: the question did not address them'),
    });
    expect(judgeApprovals(records, { ...expectation, signatures: keyring })).toEqual({
      ok: false,
      reason: expect.stringContaining('the approvers directory does not list them'),
    });
    // Without a directory nothing says who zed is: the record's word is all there is.
    expect(judgeApprovals(records, { ...expectation, audience: asked })).toMatchObject({ ok: true });
  });

  test('a listed person counts only when the question addresses them: by a role the directory gives them, or by name', () => {
    // olga is listed, without the role; her record claims it.
    const olga = chainOf(TASK, signer, [
      { decision: 'approve', by: { principal: 'olga', person: 'olga', auth: 'token', roles: ['ap-approver'] } },
    ]);
    expect(judgeApprovals(olga, { ...expectation, audience: asked, signatures: keyring })).toMatchObject({ ok: false });
    expect(judgeApprovals(olga, { ...expectation, audience: { principals: ['olga'] }, signatures: keyring })).toMatchObject({ ok: true });
    // carol holds the role in the directory; through another principal of hers too.
    for (const principal of ['carol', 'oauth:carol']) {
      const records = chainOf(TASK, signer, [{ decision: 'approve', by: { principal, person: 'carol', auth: 'token', roles: [] } }]);
      expect(judgeApprovals(records, { ...expectation, audience: asked, signatures: keyring })).toMatchObject({
        ok: true,
        approvers: [expect.objectContaining({ person: 'carol' })],
      });
    }
    // Excluded by the question: not counted.
    const carols = chainOf(TASK, signer, [approveBy('carol')]);
    expect(judgeApprovals(carols, { ...expectation, audience: { ...asked, exclude: ['carol'] }, signatures: keyring })).toMatchObject({
      ok: false,
    });
  });

  test('a receipt read with the directory counts no approval by someone it does not list', async () => {
    const records = chainOf(TASK, signer, [
      { decision: 'approve', by: zed },
      { decision: 'close', by: zed, outcome: 'accepted', required: 1 },
    ]);
    const store: DecisionStore = { records: async () => records, append: async () => 'appended', location: () => 'a test store' } as never;
    const receipt = await exportReceipt(store, TASK);
    const report = verifyReceipt(receipt, keys, keyring);
    expect(report.questions[0]).toMatchObject({
      standing: 'open',
      verdict: expect.stringContaining('zed (principal zed), whom the approvers directory does not list'),
    });
    // Without the directory the bridge's word stands.
    expect(verifyReceipt(receipt, keys).questions[0]).toMatchObject({ standing: 'approved' });
  });
});

describe('the worker’s judgement before an effect', () => {
  const { signer } = testSigner();
  const keyring = directory({ mustSignRoles: ['ap-approver'] }).signatures();

  test('an approval of someone who must sign counts with their signature, and names the key', () => {
    const records = chainOf(TASK, signer, [{ ...approveBy('carol'), approverSignature: signedBy(carol, approveBy('carol')) }]);
    expect(judgeApprovals(records, { ...expectation, signatures: keyring })).toEqual({
      ok: true,
      approvers: [expect.objectContaining({ person: 'carol', signedWith: carol.keyId })],
    });
  });

  test('with the bridge’s signature alone, with another person’s key, or with a signature that does not verify, it does not count', () => {
    const alone = chainOf(TASK, signer, [approveBy('carol')]);
    const judged = judgeApprovals(alone, { ...expectation, signatures: keyring });
    expect(judged).toEqual({
      ok: false,
      reason: expect.stringContaining("carol must sign approvals with their own key, and it bears the bridge's signature alone"),
    });
    // Without the directory the same records pass: the directory is what asks for the person's own key.
    expect(judgeApprovals(alone, expectation)).toMatchObject({ ok: true });

    const davesKey = chainOf(TASK, signer, [{ ...approveBy('carol'), approverSignature: signedBy(dave, approveBy('carol')) }]);
    expect(judgeApprovals(davesKey, { ...expectation, signatures: keyring })).toEqual({
      ok: false,
      reason: expect.stringContaining(`signed with key ${dave.keyId}, which the approvers directory does not list for carol`),
    });

    const forOther = chainOf(TASK, signer, [
      { ...approveBy('carol'), approverSignature: signedBy(carol, { decision: 'reject', by: 'carol' }) },
    ]);
    expect(judgeApprovals(forOther, { ...expectation, signatures: keyring })).toEqual({
      ok: false,
      reason: expect.stringContaining("its approver signature is not valid under carol's key"),
    });
    // A signature that does not verify never counts, even for someone who need not sign.
    const daveForged = chainOf(TASK, signer, [
      { ...approveBy('dave'), approverSignature: signedBy(dave, { decision: 'reject', by: 'dave' }) },
    ]);
    expect(directory().signatures().mustSign('dave', ['ap-approver'])).toBe(false);
    expect(judgeApprovals(daveForged, { ...expectation, signatures: directory().signatures() })).toEqual({
      ok: false,
      reason: expect.stringContaining("its approver signature is not valid under dave's key"),
    });
  });
});

describe('a receipt', () => {
  const { signer, keys } = testSigner();
  const keyring = directory({ mustSignRoles: ['ap-approver'] }).signatures();
  const close: Step = { decision: 'close', outcome: 'accepted', required: 1 };
  const storeOf = (records: SignedDecisionRecord[]): DecisionStore => ({
    records: async () => records,
    append: async () => 'appended',
    location: () => 'memory',
    close: async () => undefined,
  });

  test('approved with the person’s own signature; not approved with the bridge’s alone; unchecked without the directory', async () => {
    const signed = await exportReceipt(
      storeOf(chainOf(TASK, signer, [{ ...approveBy('carol'), approverSignature: signedBy(carol, approveBy('carol')) }, close])),
      TASK,
    );
    const report = verifyReceipt(signed, keys, keyring);
    expect(report).toMatchObject({ ok: true, approverKeysChecked: true });
    expect(report.questions[0]).toMatchObject({ standing: 'approved', approvers: [{ person: 'carol', signedWith: carol.keyId }] });
    expect(report.questions[0].decisions[0].ownSignature).toEqual({ status: 'valid', keyId: carol.keyId, statement: 2 });

    const alone = await exportReceipt(storeOf(chainOf(TASK, signer, [approveBy('carol'), close])), TASK);
    const refused = verifyReceipt(alone, keys, keyring);
    expect(refused.ok).toBe(true);
    expect(refused.questions[0]).toMatchObject({
      standing: 'open',
      verdict: expect.stringMatching(/^not approved: carol must sign approvals/),
    });
    expect(refused.questions[0].decisions[0]).toMatchObject({ mustSign: true });
    expect(verifyReceipt(alone, keys).questions[0].standing).toBe('approved');
    expect(verifyReceipt(signed, keys).questions[0].decisions[0].ownSignature).toEqual({ status: 'unchecked', keyId: carol.keyId });
  });

  test('a person’s signature that does not verify makes the receipt INVALID, even re-signed by the bridge', async () => {
    const forged = chainOf(TASK, signer, [
      { ...approveBy('carol'), approverSignature: signedBy(carol, { decision: 'reject', by: 'carol' }) },
      close,
    ]);
    const report = verifyReceipt(await exportReceipt(storeOf(forged), TASK), keys, keyring);
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual([
      `record 1 (approve by carol) carries a signature of theirs that is not valid under key ${carol.keyId}: it was altered or forged`,
    ]);
  });
});

describe('statements bound to the run and to a one-time challenge', () => {
  const keyring = directory().signatures();

  test('a version 1 signature (made before statements named the run) still verifies, as version 1', () => {
    const body = bodyOf(TASK, 1, null, approveBy('carol'));
    const old = signStatement(statementOf(body, { version: 1 }), carol.privateKeyPem);
    expect(old).not.toHaveProperty('v');
    expect(checkApproverSignature({ ...body, approverSignature: old }, 'carol', keyring)).toEqual({
      status: 'valid',
      keyId: carol.keyId,
      version: 1,
    });
  });

  test('a signature made for run 1 does not verify for a new workflow under the same task id', () => {
    const first = bodyOf(TASK, 1, null, approveBy('carol'));
    const signature = signStatement(statementOf(first), carol.privateKeyPem);
    expect(checkApproverSignature({ ...first, approverSignature: signature }, 'carol', keyring)).toMatchObject({ status: 'valid' });
    expect(checkApproverSignature({ ...first, run: 'run-2', approverSignature: signature }, 'carol', keyring)).toMatchObject({
      status: 'invalid',
    });
  });

  test('the challenge is part of what is signed: another challenge put beside the signature does not verify', () => {
    const body = bodyOf(TASK, 1, null, approveBy('carol'));
    const signature = signStatement(statementOf(body, { version: 2, challenge: 'aaaa.bbbb' }), carol.privateKeyPem);
    expect(signature).toMatchObject({ v: 2, challenge: 'aaaa.bbbb' });
    expect(checkApproverSignature({ ...body, approverSignature: signature }, 'carol', keyring)).toMatchObject({
      status: 'valid',
      version: 2,
    });
    const swapped = { ...signature, challenge: 'cccc.dddd' };
    expect(checkApproverSignature({ ...body, approverSignature: swapped }, 'carol', keyring)).toMatchObject({ status: 'invalid' });
    // A challenge on a version 1 signature is no signature at all.
    expect(checkApproverSignature({ ...body, approverSignature: { ...signature, v: undefined } as never }, 'carol', keyring)).toMatchObject(
      {
        status: 'invalid',
      },
    );
  });

  test("challenges: the bridge's own, for one person's decision on one question of one run, taken once, within their time", async () => {
    const used = new Set<string>();
    const useOnce = async (id: string) => (used.has(id) ? false : (used.add(id), true));
    const challenges = new DecisionChallenges(Buffer.alloc(32, 7), useOnce);
    const scope = { taskId: TASK, run: 'run-1', key: 'approval', person: 'carol' };
    const challenge = challenges.issue(scope);
    // Issued for carol's decision: another person, run, question or task cannot take it (the arguments substituted).
    for (const other of [{ person: 'dave' }, { run: 'run-2' }, { key: 'other' }, { taskId: 'invoice-2' }]) {
      expect(await challenges.take(challenge, { ...scope, ...other })).toMatch(/issued for another decision/);
    }
    expect(await challenges.take(challenge, scope)).toBeUndefined();
    // Replayed: refused.
    expect(await challenges.take(challenge, scope)).toMatch(/used already/);
    // Not the bridge's (another key), altered, or expired.
    expect(await new DecisionChallenges(Buffer.alloc(32, 8), useOnce).take(challenges.issue(scope), scope)).toMatch(
      /not one this server issued/,
    );
    const fresh = challenges.issue(scope);
    expect(await challenges.take(`${fresh.slice(0, -2)}xx`, scope)).toMatch(/not one this server issued/);
    expect(await challenges.take(challenges.issue(scope, Date.now() - 31 * 60_000), scope)).toMatch(/expired/);
  });
});

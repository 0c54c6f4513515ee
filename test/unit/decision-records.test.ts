/**
 * Decision records without Temporal: canonical JSON, signing and checking, the chain, the judgement of approvals,
 * receipts, the file store under concurrent writers, and the worker's activities.
 */
import { generateKeyPairSync } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { createDecisionActivities } from '../../src/records/activities';
import { canonicalJson, CanonicalJsonError, digestOf } from '../../src/records/canonical';
import { FileDecisionStore, MAX_RECORD_BYTES, MAX_RECORDS_PER_TASK } from '../../src/records/file-store';
import { DamagedRecordError } from '../../src/records/store-error';
import {
  createDecisionSigner,
  DecisionKeyError,
  decisionPublicKeysFromEnv,
  decisionSignerFromEnv,
  describeDecisionPublicKeys,
  publicKeysFromPem,
} from '../../src/records/keys';
import { exportReceipt, verifyReceipt } from '../../src/records/receipt';
import { appendChained, DecisionStoreError, decisionStoreFromEnv } from '../../src/records/store';
import { CLOSE_VIA, type SignedDecisionRecord } from '../../src/contract/decision-records';
import { closeStanding } from '../../src/records/closes';
import { judgeApprovals, verifyChain, type ApprovalExpectation } from '../../src/records/verify';
import { bodyOf, chainOf, invoiceShown, testSigner } from '../helpers/decision-records';

const { signer, keys } = testSigner();
const TASK = 'process-invoice-0b7c3f9e-5d1a-4c55-9a43-6f3e2d1c0b9a';
const OTHER = 'process-invoice-7d2e1f0a-3b4c-4d5e-8f60-718293a4b5c6';

const temps: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'decision-records-'));
  temps.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

const expectation = (over: Partial<ApprovalExpectation> = {}): ApprovalExpectation => ({
  taskId: TASK,
  run: 'run-1',
  key: 'approval',
  subject: invoiceShown(),
  required: 2,
  requester: 'sam',
  ...over,
});

describe('canonical JSON', () => {
  test('sorts keys at every depth, leaves no spaces, and is the same whatever order keys came in', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: 'x' } })).toBe('{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
    expect(digestOf({ a: 1, b: 2 })).toBe(digestOf({ b: 2, a: 1 }));
  });

  test('leaves out undefined members, as a JSON round trip does, and keeps -0, unicode and escapes as JSON has them', () => {
    const value = { a: undefined, b: 'é\n"', c: -0, d: new Date('2026-01-02T03:04:05.000Z') };
    expect(canonicalJson(value)).toBe('{"b":"é\\n\\"","c":0,"d":"2026-01-02T03:04:05.000Z"}');
    expect(canonicalJson(JSON.parse(JSON.stringify(value)))).toBe(canonicalJson(value));
  });

  test('rejects undefined in an array, non-finite numbers, functions and bigints, saying where', () => {
    expect(() => canonicalJson([1, undefined])).toThrow(CanonicalJsonError);
    expect(() => canonicalJson([1, undefined])).toThrow('at $[1]');
    expect(() => canonicalJson({ total: NaN })).toThrow('at $.total');
    expect(() => canonicalJson({ total: Infinity })).toThrow(CanonicalJsonError);
    expect(() => canonicalJson({ f: () => 1 })).toThrow(CanonicalJsonError);
    expect(() => canonicalJson({ n: BigInt(1) })).toThrow(CanonicalJsonError);
    expect(() => canonicalJson(undefined)).toThrow(CanonicalJsonError);
  });

  test('a digest is sha256: and 43 base64url characters', () => {
    expect(digestOf(null)).toMatch(/^sha256:[A-Za-z0-9_-]{43}$/);
    expect(digestOf({ total: 1450 })).not.toBe(digestOf({ total: 1460 }));
  });
});

describe('signing', () => {
  test('a signed record checks out under its public key and names it; altered or under another key it does not', () => {
    const [record] = chainOf(TASK, signer, [{ decision: 'approve' }]);
    expect(signer.keyId).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(record.keyId).toBe(signer.keyId);
    expect(record.digest).toBe(digestOf(record.body));
    expect(keys.keyIds).toEqual([signer.keyId]);
    expect(keys.verify(record)).toBe(true);
    expect(keys.verify({ ...record, body: { ...record.body, comment: 'added' } })).toBe(false);
    expect(testSigner().keys.verify(record)).toBe(false);
    expect(keys.verify({ ...record, signature: undefined })).toBe(false);
  });

  test('during a rotation records of the old key and of the new both check out', () => {
    const next = testSigner().signer;
    const both = publicKeysFromPem([signer.publicKeyPem, next.publicKeyPem]);
    expect(both.verify(chainOf(TASK, signer, [{ decision: 'approve' }])[0])).toBe(true);
    expect(both.verify(chainOf(TASK, next, [{ decision: 'approve' }])[0])).toBe(true);
  });

  test('a key that is not Ed25519 is refused with a message saying what to use', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(() => createDecisionSigner(privateKey.export({ format: 'pem', type: 'pkcs8' }) as string)).toThrow(/use an Ed25519 key/);
    expect(() => publicKeysFromPem([publicKey.export({ format: 'pem', type: 'spki' }) as string])).toThrow(DecisionKeyError);
    expect(() => createDecisionSigner('not a key')).toThrow(DecisionKeyError);
  });

  test('the default key pair is made once, private 0600 in a 0700 folder, its public key beside it', () => {
    const env = { XDG_CONFIG_HOME: path.join(tempDir(), 'config') };
    const first = decisionSignerFromEnv(env);
    const again = decisionSignerFromEnv(env);
    expect(again.keyId).toBe(first.keyId);
    const folder = path.join(env.XDG_CONFIG_HOME, 'temporal-mcp-tasks');
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(folder, 'decision-signing-key.pem')).mode & 0o777).toBe(0o600);
    expect(readFileSync(path.join(folder, 'decision-signing-key.pub.pem'), 'utf8')).toBe(first.publicKeyPem);
    const publicKeys = decisionPublicKeysFromEnv(env);
    expect(publicKeys.keyIds).toEqual([first.keyId]);
    expect(publicKeys.verify(chainOf(TASK, first, [{ decision: 'approve' }])[0])).toBe(true);
  });

  test('a named key file that is missing is an error saying what to set, and no key is made there', () => {
    const file = path.join(tempDir(), 'missing.pem');
    expect(() => decisionSignerFromEnv({ MCP_DECISION_SIGNING_KEY: file })).toThrow(/set MCP_DECISION_SIGNING_KEY/);
    expect(existsSync(file)).toBe(false);
    const noKeys = { XDG_CONFIG_HOME: path.join(tempDir(), 'empty') };
    // Read when first needed: a worker may start before the server has made the pair.
    const later = decisionPublicKeysFromEnv(noKeys);
    expect(describeDecisionPublicKeys(noKeys)).toMatch(/read when first needed \(the server makes the key pair when it first starts\)/);
    expect(existsSync(path.join(noKeys.XDG_CONFIG_HOME, 'temporal-mcp-tasks'))).toBe(false);
    expect(() => later.keyIds).toThrow(/set MCP_DECISION_PUBLIC_KEY .*or start the server once/);
    const [record] = chainOf(TASK, signer, [{ decision: 'approve' }]);
    expect(() => verifyChain(TASK, [record], later)).toThrow(DecisionKeyError);
    const made = decisionSignerFromEnv(noKeys);
    expect(describeDecisionPublicKeys(noKeys)).toBe(
      `the public key in ${path.join(noKeys.XDG_CONFIG_HOME, 'temporal-mcp-tasks', 'decision-signing-key.pub.pem')}`,
    );
    expect(later.keyIds).toEqual([made.keyId]);
    expect(later.verify(chainOf(TASK, made, [{ decision: 'approve' }])[0])).toBe(true);
    expect(() => decisionPublicKeysFromEnv({ MCP_DECISION_PUBLIC_KEY: file })).toThrow(/cannot read the decision public key/);
  });

  test('MCP_DECISION_PUBLIC_KEY takes comma-separated files', () => {
    const dir = tempDir();
    const next = testSigner().signer;
    writeFileSync(path.join(dir, 'a.pem'), signer.publicKeyPem);
    writeFileSync(path.join(dir, 'b.pem'), next.publicKeyPem);
    const both = decisionPublicKeysFromEnv({ MCP_DECISION_PUBLIC_KEY: `${path.join(dir, 'a.pem')}, ${path.join(dir, 'b.pem')}` });
    expect(both.keyIds).toEqual([signer.keyId, next.keyId]);
  });
});

describe('the chain', () => {
  const good = () =>
    chainOf(TASK, signer, [
      { decision: 'approve', by: 'carol' },
      { decision: 'approve', by: 'dave' },
    ]);

  test('a whole, signed chain checks out', () => {
    expect(verifyChain(TASK, good(), keys)).toEqual({ ok: true });
    expect(verifyChain(TASK, [], keys)).toEqual({ ok: true });
  });

  test('one byte changed in a receipt fails it', () => {
    const receipt = {
      format: 'temporal-mcp-tasks/approval-receipt',
      v: 1,
      taskId: TASK,
      exportedAt: 'now',
      keyIds: [signer.keyId],
      records: good(),
    };
    expect(verifyReceipt(JSON.parse(JSON.stringify(receipt)), keys).ok).toBe(true);
    const text = JSON.stringify(receipt);
    const at = text.indexOf('1450');
    const report = verifyReceipt(JSON.parse(`${text.slice(0, at)}1460${text.slice(at + 4)}`), keys);
    expect(report.ok).toBe(false);
    expect(report.problems[0]).toMatch(/^record 1 was altered/);
    // A changed signature, with the body intact.
    const signature = receipt.records[1].signature!;
    const forged = JSON.parse(text);
    forged.records[1].signature = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    expect(verifyReceipt(forged, keys).problems[0]).toMatch(/^record 2's signature is not valid/);
  });

  test("a record moved from another task's chain fails, even at the same place", () => {
    const mine = good();
    const theirs = chainOf(OTHER, signer, [{ decision: 'approve', by: 'carol' }]);
    const check = verifyChain(TASK, [theirs[0], mine[1]], keys);
    expect(check).toEqual({ ok: false, problem: expect.stringMatching(/^record 1 belongs to task .* it was moved from another chain$/) });
  });

  test('a reordered chain, a missing record and a replaced one fail', () => {
    const [first, second, third] = chainOf(TASK, signer, [
      { decision: 'approve', by: 'carol' },
      { decision: 'approve', by: 'dave' },
      { decision: 'approve', by: 'ann' },
    ]);
    expect(verifyChain(TASK, [second, first, third], keys)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/record 1 has seq 2/),
    });
    expect(verifyChain(TASK, [first, third], keys)).toMatchObject({ ok: false, problem: expect.stringMatching(/record 2 has seq 3/) });
    expect(verifyChain(TASK, [second, third], keys)).toMatchObject({ ok: false });
    // Another record signed in the same place: the next one no longer follows it.
    const other = signer.sign(bodyOf(TASK, 2, first.digest, { decision: 'approve', by: 'olga' }));
    expect(verifyChain(TASK, [first, other, third], keys)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/record 3 does not follow record 2/),
    });
  });

  test('a subject digest that is not that of what was shown fails', () => {
    const [record] = chainOf(TASK, signer, [{ decision: 'approve', subject: digestOf(invoiceShown(1)) }]);
    expect(verifyChain(TASK, [record], keys)).toMatchObject({ ok: false, problem: expect.stringMatching(/subject digest does not match/) });
  });

  test('only an expiry the workflow records may be unsigned; a record of an unknown key says which key to give', () => {
    const workflow = { principal: 'workflow', person: 'workflow', auth: 'workflow', roles: [] };
    expect(verifyChain(TASK, chainOf(TASK, signer, [{ decision: 'expire', by: workflow, unsigned: true }]), keys)).toEqual({ ok: true });
    const unsigned = chainOf(TASK, signer, [{ decision: 'approve', unsigned: true }]);
    expect(verifyChain(TASK, unsigned, keys)).toMatchObject({ ok: false, problem: expect.stringMatching(/is not signed/) });
    const stranger = chainOf(TASK, testSigner().signer, [{ decision: 'approve' }]);
    expect(verifyChain(TASK, stranger, keys)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/not among the public keys given/),
    });
  });
});

describe('judging approvals', () => {
  test('two signed approvals of the subject by two people other than the requester allow it', () => {
    const records = chainOf(TASK, signer, [
      { decision: 'approve', by: 'carol' },
      { decision: 'delegate', by: 'ann', delegatedTo: 'dave' },
      { decision: 'approve', by: 'dave' },
    ]);
    const judgement = judgeApprovals(records, expectation());
    expect(judgement).toEqual({
      ok: true,
      approvers: [
        { person: 'carol', principal: 'carol', roles: ['ap-approver'], at: records[0].body.at, digest: records[0].digest },
        { person: 'dave', principal: 'dave', roles: ['ap-approver'], at: records[2].body.at, digest: records[2].digest },
      ],
    });
  });

  test('an unsigned approval is not counted', () => {
    const records = chainOf(TASK, signer, [
      { decision: 'approve', by: 'carol' },
      { decision: 'approve', by: 'dave', unsigned: true },
    ]);
    expect(judgeApprovals(records, expectation())).toEqual({
      ok: false,
      reason: expect.stringMatching(/^1 of 2 approvals on record for this subject \(by carol\); the approval by dave .* is not signed/),
    });
  });

  test('a rejection blocks, and says who and when; a signed void never takes it back', () => {
    const records = chainOf(TASK, signer, [
      { decision: 'reject', by: 'carol', comment: 'not ours' },
      { decision: 'approve', by: 'dave' },
      { decision: 'approve', by: 'ann' },
    ]);
    const blocked = judgeApprovals(records, expectation());
    expect(blocked).toEqual({ ok: false, reason: expect.stringContaining(`carol (principal carol) rejected it at ${records[0].body.at}`) });
    const voided = [
      ...records,
      signer.sign(bodyOf(TASK, 4, records[2].digest, { decision: 'void', voids: records[0].digest, reason: 'refused by the workflow' })),
    ];
    expect(judgeApprovals(voided, expectation())).toEqual({
      ok: false,
      reason: expect.stringContaining(`carol (principal carol) rejected it at ${records[0].body.at}`),
    });
    // Nor of a decline or an expiry.
    for (const decision of ['decline', 'expire'] as const) {
      const ended = chainOf(TASK, signer, [
        { decision, by: 'carol' },
        { decision: 'approve', by: 'dave' },
        { decision: 'approve', by: 'ann' },
      ]);
      const withVoid = [...ended, signer.sign(bodyOf(TASK, 4, ended[2].digest, { decision: 'void', voids: ended[0].digest }))];
      expect(judgeApprovals(withVoid, expectation())).toMatchObject({ ok: false });
    }
    // A void nobody signed voids nothing.
    const unsignedVoid = chainOf(TASK, signer, [
      { decision: 'reject', by: 'carol' },
      { decision: 'approve', by: 'dave' },
      { decision: 'approve', by: 'ann' },
    ]);
    const forged = bodyOf(TASK, 4, unsignedVoid[2].digest, { decision: 'void', voids: unsignedVoid[0].digest });
    expect(judgeApprovals([...unsignedVoid, { body: forged, digest: digestOf(forged) }], expectation())).toMatchObject({ ok: false });
  });

  test('a voided approval does not count', () => {
    const records = chainOf(TASK, signer, [
      { decision: 'approve', by: 'carol' },
      { decision: 'approve', by: 'dave' },
    ]);
    const voided = [...records, signer.sign(bodyOf(TASK, 3, records[1].digest, { decision: 'void', voids: records[1].digest }))];
    expect(judgeApprovals(voided, expectation())).toEqual({ ok: false, reason: expect.stringMatching(/^1 of 2 approvals/) });
  });

  test('a decline and an expiry block too', () => {
    const declined = chainOf(TASK, signer, [{ decision: 'decline', by: 'carol' }]);
    expect(judgeApprovals(declined, expectation())).toEqual({
      ok: false,
      reason: expect.stringMatching(/^carol \(principal carol\) declined/),
    });
    const workflow = { principal: 'workflow', person: 'workflow', auth: 'workflow', roles: [] };
    const expired = chainOf(TASK, signer, [{ decision: 'expire', by: workflow, unsigned: true }]);
    expect(judgeApprovals(expired, expectation())).toEqual({
      ok: false,
      reason: expect.stringMatching(/^the question expired unanswered/),
    });
  });

  test('an approval of another subject does not count, and the reason says so', () => {
    const records = chainOf(TASK, signer, [
      { decision: 'approve', by: 'carol' },
      { decision: 'approve', by: 'dave', shown: invoiceShown(1460) },
    ]);
    expect(judgeApprovals(records, expectation())).toEqual({
      ok: false,
      reason: expect.stringMatching(
        /^1 of 2 approvals on record for this subject \(by carol\); dave \(principal dave\) approved something else/,
      ),
    });
    expect(judgeApprovals(records, expectation({ subject: invoiceShown(1460), required: 1 }))).toMatchObject({
      ok: true,
      approvers: [{ person: 'dave' }],
    });
  });

  test('one person through two principals counts once with personOf', () => {
    const records = chainOf(TASK, signer, [
      { decision: 'approve', by: { principal: 'carol', person: 'carol', auth: 'token', roles: [] } },
      { decision: 'approve', by: { principal: 'carol-laptop', person: 'carol-laptop', auth: 'local', roles: [] } },
    ]);
    expect(judgeApprovals(records, expectation())).toMatchObject({ ok: true });
    const personOf = (principal: string) => (principal === 'carol-laptop' ? 'carol' : principal);
    expect(judgeApprovals(records, expectation({ personOf }))).toEqual({
      ok: false,
      reason: expect.stringMatching(/^1 of 2 approvals .*\(by carol\)/),
    });
  });

  test("the requester's approval never counts, through whatever principal", () => {
    const records = chainOf(TASK, signer, [
      { decision: 'approve', by: 'oauth:sam' },
      { decision: 'approve', by: 'dave' },
    ]);
    expect(judgeApprovals(records, expectation())).toEqual({
      ok: false,
      reason: expect.stringContaining('the approval by sam (principal oauth:sam) does not count: it is their own request'),
    });
    expect(judgeApprovals(records, expectation({ requester: 'oauth:sam', required: 1 }))).toMatchObject({
      ok: true,
      approvers: [{ person: 'dave' }],
    });
  });

  test('only records of the run and the question count', () => {
    const records = chainOf(TASK, signer, [
      { decision: 'reject', by: 'carol', run: 'run-0' },
      { decision: 'approve', by: 'carol', question: { key: 'other', message: 'another question' } },
      { decision: 'approve', by: 'dave' },
    ]);
    expect(judgeApprovals(records, expectation({ required: 1 }))).toMatchObject({ ok: true, approvers: [{ person: 'dave' }] });
  });
});

describe('receipts', () => {
  test('report each question: who decided what, when and how, and whether it stands approved', async () => {
    const store = new FileDecisionStore(tempDir());
    for (const record of chainOf(TASK, signer, [
      { decision: 'approve', by: 'carol' },
      { decision: 'approve', by: 'dave' },
      { decision: 'close', outcome: 'accepted', required: 2, by: 'dave' },
    ])) {
      expect(await store.append(record)).toBe('appended');
    }
    const receipt = await exportReceipt(store, TASK);
    expect(receipt).toMatchObject({ format: 'temporal-mcp-tasks/approval-receipt', v: 1, taskId: TASK, keyIds: [signer.keyId] });
    const report = verifyReceipt(receipt, keys);
    expect(report).toMatchObject({ ok: true, taskId: TASK, records: 3, problems: [] });
    expect(report.questions).toHaveLength(1);
    expect(report.questions[0]).toMatchObject({
      key: 'approval',
      run: 'run-1',
      standing: 'approved',
      shown: invoiceShown(),
      approvers: [{ person: 'carol' }, { person: 'dave' }],
      decisions: [
        { seq: 1, decision: 'approve', person: 'carol', principal: 'carol', roles: ['ap-approver'], via: 'approvals_answer', signed: true },
        { seq: 2, decision: 'approve', person: 'dave', signed: true },
        { seq: 3, decision: 'close', outcome: 'accepted', required: 2, signed: true },
      ],
    });
    expect(verifyReceipt({ ...receipt, format: 'other' }, keys)).toMatchObject({ ok: false, problems: [expect.stringMatching(/format/)] });
    expect(verifyReceipt('not json', keys)).toMatchObject({ ok: false });
    expect(verifyReceipt({ ...receipt, records: [] }, keys)).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/no decision records/)],
    });
  });

  test('a receipt cut at its end is never approved: without the close, or with fewer approvals than it required', () => {
    const receiptOf = (records: SignedDecisionRecord[]) =>
      verifyReceipt({ format: 'temporal-mcp-tasks/approval-receipt', v: 1, taskId: TASK, exportedAt: 'now', keyIds: [], records }, keys);
    // bob approved, carol rejected, and the bridge closed the question declined.
    const whole = chainOf(TASK, signer, [
      { decision: 'approve', by: 'bob' },
      { decision: 'reject', by: 'carol' },
      { decision: 'close', outcome: 'declined', required: 2, by: 'carol' },
    ]);
    expect(receiptOf(whole).questions[0]).toMatchObject({ standing: 'rejected' });
    expect(receiptOf(whole.slice(0, 2)).questions[0]).toMatchObject({ standing: 'rejected' });
    // Cut after bob's approval: it verifies, and it is open, never approved.
    const cut = receiptOf(whole.slice(0, 1));
    expect(cut).toMatchObject({ ok: true, questions: [{ standing: 'open', verdict: expect.stringMatching(/no close record/) }] });
    // A close that says approved with two required, over one approval on record: not approved.
    const short = chainOf(TASK, signer, [
      { decision: 'approve', by: 'bob' },
      { decision: 'close', outcome: 'accepted', required: 2, by: 'bob' },
    ]);
    expect(receiptOf(short).questions[0]).toMatchObject({ standing: 'open', verdict: expect.stringMatching(/2 approval\(s\) required/) });
    // An unsigned close is nobody's word: the chain check refuses it.
    const forged = chainOf(TASK, signer, [
      { decision: 'approve', by: 'bob' },
      { decision: 'close', outcome: 'accepted', required: 1, by: 'bob', unsigned: true },
    ]);
    expect(receiptOf(forged)).toMatchObject({ ok: false, problems: [expect.stringMatching(/record 2 \(close by bob\) is not signed/)] });
  });

  test('a rejected question is reported rejected, the receipt still valid', () => {
    const records = chainOf(TASK, signer, [
      { decision: 'approve', by: 'carol' },
      { decision: 'reject', by: 'dave' },
    ]);
    const report = verifyReceipt(
      { format: 'temporal-mcp-tasks/approval-receipt', v: 1, taskId: TASK, exportedAt: 'now', keyIds: [], records },
      keys,
    );
    expect(report.ok).toBe(true);
    expect(report.questions[0]).toMatchObject({ standing: 'rejected', verdict: expect.stringMatching(/^rejected by dave/) });
  });
});

describe('closes on record', () => {
  const WORKFLOW = { principal: 'workflow', person: 'workflow', auth: 'workflow', roles: [] };
  const receiptOf = (records: SignedDecisionRecord[]) =>
    verifyReceipt({ format: 'temporal-mcp-tasks/approval-receipt', v: 1, taskId: TASK, exportedAt: 'now', keyIds: [], records }, keys);

  test("a question is closed by a signed close after its last decision; a void, another question's or an unsigned close do not", () => {
    const chain = chainOf(TASK, signer, [
      { decision: 'approve', by: 'bob' },
      { decision: 'close', outcome: 'accepted', required: 1, by: 'bob' },
      { decision: 'approve', by: 'carol', question: { key: 'second', message: 'Second?' } },
    ]);
    expect(closeStanding(chain, 'run-1', 'approval')).toMatchObject({ state: 'closed', close: { digest: chain[1].digest } });
    expect(closeStanding(chain, 'run-1', 'second')).toMatchObject({ state: 'open', last: { digest: chain[2].digest } });
    expect(closeStanding(chain, 'run-2', 'approval')).toEqual({ state: 'unrecorded' });
    expect(closeStanding(chain, 'run-1', 'third')).toEqual({ state: 'unrecorded' });
    // Reopened by a reset and decided again: the earlier close does not close it.
    const reopened = chainOf(TASK, signer, [
      { decision: 'approve', by: 'bob' },
      { decision: 'close', outcome: 'accepted', required: 1, by: 'bob' },
      { decision: 'reject', by: 'carol' },
      { decision: 'void', voids: 'sha256:x', by: 'carol' },
    ]);
    expect(closeStanding(reopened, 'run-1', 'approval')).toMatchObject({ state: 'open', last: { digest: reopened[2].digest } });
    const unsigned = chainOf(TASK, signer, [
      { decision: 'expire', by: WORKFLOW, unsigned: true },
      { decision: 'close', outcome: 'expired', required: 1, by: WORKFLOW, unsigned: true },
    ]);
    expect(closeStanding(unsigned, 'run-1', 'approval')).toMatchObject({ state: 'open', last: { digest: unsigned[0].digest } });
  });

  test('an expiry closed on record stays expired; a cancellation stands cancelled; a repair approves, and says it was late', () => {
    const expired = receiptOf(
      chainOf(TASK, signer, [
        { decision: 'expire', by: WORKFLOW, unsigned: true },
        { decision: 'close', outcome: 'expired', required: 1, by: WORKFLOW, via: CLOSE_VIA.expiry },
      ]),
    );
    expect(expired).toMatchObject({
      ok: true,
      questions: [{ standing: 'expired', verdict: expect.stringMatching(/, closed on record: /) }],
    });
    const cancelled = receiptOf(
      chainOf(TASK, signer, [
        { decision: 'approve', by: 'bob' },
        { decision: 'close', outcome: 'cancelled', required: 2, by: WORKFLOW, via: CLOSE_VIA.cancellation },
      ]),
    );
    expect(cancelled.questions[0]).toMatchObject({
      standing: 'cancelled',
      verdict: expect.stringMatching(/^cancelled with its task, closed on record at \S+ with 1 approval: nothing may be done on it$/),
    });
    const repaired = receiptOf(
      chainOf(TASK, signer, [
        { decision: 'approve', by: 'bob' },
        {
          decision: 'close',
          outcome: 'accepted',
          required: 1,
          by: WORKFLOW,
          via: CLOSE_VIA.repair,
          closedAt: '2026-11-26T09:59:00.000Z',
          at: '2026-11-26T10:05:00.000Z',
        },
      ]),
    );
    expect(repaired.questions[0]).toMatchObject({
      standing: 'approved',
      verdict:
        'approved by 1 distinct person: bob (principal bob), of 1 required; closed at 2026-11-26T09:59:00.000Z, closed late by repair at 2026-11-26T10:05:00.000Z; no rejection on record',
      decisions: [{ decision: 'approve' }, { decision: 'close', closedAt: '2026-11-26T09:59:00.000Z', via: CLOSE_VIA.repair }],
    });
  });
});

describe('the file store', () => {
  test('many concurrent appends, through several stores on one directory, make one contiguous chain', async () => {
    const dir = tempDir();
    const stores = [0, 1, 2, 3].map(() => new FileDecisionStore(dir));
    const people = Array.from({ length: 40 }, (_, index) => `approver-${index}`);
    const appended = await Promise.all(
      people.map((person, index) =>
        appendChained(stores[index % stores.length], TASK, (seq, prev) =>
          signer.sign(bodyOf(TASK, seq, prev, { decision: 'approve', by: person })),
        ),
      ),
    );
    const records = await stores[0].records(TASK);
    expect(records.map((record) => record.body.seq)).toEqual(people.map((_, index) => index + 1));
    expect(verifyChain(TASK, records, keys)).toEqual({ ok: true });
    expect(new Set(records.map((record) => record.body.by.principal))).toEqual(new Set(people));
    expect(appended.map((record) => record.digest).sort()).toEqual(records.map((record) => record.digest).sort());
  });

  test('two writers of one place: one appends, the other hears conflict; the same record again is a duplicate', async () => {
    const store = new FileDecisionStore(tempDir());
    const [carol, dave] = ['carol', 'dave'].map((by) => signer.sign(bodyOf(TASK, 1, null, { decision: 'approve', by })));
    const outcomes = await Promise.all([store.append(carol), store.append(dave)]);
    expect(outcomes.sort()).toEqual(['appended', 'conflict']);
    const [kept] = await store.records(TASK);
    expect(await store.append(kept)).toBe('duplicate');
  });

  test('an existing record file is never rewritten, and a gap is refused', async () => {
    const dir = tempDir();
    const store = new FileDecisionStore(dir);
    const [first] = chainOf(TASK, signer, [{ decision: 'reject', by: 'carol' }]);
    expect(await store.append(first)).toBe('appended');
    const file = path.join(store.folderOf(TASK), '0000000001.json');
    const before = { text: readFileSync(file, 'utf8'), ino: statSync(file).ino, mtime: statSync(file).mtimeMs };
    const rewrite = signer.sign(bodyOf(TASK, 1, null, { decision: 'approve', by: 'carol' }));
    expect(await store.append(rewrite)).toBe('conflict');
    expect({ text: readFileSync(file, 'utf8'), ino: statSync(file).ino, mtime: statSync(file).mtimeMs }).toEqual(before);
    const gap = signer.sign(bodyOf(TASK, 3, first.digest, { decision: 'approve', by: 'dave' }));
    await expect(store.append(gap)).rejects.toThrow(DecisionStoreError);
    expect(readdirSync(store.folderOf(TASK))).toEqual(['0000000001.json']);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  test("what is not a record in a record's place (a named pipe, a link, a folder, a huge file) breaks that task alone, at once", async () => {
    const dir = tempDir();
    const store = new FileDecisionStore(dir);
    const activities = createDecisionActivities({ store, keys });
    const [good] = chainOf('good-task', signer, [{ decision: 'approve', by: 'carol' }]);
    await store.append(good);
    const planted: Record<string, (file: string) => void> = {
      'pipe-task': (file) => execFileSync('mkfifo', [file]),
      'link-task': (file) => symlinkSync('/etc/hostname', file),
      'folder-task': (file) => mkdirSync(file),
      'huge-task': (file) => writeFileSync(file, Buffer.alloc(MAX_RECORD_BYTES + 1, 32)),
    };
    for (const [task, plant] of Object.entries(planted)) {
      mkdirSync(store.folderOf(task), { recursive: true });
      plant(path.join(store.folderOf(task), '0000000001.json'));
      // Read without waiting on the pipe (a blocked read would hold one of Node's file threads for good).
      await expect(store.records(task)).rejects.toThrow(DamagedRecordError);
      const judged = await activities.mcpVerifyDecisions({
        taskId: task,
        run: 'run-1',
        key: 'approval',
        subject: null,
        required: 1,
        requester: 'sam',
      });
      expect(judged).toEqual({
        ok: false,
        reason: expect.stringMatching(
          /do not check out: the decision record .* (is not a regular file|is a symbolic link|more than a record's)/,
        ),
      });
    }
    // Every other task reads as before, as many times as the file threads allow.
    const reads = await Promise.all(Array.from({ length: 16 }, () => store.records('good-task')));
    expect(reads.every((records) => records.length === 1 && records[0].digest === good.digest)).toBe(true);
  });

  test('a task folder flooded with record files breaks that task alone, before a file of it is opened, and the process goes on', async () => {
    const dir = tempDir();
    const store = new FileDecisionStore(dir);
    const activities = createDecisionActivities({ store, keys });
    const [good] = chainOf('good-task', signer, [{ decision: 'approve', by: 'carol' }]);
    await store.append(good);
    const folder = store.folderOf('flooded-task');
    mkdirSync(folder, { recursive: true });
    // One more than a folder may hold; each a valid-looking name, none a record (a read of any would fail otherwise).
    for (let seq = 1; seq <= MAX_RECORDS_PER_TASK + 1; seq++)
      writeFileSync(path.join(folder, `${String(seq).padStart(10, '0')}.json`), 'x');
    await expect(store.records('flooded-task')).rejects.toThrow(
      new RegExp(`the decision records of flooded-task in .* are more than ${MAX_RECORDS_PER_TASK} files: the folder was filled by hand`),
    );
    const judged = await activities.mcpVerifyDecisions({
      taskId: 'flooded-task',
      run: 'run-1',
      key: 'approval',
      subject: null,
      required: 1,
      requester: 'sam',
    });
    expect(judged).toEqual({ ok: false, reason: expect.stringMatching(/more than 10000 files/) });
    expect((await store.records('good-task')).map((record) => record.digest)).toEqual([good.digest]);
  }, 60_000);

  test('task ids become folder names one to one, never a path out of the store', () => {
    const store = new FileDecisionStore('/store');
    expect(store.folderOf(TASK)).toBe(`/store/${TASK}`);
    expect(store.folderOf('../etc')).toBe('/store/_2e__2e__2f_etc');
    expect(store.folderOf('A')).not.toBe(store.folderOf('a'));
    expect(path.dirname(store.folderOf('x'.repeat(500)))).toBe('/store');
  });

  test('a task without records reads as none; MCP_DECISION_STORE picks the store', async () => {
    const dir = tempDir();
    expect(await new FileDecisionStore(path.join(dir, 'not-yet')).records(TASK)).toEqual([]);
    expect(decisionStoreFromEnv({ MCP_DECISION_STORE: dir }).location()).toBe(`the decision records directory ${dir}`);
    expect(decisionStoreFromEnv({}).location()).toBe(`the decision records directory ${path.resolve('.data', 'decisions')}`);
    const pg = decisionStoreFromEnv({ MCP_DECISION_STORE: 'postgresql://auditor:s3cret@db.example:5432/records' });
    expect(pg.location()).toContain('db.example:5432/records');
    expect(pg.location()).not.toContain('s3cret');
    await pg.close();
  });
});

describe("the worker's activities", () => {
  test('mcpVerifyDecisions judges the records on file; a broken chain does not allow the payment', async () => {
    const store = new FileDecisionStore(tempDir());
    const activities = createDecisionActivities({ store, keys });
    for (const record of chainOf(TASK, signer, [
      { decision: 'approve', by: 'carol' },
      { decision: 'approve', by: 'dave' },
    ]))
      await store.append(record);
    const input = { taskId: TASK, run: 'run-1', key: 'approval', subject: invoiceShown(), required: 2, requester: 'sam' };
    expect(await activities.mcpVerifyDecisions(input)).toMatchObject({ ok: true, approvers: [{ person: 'carol' }, { person: 'dave' }] });
    const other = createDecisionActivities({ store, keys: testSigner().keys });
    expect(await other.mcpVerifyDecisions(input)).toEqual({
      ok: false,
      reason: expect.stringMatching(/do not check out: record 1 is signed by key/),
    });
    const personOf = (principal: string) => (principal === 'dave' ? 'carol' : principal);
    expect(await createDecisionActivities({ store, keys, personOf }).mcpVerifyDecisions(input)).toMatchObject({ ok: false });
  });

  test('mcpVerifyDecisions throws when the store cannot be read, so that Temporal tries again', async () => {
    const file = path.join(tempDir(), 'a-file');
    writeFileSync(file, 'not a directory');
    const activities = createDecisionActivities({ store: new FileDecisionStore(file), keys });
    await expect(
      activities.mcpVerifyDecisions({ taskId: TASK, run: 'run-1', key: 'approval', subject: null, required: 1, requester: 'sam' }),
    ).rejects.toThrow(DecisionStoreError);
  });

  test('mcpRecordDecision on a task whose records are damaged ends at once, non-retryable, saying so: the expiry is not retried for good', async () => {
    const store = new FileDecisionStore(tempDir());
    mkdirSync(store.folderOf(TASK), { recursive: true });
    mkdirSync(path.join(store.folderOf(TASK), '0000000001.json'));
    const activities = createDecisionActivities({ store, keys });
    const input = {
      taskId: TASK,
      run: 'run-1',
      question: { key: 'approval', message: 'Approve?' },
      shown: invoiceShown(),
      decision: 'expire' as const,
      at: '2026-11-27T10:00:00.000Z',
    };
    const failure = await activities.mcpRecordDecision(input).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({
      nonRetryable: true,
      type: 'DamagedDecisionRecords',
      message: expect.stringMatching(/^the expiry of question "approval" cannot be recorded: the decision records of .* do not check out/),
    });
  });

  test('mcpRecordDecision appends an unsigned expiry by the workflow once per run and question', async () => {
    const store = new FileDecisionStore(tempDir());
    const activities = createDecisionActivities({ store, keys });
    const [approval] = chainOf(TASK, signer, [{ decision: 'approve', by: 'carol' }]);
    await store.append(approval);
    const input = {
      taskId: TASK,
      run: 'run-1',
      question: { key: 'approval', message: 'Approve invoice INV-2026-0042?' },
      shown: invoiceShown(),
      decision: 'expire' as const,
      at: '2026-11-27T10:00:00.000Z',
    };
    const [one, two] = await Promise.all([activities.mcpRecordDecision(input), activities.mcpRecordDecision(input)]);
    const again = await activities.mcpRecordDecision({ ...input, at: '2026-11-27T10:05:00.000Z' });
    expect(two.digest).toBe(one.digest);
    expect(again.digest).toBe(one.digest);
    const records: SignedDecisionRecord[] = await store.records(TASK);
    expect(records).toHaveLength(2);
    expect(records[1]).toEqual({
      body: expect.objectContaining({
        seq: 2,
        prev: approval.digest,
        decision: 'expire',
        via: 'timer',
        by: { principal: 'workflow', person: 'workflow', auth: 'workflow', roles: [] },
      }),
      digest: one.digest,
    });
    expect(verifyChain(TASK, records, keys)).toEqual({ ok: true });
    expect(judgeApprovals(records, expectation({ required: 1 }))).toEqual({
      ok: false,
      reason: expect.stringMatching(/^the question expired unanswered/),
    });
  });
});

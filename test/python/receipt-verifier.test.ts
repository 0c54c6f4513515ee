/**
 * Receipts anyone can verify: test/python/verify_receipt.py, written from docs/receipts.md alone with Python's
 * `cryptography` and no code of this project, checks the receipts this project exports and reaches the same verdicts
 * as `approvals verify --receipt`, on a receipt as exported and on tampered copies, and on approvers' own signatures
 * (Ed25519 and passkeys) checked against the approvers directory.
 */
import { execFile } from 'node:child_process';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApproversDirectory } from '../../src/records/directory';
import { generateApproverKey, signStatement, statementOf, type ApproverKeyring } from '../../src/records/approver-signatures';
import { digestOf } from '../../src/records/canonical';
import { passkeyChallengeOf } from '../../src/records/passkeys';
import { exportReceipt, verifyReceipt, type ApprovalReceipt } from '../../src/records/receipt';
import { FileDecisionStore } from '../../src/records/file-store';
import { ROOT } from '../helpers/dev-server';
import { bodyOf, chainOf, testSigner, type Step } from '../helpers/decision-records';
import { pythonClients } from '../helpers/python';
import { CLOSE_VIA } from '../../src/contract/decision-records';

const VERIFIER = path.join(ROOT, 'test', 'python', 'verify_receipt.py');
const TASK = 'invoice-receipt-verifier';

let dir: string;
let python: string;
const { signer, keys } = testSigner();
const other = testSigner();
let publicKey: string;
let otherPublicKey: string;

/** What the subjects show: texts and numbers whose canonical JSON is easy to get wrong. */
const shown = {
  kind: 'invoice',
  vendorName: 'Ünïcødé GmbH 😀 "quoted" \\ back\u2028sep',
  note: 'tab\there, bell\u0007, del\u007f',
  é: 1,
  e: 2,
  '😀': 3,
  '\uff61': 4,
  amounts: [0, -0, 120.5, 1450, 0.000001, 1e-7, 1e21, 123456789012345680000, 2 ** 53 + 2, -3.25e-10, 0.1 + 0.2],
  nested: { b: [true, false, null], a: {} },
};

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-receipts-'));
  python = await pythonClients();
  publicKey = path.join(dir, 'bridge.pub.pem');
  otherPublicKey = path.join(dir, 'other.pub.pem');
  writeFileSync(publicKey, signer.publicKeyPem);
  writeFileSync(otherPublicKey, other.signer.publicKeyPem);
}, 600_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs the independent verifier on `receipt` (with the approvers directory `directory`); its exit code and the JSON it printed. */
function independent(receipt: unknown, key = publicKey, directory?: string): Promise<{ code: number; out: Record<string, unknown> }> {
  const file = path.join(dir, `receipt-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(receipt, null, 2));
  return new Promise((resolve, reject) => {
    execFile(
      python,
      [VERIFIER, file, key, ...(directory ? ['--directory', directory] : [])],
      { timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? ((error as { code?: number }).code ?? -1) : 0;
        try {
          resolve({ code, out: JSON.parse(stdout) as Record<string, unknown> });
        } catch {
          reject(new Error(`verify_receipt.py exited ${code}: ${stderr}`));
        }
      },
    );
  });
}

/** Our verdict on `receipt`, in the independent verifier's words. */
function ours(receipt: unknown, checkWith = keys, signatures?: ApproverKeyring) {
  const report = verifyReceipt(receipt, checkWith, signatures);
  if (!report.ok) return { valid: false };
  return {
    valid: true,
    questions: report.questions.map((question) => ({
      run: question.run,
      key: question.key,
      standing: question.standing,
      approvers: question.approvers.map((approver) => approver.person),
    })),
  };
}

const WORKFLOW = { principal: 'workflow', person: 'workflow', auth: 'workflow', roles: [] };

async function exported(sealed = false): Promise<ApprovalReceipt> {
  const store = new FileDecisionStore(mkdtempSync(path.join(dir, 'store-')));
  const records = chainOf(TASK, signer, [
    { decision: 'approve', by: 'carol', shown, comment: 'ok, "fine" \u0000 with a NUL' },
    { decision: 'approve', by: 'oauth:dave@example.com', shown },
    { decision: 'close', outcome: 'accepted', required: 2, by: 'oauth:dave@example.com', shown },
    { decision: 'approve', by: 'ann', shown, question: { key: 'second', message: 'Second look?' } },
    { decision: 'reject', by: 'olga', shown, question: { key: 'second', message: 'Second look?' } },
    {
      decision: 'expire',
      by: { principal: 'workflow', person: 'workflow', auth: 'workflow', roles: [] },
      unsigned: true,
      shown,
      run: 'run-2',
    },
    // Closes the bridge signs for the workflow: an expiry, and a cancellation with one approval of two on record.
    { decision: 'close', outcome: 'expired', required: 1, by: WORKFLOW, shown, run: 'run-2', via: CLOSE_VIA.expiry },
    { decision: 'approve', by: 'carol', shown, question: { key: 'third', message: 'Third look?' } },
    {
      decision: 'close',
      outcome: 'cancelled',
      required: 2,
      by: WORKFLOW,
      shown,
      question: { key: 'third', message: 'Third look?' },
      via: CLOSE_VIA.cancellation,
    },
  ]);
  // A void of ann's approval, signed: it withdraws that approval only.
  const voids = signer.sign(
    bodyOf(TASK, records.length + 1, records[records.length - 1].digest, {
      decision: 'void',
      voids: records[3].digest,
      shown,
      question: { key: 'second', message: 'Second look?' },
    }),
  );
  for (const record of [...records, voids]) await store.append(record);
  return exportReceipt(store, TASK, sealed ? signer : undefined);
}

test('an exported receipt: the independent verifier finds it valid, and each question stands as ours says', async () => {
  const receipt = await exported();
  const theirs = await independent(receipt);
  expect(theirs.code).toBe(0);
  expect(theirs.out).toEqual(ours(receipt));
  expect(theirs.out).toMatchObject({
    valid: true,
    questions: [
      { key: 'approval', standing: 'approved', approvers: ['carol', 'dave@example.com'] },
      { key: 'second', standing: 'rejected' },
      { run: 'run-2', key: 'approval', standing: 'expired' },
      { key: 'third', standing: 'cancelled', approvers: ['carol'] },
    ],
  });
});

test('tampered copies: a changed byte, a record cut from the middle, records re-signed with another key: both verifiers refuse', async () => {
  const receipt = await exported();
  const changed = structuredClone(receipt);
  (changed.records[0].body as { comment?: string }).comment = 'ok, "fine" \u0000 with a NUL!';
  const cut = structuredClone(receipt);
  cut.records.splice(4, 1);
  const resigned = structuredClone(receipt);
  resigned.records = resigned.records.map((record) => (record.signature ? other.signer.sign(record.body) : record));
  // An amount of what was shown changed by a cent, its subject and digest recomputed: the chain and the signature refuse it.
  const renumbered = structuredClone(receipt);
  (renumbered.records[0].body.shown as { amounts: number[] }).amounts[2] = 120.51;
  renumbered.records[0].body.subject = digestOf(renumbered.records[0].body.shown);
  renumbered.records[0].digest = digestOf(renumbered.records[0].body);
  for (const [name, copy] of Object.entries({ changed, cut, resigned, renumbered })) {
    const theirs = await independent(copy);
    expect({ name, code: theirs.code, valid: theirs.out.valid }).toEqual({ name, code: 1, valid: false });
    expect({ name, ...ours(copy) }).toEqual({ name, valid: false });
  }
  // Re-signed, it is valid under the other key for both: a receipt proves who signed it, given the right key.
  expect((await independent(resigned, otherPublicKey)).out).toEqual(ours(resigned, other.keys));
});

test('a receipt cut at its end, before the close: both verifiers find it valid and the question open, not approved', async () => {
  const receipt = await exported();
  const cut = structuredClone(receipt);
  cut.records = cut.records.slice(0, 2);
  const theirs = await independent(cut);
  expect(theirs).toEqual({ code: 0, out: ours(cut) });
  expect(theirs.out).toMatchObject({ valid: true, questions: [{ key: 'approval', standing: 'open' }] });
});

test('a sealed receipt: both verifiers take it whole, and both refuse it cut at its end or with its count changed', async () => {
  const receipt = await exported(true);
  expect(receipt.seal).toMatchObject({ records: receipt.records.length, keyId: signer.keyId });
  expect(await independent(receipt)).toEqual({ code: 0, out: ours(receipt) });
  const cut = structuredClone(receipt);
  cut.records = cut.records.slice(0, 2);
  const recounted = structuredClone(cut);
  recounted.seal = { ...recounted.seal!, records: 2, head: recounted.records[1].digest };
  for (const [name, copy] of Object.entries({ cut, recounted })) {
    const theirs = await independent(copy);
    expect({ name, code: theirs.code, valid: theirs.out.valid }).toEqual({ name, code: 1, valid: false });
    expect({ name, ...ours(copy) }).toEqual({ name, valid: false });
  }
});

describe("approvers' own signatures, with the approvers directory", () => {
  // carol signs with an Ed25519 key; dave with a passkey (an ES256 key, its assertion made here as an authenticator would).
  const carol = generateApproverKey();
  const passkey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const entry = {
    id: 'credential-of-dave-0001',
    publicKey: passkey.publicKey.export({ format: 'der', type: 'spki' }).toString('base64url'),
    rpId: 'approvals.example.com',
    origin: 'https://approvals.example.com',
  };
  const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest();
  let directoryFile: string;
  let signatures: ApproverKeyring;

  beforeAll(() => {
    const directory = {
      mustSignRoles: ['ap-approver'],
      people: [
        { name: 'carol', principals: ['carol'], roles: ['ap-approver'], keys: [{ ed25519: carol.publicKey }] },
        { name: 'dave', principals: ['dave'], roles: ['ap-approver'], keys: [{ passkey: entry }] },
      ],
    };
    directoryFile = path.join(dir, 'approvers.json');
    writeFileSync(directoryFile, JSON.stringify(directory));
    signatures = ApproversDirectory.of(directory).signatures();
  });

  /** The step with its person's own signature: carol's Ed25519, dave's passkey. */
  function signed(step: Step): Step {
    const body = bodyOf(TASK, 1, null, step);
    if (step.by === 'carol') return { ...step, approverSignature: signStatement(statementOf(body), carol.privateKeyPem) };
    const clientDataJSON = Buffer.from(
      JSON.stringify({ type: 'webauthn.get', challenge: passkeyChallengeOf(statementOf(body)), origin: entry.origin }),
    );
    const authenticatorData = Buffer.concat([sha256(Buffer.from(entry.rpId)), Buffer.from([0x05]), Buffer.alloc(4)]);
    const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), passkey.privateKey);
    return {
      ...step,
      approverSignature: {
        alg: 'webauthn',
        keyId: entry.id,
        authenticatorData: authenticatorData.toString('base64url'),
        clientDataJSON: clientDataJSON.toString('base64url'),
        signature: signature.toString('base64url'),
        v: 2,
      },
    };
  }

  async function receiptOf(steps: Step[]): Promise<ApprovalReceipt> {
    const store = new FileDecisionStore(mkdtempSync(path.join(dir, 'own-')));
    for (const record of chainOf(TASK, signer, steps)) await store.append(record);
    return exportReceipt(store, TASK);
  }

  const second = { question: { key: 'second', message: 'Second look?' } };
  const close = (extra: Partial<Step> = {}): Step => ({ decision: 'close', outcome: 'accepted', required: 1, by: 'carol', ...extra });

  test('signed by their own keys (Ed25519, passkey): both verifiers find the questions approved', async () => {
    const receipt = await receiptOf([
      signed({ decision: 'approve', by: 'carol' }),
      close(),
      signed({ decision: 'approve', by: 'dave', ...second }),
      close({ by: 'dave', ...second }),
    ]);
    const theirs = await independent(receipt, publicKey, directoryFile);
    expect(theirs).toEqual({ code: 0, out: ours(receipt, keys, signatures) });
    expect(theirs.out).toMatchObject({
      valid: true,
      questions: [
        { key: 'approval', standing: 'approved', approvers: ['carol'] },
        { key: 'second', standing: 'approved', approvers: ['dave'] },
      ],
    });
  });

  test("an own signature that does not verify makes both refuse the receipt; the bridge's alone leaves the question open for both", async () => {
    const forged = await receiptOf([{ ...signed({ decision: 'reject', by: 'carol' }), decision: 'approve' }, close()]);
    expect((await independent(forged, publicKey, directoryFile)).out.valid).toBe(false);
    expect(ours(forged, keys, signatures)).toEqual({ valid: false });
    const passkeyForged = await receiptOf([{ ...signed({ decision: 'reject', by: 'dave' }), decision: 'approve' }, close({ by: 'dave' })]);
    expect((await independent(passkeyForged, publicKey, directoryFile)).out.valid).toBe(false);
    expect(ours(passkeyForged, keys, signatures)).toEqual({ valid: false });

    const bridgeAlone = await receiptOf([{ decision: 'approve', by: 'carol' }, close()]);
    const theirs = await independent(bridgeAlone, publicKey, directoryFile);
    expect(theirs).toEqual({ code: 0, out: ours(bridgeAlone, keys, signatures) });
    expect(theirs.out).toMatchObject({ valid: true, questions: [{ key: 'approval', standing: 'open', approvers: [] }] });
  });
});

test('the canonical form: the digests the independent verifier computes are ours, to the byte', async () => {
  const receipt = await exported();
  for (const record of receipt.records) expect(record.digest).toBe(digestOf(record.body));
  const theirs = await independent(receipt);
  expect(theirs.out.valid).toBe(true);
});

test("the page's test vectors: the independent verifier finds the receipt of docs/receipts.md valid, approved by carol", async () => {
  const page = readFileSync(path.join(ROOT, 'docs', 'receipts.md'), 'utf8');
  const block = (name: string) => /```[a-z]*\n([\s\S]*?)\n```/.exec(page.slice(page.indexOf(`<!-- vector: ${name} -->`)))![1];
  const key = path.join(dir, 'vector.pub.pem');
  writeFileSync(key, `${block('public key')}\n`);
  const theirs = await independent(JSON.parse(block('receipt')), key);
  expect(theirs).toEqual({
    code: 0,
    out: { valid: true, questions: [{ run: 'run-1', key: 'approval', standing: 'approved', approvers: ['carol'] }] },
  });
});

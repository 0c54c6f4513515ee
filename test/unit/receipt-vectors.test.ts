/** The test vectors of docs/receipts.md are what this project computes: canonical JSON, digests, key id, signature, a receipt. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { canonicalJson, digestOf } from '../../src/records/canonical';
import { createDecisionSigner, publicKeysFromPem } from '../../src/records/keys';
import { verifyReceipt } from '../../src/records/receipt';
import type { DecisionRecordBody } from '../../src/contract/decision-records';

const PAGE = readFileSync(path.join(__dirname, '..', '..', 'docs', 'receipts.md'), 'utf8');

/** The fenced block after `<!-- vector: name -->` on the page. */
function vector(name: string): string {
  const at = PAGE.indexOf(`<!-- vector: ${name} -->`);
  if (at < 0) throw new Error(`docs/receipts.md has no vector "${name}"`);
  const fence = /```[a-z]*\n([\s\S]*?)\n```/.exec(PAGE.slice(at));
  if (!fence) throw new Error(`no code block after the vector "${name}"`);
  return fence[1];
}

test('the key: the public key and key id the page gives are those of its private key', () => {
  const signer = createDecisionSigner(vector('private key'));
  expect(signer.publicKeyPem.trim()).toBe(vector('public key').trim());
  expect(PAGE).toContain(`Its \`keyId\` is \`${signer.keyId}\``);
});

test('canonical JSON and digests: the page shows what canonicalJson and digestOf compute', () => {
  const shown: unknown = JSON.parse(vector('shown'));
  expect(canonicalJson(shown)).toBe(vector('shown'));
  expect(PAGE).toContain(`\`${digestOf(shown)}\``);
  const body = JSON.parse(vector('body')) as DecisionRecordBody;
  expect(canonicalJson(body)).toBe(vector('body'));
  expect(body.subject).toBe(digestOf(shown));
});

test('the signature and the receipt: the page shows what the signer makes, and the receipt with its close checks as approved by carol', () => {
  const signer = createDecisionSigner(vector('private key'));
  const record = signer.sign(JSON.parse(vector('body')) as DecisionRecordBody);
  expect(PAGE).toContain(`\`${record.digest}\``);
  expect(PAGE).toContain(`\`${record.signature}\``);
  const receipt = JSON.parse(vector('receipt')) as { records: { body: DecisionRecordBody }[] };
  expect(receipt.records[0]).toEqual(record);
  // Then the bridge's close of the question, signed by the same key, after it in the chain.
  const close = receipt.records[1];
  expect(close).toEqual(signer.sign(close.body));
  expect(close.body).toMatchObject({ seq: 2, prev: record.digest, decision: 'close', outcome: 'accepted', required: 1 });
  const report = verifyReceipt(receipt, publicKeysFromPem([vector('public key')]));
  expect(report).toMatchObject({ ok: true, questions: [{ key: 'approval', standing: 'approved', approvers: [{ person: 'carol' }] }] });
});

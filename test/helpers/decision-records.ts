/** Decision records made by hand for tests: a signer of a fresh key, and chains of records from short descriptions. */
import { generateKeyPairSync } from 'node:crypto';
import { digestOf } from '../../src/records/canonical';
import { createDecisionSigner, publicKeysFromPem, type DecisionPublicKeys, type DecisionSigner } from '../../src/records/keys';
import type { DecisionRecordBody, SignedDecisionRecord } from '../../src/contract/decision-records';

/** A signer of a new Ed25519 key, and the public keys that check its records. */
export function testSigner(): { signer: DecisionSigner; keys: DecisionPublicKeys; privateKeyPem: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
  const privateKeyPem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  const signer = createDecisionSigner(privateKeyPem);
  return { signer, keys: publicKeysFromPem([signer.publicKeyPem]), privateKeyPem };
}

/** The invoice a test's approvals are about. */
export function invoiceShown(total = 1450): Record<string, unknown> {
  return {
    kind: 'invoice',
    vendorId: 'V-100',
    vendorName: 'ACME Office Supplies',
    invoiceNumber: 'INV-2026-0042',
    currency: 'EUR',
    total,
    lines: [{ lineItemId: 'LI-1', description: 'Chairs, 10 units', amount: total }],
    erp: { ok: true },
  };
}

/** One step of a chain: the decision, who, and anything else of the body; `unsigned` for a record nobody signed. */
export type Step = Partial<Omit<DecisionRecordBody, 'by'>> & {
  decision: DecisionRecordBody['decision'];
  by?: string | DecisionRecordBody['by'];
  unsigned?: boolean;
};

/** The body of one step at `seq` after `prev`. */
export function bodyOf(taskId: string, seq: number, prev: string | null, step: Step): DecisionRecordBody {
  const { by = 'carol', unsigned: _unsigned, ...rest } = step;
  const shown = rest.shown === undefined ? invoiceShown() : rest.shown;
  const who = typeof by === 'string' ? { principal: by, person: by.replace(/^oauth:/, ''), auth: 'token', roles: ['ap-approver'] } : by;
  return {
    v: 1,
    taskId,
    run: 'run-1',
    seq,
    prev,
    question: { key: 'approval', message: 'Approve invoice INV-2026-0042?' },
    at: `2026-11-26T10:00:0${seq % 10}.000Z`,
    via: 'approvals_answer',
    ...rest,
    shown,
    subject: rest.subject ?? digestOf(shown),
    by: who,
  };
}

/** The chain of `steps` for `taskId`, signed by `signer` (but the unsigned steps). */
export function chainOf(taskId: string, signer: DecisionSigner, steps: Step[]): SignedDecisionRecord[] {
  const records: SignedDecisionRecord[] = [];
  for (const step of steps) {
    const head = records.at(-1);
    const body = bodyOf(taskId, records.length + 1, head?.digest ?? null, step);
    records.push(step.unsigned ? { body, digest: digestOf(body) } : signer.sign(body));
  }
  return records;
}

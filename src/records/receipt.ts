/**
 * Approval receipts: a task's decision records exported as one JSON file an auditor verifies offline, with the
 * bridge's public key alone, and the report of that check. Node only (reading the store), pure otherwise.
 */
import type { ApproverKeyring } from './approver-signatures';
import type { DecisionPublicKeys, DecisionSigner } from './keys';
import type { DecisionStore, SignedDecisionRecord } from '../contract/decision-records';
import { questionsOf, type QuestionReport } from './question-report';
import { verifyChain } from './verify';

/** The `format` of a receipt. */
export const RECEIPT_FORMAT = 'temporal-mcp-tasks/approval-receipt';

/** A task's decision records, as exported. */
export interface ApprovalReceipt {
  format: typeof RECEIPT_FORMAT;
  v: 1;
  taskId: string;
  /** ISO 8601. */
  exportedAt: string;
  /** The keys the records are signed with. */
  keyIds: string[];
  records: SignedDecisionRecord[];
  /**
   * The bridge's signature of what the receipt holds when it was exported where the bridge's key is: how many records
   * and the digest of the last. A receipt cut or extended afterwards no longer matches it.
   */
  seal?: ReceiptSeal;
}

/** The `format` of what a receipt's seal signs. */
export const RECEIPT_SEAL_FORMAT = 'temporal-mcp-tasks/receipt-seal';

/** A receipt's seal (see {@link ApprovalReceipt.seal}). */
export interface ReceiptSeal {
  /** How many records the receipt held, and the digest of its last (null for none). */
  records: number;
  head: string | null;
  keyId: string;
  /** base64url Ed25519 signature of the canonical JSON of {@link sealedStatementOf}. */
  signature: string;
}

/** What a seal's signature is over: the receipt's task, export time, number of records and head. */
export function sealedStatementOf(receipt: Pick<ApprovalReceipt, 'taskId' | 'exportedAt'>, seal: Pick<ReceiptSeal, 'records' | 'head'>) {
  return { format: RECEIPT_SEAL_FORMAT, taskId: receipt.taskId, exportedAt: receipt.exportedAt, records: seal.records, head: seal.head };
}

/** What checking a receipt found. */
export interface ReceiptReport {
  /** False when the receipt is malformed or any signature, link of the chain or digest fails. */
  ok: boolean;
  taskId?: string;
  exportedAt?: string;
  keyIds: string[];
  /** The keys the check used. */
  checkedWith: string[];
  /** Whether approvers' own signatures were checked (an approvers directory was given). */
  approverKeysChecked: boolean;
  /** Whether the receipt carries a seal that checks out: a record cut from its end would then make it invalid. */
  sealed: boolean;
  records: number;
  problems: string[];
  questions: QuestionReport[];
}

/**
 * The receipt of `taskId`: its records as the store holds them now, sealed with `signer` (the bridge's key) when given.
 * Throws when the store cannot be read.
 */
export async function exportReceipt(store: DecisionStore, taskId: string, signer?: DecisionSigner): Promise<ApprovalReceipt> {
  const records = await store.records(taskId);
  const keyIds = [...new Set(records.map((record) => record.keyId).filter((id): id is string => typeof id === 'string'))];
  const receipt: ApprovalReceipt = { format: RECEIPT_FORMAT, v: 1, taskId, exportedAt: new Date().toISOString(), keyIds, records };
  if (signer) {
    const held = { records: records.length, head: records.at(-1)?.digest ?? null };
    receipt.seal = { ...held, keyId: signer.keyId, signature: signer.signValue(sealedStatementOf(receipt, held)) };
  }
  return receipt;
}

/**
 * Checks a receipt with `keys`: its shape, then the chain ({@link verifyChain}: task, order, links, digests,
 * signatures), then reports each question of each run: its decisions, who made them, the subject shown, and whether
 * it stands approved (signed approvals of the latest subject by distinct people, nothing blocking). The number of
 * approvals a question needs is not on record: the report says how many distinct people approved. Throws only what reading
 * `keys` throws.
 */
export function verifyReceipt(receipt: unknown, keys: DecisionPublicKeys, signatures?: ApproverKeyring): ReceiptReport {
  const report: ReceiptReport = {
    ok: false,
    keyIds: [],
    checkedWith: [...keys.keyIds],
    approverKeysChecked: signatures !== undefined,
    sealed: false,
    records: 0,
    problems: [],
    questions: [],
  };
  const shapeProblem = receiptShapeProblem(receipt);
  if (shapeProblem) {
    report.problems.push(shapeProblem);
    return report;
  }
  const { taskId, exportedAt, keyIds, records, seal } = receipt as ApprovalReceipt;
  Object.assign(report, { taskId, exportedAt, keyIds: [...keyIds], records: records.length });
  if (seal !== undefined) {
    const problem = sealProblem(receipt as ApprovalReceipt, keys);
    if (problem) {
      report.problems.push(problem);
      return report;
    }
    report.sealed = true;
  }
  if (records.length === 0) {
    report.problems.push(`there are no decision records of task ${taskId}: nothing was decided, or this is not the task's store`);
    return report;
  }
  const chain = verifyChain(taskId, records, keys);
  if (!chain.ok) {
    report.problems.push(chain.problem);
    return report;
  }
  report.questions = questionsOf(records, signatures);
  // A person's own signature that does not verify under their key: the record was altered or forged.
  for (const question of report.questions) {
    for (const decision of question.decisions) {
      if (decision.ownSignature?.status === 'invalid') {
        const key = decision.ownSignature.keyId === undefined ? 'any key' : `key ${decision.ownSignature.keyId}`;
        report.problems.push(
          `record ${decision.seq} (${decision.decision} by ${decision.person}) carries a signature of theirs that is not valid under ${key}: it was altered or forged`,
        );
      }
    }
  }
  report.ok = report.problems.length === 0;
  return report;
}

/** Why a receipt's seal does not hold (undefined: it does): the receipt was cut or extended after it, or it was forged. */
function sealProblem(receipt: ApprovalReceipt, keys: DecisionPublicKeys): string | undefined {
  const { seal, records } = receipt;
  if (
    seal === null ||
    typeof seal !== 'object' ||
    !Number.isInteger(seal.records) ||
    typeof seal.keyId !== 'string' ||
    typeof seal.signature !== 'string'
  ) {
    return "the receipt's seal is malformed (records, head, keyId, signature)";
  }
  if (!keys.keyIds.includes(seal.keyId)) {
    return `the receipt is sealed with key ${seal.keyId}, which is not among the public keys given (${keys.keyIds.join(', ') || 'none'})`;
  }
  if (!keys.verifyValue(sealedStatementOf(receipt, seal), seal.keyId, seal.signature)) {
    return `the receipt's seal is not valid under key ${seal.keyId}: its task, time, count or head was altered`;
  }
  const head = records.at(-1)?.digest ?? null;
  if (seal.records !== records.length || seal.head !== head) {
    return `the receipt was sealed with ${seal.records} record(s) ending at ${String(seal.head)}, and holds ${records.length} ending at ${String(head)}: records were cut from it or added to it`;
  }
  return undefined;
}

function receiptShapeProblem(receipt: unknown): string | undefined {
  if (receipt === null || typeof receipt !== 'object' || Array.isArray(receipt)) return 'the receipt is not a JSON object';
  const candidate = receipt as Partial<ApprovalReceipt>;
  if (candidate.format !== RECEIPT_FORMAT) return `the receipt's format is ${JSON.stringify(candidate.format)}, not "${RECEIPT_FORMAT}"`;
  if (candidate.v !== 1) return `the receipt is of version ${JSON.stringify(candidate.v)}; this check knows version 1`;
  if (typeof candidate.taskId !== 'string' || candidate.taskId === '') return 'the receipt names no task (taskId)';
  if (typeof candidate.exportedAt !== 'string') return 'the receipt has no exportedAt time';
  if (!Array.isArray(candidate.keyIds) || !candidate.keyIds.every((id) => typeof id === 'string'))
    return 'the receipt has no list of keyIds';
  if (!Array.isArray(candidate.records)) return 'the receipt has no list of records';
  return undefined;
}

/**
 * Approval receipts: a task's decision records exported as one JSON file an auditor verifies offline, with the
 * bridge's public key alone, and the report of that check. Node only (reading the store), pure otherwise.
 */
import { defaultPersonOf } from '../contract/approvals';
import { checkApproverSignature, type ApproverKeyring } from './approver-signatures';
import type { DecisionPublicKeys, DecisionSigner } from './keys';
import { CLOSE_VIA, type DecisionRecordBody, type DecisionStore, type SignedDecisionRecord } from '../contract/decision-records';
import { verifyChain, type CountedApproval } from './verify';

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

/** One decision of a question, as a receipt report shows it. */
export interface ReportedDecision {
  seq: number;
  decision: DecisionRecordBody['decision'];
  person: string;
  principal: string;
  roles: string[];
  /** `named`, or the role by which they were asked. */
  actingAs?: string;
  auth: string;
  at: string;
  /** The path it came by (`approvals_answer`, `timer`, …). */
  via: string;
  delegatedTo?: string;
  comment?: string;
  reason?: string;
  /** `close`: how the question closed, and the approvals it required. */
  outcome?: string;
  required?: number;
  /** `close` written late (a repair): when the workflow closed the question. */
  closedAt?: string;
  /** True for a record the bridge signed; false for one the workflow wrote (an expiry). */
  signed: boolean;
  /**
   * The person's own signature, when the record carries one: `valid` under a key the directory lists for them,
   * `unknown-key` (the directory lists no such key of theirs), `invalid` (altered or forged), or `unchecked` (no
   * directory was given).
   */
  ownSignature?: {
    status: 'valid' | 'unknown-key' | 'invalid' | 'unchecked';
    keyId?: string;
    /** 1: over a statement that names no run (made before statements named it); 2: bound to the run. */
    statement?: 1 | 2;
  };
  /** True when the person must sign their approvals with their own key (the directory says so). */
  mustSign?: boolean;
  /** True when a later signed void takes it back. */
  voided: boolean;
  /** False when the person was shown another subject than the question's latest. */
  sameSubject: boolean;
  digest: string;
}

/** Where one question stands on the record. */
export type QuestionStanding = 'approved' | 'rejected' | 'declined' | 'expired' | 'cancelled' | 'open';

/** One question of one run, as a receipt report shows it. */
export interface QuestionReport {
  run: string;
  key: string;
  message: string;
  /** The subject shown with the question's latest record, and its digest. */
  shown: unknown;
  subject: string;
  decisions: ReportedDecision[];
  /**
   * Approvals that count: signed, of the latest subject, not voided, one per person; signed with the person's own key
   * too when the directory says they must sign.
   */
  approvers: CountedApproval[];
  standing: QuestionStanding;
  /** In words: by whom it stands approved, or what stops it. */
  verdict: string;
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

/** The questions of a verified chain, in the order they were first decided. */
function questionsOf(records: SignedDecisionRecord[], signatures: ApproverKeyring | undefined): QuestionReport[] {
  const groups = new Map<string, SignedDecisionRecord[]>();
  for (const record of records) {
    const id = JSON.stringify([record.body.run, record.body.question.key]);
    const group = groups.get(id);
    if (group) group.push(record);
    else groups.set(id, [record]);
  }
  return [...groups.values()].map((group) => questionOf(group, signatures));
}

// eslint-disable-next-line max-lines-per-function -- longer than a function should be; split next
function questionOf(records: SignedDecisionRecord[], signatures: ApproverKeyring | undefined): QuestionReport {
  const latest = records[records.length - 1].body;
  // A void withdraws an approval or a hand-over only: a rejection, a decline or an expiry stands.
  const withdrawable = new Set(
    records.filter((record) => record.body.decision === 'approve' || record.body.decision === 'delegate').map((record) => record.digest),
  );
  const voided = new Set(
    records
      .filter((record) => record.body.decision === 'void' && record.signature !== undefined)
      .map((record) => record.body.voids)
      .filter((digest) => digest !== undefined && withdrawable.has(digest)),
  );
  const decisions: ReportedDecision[] = records.map(({ body, digest, signature }) => {
    // The directory, when given, says who a principal is; else the record does.
    const person = signatures?.personOf(body.by.principal) ?? body.by.person ?? defaultPersonOf(body.by.principal);
    return {
      seq: body.seq,
      decision: body.decision,
      person,
      principal: body.by.principal,
      roles: [...(body.by.roles ?? [])],
      ...(body.by.actingAs !== undefined && { actingAs: body.by.actingAs }),
      auth: body.by.auth,
      at: body.at,
      via: body.via,
      ...(body.delegatedTo !== undefined && { delegatedTo: body.delegatedTo }),
      ...(body.comment !== undefined && { comment: body.comment }),
      ...(body.reason !== undefined && { reason: body.reason }),
      ...(body.outcome !== undefined && { outcome: body.outcome }),
      ...(body.required !== undefined && { required: body.required }),
      ...(body.closedAt !== undefined && { closedAt: body.closedAt }),
      signed: signature !== undefined,
      ...ownSignatureOf(body, person, signatures),
      voided: voided.has(digest),
      sameSubject: body.subject === latest.subject,
      digest,
    };
  });
  const standingOnes = decisions.filter((decision) => !decision.voided && decision.decision !== 'void' && decision.decision !== 'close');
  const blocker = standingOnes.find((decision) => ['reject', 'decline', 'expire'].includes(decision.decision));
  const approvers: CountedApproval[] = [];
  const counted = new Set<string>();
  const unlisted = new Set<string>();
  for (const decision of standingOnes) {
    if (decision.decision !== 'approve' || !decision.signed || !decision.sameSubject) continue;
    // With a directory, only the people it lists count: not whoever a record names.
    if (signatures && !signatures.mayCount(decision.principal)) {
      unlisted.add(`${decision.person} (principal ${decision.principal})`);
      continue;
    }
    const own = decision.ownSignature;
    if (own?.status === 'invalid' || (decision.mustSign && own?.status !== 'valid')) continue;
    if (counted.has(decision.person)) continue;
    counted.add(decision.person);
    approvers.push({
      person: decision.person,
      ...(own?.status === 'valid' && { signedWith: own.keyId }),
      principal: decision.principal,
      roles: decision.roles,
      at: decision.at,
      digest: decision.digest,
    });
  }
  let standing: QuestionStanding;
  let verdict: string;
  // The bridge's signed close says how the question closed; the latest counts (a reset run may close it again).
  const close = [...records].reverse().find((record) => record.body.decision === 'close' && record.signature !== undefined);
  // A close the bridge wrote late, for an answer whose close was never written when it was taken.
  const late = close?.body.via === CLOSE_VIA.repair ? `, closed late by repair at ${close.body.at}` : '';
  if (blocker) {
    standing = blocker.decision === 'reject' ? 'rejected' : blocker.decision === 'decline' ? 'declined' : 'expired';
    verdict =
      blocker.decision === 'expire'
        ? `expired unanswered at ${blocker.at}${close?.body.outcome === 'expired' ? ', closed on record' : ''}: nothing may be done on it`
        : `${standing} by ${blocker.person} (principal ${blocker.principal}) at ${blocker.at}${late}: nothing may be done on it`;
  } else if (close?.body.outcome === 'cancelled') {
    standing = 'cancelled';
    verdict = `cancelled with its task, closed on record at ${close.body.at} with ${approvals(approvers.length)}: nothing may be done on it`;
  } else if (approvers.length > 0) {
    const people = approvers.map((approver) => `${approver.person} (principal ${approver.principal})`).join(', ');
    const counted = `${approvers.length} distinct ${approvers.length === 1 ? 'person' : 'people'}: ${people}`;
    // Approved only as the bridge closed it: a signed close that says so, and as many approvals as it required.
    const required = close?.body.required ?? 0;
    if (close?.body.outcome === 'accepted' && approvers.length >= required) {
      standing = 'approved';
      verdict = `approved by ${counted}, of ${required} required; closed at ${close.body.closedAt ?? close.body.at}${late}; no rejection on record`;
    } else {
      standing = 'open';
      verdict = close
        ? `not approved: closed as ${String(close.body.outcome)} with ${required} approval(s) required, and ${approvals(approvers.length)} of what was shown on record (${counted})`
        : `not approved: ${approvals(approvers.length)} on record (${counted}) but no close record: the question is still open, or these records end before it closed (cut)`;
    }
  } else {
    standing = 'open';
    const unsigned = standingOnes.filter(
      (decision) => decision.decision === 'approve' && decision.mustSign && decision.ownSignature?.status !== 'valid',
    );
    verdict =
      unlisted.size > 0
        ? `not approved: the approvals on record are by ${[...unlisted].join(', ')}, whom the approvers directory does not list`
        : unsigned.length > 0
          ? `not approved: ${[...new Set(unsigned.map((decision) => decision.person))].join(', ')} must sign approvals with their own key, and the approval on record bears the bridge's signature alone`
          : 'not approved: no signed approval of what it is about is on record';
  }
  return {
    run: latest.run,
    key: latest.question.key,
    message: latest.question.message,
    shown: latest.shown,
    subject: latest.subject,
    decisions,
    approvers,
    standing,
    verdict,
  };
}

function approvals(count: number): string {
  return `${count} approval${count === 1 ? '' : 's'}`;
}

/** The report of a record's own signature and whether its person must sign (nothing when neither applies). */
function ownSignatureOf(
  body: DecisionRecordBody,
  person: string,
  signatures: ApproverKeyring | undefined,
): Pick<ReportedDecision, 'ownSignature' | 'mustSign'> {
  const mustSign = body.decision === 'approve' && signatures?.mustSign(person, body.by.roles ?? []) === true;
  const check = checkApproverSignature(body, person, signatures);
  let ownSignature: ReportedDecision['ownSignature'];
  if (check.status === 'valid') ownSignature = { status: 'valid', keyId: check.keyId, statement: check.version };
  else if (check.status === 'unknown-key') ownSignature = { status: signatures ? 'unknown-key' : 'unchecked', keyId: check.keyId };
  else if (check.status === 'invalid') {
    const keyId = (body.approverSignature as { keyId?: unknown } | undefined)?.keyId;
    ownSignature = { status: 'invalid', ...(typeof keyId === 'string' && { keyId }) };
  }
  return { ...(ownSignature && { ownSignature }), ...(mustSign && { mustSign }) };
}

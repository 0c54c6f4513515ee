/**
 * The report of each question of a verified chain of decision records: its decisions, who made them, the subject
 * shown, the approvals that count, and where it stands (approved, rejected, declined, expired, cancelled or open), in
 * words too. Pure.
 */
import { defaultPersonOf } from '../contract/approvals';
import { checkApproverSignature, type ApproverKeyring } from './approver-signatures';
import { CLOSE_VIA, type DecisionRecordBody, type SignedDecisionRecord } from '../contract/decision-records';
import type { CountedApproval } from './verify';

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

/** The questions of a verified chain, in the order they were first decided. */
export function questionsOf(records: SignedDecisionRecord[], signatures: ApproverKeyring | undefined): QuestionReport[] {
  const groups = new Map<string, SignedDecisionRecord[]>();
  for (const record of records) {
    const id = JSON.stringify([record.body.run, record.body.question.key]);
    const group = groups.get(id);
    if (group) group.push(record);
    else groups.set(id, [record]);
  }
  return [...groups.values()].map((group) => questionOf(group, signatures));
}

/** The report of one question, from its records in the chain's order. */
function questionOf(records: SignedDecisionRecord[], signatures: ApproverKeyring | undefined): QuestionReport {
  const latest = records[records.length - 1].body;
  const decisions = decisionsOf(records, latest.subject, signatures);
  const standingOnes = decisions.filter((decision) => !decision.voided && decision.decision !== 'void' && decision.decision !== 'close');
  const { approvers, unlisted } = countedApprovals(standingOnes, signatures);
  const { standing, verdict } = standingOf(records, standingOnes, approvers, unlisted);
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

/**
 * Each record of a question as a decision: who made it and how, whether a later void takes it back, and whether it was
 * shown `latestSubject`, the subject of the question's latest record.
 */
function decisionsOf(records: SignedDecisionRecord[], latestSubject: string, signatures: ApproverKeyring | undefined): ReportedDecision[] {
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
  return records.map(({ body, digest, signature }) => {
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
      sameSubject: body.subject === latestSubject,
      digest,
    };
  });
}

/**
 * The approvals that count among the decisions that stand: signed, of the latest subject, one per person, by someone
 * the directory lists (the others are returned as `unlisted`), with a valid own signature where one is needed.
 */
function countedApprovals(
  standingOnes: ReportedDecision[],
  signatures: ApproverKeyring | undefined,
): { approvers: CountedApproval[]; unlisted: Set<string> } {
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
  return { approvers, unlisted };
}

/** Where a question stands, and why in words: a rejection, decline or expiry on record; else its close and its approvals. */
function standingOf(
  records: SignedDecisionRecord[],
  standingOnes: ReportedDecision[],
  approvers: CountedApproval[],
  unlisted: Set<string>,
): Pick<QuestionReport, 'standing' | 'verdict'> {
  const blocker = standingOnes.find((decision) => ['reject', 'decline', 'expire'].includes(decision.decision));
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
  return { standing, verdict };
}

/** `1 approval`, `2 approvals`. */
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

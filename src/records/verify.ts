/**
 * Checking decision records: that a task's chain is whole and signed ({@link verifyChain}), and whether the records
 * of one question allow its effect ({@link judgeApprovals}). Pure, but for the hashing.
 */
import { defaultPersonOf, type InputAudience } from '../contract/approvals';
import { checkApproverSignature, type ApproverKeyring } from './approver-signatures';
import { digestOf } from './canonical';
import type { DecisionPublicKeys } from './keys';
import type { ApprovalJudgement, CountedApproval, SignedDecisionRecord, VerifyDecisionsInput } from '../contract/decision-records';

export type { ApprovalJudgement, CountedApproval } from '../contract/decision-records';

/** What a check found: nothing wrong, or the first problem, in words. */
export type ChainCheck = { ok: true } | { ok: false; problem: string };

/**
 * Checks the chain of `taskId`: every record belongs to the task, seqs run 1..n without gap, each record names the
 * digest of the one before (null for the first), each digest is that of its body, each subject that of what was
 * shown, and each signature is valid under one of `keys`. Only an expiry the workflow recorded
 * (`by.auth: 'workflow'`) may be unsigned. Throws only what reading `keys` throws (see `decisionPublicKeysFromEnv`).
 */
export function verifyChain(taskId: string, records: SignedDecisionRecord[], keys: DecisionPublicKeys): ChainCheck {
  if (!Array.isArray(records)) return { ok: false, problem: 'the records are not a list' };
  for (let index = 0; index < records.length; index++) {
    const problem = recordProblem(taskId, records, index, keys);
    if (problem) return { ok: false, problem };
  }
  return { ok: true };
}

function recordProblem(taskId: string, records: SignedDecisionRecord[], index: number, keys: DecisionPublicKeys): string | undefined {
  const record = records[index];
  const place = `record ${index + 1}`;
  if (!isObject(record) || !isObject(record.body) || typeof record.digest !== 'string') {
    return `${place} is not a decision record (it needs a body and a digest)`;
  }
  const { body } = record;
  if (body.v !== 1) return `${place} is of version ${String(body.v)}; this check knows version 1`;
  let digest: string;
  try {
    digest = digestOf(body);
  } catch (error) {
    return `${place} cannot be read as canonical JSON: ${(error as Error).message}`;
  }
  if (digest !== record.digest) return `${place} was altered: its content does not match its digest`;
  if (body.taskId !== taskId) return `${place} belongs to task ${String(body.taskId)}, not to ${taskId}: it was moved from another chain`;
  if (body.seq !== index + 1) {
    return `${place} has seq ${String(body.seq)} where ${index + 1} belongs: a record is missing or the records were reordered`;
  }
  const prev = index === 0 ? null : records[index - 1].digest;
  if (body.prev !== prev) return `${place} does not follow record ${index}: the chain is broken (a record was replaced, removed or moved)`;
  let subject: string;
  try {
    subject = digestOf(body.shown === undefined ? null : body.shown);
  } catch (error) {
    return `${place}'s subject cannot be read as canonical JSON: ${(error as Error).message}`;
  }
  if (body.subject !== subject) return `${place}'s subject digest does not match what it says was shown`;
  if (record.signature === undefined) {
    if (body.by?.auth === 'workflow' && body.decision === 'expire') return undefined;
    return `${place} (${String(body.decision)} by ${String(body.by?.principal)}) is not signed; only an expiry the workflow records may be`;
  }
  if (record.keyId === undefined || !keys.keyIds.includes(record.keyId)) {
    return `${place} is signed by key ${String(record.keyId)}, which is not among the public keys given (${keys.keyIds.join(', ') || 'none'}); give that key's public half`;
  }
  if (!keys.verify(record)) return `${place}'s signature is not valid under key ${record.keyId}: the record was altered or forged`;
  return undefined;
}

/** What the records of one question must show before its effect: {@link VerifyDecisionsInput}, and who is who. */
export interface ApprovalExpectation extends VerifyDecisionsInput {
  /** The person behind a principal (an approvers directory); default: the one the record names. */
  personOf?: (principal: string) => string;
  /**
   * The people's own keys, who must sign, and who may count (an approvers directory): an approval by someone who must
   * sign counts only with a valid signature of their own, one with a signature that does not verify never counts, and
   * one by someone the directory does not list (or whom `audience` does not address) never counts.
   */
  signatures?: ApproverKeyring;
}

/**
 * Whether the records of `expectation.run` and question `expectation.key` allow the effect: no rejection, decline or
 * expiry (a void never takes one back: it withdraws only an approval or a hand-over), and signed approvals of exactly `expectation.subject` by at least
 * `required` distinct people other than the requester. Counts people, not principals: `personOf` when given, else
 * the person the record names. Does not check signatures or the chain: {@link verifyChain} does. Never throws.
 */
export function judgeApprovals(records: SignedDecisionRecord[], expectation: ApprovalExpectation): ApprovalJudgement {
  const mine = records.filter(
    (record) => isObject(record?.body) && record.body.run === expectation.run && record.body.question?.key === expectation.key,
  );
  // A void withdraws an approval or a hand-over the workflow refused; a rejection, a decline or an expiry stands.
  const withdrawable = new Set(
    mine.filter((record) => record.body.decision === 'approve' || record.body.decision === 'delegate').map((record) => record.digest),
  );
  const voided = new Set(
    mine
      .filter((record) => record.body.decision === 'void' && record.signature !== undefined && typeof record.body.voids === 'string')
      .map((record) => record.body.voids as string)
      .filter((digest) => withdrawable.has(digest)),
  );
  const standing = mine.filter((record) => !voided.has(record.digest));
  const personOf = (principal: string, named?: string) => expectation.personOf?.(principal) ?? named ?? defaultPersonOf(principal);

  const blocker = standing.find((record) => ['reject', 'decline', 'expire'].includes(record.body.decision));
  if (blocker) return { ok: false, reason: blockerReason(blocker, personOf(blocker.body.by.principal, blocker.body.by.person)) };

  let expected: string;
  try {
    expected = digestOf(expectation.subject);
  } catch (error) {
    return { ok: false, reason: `what will be done cannot be compared with what was approved: ${(error as Error).message}` };
  }
  const requester = expectation.personOf?.(expectation.requester) ?? defaultPersonOf(expectation.requester);
  const { approvers, notes } = countedApprovals(standing, { expected, requester, personOf }, expectation);
  if (approvers.length < expectation.required) {
    const counted = `${approvers.length} of ${expectation.required} approval${expectation.required === 1 ? '' : 's'} on record for this subject`;
    const by = approvers.length > 0 ? ` (by ${approvers.map((approver) => approver.person).join(', ')})` : '';
    const more = expectation.required - approvers.length;
    return {
      ok: false,
      reason: `${counted}${by}${notes.length > 0 ? `; ${notes.join('; ')}` : ''}. ${more} more distinct ${more === 1 ? 'person' : 'people'} must approve it.`,
    };
  }
  return { ok: true, approvers };
}

/** Who is who, and what an approval must be of, for {@link countedApprovals}. */
interface ApprovalCount {
  /** The digest of the subject the effect is checked against. */
  expected: string;
  /** The requester's person, whose own approval never counts. */
  requester: string;
  /** The person behind a principal: `personOf` of the expectation, else the one the record names. */
  personOf: (principal: string, named?: string) => string;
}

/**
 * The approvals among `standing` that count, one per person, in the order made: signed by the bridge, of the expected
 * subject, not by the requester, by someone the directory lets count, with a valid own signature where one is needed.
 * `notes` say why each other approval does not count.
 */
function countedApprovals(
  standing: SignedDecisionRecord[],
  { expected, requester, personOf }: ApprovalCount,
  expectation: ApprovalExpectation,
): { approvers: CountedApproval[]; notes: string[] } {
  const approvers: CountedApproval[] = [];
  const counted = new Set<string>();
  const notes: string[] = [];
  for (const record of standing) {
    const { body } = record;
    if (body.decision !== 'approve') continue;
    const who = `${personOf(body.by.principal, body.by.person)} (principal ${body.by.principal})`;
    if (record.signature === undefined) {
      notes.push(`the approval by ${who} at ${body.at} is not signed by the bridge and does not count`);
      continue;
    }
    if (body.subject !== expected) {
      notes.push(
        `${who} approved something else at ${body.at}: what they were shown differs from the subject the effect is checked against`,
      );
      continue;
    }
    const person = personOf(body.by.principal, body.by.person);
    if (person === requester || body.by.principal === expectation.requester) {
      notes.push(`the approval by ${who} does not count: it is their own request`);
      continue;
    }
    if (expectation.signatures && !expectation.signatures.mayCount(body.by.principal, expectation.audience)) {
      const why = expectation.audience
        ? `the question did not address them (it asks ${describeAudience(expectation.audience)}; the approvers directory says whom that is)`
        : 'the approvers directory does not list them';
      notes.push(`the approval by ${who} does not count: ${why}`);
      continue;
    }
    const own = checkApproverSignature(body, person, expectation.signatures);
    if (own.status === 'invalid') {
      notes.push(`the approval by ${who} does not count: ${own.problem}`);
      continue;
    }
    if (own.status !== 'valid' && expectation.signatures?.mustSign(person, body.by.roles ?? [])) {
      notes.push(
        own.status === 'absent'
          ? `the approval by ${who} does not count: ${person} must sign approvals with their own key, and it bears the bridge's signature alone`
          : `the approval by ${who} does not count: it is signed with key ${own.keyId}, which the approvers directory does not list for ${person}`,
      );
      continue;
    }
    if (counted.has(person)) continue;
    counted.add(person);
    approvers.push({
      person,
      ...(own.status === 'valid' && { signedWith: own.keyId }),
      principal: body.by.principal,
      roles: [...(body.by.roles ?? [])],
      at: body.at,
      digest: record.digest,
    });
  }
  return { approvers, notes };
}

function blockerReason(record: SignedDecisionRecord, person: string): string {
  const { body } = record;
  const who = `${person} (principal ${body.by.principal})`;
  const why = body.reason ? ` (${body.reason})` : body.comment ? ` ("${body.comment}")` : '';
  switch (body.decision) {
    case 'reject':
      return `${who} rejected it at ${body.at}${why}, and the rejection is on record: it cannot be paid on this request; submit it again to be approved anew.`;
    case 'decline':
      return `${who} declined to approve it at ${body.at}${why}, and that is on record: it cannot be paid on this request; submit it again to be approved anew.`;
    default:
      return `the question expired unanswered at ${body.at}${why}, and the expiry is on record: it cannot be paid on this request; submit it again to be approved anew.`;
  }
}

function isObject(value: unknown): value is Record<string, any> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** An audience as a person reads it: `role ap-approver or principal carol`. */
function describeAudience(audience: InputAudience): string {
  const parts = [
    ...(audience.roles ?? []).map((role) => `role ${role}`),
    ...(audience.principals ?? []).map((principal) => `principal ${principal}`),
  ];
  return parts.join(' or ') || 'nobody';
}

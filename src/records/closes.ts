/**
 * Where a question's close stands in its task's chain of decision records: a question is closed on record by a signed
 * close that follows its last decision. Plain functions over records.
 */
import type { DecisionRecordBody, SignedDecisionRecord } from '../contract/decision-records';

/** The decisions after which a question needs a close on record (a void or a close never does). */
const DECIDING: ReadonlySet<DecisionRecordBody['decision']> = new Set(['approve', 'reject', 'decline', 'delegate', 'expire']);

/** The records of question `key` of run `run`, in chain order. */
export function questionRecords(records: readonly SignedDecisionRecord[], run: string, key: string): SignedDecisionRecord[] {
  return records.filter((record) => record.body?.run === run && record.body.question?.key === key);
}

/**
 * Where question `key` of run `run` stands: `unrecorded` when nothing of it is on record (nothing to close); `closed`
 * with the signed close that follows its last decision (a withdrawn approval or hand-over is none); else `open`, with
 * its last decision (what a close repeats of the question: its message and what it showed).
 */
export function closeStanding(
  records: readonly SignedDecisionRecord[],
  run: string,
  key: string,
): { state: 'unrecorded' } | { state: 'closed'; close: SignedDecisionRecord } | { state: 'open'; last: SignedDecisionRecord } {
  const mine = questionRecords(records, run, key);
  // An approval or a hand-over the workflow refused, withdrawn by a signed void, decided nothing.
  const voided = new Set(
    mine
      .filter((record) => record.body.decision === 'void' && record.signature !== undefined && typeof record.body.voids === 'string')
      .map((record) => record.body.voids as string),
  );
  let lastDecision = -1;
  mine.forEach((record, index) => {
    const withdrawn = (record.body.decision === 'approve' || record.body.decision === 'delegate') && voided.has(record.digest);
    if (DECIDING.has(record.body.decision) && !withdrawn) lastDecision = index;
  });
  if (lastDecision < 0) return { state: 'unrecorded' };
  const close = mine.slice(lastDecision + 1).find((record) => record.body.decision === 'close' && record.signature !== undefined);
  return close ? { state: 'closed', close } : { state: 'open', last: mine[lastDecision] };
}

/**
 * The pace at which one blocked 2025-11-25 `tasks/result` asks a task's open questions: which one to ask next, and how
 * long to hold back after the client dismissed or answered badly. Pure: it keeps the request's own record and reads
 * the clock it is given, so that its rules are tested without Temporal.
 */
import type { PendingInput } from '../../contract/task-contract';
import { backoffMs } from '../../util/wait';

/** The pause before a question whose last answer was refused is asked again: 1 s, doubling, at most 30 s. */
export function refusalBackoffMs(refusalsInARow: number): number {
  return backoffMs(refusalsInARow, 1000, 30_000);
}

/** What one request does next about a task's open questions. */
export type NextQuestion =
  /** Ask this one now. */
  | { kind: 'ask'; input: PendingInput }
  /** Ask nothing before `waitMs` has passed (or the task has changed): every open question is held back. */
  | { kind: 'pause'; waitMs: number }
  /** Nothing to ask on this request: wait for the task's next change. */
  | { kind: 'none' };

/**
 * One request's record of the questions it asked. A dismissed question (cancelled, or left until the elicitation timed
 * out) lets the task's other open questions be asked at once; once each open question was dismissed, none of them is
 * asked again on this request until `dismissPauseMs` after the latest dismissal, whichever question it was (the pause
 * is the task's, not a question's, so a client that dismisses everything is not asked round and round). A question
 * added by the workflow meanwhile is asked at once. After a refused answer nothing is asked for
 * {@link refusalBackoffMs}, growing with each refusal in a row.
 */
export class AskingPace {
  private readonly dismissed = new Set<string>();
  private dismissedUntil = 0;
  private refusals = 0;
  private refusedUntil = 0;

  constructor(
    private readonly dismissPauseMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** What to do about `open`, the questions still open that this connection may ask, in the order the workflow asked them. */
  next(open: readonly PendingInput[]): NextQuestion {
    const now = this.now();
    if (this.dismissed.size > 0 && now >= this.dismissedUntil) this.dismissed.clear();
    const input = open.find((candidate) => !this.dismissed.has(candidate.key));
    if (!input) return open.length > 0 ? { kind: 'pause', waitMs: this.dismissedUntil - now } : { kind: 'none' };
    if (now < this.refusedUntil) return { kind: 'pause', waitMs: this.refusedUntil - now };
    return { kind: 'ask', input };
  }

  /** The question `key` was dismissed on this request. */
  dismissedOne(key: string): void {
    this.dismissed.add(key);
    this.dismissedUntil = this.now() + this.dismissPauseMs;
    this.refusals = 0;
  }

  /** The answer to the question asked last did not fit it. */
  refused(): void {
    this.refusals++;
    this.refusedUntil = this.now() + refusalBackoffMs(this.refusals);
  }

  /** The question asked last was answered (or answered elsewhere): refusals in a row start again. */
  settled(): void {
    this.refusals = 0;
  }
}

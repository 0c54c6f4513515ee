/** Failures that repeat (a long poll, a query), said in the log at most once a period, with how many came since. */

/** What a report says: how many failures it stands for, and whether an earlier report was made. */
export interface DueReport {
  failures: number;
  /** There was an earlier report: "since the last report". */
  again: boolean;
}

/** Counts failures; {@link count} says when one is to be reported (see the module's comment). */
export class FailureReport {
  private unreported = 0;
  private reportedAt = 0;

  constructor(private readonly periodMs: number) {}

  /** Counts one failure: what to report now, or undefined while the last report is younger than the period. */
  count(now = Date.now()): DueReport | undefined {
    this.unreported++;
    if (now - this.reportedAt < this.periodMs) return undefined;
    const due = { failures: this.unreported, again: this.reportedAt > 0 };
    this.unreported = 0;
    this.reportedAt = now;
    return due;
  }
}

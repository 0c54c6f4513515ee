/**
 * Following many tasks at the cost of their changes rather than of their number: one visibility query per interval
 * for the whole process, instead of a history long poll per task.
 *
 * A workflow that speaks the task contract stamps each state it publishes with its own time in the `McpChangedAt`
 * search attribute, and a run's close sets its `CloseTime`. Each query asks visibility for the runs stamped or closed
 * since a margin before the last query that answered; a run the reads keep whose stamp is newer than the one they
 * read, or that closed, is reported, and its kept read goes. The feed never serves what it reads: it only drops.
 *
 * What it vouches for: every change whose visibility record was written before the last answered query began, as
 * long as visibility lags less than the margin (a record later than that is caught by the reads' own age limit), while
 * its queries answer. Once one fails, every kept read goes: the feed starts afresh from the reads made after it.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { CHANGED_AT_SEARCH_ATTRIBUTE } from '../contract/task-contract';
import { FailureReport } from '../util/failure-report';
import { log, withoutLogContext } from '../util/log';
import { sleep } from '../util/wait';
import { describeServiceError } from './errors';

const RUNNING = temporal.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;

/** Options of {@link ChangeFeed}. */
export interface ChangeFeedOptions {
  /** Pause between two queries. */
  intervalMs: number;
  /**
   * How far before the last answered query the next one looks back: room for visibility's lag and for the clocks of
   * Temporal and this process to differ. Default {@link DEFAULT_FEED_MARGIN_MS}.
   */
  marginMs?: number;
  /** Deadline of one query (all its pages). Default {@link DEFAULT_FEED_QUERY_TIMEOUT_MS}. */
  queryTimeoutMs?: number;
  /** Rows asked per page. Default 1,000. */
  pageSize?: number;
}

/** What the feed counted, for benchmarks. */
export interface ChangeFeedStats {
  /** Runs followed now. */
  following: number;
  /** Visibility requests made (pages). */
  queries: number;
  /** Rows those returned. */
  rows: number;
  /** Followed runs reported as changed. */
  changes: number;
  /** Queries that failed. */
  failures: number;
}

/** The lookback a query adds before the last answered one, by default. */
export const DEFAULT_FEED_MARGIN_MS = 10_000;

/**
 * The deadline of one query, by default. A query answers in milliseconds; one that takes long is a process (or a
 * visibility store) under load, whose reads are better served a little late than all sent to Temporal at once.
 */
export const DEFAULT_FEED_QUERY_TIMEOUT_MS = 30_000;

/** Failed queries are reported at most this often, counted together. */
const FAILURE_REPORT_MS = 60_000;

/** A run the reads keep, with the stamp of the state they read. */
interface Followed {
  runId: string;
  /** `McpChangedAt` of the read, ms since the epoch. */
  stamp: number;
}

/** The `McpChangedAt` of a run's search attributes as ms since the epoch, if it has one (a raw payload). */
export function changeStampOf(searchAttributes: temporal.api.common.v1.ISearchAttributes | null | undefined): number | undefined {
  const payload = searchAttributes?.indexedFields?.[CHANGED_AT_SEARCH_ATTRIBUTE];
  if (!payload?.data || payload.data.length === 0) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(payload.data).toString('utf8'));
    const ms = typeof value === 'string' ? Date.parse(value) : NaN;
    return Number.isFinite(ms) ? ms : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The visibility query of the runs stamped or closed at or after `since` (ms since the epoch). "Closed" is said twice:
 * Temporal's SQL visibility on PostgreSQL compares a running run's close time as the greatest time there is, so
 * `CloseTime >= T` alone lists every running run.
 */
export function changedSinceQuery(since: number): string {
  const at = new Date(since).toISOString();
  return `${CHANGED_AT_SEARCH_ATTRIBUTE} >= '${at}' OR (CloseTime >= '${at}' AND ExecutionStatus != 'Running')`;
}

/** See the module's comment. */
export class ChangeFeed {
  private readonly followed = new Map<string, Followed>();
  /** Where the next query looks from (ms since the epoch); undefined while nothing is followed. */
  private since: number | undefined;
  /** When the last query that answered began; undefined after a failed one, until one answers. */
  private answeredAt: number | undefined;
  private loop: Promise<void> | undefined;
  private readonly stop = new AbortController();
  private readonly counts = { queries: 0, rows: 0, changes: 0, failures: 0 };
  private readonly reports = new FailureReport(FAILURE_REPORT_MS);
  private readonly marginMs: number;

  constructor(
    private readonly client: Client,
    private readonly options: ChangeFeedOptions,
    /** Told of each followed run that changed; it is no longer followed then. */
    private readonly onChange: (workflowId: string) => void,
  ) {
    this.marginMs = options.marginMs ?? DEFAULT_FEED_MARGIN_MS;
  }

  /** Runs followed now. */
  get following(): number {
    return this.followed.size;
  }

  stats(): ChangeFeedStats {
    return { following: this.followed.size, ...this.counts };
  }

  /**
   * Follows run `runId` of `workflowId`, read with change stamp `stamp` by a read that began at `readAt`: a later stamp
   * or a close is reported. Starts the queries when they are not running.
   */
  follow(workflowId: string, runId: string, stamp: number, readAt: number): void {
    if (this.stop.signal.aborted) return;
    this.followed.set(workflowId, { runId, stamp });
    // From idle, the first query looks back from the read itself: nothing after it is missed.
    if (this.since === undefined || readAt - this.marginMs < this.since) this.since = readAt - this.marginMs;
    this.loop ??= withoutLogContext(() => this.run());
  }

  /** Stops following `workflowId` (its read went for another reason). */
  unfollow(workflowId: string): void {
    this.followed.delete(workflowId);
  }

  /**
   * Whether a read kept for a followed run, made at `readAt`, may be served at `now`: the read is less than an interval
   * old, or the last query answered, and began at most two query deadlines and two intervals ago (a process too busy
   * to query on time still counts, as a watch whose long poll answers late does; one whose queries fail or hang does
   * not).
   */
  vouches(readAt: number, now: number): boolean {
    const { intervalMs } = this.options;
    if (now - readAt <= intervalMs) return true;
    const staleMs = 2 * (this.options.queryTimeoutMs ?? DEFAULT_FEED_QUERY_TIMEOUT_MS) + 2 * intervalMs;
    return this.answeredAt !== undefined && now - this.answeredAt <= staleMs;
  }

  close(): void {
    this.stop.abort();
    this.followed.clear();
  }

  private async run(): Promise<void> {
    const signal = this.stop.signal;
    while (!signal.aborted && this.followed.size > 0) {
      const began = Date.now();
      const from = this.since ?? began - this.marginMs;
      try {
        await this.query(from);
        this.answeredAt = began;
        // A read followed during the query may reach back further than this query's start: the next one covers it.
        const lowered = this.since !== undefined && this.since < from ? this.since : Infinity;
        this.since = Math.min(began - this.marginMs, lowered);
      } catch (error) {
        if (signal.aborted) break;
        this.failed(error);
        this.startAfresh();
      }
      await sleep(this.options.intervalMs, signal);
    }
    // Idle (nothing in between could follow: no await since the check): the next follow starts from its own read.
    this.loop = undefined;
    this.since = undefined;
    this.answeredAt = undefined;
  }

  /**
   * After a failed query: every followed run is reported (its kept read goes, and its next read asks Temporal and is
   * followed from there), and the next query looks back from those reads, not from before the failure. Kept, the
   * window would only grow while queries fail, and a query too slow for its deadline would stay so for good.
   */
  private startAfresh(): void {
    const followed = [...this.followed.keys()];
    this.followed.clear();
    this.since = undefined;
    this.answeredAt = undefined;
    for (const workflowId of followed) this.onChange(workflowId);
  }

  /** One query, every page: each followed run it shows moved on is reported. */
  private async query(since: number): Promise<void> {
    const { connection, options } = this.client;
    const query = changedSinceQuery(since);
    let token: Uint8Array | undefined;
    await connection.withDeadline(Date.now() + (this.options.queryTimeoutMs ?? DEFAULT_FEED_QUERY_TIMEOUT_MS), async () => {
      do {
        this.counts.queries++;
        const page = await this.client.workflowService.listWorkflowExecutions({
          namespace: options.namespace,
          query,
          pageSize: this.options.pageSize ?? 1000,
          ...(token && { nextPageToken: token }),
        });
        const rows = page.executions ?? [];
        this.counts.rows += rows.length;
        for (const row of rows) this.seen(row);
        token = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
      } while (token && !this.stop.signal.aborted);
    });
  }

  private seen(row: temporal.api.workflow.v1.IWorkflowExecutionInfo): void {
    const workflowId = row.execution?.workflowId;
    if (!workflowId) return;
    const followed = this.followed.get(workflowId);
    if (!followed) return;
    const running = row.status === RUNNING;
    const stamp = changeStampOf(row.searchAttributes);
    const newer = stamp !== undefined && stamp > followed.stamp;
    // The followed run closed or published again; another run of the task published (it continued, was reset or
    // replaced: the followed run's close says so too). An earlier run closing now and then is not a change.
    const moved = row.execution?.runId === followed.runId ? !running || newer : running && newer;
    if (!moved) return;
    this.followed.delete(workflowId);
    this.counts.changes++;
    this.onChange(workflowId);
  }

  /** Counts a failed query; says so in the log, at most once a {@link FAILURE_REPORT_MS}. */
  private failed(error: unknown): void {
    this.counts.failures++;
    const due = this.reports.count();
    if (!due) return;
    log.warn(
      `change feed: ${due.failures} visibility query(ies) failed${due.again ? ' since the last report' : ''}; the reads it kept go to Temporal again, and are followed from there`,
      { error: describeServiceError(error) },
    );
  }
}

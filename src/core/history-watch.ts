/**
 * Following workflows by Temporal's own events instead of a timer: one long poll of a run's history
 * (`GetWorkflowExecutionHistory` with `waitNewEvent`) per workflow per process, shared by everyone waiting on it and
 * by the reads served from what it has seen (see {@link HistoryWatch.seen}). Any new event (a memo upsert with a new
 * status, a signal, an Update, the close) wakes every waiter, who then reads the task again.
 *
 * A watch lives while someone waits on it, or while reads keep it ({@link HistoryWatch.keep}), plus a short linger;
 * how many are kept for reads is capped, the least recently read going first.
 */
import type { Client, ConnectionLike } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { FailureReport } from '../util/failure-report';
import { log, withoutLogContext } from '../util/log';
import { backoffMs, sleep } from '../util/wait';
import { describeServiceError, grpcStatusOf, GrpcStatus } from './errors';
import { pollingService } from './polling-service';

const EventType = temporal.api.enums.v1.EventType;

/** Events after which a run has no more history. */
const CLOSE_EVENTS = new Set<number>([
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
  EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
]);

/** Options of {@link HistoryWatch}. */
export interface HistoryWatchOptions {
  /**
   * Deadline of one long poll. Temporal answers an idle one on its own before this (`history.longPollExpirationInterval`,
   * 20 s by default), so each watched workflow costs one request per that interval; keep this above it.
   */
  longPollMs?: number;
  /**
   * Pause before polling again after an error (Temporal unreachable, or refusing more long polls), doubled at each
   * failure in a row up to 30 s.
   */
  retryMs?: number;
  /** How long a poll goes on after its last waiter left, for one who comes back (a wait re-armed after a read). */
  lingerMs?: number;
  /**
   * Most watches kept for reads alone; past it the least recently read one without waiters is stopped. Default
   * {@link DEFAULT_WATCH_LIMIT}.
   */
  limit?: number;
  /** Told when a watch stops: what was kept because of it can go. */
  onStop?(workflowId: string): void;
}

interface Waiter {
  /** Wake once history has an event newer than this. */
  after: number;
  wake(): void;
}

/** One run's shared long poll. */
interface Watch {
  runId?: string;
  waiters: Set<Waiter>;
  /** The newest event id seen so far (0 until the first page arrived). */
  latest: number;
  closed: boolean;
  /** Whether the last poll answered: after a failure, what was seen may be behind. */
  healthy: boolean;
  stop: AbortController;
  /** Until when (ms since the epoch) reads keep the watch without waiters. */
  keepUntil: number;
  /** The check that ends the watch once nobody waits or reads. */
  timer?: NodeJS.Timeout;
  /** The long poll under way. */
  poll?: AbortController;
}

/** What a caller learnt of a run's history from Temporal's answer to its own request. */
export interface KnownHistory {
  /** The newest event id of the run when Temporal answered. */
  latest: number;
}

/** What a watch has seen of its run. */
export interface WatchedRun {
  runId?: string;
  /** The newest event id seen. */
  latest: number;
  /** The run has closed (its last event was seen). */
  closed: boolean;
  /** The last long poll answered: `latest` is as fresh as Temporal's event stream. */
  healthy: boolean;
}

/** Counts of what the watches did, for benchmarks. */
export interface HistoryWatchStats {
  /** Workflows being watched now. */
  watching: number;
  /** History requests made since the process started. */
  polls: number;
  /** Watches stopped to stay within the limit. */
  evicted: number;
  /** Long polls that failed (other than an idle one reaching its deadline). */
  failures: number;
}

/**
 * Watches kept for reads at most, by default. Temporal refuses long polls of a namespace past
 * `frontend.namespaceCount` at once on one frontend (1,200 by default), counting every process's: the default stays
 * under it, with room for waits and other clients.
 */
export const DEFAULT_WATCH_LIMIT = 1000;

/** The longest pause between attempts of a watch whose long polls keep failing. */
const MAX_RETRY_MS = 30_000;

/** Failed long polls are reported at most this often, counted together. */
const FAILURE_REPORT_MS = 60_000;

/** Waits on workflow histories for every part of a process (see the module comment). */
export class HistoryWatch {
  /** By workflow id, least recently used first. */
  private readonly watches = new Map<string, Watch>();
  private polls = 0;
  private evicted = 0;
  private failures = 0;
  private readonly reports = new FailureReport(FAILURE_REPORT_MS);
  private readonly longPollMs: number;
  private readonly retryMs: number;
  private readonly lingerMs: number;
  private readonly limit: number;
  private readonly service: ConnectionLike['workflowService'];

  constructor(
    private readonly client: Client,
    private readonly options: HistoryWatchOptions = {},
  ) {
    this.longPollMs = options.longPollMs ?? 70_000;
    this.retryMs = options.retryMs ?? 1000;
    this.lingerMs = options.lingerMs ?? 5000;
    this.limit = options.limit ?? DEFAULT_WATCH_LIMIT;
    this.service = pollingService(client.connection);
  }

  /** What the watches are doing now. */
  stats(): HistoryWatchStats {
    return { watching: this.watches.size, polls: this.polls, evicted: this.evicted, failures: this.failures };
  }

  /** What the watch of `workflowId` has seen, if one is running (or has seen its run close). */
  seen(workflowId: string): WatchedRun | undefined {
    const watch = this.watches.get(workflowId);
    if (!watch || watch.stop.signal.aborted) return undefined;
    return { runId: watch.runId, latest: watch.latest, closed: watch.closed, healthy: watch.healthy };
  }

  /**
   * Keeps a watch on run `runId` of `workflowId` for at least `forMs` more (starting one if needed), so that reads in
   * that time can be answered from what it sees. False when the limit is reached and every watch has waiters.
   *
   * `known`: what the caller learnt of the run's history from Temporal just now (a create: the start and binding it
   * made), which a watch started here begins from, as if its first poll had just answered it; its first poll then
   * reads on from the start of the history as usual.
   */
  keep(workflowId: string, runId: string, forMs: number, known?: KnownHistory): boolean {
    let watch = this.current(workflowId, runId);
    if (!watch) {
      if (!this.makeRoom()) return false;
      watch = this.start(workflowId, runId, known);
    } else {
      // Most recently read last: eviction takes from the front.
      this.watches.delete(workflowId);
      this.watches.set(workflowId, watch);
    }
    watch.keepUntil = Math.max(watch.keepUntil, Date.now() + forMs);
    if (watch.waiters.size === 0) this.scheduleEnd(workflowId, watch);
    return true;
  }

  /**
   * Resolves when the workflow's history has an event newer than `afterEventId` (at once if one is already known),
   * when it closes, when `timeoutMs` passes, or when `signal` aborts; never rejects. `afterEventId` is the history
   * length the caller last read the task at, of run `runId` when given: nothing that happened after that read is
   * missed.
   */
  changed(workflowId: string, afterEventId: number, timeoutMs: number, signal?: AbortSignal, runId?: string): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    let watch = this.current(workflowId, runId);
    if (watch && (watch.closed || watch.latest > afterEventId)) return Promise.resolve();
    if (!watch) {
      this.makeRoom();
      watch = this.start(workflowId, runId);
    }
    if (watch.timer) {
      clearTimeout(watch.timer);
      watch.timer = undefined;
    }
    const current = watch;
    return new Promise<void>((resolve) => {
      const waiter: Waiter = { after: afterEventId, wake: done };
      const timer = setTimeout(done, timeoutMs);
      signal?.addEventListener('abort', done, { once: true });
      current.waiters.add(waiter);
      const end = () => this.scheduleEnd(workflowId, current);
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        current.waiters.delete(waiter);
        // The last one waiting ends the poll, after a moment in which it may come back (waits are re-armed after each
        // read): no history is read for a task nobody looks at.
        if (current.waiters.size === 0) end();
        resolve();
      }
    });
  }

  /** Stops every watch (the process is shutting down). */
  close(): void {
    for (const [workflowId, watch] of [...this.watches]) this.end(workflowId, watch);
  }

  /** The running watch of the workflow, if it follows `runId` (any run when not given); a stale one is stopped. */
  private current(workflowId: string, runId: string | undefined): Watch | undefined {
    const watch = this.watches.get(workflowId);
    if (!watch) return undefined;
    if (!watch.stop.signal.aborted && (runId === undefined || watch.runId === undefined || watch.runId === runId)) {
      if (runId !== undefined) watch.runId ??= runId;
      return watch;
    }
    // Another run (the workflow continued as new or was reset): its waiters read the task again.
    this.end(workflowId, watch);
    return undefined;
  }

  private start(workflowId: string, runId: string | undefined, known?: KnownHistory): Watch {
    const watch: Watch = {
      ...(runId !== undefined && { runId }),
      waiters: new Set(),
      latest: known?.latest ?? 0,
      closed: false,
      healthy: known !== undefined,
      stop: new AbortController(),
      keepUntil: 0,
    };
    watch.stop.signal.addEventListener('abort', () => watch.poll?.abort(), { once: true });
    this.watches.set(workflowId, watch);
    // The watch outlives the request that started it and serves others: its log lines name its task only.
    void withoutLogContext(() => this.run(workflowId, watch));
    return watch;
  }

  /** Below the limit, or made so by stopping the least recently read watch nobody waits on. */
  private makeRoom(): boolean {
    if (this.watches.size < this.limit) return true;
    for (const [workflowId, watch] of this.watches) {
      if (watch.waiters.size > 0) continue;
      this.evicted++;
      this.end(workflowId, watch);
      return true;
    }
    return false;
  }

  /** Ends the watch once nobody waits and neither the linger nor the reads' keep runs any more. */
  private scheduleEnd(workflowId: string, watch: Watch): void {
    if (watch.timer || watch.stop.signal.aborted) return;
    const check = () => {
      watch.timer = undefined;
      if (watch.waiters.size > 0 || watch.stop.signal.aborted) return;
      const left = Math.max(watch.keepUntil, lingeredUntil) - Date.now();
      if (left <= 0) return this.end(workflowId, watch);
      watch.timer = setTimeout(check, left);
      watch.timer.unref();
    };
    const lingeredUntil = Date.now() + this.lingerMs;
    watch.timer = setTimeout(check, Math.max(watch.keepUntil, lingeredUntil) - Date.now());
    watch.timer.unref();
  }

  private end(workflowId: string, watch: Watch): void {
    clearTimeout(watch.timer);
    watch.timer = undefined;
    watch.stop.abort();
    for (const waiter of [...watch.waiters]) waiter.wake();
    if (this.watches.get(workflowId) === watch) {
      this.watches.delete(workflowId);
      this.options.onStop?.(workflowId);
    }
  }

  private async run(workflowId: string, watch: Watch): Promise<void> {
    const { connection, options } = this.client;
    let token: Uint8Array | undefined;
    let failuresInRow = 0;
    while (!watch.stop.signal.aborted) {
      let events: temporal.api.history.v1.IHistoryEvent[];
      try {
        this.polls++;
        // One poll, one abort controller: the watch's stop signal gets a single listener for its whole life
        // instead of one per poll.
        const poll = new AbortController();
        watch.poll = poll;
        const page = await connection.withAbortSignal(poll.signal, () =>
          connection.withDeadline(Date.now() + this.longPollMs, () =>
            this.service.getWorkflowExecutionHistory({
              namespace: options.namespace,
              execution: { workflowId, ...(watch.runId !== undefined && { runId: watch.runId }) },
              waitNewEvent: true,
              skipArchival: true,
              ...(token && { nextPageToken: token }),
            }),
          ),
        );
        events = page.history?.events ?? [];
        token = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
      } catch (error) {
        if (watch.stop.signal.aborted) return;
        // A long poll that outlived its deadline is an idle one: poll again. Anything else: wake the waiters (they
        // read the task and learn what is wrong) and try again shortly, from the start of the history, which Temporal
        // answers at once: reads go to Temporal until the watch has caught up, and a long poll from where it was
        // could keep them there until the next event or Temporal's long-poll interval.
        if (grpcStatusOf(error) !== GrpcStatus.DEADLINE_EXCEEDED) {
          watch.healthy = false;
          token = undefined;
          failuresInRow++;
          this.failed(workflowId, error);
          this.wakeAll(watch);
          // Doubled at each failure in a row, with a little jitter, so that watches refused together do not all come
          // back together.
          const pause = backoffMs(failuresInRow, this.retryMs, MAX_RETRY_MS);
          await sleep(pause * (0.8 + Math.random() * 0.4), watch.stop.signal);
        }
        continue;
      }
      failuresInRow = 0;
      for (const event of events) {
        watch.latest = Math.max(watch.latest, Number(event.eventId ?? 0));
        if (CLOSE_EVENTS.has(event.eventType ?? 0)) watch.closed = true;
      }
      watch.healthy = true;
      // The whole history has been read and the run is over (or the workflow is gone): nothing more will come. The
      // watch stays, closed, for the reads that keep it.
      if (watch.closed || token === undefined) watch.closed = true;
      for (const waiter of [...watch.waiters]) if (watch.closed || watch.latest > waiter.after) waiter.wake();
      if (watch.closed) {
        if (watch.waiters.size === 0) this.scheduleEnd(workflowId, watch);
        return;
      }
    }
  }

  /** Counts a failed long poll; says so in the log, at most once a {@link FAILURE_REPORT_MS}. */
  private failed(workflowId: string, error: unknown): void {
    this.failures++;
    const due = this.reports.count();
    if (!due) return;
    log.warn(
      `history watch: ${due.failures} long poll(s) failed${due.again ? ' since the last report' : ''}; reads of those tasks go to Temporal until their watch answers again`,
      { taskId: workflowId, error: describeServiceError(error) },
    );
  }

  private wakeAll(watch: Watch): void {
    for (const waiter of [...watch.waiters]) waiter.wake();
  }
}

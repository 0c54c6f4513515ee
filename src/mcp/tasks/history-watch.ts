/**
 * Waiting for a task to change by Temporal's own events instead of a timer: one long poll of the workflow's history
 * (`GetWorkflowExecutionHistory` with `waitNewEvent`) per task per process, shared by everyone waiting on that task,
 * and stopped once nobody waits. Any new event (a memo upsert with a new status, a signal, the close) wakes every
 * waiter, who then reads the task again.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { sleep } from '../../util/wait';
import { grpcStatusOf, GrpcStatus } from './errors';

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
  /** Deadline of one long poll; the server answers an idle one before this (about 20 s on a default server). */
  longPollMs?: number;
  /** Pause before polling again after an error (Temporal unreachable, say). */
  retryMs?: number;
  /** How long a poll goes on after its last waiter left, for one who comes back (a wait re-armed after a read). */
  lingerMs?: number;
}

interface Waiter {
  /** Wake once history has an event newer than this. */
  after: number;
  wake(): void;
}

/** One workflow's shared long poll. */
interface Watch {
  waiters: Set<Waiter>;
  /** The newest event id seen so far (0 until the first page arrived). */
  latest: number;
  closed: boolean;
  stop: AbortController;
  /** Ends the poll unless a waiter comes back first. */
  linger?: NodeJS.Timeout;
  /** The long poll under way. */
  poll?: AbortController;
}

/** Counts of what the watches did, for benchmarks. */
export interface HistoryWatchStats {
  /** Workflows being watched now. */
  watching: number;
  /** History requests made since the process started. */
  polls: number;
}

/** Waits on workflow histories for every part of a process (see the module comment). */
export class HistoryWatch {
  private readonly watches = new Map<string, Watch>();
  private polls = 0;
  private readonly longPollMs: number;
  private readonly retryMs: number;
  private readonly lingerMs: number;

  constructor(
    private readonly client: Client,
    options: HistoryWatchOptions = {},
  ) {
    this.longPollMs = options.longPollMs ?? 30_000;
    this.retryMs = options.retryMs ?? 1000;
    this.lingerMs = options.lingerMs ?? 5000;
  }

  /** What the watches are doing now. */
  stats(): HistoryWatchStats {
    return { watching: this.watches.size, polls: this.polls };
  }

  /**
   * Resolves when the workflow's history has an event newer than `afterEventId` (at once if one is already known),
   * when it closes, when `timeoutMs` passes, or when `signal` aborts; never rejects. `afterEventId` is the history
   * length the caller last read the task at: nothing that happened after that read is missed.
   */
  changed(workflowId: string, afterEventId: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    let watch = this.watches.get(workflowId);
    if (watch?.stop.signal.aborted) watch = undefined;
    if (watch && (watch.closed || watch.latest > afterEventId)) return Promise.resolve();
    if (watch?.linger) {
      clearTimeout(watch.linger);
      watch.linger = undefined;
    }
    if (!watch) {
      const created: Watch = { waiters: new Set(), latest: 0, closed: false, stop: new AbortController() };
      created.stop.signal.addEventListener('abort', () => created.poll?.abort(), { once: true });
      watch = created;
      this.watches.set(workflowId, watch);
      void this.run(workflowId, watch);
    }
    const current = watch;
    const lingerMs = this.lingerMs;
    return new Promise<void>((resolve) => {
      const waiter: Waiter = { after: afterEventId, wake: done };
      const timer = setTimeout(done, timeoutMs);
      signal?.addEventListener('abort', done, { once: true });
      current.waiters.add(waiter);
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        current.waiters.delete(waiter);
        // The last one waiting ends the poll, after a moment in which it may come back (waits are re-armed after each
        // read): no history is read for a task nobody looks at.
        if (current.waiters.size === 0 && !current.linger) {
          current.linger = setTimeout(() => {
            current.linger = undefined;
            if (current.waiters.size === 0) current.stop.abort();
          }, lingerMs);
          current.linger.unref();
        }
        resolve();
      }
    });
  }

  /** Stops every watch (the process is shutting down). */
  close(): void {
    for (const watch of this.watches.values()) {
      for (const waiter of [...watch.waiters]) waiter.wake();
      clearTimeout(watch.linger);
      watch.stop.abort();
    }
  }

  private async run(workflowId: string, watch: Watch): Promise<void> {
    const { connection, options } = this.client;
    let token: Uint8Array | undefined;
    try {
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
              connection.workflowService.getWorkflowExecutionHistory({
                namespace: options.namespace,
                execution: { workflowId },
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
          // read the task and learn what is wrong) and try again shortly.
          if (grpcStatusOf(error) !== GrpcStatus.DEADLINE_EXCEEDED) {
            this.wakeAll(watch);
            await sleep(this.retryMs, watch.stop.signal);
          }
          continue;
        }
        for (const event of events) {
          watch.latest = Math.max(watch.latest, Number(event.eventId ?? 0));
          if (CLOSE_EVENTS.has(event.eventType ?? 0)) watch.closed = true;
        }
        for (const waiter of [...watch.waiters]) if (watch.closed || watch.latest > waiter.after) waiter.wake();
        // The whole history has been read and the run is over (or the workflow is gone): nothing more will come.
        if (watch.closed || token === undefined) {
          watch.closed = true;
          this.wakeAll(watch);
          return;
        }
      }
    } finally {
      if (this.watches.get(workflowId) === watch) this.watches.delete(workflowId);
    }
  }

  private wakeAll(watch: Watch): void {
    for (const waiter of [...watch.waiters]) waiter.wake();
  }
}

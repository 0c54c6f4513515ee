/**
 * Reading tasks. A read of a task this process watches, whose watch has seen no history event since the last read, is
 * answered from that read without a Temporal call; any other asks Temporal once and keeps the task's watch for the next
 * reads. With the change feed on, a read of a task whose workflow stamps its changes is kept instead while the feed
 * reports no change of it, without a watch. Writes made here drop the kept read and wait for their own event, so that
 * a read after a write on this replica never sees what came before it.
 */
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { setBounded } from '../util/bounded';
import { retryWithBackoff } from '../util/wait';
import { isTemporalUnavailable } from './errors';
import { log } from '../util/log';
import { ChangeFeed, changeStampOf, DEFAULT_FEED_MARGIN_MS, type ChangeFeedStats } from './change-feed';
import { DEFAULT_WATCH_LIMIT, HistoryWatch } from './history-watch';
import type { MarkedRuns } from './marked-runs';
import { WRITE_PATIENCE_MS, type WatchedReadOptions } from './options';
import type { ReplicaSharedState } from './shared-state';
import type { Snapshots } from './snapshots';
import type { TaskView } from './task-view';
import type { TemporalAccess } from './temporal-access';

/** How long a write waits for this process's watch to see its event before it answers (see {@link TaskReads.afterWrite}). */
const WRITE_SEEN_MS = 1000;

/** How long a create's view is kept for the first reads (at most the reads' own keep). */
const CREATED_KEEP_MS = 10_000;

/** Tasks whose writes are counted at most. */
const WRITES_KEPT = 10_000;

/** Reads the change feed keeps at most, by default. */
/** How a bridge's task reads were served, since it started (see `TaskCore.readStats`). */
export interface ReadStats {
  /** Reads answered from a history watch that saw no event since the last read: no Temporal request. */
  watched: number;
  /** Reads answered from what the change feed vouched for. */
  fed: number;
  /** Reads that asked Temporal. */
  fetched: number;
  /** Reads kept for answering again. */
  kept: number;
  /** The change feed's own figures, where it runs. */
  feed?: ChangeFeedStats;
}

export const DEFAULT_FEED_LIMIT = 100_000;

/**
 * How long a read the feed keeps is served at most, however quiet the feed: a change whose visibility record came
 * later than the feed's margin (or a cancel requested of a task whose worker is down, which no workflow stamps yet) is
 * seen by then. Each read gets between half of it and all of it, at random: reads made together (a fleet starting)
 * do not all go to Temporal again at once.
 */
const FED_READ_MAX_AGE_MS = 300_000;

/** How often reads the feed keeps are looked over for those past {@link FED_READ_MAX_AGE_MS}. */
const FED_SWEEP_MS = 30_000;

/** A task's view as last read, served while its watch sees no newer event (or the feed reports no change of it). */
interface WatchedRead {
  view: TaskView;
  /** Whose task it is: a read by anyone else is "not found", as it would be from Temporal. */
  owner: string;
  /** Kept for the change feed, not a watch: when the read began (ms since the epoch). */
  fedAt?: number;
  /** Until when a read kept for the feed is served (see {@link FED_READ_MAX_AGE_MS}). */
  fedUntil?: number;
}

/** Reads of tasks, served from the history watches where they can be (see the module's comment). */
export class TaskReads {
  /** The shared history long polls that wake waiting requests and vouch for kept reads. */
  readonly watch: HistoryWatch;
  private readonly options: WatchedReadOptions;
  /** The last read of each watched task; an entry goes with its watch. */
  private readonly reads = new Map<string, WatchedRead>();
  /** Writes made here per task lately: a read that began before one is not kept. */
  private readonly writes = new Map<string, number>();
  /** Reads answered from a watch, from the feed, and reads that asked Temporal. */
  private readonly counts = { watched: 0, fed: 0, fetched: 0 };
  /** The visibility queries that vouch for reads kept without a watch; undefined when the feed is off. */
  private readonly feed: ChangeFeed | undefined;
  /** Drops the reads the feed keeps once they are too old, so that nothing is followed for reads that stopped. */
  private sweep: NodeJS.Timeout | undefined;

  /**
   * `shared`, the replicas' shared state: each write made here is noted there, and a read kept for the feed is served
   * only while no replica noted a write to its task since it was read, so a cancel through one replica is what the
   * next read through any other answers. Without it, a write through another replica reaches a kept read when the
   * workflow stamps it, or when the read is too old to be served (five minutes at most).
   */
  constructor(
    private readonly temporal: TemporalAccess,
    private readonly runs: MarkedRuns,
    private readonly snapshots: Snapshots,
    private readonly shared?: ReplicaSharedState,
  ) {
    this.options = {
      keepMs: 30_000,
      limit: DEFAULT_WATCH_LIMIT,
      longPollMs: 70_000,
      feedIntervalMs: 0,
      feedLimit: DEFAULT_FEED_LIMIT,
      ...temporal.options.reads,
    };
    this.watch = new HistoryWatch(temporal.client, {
      limit: Math.max(this.options.limit, 1),
      longPollMs: this.options.longPollMs,
      onStop: (workflowId) => {
        // A read the feed keeps does not go with a watch that served a write or a wait.
        if (this.reads.get(workflowId)?.fedAt === undefined) this.reads.delete(workflowId);
      },
    });
    if (this.options.feedIntervalMs > 0 && this.options.feedLimit > 0) {
      this.feed = new ChangeFeed(temporal.client, { intervalMs: this.options.feedIntervalMs }, (workflowId) => this.drop(workflowId));
      if (!shared) {
        log.info(
          'reads: the change feed runs without MCP_SHARED_STATE: a cancel or an answer made through another replica reaches the reads kept here when its workflow records it, or within five minutes; set MCP_SHARED_STATE where several replicas serve',
        );
      }
    }
  }

  /** How reads were served: from a watch, from the feed, or by asking Temporal; `kept`: reads kept now. */
  stats(): ReadStats {
    return { ...this.counts, kept: this.reads.size, ...(this.feed && { feed: this.feed.stats() }) };
  }

  /** Stops the watches and the feed (the process is shutting down). */
  close(): void {
    this.watch.close();
    this.feed?.close();
    clearInterval(this.sweep);
    this.sweep = undefined;
  }

  /**
   * Reads the task; throws `TaskNotFoundError` unless it exists and belongs to `principal`.
   *
   * A task this process watches is answered from its last read while the watch has seen no event after it (no
   * Temporal call); any other is read from Temporal, and its watch kept for {@link WatchedReadOptions.keepMs} so that
   * the next reads are served the same way (`watch: false`, as for a listing: no watch is started for it).
   */
  async get(taskId: string, principal: string, options: { watch?: boolean } = {}): Promise<TaskView> {
    const known = await this.watchedRead(taskId, principal, options.watch !== false);
    if (known) return known;
    const writes = this.writes.get(taskId);
    const readAt = Date.now();
    let stamp: number | undefined;
    const view = await this.temporal.rpc(async () => {
      const description = await this.runs.readRun(taskId, principal);
      stamp = changeStampOf(description.raw.workflowExecutionInfo?.searchAttributes);
      return this.snapshots.view(description);
    });
    this.counts.fetched++;
    // A write made here meanwhile may not be in what was read: that read is not kept.
    if (options.watch === false || this.writes.get(taskId) !== writes || isTerminal(view.task.status)) return view;
    if (this.feed && stamp !== undefined) this.keepFed(view, principal, stamp, readAt);
    else if (this.options.limit > 0) this.keepRead(view, principal);
    return view;
  }

  /**
   * Hands the view a create answered with to the next reads. `view.historyLength` is the history the create made (the
   * start, the binding, the first workflow task scheduled), as Temporal's answer to the binding left it: the task's
   * watch starts from there, as if it had just read it, and the view is served while the watch sees no newer event,
   * exactly as a read from Temporal would be. A client polling right after its create is answered without a Temporal
   * call. The watch is kept {@link CREATED_KEEP_MS} for it.
   */
  keepCreated(view: TaskView, owner: string): void {
    if (this.options.limit === 0) return;
    const known = { latest: view.historyLength };
    if (!this.watch.keep(view.workflowId, view.runId, Math.min(this.options.keepMs, CREATED_KEEP_MS), known)) return;
    this.reads.set(view.workflowId, { view, owner });
  }

  /**
   * {@link get} for a write the caller waits on (an answer): while Temporal is unreachable or too slow for a request's
   * deadline, the read is tried again for `patienceMs`, so that a busy moment slows the answer down rather than fail it.
   */
  getPatiently(taskId: string, principal: string, patienceMs = WRITE_PATIENCE_MS): Promise<TaskView> {
    return retryWithBackoff(() => this.get(taskId, principal), { isRetryable: isTemporalUnavailable, deadline: Date.now() + patienceMs });
  }

  /** The workflow id of a task the principal owns (they are the same; this checks ownership). */
  async ownedWorkflowId(taskId: string, principal: string): Promise<string> {
    return (await this.temporal.rpc(() => this.runs.readRun(taskId, principal))).workflowId;
  }

  /**
   * Before a write: this process's watch of the task runs and has read the history so far, so the write's event reaches
   * it through its long poll, as it reaches the watches of other replicas (see {@link afterWrite}), not by a first read
   * that could come back before theirs were told.
   */
  async beforeWrite(workflowId: string, runId: string): Promise<void> {
    if (this.options.limit === 0 || !this.watch.keep(workflowId, runId, this.options.keepMs)) return;
    await this.watch.changed(workflowId, 0, WRITE_SEEN_MS, undefined, runId);
  }

  /**
   * After a write to the task (an answer, a cancel, an Update) made by this process: its last read is dropped, so the
   * next read here comes from Temporal or from a watch that has seen the write, and the write answers once this
   * process's watch has seen an event after `basis`, the state the write was made on (up to {@link WRITE_SEEN_MS}).
   * Read-your-writes holds on this replica whatever the timing; another replica's watch may get the event a little
   * later (a balancer routes a task's requests to one replica: docs/operations.md).
   */
  async afterWrite(taskId: string, basis?: { runId: string; historyLength: number }): Promise<void> {
    setBounded(this.writes, taskId, (this.writes.get(taskId) ?? 0) + 1, WRITES_KEPT);
    this.drop(taskId);
    await this.noteWrite(taskId);
    if (basis === undefined || this.options.limit === 0) return;
    await this.watch.changed(taskId, basis.historyLength, WRITE_SEEN_MS, undefined, basis.runId);
  }

  /**
   * A write to the task made by this process, between {@link beforeWrite} and {@link afterWrite}: `write` is made on the
   * state `basis` shows, and says on success whether that still holds (false: it went to another run), so the write
   * answers once this process can read it. A write that failed may have landed all the same: its task is read afresh.
   */
  async writing<T>(
    taskId: string,
    basis: { runId: string; historyLength: number },
    write: () => Promise<{ value: T; onBasis: boolean }>,
  ): Promise<T> {
    await this.beforeWrite(taskId, basis.runId);
    let done: { value: T; onBasis: boolean };
    try {
      done = await write();
    } catch (error) {
      await this.afterWrite(taskId);
      throw error;
    }
    await this.afterWrite(taskId, done.onBasis ? basis : undefined);
    return done.value;
  }

  /**
   * Tells the other replicas of a write here, through the shared state, before the write answers. While the state
   * cannot be reached, the note is tried again in the background for as long as a kept read is served; meanwhile the
   * other replicas cannot ask the state either, and their kept reads go to Temporal.
   */
  private async noteWrite(taskId: string): Promise<void> {
    if (!this.shared) return;
    const shared = this.shared;
    const note = () => shared.noteWrite(taskId);
    try {
      await note();
    } catch (error) {
      log.warn(`reads: a write to task ${taskId} is noted in ${shared.location()} later: ${(error as Error).message}`);
      void retryWithBackoff(note, { deadline: Date.now() + FED_READ_MAX_AGE_MS, isRetryable: () => true, maxDelayMs: 5_000 }).catch(
        (failure: Error) => log.warn(`reads: a write to task ${taskId} was not noted in ${shared.location()}: ${failure.message}`),
      );
    }
  }

  /** The task's last read, when its watch (or the feed) shows nothing newer happened since (see {@link get}). */
  private async watchedRead(taskId: string, principal: string, keepWatching: boolean): Promise<TaskView | undefined> {
    const read = this.reads.get(taskId);
    if (!read) return undefined;
    if (read.fedAt !== undefined) return this.fedRead(taskId, principal, read, read.fedAt, read.fedUntil ?? 0);
    const seen = this.watch.seen(taskId);
    const { view } = read;
    // A closed run is read from Temporal each time: its workflow id may start a new run (a reset, another start).
    if (!seen?.healthy || seen.closed || seen.runId !== view.runId || seen.latest !== view.historyLength) return undefined;
    // Another principal's read is asked of Temporal, which refuses it as it refuses a task that does not exist: both
    // take one call, so the time of the answer does not tell whether someone else holds the id.
    if (read.owner !== principal) return undefined;
    if (keepWatching) this.watch.keep(taskId, view.runId, this.options.keepMs);
    this.counts.watched++;
    return view;
  }

  /**
   * A read the feed keeps, while the feed vouches for it, no replica noted a write to its task since (with the shared
   * state: the clocks of this process and the database may differ by the feed's margin), and it is not too old; the
   * most recently read go last.
   */
  private async fedRead(
    taskId: string,
    principal: string,
    read: WatchedRead,
    fedAt: number,
    fedUntil: number,
  ): Promise<TaskView | undefined> {
    const now = Date.now();
    if (now > fedUntil) {
      this.drop(taskId);
      return undefined;
    }
    if (!this.feed?.vouches(fedAt, now)) return undefined;
    // Another principal's read goes to Temporal (see watchedRead), and needs no question of the shared state.
    if (read.owner !== principal) return undefined;
    if (this.shared) {
      const written = await this.shared.writtenSince(taskId, fedAt - DEFAULT_FEED_MARGIN_MS).catch(() => true);
      if (written) {
        if (this.reads.get(taskId) === read) this.drop(taskId);
        return undefined;
      }
    }
    this.reads.delete(taskId);
    this.reads.set(taskId, read);
    this.counts.fed++;
    return read.view;
  }

  /** Keeps what was just read from Temporal, and its task's watch, for the next reads. */
  private keepRead(view: TaskView, owner: string): void {
    if (!this.watch.keep(view.workflowId, view.runId, this.options.keepMs)) return;
    this.reads.set(view.workflowId, { view, owner });
  }

  /** Keeps what was just read for the feed to vouch for, without a watch; the least recently read go past the limit. */
  private keepFed(view: TaskView, owner: string, stamp: number, readAt: number): void {
    this.drop(view.workflowId);
    const fedUntil = readAt + FED_READ_MAX_AGE_MS * (0.5 + Math.random() / 2);
    this.reads.set(view.workflowId, { view, owner, fedAt: readAt, fedUntil });
    this.feed?.follow(view.workflowId, view.runId, stamp, readAt);
    if (!this.sweep) {
      this.sweep = setInterval(() => this.dropOldFedReads(), FED_SWEEP_MS);
      this.sweep.unref();
    }
    if ((this.feed?.following ?? 0) <= this.options.feedLimit) return;
    for (const [workflowId, read] of this.reads) {
      if (read.fedAt === undefined) continue;
      this.drop(workflowId);
      break;
    }
  }

  /** Drops the reads the feed keeps that are past their age; once none is left, the sweep stops (and the feed's queries). */
  private dropOldFedReads(): void {
    const now = Date.now();
    for (const [workflowId, read] of this.reads) if (read.fedUntil !== undefined && read.fedUntil < now) this.drop(workflowId);
    if ((this.feed?.following ?? 0) > 0) return;
    clearInterval(this.sweep);
    this.sweep = undefined;
  }

  /** Forgets the task's kept read, and the feed's following of it. */
  private drop(workflowId: string): void {
    const read = this.reads.get(workflowId);
    if (!read) return;
    this.reads.delete(workflowId);
    if (read.fedAt !== undefined) this.feed?.unfollow(workflowId);
  }
}

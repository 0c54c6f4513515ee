/**
 * Following a task: read it, hand the view to the caller, wait for its workflow's next event, read again. The one loop
 * every front-end uses (a blocked tasks/result, a plain call waiting inline, a status subscription, an open question
 * watched for an answer given elsewhere), with its deadline, cancellation, Temporal outages and back-off in one place.
 */
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { log } from '../util/log';
import { sleep } from '../util/wait';
import { isTemporalUnavailable } from './errors';
import type { TaskView } from './task-view';

/** What a follower needs of the task core: a read, and a wait for the next event. */
export interface FollowSource {
  get(taskId: string, principal: string): Promise<TaskView>;
  /** Resolves once the task may have changed since `view` was read, after `timeoutMs`, or when `signal` aborts. */
  changed(view: TaskView, timeoutMs: number, signal?: AbortSignal): Promise<void>;
}

/** Options of {@link TaskFollower}. */
export interface FollowOptions {
  /** Ends the following (the request was cancelled, the client went away). */
  signal?: AbortSignal;
  /** Time (ms since the epoch) after which nothing more is read; default never. */
  deadline?: number;
  /** A view already read: handed out first, without a read. */
  from?: TaskView;
  /** Hand out only views that differ from the last one handed out by this key (default: every read). */
  changeKey?(view: TaskView): string;
  /** Longest wait for an event before the task is read again anyway, in case one was missed; default 60 s. */
  sliceMs?: number;
  /** First pause after a read that failed because Temporal is unreachable; it doubles up to `maxBackoffMs`. Default 500 ms. */
  backoffMs?: number;
  /** Longest pause between reads while Temporal is unreachable; default 30 s. */
  maxBackoffMs?: number;
}

/**
 * The views of one task, in order, as it changes: `for await (const view of follower)`. The first is the task as it is
 * now; each next one is read after the workflow's history has a new event (woken by the shared history watch, not by a
 * timer), at least once per slice. The iteration ends after a terminal view, at the deadline, or when the signal
 * aborts. A read that fails because Temporal is unreachable is tried again with growing pauses; any other failure (the
 * task is gone: -32602) ends the iteration by throwing it.
 */
export class TaskFollower implements AsyncIterable<TaskView> {
  private readAt: number | undefined;
  private readBy: number | undefined;
  private last: TaskView | undefined;

  constructor(
    private readonly source: FollowSource,
    private readonly taskId: string,
    private readonly principal: string,
    private readonly options: FollowOptions = {},
  ) {
    this.last = options.from;
  }

  /** The last view read (or the one the follower started from). */
  get latest(): TaskView | undefined {
    return this.last;
  }

  /**
   * Reads the task again after `delayMs` instead of waiting for its next event: for a caller that changed nothing
   * Temporal would see (a question dismissed, an answer refused) and wants to go on after a pause.
   */
  readAgainIn(delayMs: number): void {
    this.readAt = Date.now() + Math.max(0, delayMs);
  }

  /**
   * Reads the task again at its next event, or after `delayMs` at the latest: for a caller that holds back for a while
   * (a question dismissed, an answer refused) and must still see the task end or change meanwhile.
   */
  readAgainWithin(delayMs: number): void {
    this.readBy = Date.now() + Math.max(0, delayMs);
  }

  /** True once the deadline has passed. */
  get expired(): boolean {
    return this.options.deadline !== undefined && Date.now() >= this.options.deadline;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<TaskView, void, undefined> {
    const { signal, changeKey } = this.options;
    const sliceMs = this.options.sliceMs ?? 60_000;
    let handedOut: string | undefined;
    let view = this.options.from;
    if (!view) view = await this.read();
    for (;;) {
      if (signal?.aborted) return;
      if (view) {
        const key = changeKey?.(view);
        if (key === undefined || key !== handedOut) {
          handedOut = key;
          yield view;
          if (signal?.aborted) return;
        }
        if (isTerminal(view.task.status)) return;
      }
      if (this.expired) return;
      const left = this.options.deadline === undefined ? Infinity : this.options.deadline - Date.now();
      if (this.readAt !== undefined) {
        await sleep(Math.min(this.readAt - Date.now(), left), signal);
        this.readAt = undefined;
        this.readBy = undefined;
      } else if (view) {
        const by = this.readBy === undefined ? Infinity : Math.max(0, this.readBy - Date.now());
        this.readBy = undefined;
        await this.source.changed(view, Math.min(sliceMs, left, by), signal);
      }
      if (signal?.aborted || this.expired) return;
      view = (await this.read()) ?? view;
    }
  }

  /** Reads the task; while Temporal is unreachable, tries again with growing pauses (undefined at the deadline or abort). */
  private async read(): Promise<TaskView | undefined> {
    const { signal } = this.options;
    let pause = this.options.backoffMs ?? 500;
    const maxPause = this.options.maxBackoffMs ?? 30_000;
    for (let attempt = 0; ; attempt++) {
      try {
        this.last = await this.source.get(this.taskId, this.principal);
        return this.last;
      } catch (error) {
        if (!isTemporalUnavailable(error)) throw error;
        if (attempt === 0) log.warn(`following the task waits for Temporal: ${(error as Error).message}`, { taskId: this.taskId });
        const left = this.options.deadline === undefined ? Infinity : this.options.deadline - Date.now();
        if (signal?.aborted || left <= 0) return undefined;
        await sleep(Math.min(pause, left), signal);
        pause = Math.min(pause * 2, maxPause);
      }
    }
  }
}

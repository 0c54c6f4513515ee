/**
 * The task core: MCP tasks over Temporal, a task being a workflow execution whose id is the task id. It knows no wire
 * generation: it answers with task views (`task-view.ts`) and its own errors (`errors.ts`), which each protocol
 * front-end renders. It holds no task state of its own, only caches of what Temporal said, so any server process
 * serves any task. Its parts, one job each: reads (served from the history watches where they can be), listing,
 * lifecycle (create, cancel, replay of a retried call) and answers.
 */
import type { Client } from '@temporalio/client';
import type { AnswerOrigin } from '../../shared/task-contract';
import { TaskAnswers, type PassedResponse } from './answers';
import { TaskFollower, type FollowOptions } from './task-follower';
import type { HistoryWatch } from './history-watch';
import { TaskLifecycle, type CreatedTask, type CreateOptions } from './lifecycle';
import { TaskListing } from './listing';
import { MarkedRuns } from './marked-runs';
import type { TaskCoreOptions, TaskTool } from './options';
import { Quotas } from './quotas';
import { TaskReads } from './reads';
import { Snapshots } from './snapshots';
import type { TaskView } from './task-view';
import { TemporalAccess } from './temporal-access';

/** The task core (see the module's comment). */
export class TaskCore {
  /** The Temporal side every part shares: client, options, declared tools. */
  readonly temporal: TemporalAccess;
  /** What each principal may hold at once, and how fast it may ask. */
  readonly quotas: Quotas;
  /** Which runs are tasks of this bridge. */
  readonly runs: MarkedRuns;
  readonly reads: TaskReads;
  readonly listing: TaskListing;
  readonly lifecycle: TaskLifecycle;
  readonly answers: TaskAnswers;

  constructor(client: Client, options: TaskCoreOptions, tools: ReadonlyMap<string, TaskTool>) {
    this.temporal = new TemporalAccess(client, options, tools);
    this.quotas = new Quotas(client, options.quotas, options.shared);
    this.runs = new MarkedRuns(this.temporal);
    const snapshots = new Snapshots(this.temporal);
    this.reads = new TaskReads(this.temporal, this.runs, snapshots);
    this.listing = new TaskListing(this.temporal, this.reads, options.shared);
    this.lifecycle = new TaskLifecycle(this.temporal, {
      runs: this.runs,
      snapshots,
      reads: this.reads,
      listing: this.listing,
      quotas: this.quotas,
    });
    this.answers = new TaskAnswers(this.temporal, this.reads);
  }

  get client(): Client {
    return this.temporal.client;
  }

  /** The shared history long polls that wake waiting requests. */
  get watch(): HistoryWatch {
    return this.reads.watch;
  }

  /** Reads the task of `principal`; `TaskNotFoundError` for anything else (see {@link TaskReads.get}). */
  get(taskId: string, principal: string, options?: { watch?: boolean }): Promise<TaskView> {
    return this.reads.get(taskId, principal, options);
  }

  /** {@link get} that waits out a busy or unreachable Temporal, for a write the caller waits on. */
  getPatiently(taskId: string, principal: string, patienceMs?: number): Promise<TaskView> {
    return this.reads.getPatiently(taskId, principal, patienceMs);
  }

  /** The principal's tasks, a page at a time. */
  list(principal: string, cursor?: string): Promise<{ views: TaskView[]; nextCursor?: string }> {
    return this.listing.list(principal, cursor);
  }

  /** Starts the tool's workflow as a task of `principal` (see {@link TaskLifecycle.create}). */
  create(tool: TaskTool, input: unknown, principal: string, options?: CreateOptions): Promise<CreatedTask> {
    return this.lifecycle.create(tool, input, principal, options);
  }

  /** Requests the task's cancellation (see {@link TaskLifecycle.cancel}). */
  cancel(taskId: string, principal: string): Promise<TaskView> {
    return this.lifecycle.cancel(taskId, principal);
  }

  /** Hands one answer to the task's workflow (see {@link TaskAnswers.respond}). */
  respond(view: TaskView, response: PassedResponse, answeredBy: AnswerOrigin, patienceMs?: number): Promise<void> {
    return this.answers.respond(view, response, answeredBy, patienceMs);
  }

  /** Hands answers keyed by question to the task's workflow, all or nothing (see {@link TaskAnswers.answer}). */
  answer(view: TaskView, responses: Record<string, unknown>, answeredBy: AnswerOrigin): Promise<string[]> {
    return this.answers.answer(view, responses, answeredBy);
  }

  /** The workflow id of a task the principal owns (they are the same; this checks ownership). */
  ownedWorkflowId(taskId: string, principal: string): Promise<string> {
    return this.reads.ownedWorkflowId(taskId, principal);
  }

  /**
   * Resolves once the task may have changed since `view` was read (its workflow's history has a newer event), or
   * after `timeoutMs`, or when `signal` aborts. Driven by Temporal's events: nothing is polled on a timer.
   */
  changed(view: TaskView, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.watch.changed(view.workflowId, view.historyLength, Math.max(timeoutMs, 0), signal, view.runId);
  }

  /** Follows a task as it changes: see {@link TaskFollower}. */
  follow(taskId: string, principal: string, options: FollowOptions = {}): TaskFollower {
    return new TaskFollower(this, taskId, principal, options);
  }

  /** How reads were served: from a watch, or by asking Temporal. */
  readStats(): { watched: number; fetched: number; kept: number } {
    return this.reads.stats();
  }
}

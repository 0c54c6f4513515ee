/**
 * The task core: MCP tasks over Temporal, a task being a workflow execution whose id is the task id. It knows no wire
 * generation: it answers with task views (`task-view.ts`) and its own errors (`errors.ts`), which each protocol
 * front-end renders. It holds no task state of its own, only caches of what Temporal said, so any server process
 * serves any task. Its parts, one job each: reads (served from the history watches where they can be), listing,
 * lifecycle (create, cancel, replay of a retried call) and answers.
 */
import type { Client } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import type { AnswerSeal } from '../shared/answer-proof';
import type { AnswerOrigin } from '../contract/task-contract';
import { TaskAnswers, type PassedResponse } from './answers';
import { TaskFollower, type FollowOptions } from './task-follower';
import type { HistoryWatchStats } from './history-watch';
import { TaskLifecycle, type CreatedTask, type CreateOptions } from './lifecycle';
import { TaskListing } from './listing';
import { MarkedRuns } from './marked-runs';
import type { TaskCoreOptions, TaskTool } from './options';
import { Quotas } from './quotas';
import { TaskReads, type ReadStats } from './reads';
import { checkedMemos, Snapshots } from './snapshots';
import type { ApprovalsPort, TaskFollowing, TaskPort, TaskRun, VisibleRun } from './ports';
import type { ActionOutcome, TaskAction } from './actions';
import type { TaskView } from './task-view';
import { TemporalAccess } from './temporal-access';

/**
 * The task core (see the module's comment): both ports, {@link TaskPort} for the front-ends and the direct tools and
 * {@link ApprovalsPort} for approvals. Its parts stay behind it.
 */
export class TaskCore implements TaskPort, ApprovalsPort {
  /**
   * What each principal may hold at once, and how fast it may ask: reached through {@link takeOperation} and
   * {@link waiting}, which the front-ends use.
   */
  private readonly quotas: Quotas;
  private readonly temporal: TemporalAccess;
  private readonly runs: MarkedRuns;
  private readonly reads: TaskReads;
  private readonly listing: TaskListing;
  private readonly lifecycle: TaskLifecycle;
  private readonly answers: TaskAnswers;

  constructor(client: Client, options: TaskCoreOptions, tools: ReadonlyMap<string, TaskTool>) {
    this.temporal = new TemporalAccess(client, options, tools);
    this.quotas = new Quotas(client, options.quotas, options.shared);
    this.runs = new MarkedRuns(this.temporal);
    const snapshots = new Snapshots(this.temporal);
    this.reads = new TaskReads(this.temporal, this.runs, snapshots, options.shared);
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

  /** Ends the history long polls that wake waiting requests, and the change feed's queries. */
  close(): void {
    this.reads.close();
  }

  /**
   * Counts one task request of `principal` against its rate; throws `TooManyRequestsError` (retryable, with when)
   * past it.
   */
  takeOperation(principal: string): Promise<void> {
    return this.quotas.takeOperation(principal);
  }

  /**
   * Runs `work`, a wait of `principal` on its tasks (a blocked `tasks/result`, an inline call, a form held open, a
   * pushed question), as one of the principal's waits: `TooManyRequestsError` when they are all taken, and the place
   * given back when `work` settles.
   */
  async waiting<T>(principal: string, work: () => Promise<T>): Promise<T> {
    const end = await this.quotas.beginWait(principal);
    try {
      return await work();
    } finally {
      end();
    }
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
    return this.reads.watch.changed(view.workflowId, view.historyLength, Math.max(timeoutMs, 0), signal, view.runId);
  }

  /** Follows a task as it changes: see {@link TaskFollower}. */
  follow(taskId: string, principal: string, options: FollowOptions = {}): TaskFollowing {
    return new TaskFollower(this, taskId, principal, options);
  }

  /** The principal's tasks started within the last `withinMs`, newest first (see {@link TaskListing.startedWithin}). */
  startedWithin(principal: string, withinMs: number): Promise<TaskView[]> {
    return this.listing.startedWithin(principal, withinMs);
  }

  /** Sends the task's workflow an action `requestedBy` asks for (see {@link TaskAnswers.sendAction}). */
  sendAction<Result>(view: TaskView, action: TaskAction, requestedBy: AnswerOrigin): Promise<ActionOutcome<Result>> {
    return this.answers.sendAction(view, action, requestedBy);
  }

  /**
   * One page of the task ids a visibility query finds, for parts that read each task under their own rule of access
   * (the approvers' inbox): nothing here says who may see them.
   */
  visiblePage(query: string, token: Uint8Array | undefined): Promise<{ ids: string[]; next?: Uint8Array }> {
    return this.listing.visiblePage(query, token);
  }

  /**
   * One page of the runs a visibility query finds, with the task state each memo publishes, unchecked: candidates for
   * a part that reads each again with {@link run} (see {@link TaskListing.visibleStates}).
   */
  visibleStates(query: string, token: Uint8Array | undefined, pageSize?: number): Promise<{ runs: VisibleRun[]; next?: Uint8Array }> {
    return this.listing.visibleStates(query, token, pageSize);
  }

  /**
   * The task's current run as the bridge reads it, whoever started it, for parts that decide access themselves
   * (approvals: a question's audience): `TaskNotFoundError` for anything that is not a task of this bridge, and
   * `TaskStateUnreadableError` for one whose published state cannot be read.
   */
  async run(taskId: string): Promise<TaskRun> {
    const description = await this.temporal.rpc(() => this.runs.readRun(taskId));
    const { meta, published } = checkedMemos(description);
    return {
      workflowId: description.workflowId,
      runId: description.runId,
      historyLength: description.historyLength,
      running: description.status.name === 'RUNNING',
      ...(meta?.tool !== undefined && { tool: meta.tool }),
      ...(published && { published }),
    };
  }

  /** The run's original run id (a reset run's is the run it was reset from first): what sealed answers name. */
  originalRunIdOf(run: { workflowId: string; runId: string }): Promise<string> {
    return this.answers.originalRunIdOf(run);
  }

  /** Seals an answer for the task's workflow (its worker checks it): see `AnswerSeal.seal`. */
  sealAnswer(
    run: { workflowId: string; originalRunId: string },
    answer: Parameters<AnswerSeal['seal']>[1],
    origin: AnswerOrigin,
  ): ReturnType<AnswerSeal['seal']> {
    return this.temporal.options.answerSeal.seal(run, answer, origin);
  }

  /**
   * A write to the task by a part outside the core (an approver's Update), in the core's write bracket (see
   * {@link TaskReads.writing}): `write` is made on the state `basis` shows and says whether that still holds.
   */
  writing<T>(
    taskId: string,
    basis: { runId: string; historyLength: number },
    write: () => Promise<{ value: T; onBasis: boolean }>,
  ): Promise<T> {
    return this.reads.writing(taskId, basis, write);
  }

  /**
   * Executes an Update on the run `runId` of the task under `deadline`, with `updateId` (a repeated one is the same
   * Update to Temporal); inside {@link writing}. Temporal's errors come as they are, for the caller to tell a refusal
   * from a run that ended.
   */
  executeUpdate<Ret, Args extends [any, ...any[]]>(
    taskId: string,
    runId: string,
    update: UpdateDefinition<Ret, Args>,
    options: { args: Args; updateId: string; deadline: number },
  ): Promise<Ret> {
    const { client } = this.temporal;
    return client.connection.withDeadline(options.deadline, () =>
      client.workflow.getHandle(taskId, runId).executeUpdate(update, { args: options.args, updateId: options.updateId }),
    );
  }

  /** How reads were served: from a watch, from the change feed, or by asking Temporal (and what the feed did). */
  readStats(): ReadStats {
    return this.reads.stats();
  }

  /** The history watches: how many are held, and how many were let go. */
  watchStats(): HistoryWatchStats {
    return this.reads.watch.stats();
  }

  /** How many workflow histories were read to check which runs are tasks. */
  runStats(): { historyReads: number } {
    return this.runs.stats();
  }
}

/**
 * The core's two ports, the only ways the layers above reach tasks: {@link TaskPort} for the front-ends (both protocol
 * generations, the call runner, the tools), and {@link ApprovalsPort} for the approver's side, which decides access
 * itself. `TaskCore` is both; a front-end's tests hold a port of their own.
 */
import type { UpdateDefinition } from '@temporalio/common';
import type { AnswerSeal } from '../shared/answer-proof';
import type { AnswerOrigin, PublishedTaskState } from '../contract/task-contract';
import type { ActionOutcome, TaskAction } from './actions';
import type { PassedResponse } from './answers';
import type { CreatedTask, CreateOptions } from './lifecycle';
import type { TaskTool } from './options';
import type { FollowOptions } from './task-follower';
import type { TaskView } from './task-view';

/** A task followed as it changes (see `TaskFollower`): its views in order, until it ends. */
export interface TaskFollowing extends AsyncIterable<TaskView> {
  /** The last view read (or the one the following started from). */
  readonly latest: TaskView | undefined;
  /** Reads the task again after `delayMs` instead of waiting for its next event. */
  readAgainIn(delayMs: number): void;
  /** Reads the task again at its next event, or after `delayMs` at the latest. */
  readAgainWithin(delayMs: number): void;
}

/**
 * What the front-ends use of the core: each call names the principal it acts for, and a task of another principal
 * is not found.
 */
export interface TaskPort {
  /** Counts one task request of `principal` against its rate; `TooManyRequestsError` past it. */
  takeOperation(principal: string): Promise<void>;
  /** Runs `work`, a wait of `principal` on its tasks, as one of its waits; `TooManyRequestsError` when all are taken. */
  waiting<T>(principal: string, work: () => Promise<T>): Promise<T>;
  /** Reads the task of `principal`; `TaskNotFoundError` for anything else. */
  get(taskId: string, principal: string, options?: { watch?: boolean }): Promise<TaskView>;
  /** {@link get} that waits out a busy or unreachable Temporal, for a write the caller waits on. */
  getPatiently(taskId: string, principal: string, patienceMs?: number): Promise<TaskView>;
  /** The principal's tasks, a page at a time. */
  list(principal: string, cursor?: string): Promise<{ views: TaskView[]; nextCursor?: string }>;
  /** Starts the tool's workflow as a task of `principal`. */
  create(tool: TaskTool, input: unknown, principal: string, options?: CreateOptions): Promise<CreatedTask>;
  /** Requests the task's cancellation. */
  cancel(taskId: string, principal: string): Promise<TaskView>;
  /** Hands one answer to the task's workflow. */
  respond(view: TaskView, response: PassedResponse, answeredBy: AnswerOrigin, patienceMs?: number): Promise<void>;
  /** Hands answers keyed by question to the task's workflow, all or nothing; returns the keys taken. */
  answer(view: TaskView, responses: Record<string, unknown>, answeredBy: AnswerOrigin): Promise<string[]>;
  /** The workflow id of a task the principal owns (they are the same; this checks ownership). */
  ownedWorkflowId(taskId: string, principal: string): Promise<string>;
  /** Follows a task as it changes. */
  follow(taskId: string, principal: string, options?: FollowOptions): TaskFollowing;
  /** The principal's tasks started within the last `withinMs`, newest first. */
  startedWithin(principal: string, withinMs: number): Promise<TaskView[]>;
  /** Sends the task's workflow an action the principal asks for, sealed with who asked (see {@link TaskAction}). */
  sendAction<Result>(view: TaskView, action: TaskAction, requestedBy: AnswerOrigin): Promise<ActionOutcome<Result>>;
}

/** A task's current run, as {@link ApprovalsPort.run} reads it: where it stands, and what its workflow publishes, checked. */
export interface TaskRun {
  workflowId: string;
  runId: string;
  /** Events in its history when it was read: a write made on what it shows names it. */
  historyLength: number;
  /** True while the run is open. */
  running: boolean;
  /** The tool the task was started for. */
  tool?: string;
  /** The task state its workflow publishes, when it publishes one. */
  published?: PublishedTaskState;
}

/** A run a visibility query found, with the task state its memo publishes, unchecked. */
export interface VisibleRun {
  workflowId: string;
  runId: string;
  published?: PublishedTaskState;
}

/**
 * What the approver's side uses of the core: tasks read whoever started them, since it decides who may see and answer
 * a question itself, and an answer written inside the core's write bracket.
 */
export interface ApprovalsPort {
  /** One page of the task ids a visibility query finds: nothing here says who may see them. */
  visiblePage(query: string, token: Uint8Array | undefined): Promise<{ ids: string[]; next?: Uint8Array }>;
  /** One page of the runs a visibility query finds, as candidates to read again with {@link run}. */
  visibleStates(query: string, token: Uint8Array | undefined, pageSize?: number): Promise<{ runs: VisibleRun[]; next?: Uint8Array }>;
  /**
   * The task's current run: `TaskNotFoundError` for anything that is not a task of this bridge, and
   * `TaskStateUnreadableError` for one whose published state cannot be read.
   */
  run(taskId: string): Promise<TaskRun>;
  /** The run's original run id (a reset run's is the run it was reset from first): what sealed answers name. */
  originalRunIdOf(run: { workflowId: string; runId: string }): Promise<string>;
  /** Seals an answer for the task's workflow (its worker checks it). */
  sealAnswer(
    run: { workflowId: string; originalRunId: string },
    answer: Parameters<AnswerSeal['seal']>[1],
    origin: AnswerOrigin,
  ): ReturnType<AnswerSeal['seal']>;
  /** A write made on the state `basis` shows, in the core's write bracket; `write` says whether that still holds. */
  writing<T>(
    taskId: string,
    basis: { runId: string; historyLength: number },
    write: () => Promise<{ value: T; onBasis: boolean }>,
  ): Promise<T>;
  /** Executes an Update on the run `runId` under `deadline` with `updateId`, inside {@link writing}. */
  executeUpdate<Ret, Args extends [any, ...any[]]>(
    taskId: string,
    runId: string,
    update: UpdateDefinition<Ret, Args>,
    options: { args: Args; updateId: string; deadline: number },
  ): Promise<Ret>;
}

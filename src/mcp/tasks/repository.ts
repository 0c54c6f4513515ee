/**
 * The MCP task layer over Temporal: a task is a workflow execution, its id the workflow id. It knows no wire
 * generation; the protocol front-ends and the tools call it. What a workflow's state means as a task is the pure
 * mapping of `task-view.ts`; this module makes the Temporal calls.
 */
import { randomUUID } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import { ApplicationFailure, TerminatedFailure, TimeoutFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { ErrorCode, McpError, RELATED_TASK_META_KEY, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  ANSWER_UPDATE_NAME,
  answerRefusal,
  delegationRefusal,
  AWAITING_SEARCH_ATTRIBUTE,
  PRINCIPAL_SEARCH_ATTRIBUTE,
  PROTOCOL_ERROR_FAILURE_TYPE,
  RESPOND_SIGNAL_NAME,
  respondSignal,
  TASK_META_MEMO,
  TASK_STATE_MEMO,
  checkFormContent,
  pendingInputsOf,
  type AddressedInput,
  type AnswerOrigin,
  type AnswerRecord,
  type FormInputRequest,
  type InputContent,
  type InputResponse,
  type PublishedTaskState,
  type TaskMeta,
} from '../../shared/task-contract';
import { webUiWorkflowUrl } from '../../shared/temporal-config';
import { setBounded } from '../../util/bounded';
import { log } from '../../util/log';
import { retryWithBackoff } from '../../util/wait';
import { describeServiceError, GrpcStatus, grpcStatusOf, isTemporalUnavailable, plainMessage, taskNotFound } from './errors';
import { TaskFollower, type FollowOptions } from './follow';
import { DEFAULT_WATCH_LIMIT, HistoryWatch } from './history-watch';
import { derivedUuid } from './idempotency';
import { argumentsDigest } from '../../util/arguments-digest';
import type { AnswerSeal } from '../../shared/answer-proof';
import type { TaskMarker } from './marker';
import { Quotas, type QuotaOptions } from './quotas';
import { decodeCursor, encodeCursor, listBinding } from './list-cursor';
import { assertValidPrincipal, isValidRole, PRINCIPAL_KEY } from './principal';
import { taskViewOf, webUiMeta, type TaskView, type WorkflowFailure, type WorkflowSnapshot } from './task-view';

/**
 * What the task layer needs of a tool that starts a workflow: how to start it, and how to turn its return value into
 * the tool result. The MCP tool layer's `WorkflowTool` is one.
 */
export interface TaskTool<Output = any> {
  name: string;
  workflowType: string;
  /** Task queue of the workflow; the server's own task queue when absent. */
  taskQueue?: string;
  /** ttl granted when the client asks for none (still capped by the server's maximum). */
  ttlMs?: number;
  /** Poll interval suggested to clients for this tool's tasks. */
  pollIntervalMs?: number;
  /** Prefix of generated task ids, e.g. "invoice". */
  idPrefix: string;
  /** Turns the workflow's return value into the tool result. */
  toResult(output: Output): CallToolResult;
}

/** Task ids we generate and accept: a tool prefix and a UUID v4 (122 random bits). */
const TASK_ID_PATTERN = /^[a-z][a-z0-9-]{0,40}-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const EventType = temporal.api.enums.v1.EventType;

/** Run chain starts kept per process. */
const CHAIN_STARTS_KEPT = 10_000;

/**
 * How far the run's start in Temporal may be from the creation time in its mark: the bridge's clock and Temporal's may
 * differ a little. A mark copied onto a run started later than this is not that run's.
 */
const MARK_START_TOLERANCE_MS = 120_000;

/** Results of completed runs kept per process (a closed run never changes). */
const COMPLETED_RESULTS_KEPT = 1000;

/**
 * How long a task this process created is listed even if the visibility store does not show it yet: the store lags
 * the start by up to a second or so, and a task `tasks/get` can read must be found by `tasks/list`.
 */
const RECENT_CREATION_MS = 60_000;

/** Tuning of the task layer. */
export interface TaskBackendOptions {
  /** Task queue the workflows are started on. */
  taskQueue: string;
  /** Longest ttl granted; requests above it are capped. Keep it at or below the namespace's retention. */
  maxTtlMs: number;
  /** ttl granted when the client asks for none. */
  defaultTtlMs: number;
  /** Poll interval suggested to clients (the server itself waits on Temporal's events, see {@link TemporalTaskBackend.changed}). */
  pollIntervalMs: number;
  /** Page size of tasks/list. */
  pageSize: number;
  /** Deadline of each request to Temporal; past it the call fails as "Temporal unavailable" (retryable). Default 5 s. */
  rpcTimeoutMs?: number;
  /** Signs the tasks this bridge starts and checks them on every read. */
  marker: TaskMarker;
  /** Seals every answer handed to a workflow, so that the workflow can tell it came from a bridge. */
  answerSeal: AnswerSeal;
  /** Open tasks, concurrent waits and task operations per principal (see {@link QuotaOptions}). */
  quotas?: Partial<QuotaOptions>;
  /** The Temporal Web UI's base URL: every task view links to its workflow there. None: no links. */
  webUiUrl?: string;
  /** How task reads are served from the history watches (see {@link WatchedReadOptions}). */
  reads?: Partial<WatchedReadOptions>;
}

/**
 * Task reads served from the history watches: a read of a task whose watch has seen no event since the task was last
 * read is answered from that read, without a Temporal call.
 */
export interface WatchedReadOptions {
  /**
   * How long a read keeps its task's watch (and so the next reads cheap) after it; default 30 s. A watch costs a
   * request per long poll (20 s on a default server): clients that poll less often than this are served from Temporal.
   */
  keepMs: number;
  /** Most watches kept for reads; past it the least recently read goes. 0 turns serving reads from watches off. */
  limit: number;
  /** Deadline of a watch's long poll; Temporal answers idle ones before it (history.longPollExpirationInterval). */
  longPollMs: number;
}

/** How long an answer a person gave is kept trying while Temporal is unreachable or busy, before the call gives up. */
export const WRITE_PATIENCE_MS = 120_000;

/** How long a write waits for this process's watch to see its event before it answers (see {@link TemporalTaskBackend.written}). */
const WRITE_SEEN_MS = 1000;

/** A task's view as last read, served while its watch sees no newer event. */
interface WatchedRead {
  view: TaskView;
  /** Whose task it is: a read by anyone else is "not found", as it would be from Temporal. */
  owner: string;
}

/** How a task is created. */
export interface CreateOptions {
  /** The ttl the client asked for; capped by the server's maximum. */
  requestedTtl?: number;
  /** The caller's idempotency key: a retried call with the same key gets the same task. */
  idempotencyKey?: string;
  /** Only find the task an earlier call with `idempotencyKey` made; start nothing. */
  adoptOnly?: boolean;
}

/** A task just created, or found again for a retried call (`replayed`). */
export type CreatedTask = TaskView & { replayed: boolean };

/**
 * The MCP task layer over Temporal. Holds no task state: every answer is read from Temporal, so any server process
 * serves any task.
 */
export class TemporalTaskBackend {
  /** The shared history long polls that wake waiting requests. */
  readonly watch: HistoryWatch;
  /** What each principal may hold at once, and how fast it may ask. */
  readonly quotas: Quotas;
  /** Tool results of completed runs, by run id. */
  private readonly completed = new Map<string, CallToolResult>();
  /** When each run chain started and the digest of its input, by first run id (they never change). */
  private readonly chainStarts = new Map<string, { startedAt: number; argumentsDigest: string }>();
  /** Tasks created here lately, per principal (task id → creation time): listed while visibility catches up. */
  private readonly recent = new Map<string, Map<string, number>>();
  /** The original run id (kept across resets) of each run answered lately: what answers are sealed for. */
  private readonly originalRunIds = new Map<string, string>();
  /** The last read of each watched task (see {@link WatchedReadOptions}); an entry goes with its watch. */
  private readonly reads = new Map<string, WatchedRead>();
  /** Writes made here per task lately: a read that began before one is not kept. */
  private readonly writes = new Map<string, number>();
  private readonly readOptions: WatchedReadOptions;
  /** Reads answered from a watch, and reads that asked Temporal. */
  private readonly readCounts = { watched: 0, fetched: 0 };

  constructor(
    readonly client: Client,
    readonly options: TaskBackendOptions,
    private readonly tools: ReadonlyMap<string, TaskTool>,
  ) {
    this.readOptions = { keepMs: 30_000, limit: DEFAULT_WATCH_LIMIT, longPollMs: 70_000, ...options.reads };
    this.watch = new HistoryWatch(client, {
      limit: Math.max(this.readOptions.limit, 1),
      longPollMs: this.readOptions.longPollMs,
      onStop: (workflowId) => this.reads.delete(workflowId),
    });
    this.quotas = new Quotas(client, options.quotas);
  }

  /** How reads were served: from a watch, or by asking Temporal. */
  readStats(): { watched: number; fetched: number; kept: number } {
    return { ...this.readCounts, kept: this.reads.size };
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

  /** The workflow's page in the Web UI, when there is one. */
  private webUi(workflowId: string): { webUiUrl?: string } {
    const base = this.options.webUiUrl;
    return base ? { webUiUrl: webUiWorkflowUrl(base, this.client.options.namespace, workflowId) } : {};
  }

  /** Runs `work` (requests to Temporal) under the RPC deadline. */
  private rpc<T>(work: () => Promise<T>): Promise<T> {
    return this.client.connection.withDeadline(Date.now() + (this.options.rpcTimeoutMs ?? 5000), work);
  }

  /**
   * Starts the tool's workflow for `principal`; the task exists (durably) when this returns.
   *
   * With an idempotency key the workflow id is derived from principal, tool and key, and Temporal refuses a second
   * start of that id (running, or closed and still retained), so a retried call gets the task the first one made
   * (`replayed`). The same key with other arguments is refused with -32602. `adoptOnly` starts nothing: it finds the
   * task of an earlier call with that key, or answers -32602.
   */
  async create(tool: TaskTool, input: unknown, principal: string, options: CreateOptions = {}): Promise<CreatedTask> {
    assertValidPrincipal(principal);
    const { idempotencyKey } = options;
    const workflowId = `${tool.idPrefix}-${idempotencyKey === undefined ? randomUUID() : derivedUuid(principal, tool.name, idempotencyKey)}`;
    const digest = argumentsDigest(input);
    if (options.adoptOnly) {
      if (idempotencyKey === undefined) throw new McpError(ErrorCode.InvalidParams, 'adopt-only needs an idempotency key');
      return this.rpc(() => this.replay(workflowId, principal, tool.name, idempotencyKey, digest));
    }
    const release = await this.rpc(() => this.quotas.beginTask(principal));
    const ttl = Math.min(options.requestedTtl ?? tool.ttlMs ?? this.options.defaultTtlMs, this.options.maxTtlMs);
    const createdAt = new Date().toISOString();
    const meta: TaskMeta = {
      tool: tool.name,
      ttl,
      pollInterval: tool.pollIntervalMs ?? this.options.pollIntervalMs,
      createdAt,
      argumentsDigest: digest,
      marker: this.options.marker.sign({ workflowId, principal, tool: tool.name, argumentsDigest: digest, createdAt }),
    };
    let handle;
    try {
      handle = await this.rpc(() =>
        this.client.workflow.start(tool.workflowType, {
          taskQueue: tool.taskQueue ?? this.options.taskQueue,
          workflowId,
          args: [input],
          memo: { [TASK_META_MEMO]: meta },
          typedSearchAttributes: [{ key: PRINCIPAL_KEY, value: principal }],
          // A second start of a derived id is a retried call: refused whether the first run is open or closed.
          workflowIdConflictPolicy: 'FAIL',
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
        }),
      );
    } catch (error) {
      // Nothing started: the place reserved under the quota is free again.
      release();
      if (error instanceof WorkflowExecutionAlreadyStartedError && idempotencyKey !== undefined) {
        const replayed = await this.rpc(() => this.replay(workflowId, principal, tool.name, idempotencyKey, digest));
        log.info('task found again for a repeated idempotency key', { taskId: workflowId, principal, tool: tool.name });
        return replayed;
      }
      throw error;
    }
    log.info('task created', { taskId: workflowId, principal, tool: tool.name, workflowType: tool.workflowType, ttl });
    this.remember(principal, workflowId);
    // This process made the start: its reads need not fetch it from history to check the mark against it.
    setBounded(
      this.chainStarts,
      handle.firstExecutionRunId,
      { startedAt: Date.parse(createdAt), argumentsDigest: digest },
      CHAIN_STARTS_KEPT,
    );
    // The answer is built from the start itself: a describe() could already show a later status.
    return {
      workflowId,
      runId: handle.firstExecutionRunId,
      tool: tool.name,
      inputs: [],
      historyLength: 0,
      replayed: false,
      ...this.webUi(workflowId),
      task: { taskId: workflowId, status: 'working', createdAt, lastUpdatedAt: createdAt, ttl, pollInterval: meta.pollInterval },
    };
  }

  /** The task an earlier call with the same idempotency key made, checked to be the same call. */
  private async replay(workflowId: string, principal: string, tool: string, key: string, argumentsDigest?: string): Promise<CreatedTask> {
    let description: WorkflowExecutionDescription;
    try {
      description = await this.describeOwned(workflowId, principal);
    } catch (error) {
      if (error instanceof McpError && error.code === ErrorCode.InvalidParams) {
        throw new McpError(ErrorCode.InvalidParams, `No task was started with idempotency key "${key}" for tool ${tool}`);
      }
      throw error;
    }
    const meta = description.memo?.[TASK_META_MEMO] as TaskMeta | undefined;
    if (meta?.tool !== tool || meta.argumentsDigest !== argumentsDigest) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Idempotency key "${key}" was already used for a call of ${tool} with other arguments; use a new key for a new call`,
      );
    }
    return { ...(await this.view(description)), replayed: true };
  }

  /**
   * Reads the task; throws {@link taskNotFound} unless it exists and belongs to `principal`.
   *
   * A task this process watches is answered from its last read while the watch has seen no event after it (no
   * Temporal call); any other is read from Temporal, and its watch kept for {@link WatchedReadOptions.keepMs} so that
   * the next reads are served the same way (`watch: false`, as for a listing: no watch is started for it).
   */
  async get(taskId: string, principal: string, options: { watch?: boolean } = {}): Promise<TaskView> {
    const known = this.watchedRead(taskId, principal, options.watch !== false);
    if (known) return known;
    const writes = this.writes.get(taskId);
    const view = await this.rpc(async () => this.view(await this.describeOwned(taskId, principal)));
    this.readCounts.fetched++;
    // A write made here meanwhile may not be in what was read: that read is not kept.
    if (options.watch !== false && this.readOptions.limit > 0 && this.writes.get(taskId) === writes) this.keepRead(view, principal);
    return view;
  }

  /**
   * {@link get} for a write the caller waits on (an answer): while Temporal is unreachable or too slow for a request's
   * deadline, the read is tried again for `patienceMs`, so that a busy moment slows the answer down rather than fail it.
   */
  getPatiently(taskId: string, principal: string, patienceMs = WRITE_PATIENCE_MS): Promise<TaskView> {
    return retryWithBackoff(() => this.get(taskId, principal), { isRetryable: isTemporalUnavailable, deadline: Date.now() + patienceMs });
  }

  /** The task's last read, when its watch shows nothing newer happened since (see {@link get}). */
  private watchedRead(taskId: string, principal: string, keepWatching: boolean): TaskView | undefined {
    const read = this.reads.get(taskId);
    if (!read) return undefined;
    const seen = this.watch.seen(taskId);
    const { view } = read;
    // A closed run is read from Temporal each time: its workflow id may start a new run (a reset, another start).
    if (!seen?.healthy || seen.closed || seen.runId !== view.runId || seen.latest !== view.historyLength) return undefined;
    if (read.owner !== principal) throw taskNotFound(taskId);
    if (keepWatching) this.watch.keep(taskId, view.runId, this.readOptions.keepMs);
    this.readCounts.watched++;
    return view;
  }

  /** Keeps what was just read from Temporal, and its task's watch, for the next reads (not for a task that ended). */
  private keepRead(view: TaskView, owner: string): void {
    if (isTerminal(view.task.status) || !this.watch.keep(view.workflowId, view.runId, this.readOptions.keepMs)) return;
    this.reads.set(view.workflowId, { view, owner });
  }

  /**
   * After a write to the task (an answer, a cancel, an Update) made by this process: its last read is dropped, so the
   * next read here comes from Temporal or from a watch that has seen the write, and the write answers once this
   * process's watch has seen an event after `basis`, the state the write was made on (up to {@link WRITE_SEEN_MS}).
   * Read-your-writes holds on this replica whatever the timing; another replica's watch may get the event a little
   * later (a balancer routes a task's requests to one replica: docs/operations.md).
   */
  private async written(taskId: string, basis?: { runId: string; historyLength: number }): Promise<void> {
    setBounded(this.writes, taskId, (this.writes.get(taskId) ?? 0) + 1, CHAIN_STARTS_KEPT);
    this.reads.delete(taskId);
    if (basis === undefined || this.readOptions.limit === 0) return;
    await this.watch.changed(taskId, basis.historyLength, WRITE_SEEN_MS, undefined, basis.runId);
  }

  /**
   * Before a write: this process's watch of the task runs and has read the history so far, so the write's event reaches
   * it through its long poll, as it reaches the watches of other replicas (see {@link written}), not by a first read
   * that could come back before theirs were told.
   */
  private async watchForWrite(workflowId: string, runId: string): Promise<void> {
    if (this.readOptions.limit === 0 || !this.watch.keep(workflowId, runId, this.readOptions.keepMs)) return;
    await this.watch.changed(workflowId, 0, WRITE_SEEN_MS, undefined, runId);
  }

  /** The workflow id of a task the principal owns (they are the same; this checks ownership). */
  async ownedWorkflowId(taskId: string, principal: string): Promise<string> {
    return (await this.rpc(() => this.describeOwned(taskId, principal))).workflowId;
  }

  /**
   * The principal's tasks, a page at a time, in the order the visibility store keeps them (the SQL stores: open tasks
   * first, each group newest first). Each page is one visibility request with the store's own page token, so every
   * page costs the same however many tasks there are; the cursor carries that token, bound to the principal.
   */
  async list(principal: string, cursor?: string): Promise<{ views: TaskView[]; nextCursor?: string }> {
    assertValidPrincipal(principal);
    const query = `${PRINCIPAL_SEARCH_ATTRIBUTE} = '${principal}'`;
    const binding = listBinding(principal, query);
    const token = cursor === undefined ? undefined : decodeCursor(cursor, binding);
    // Asked before the page, so that a task the store shows by then is on one of its pages (visibility only catches up).
    const unseen = cursor === undefined ? await this.notYetVisible(principal) : [];
    const { ids: listed, next } = await this.visiblePage(query, token);
    // The first page also names what this process created lately and the store does not show yet (newest first).
    const ids = [...unseen.filter((id) => !listed.includes(id)), ...listed];
    // A task deleted by retention between the listing and the read is left out; an outage is reported.
    const views = await Promise.all(
      ids.map((id) =>
        this.get(id, principal, { watch: false }).catch((error: unknown) => {
          if (isTemporalUnavailable(error)) throw error;
          return undefined;
        }),
      ),
    );
    return {
      views: views.filter((view): view is TaskView => view !== undefined),
      ...(next && { nextCursor: encodeCursor(next, binding) }),
    };
  }

  /** Requests cancellation; the task reads `cancelled` from then on. A terminal task gets -32602. */
  async cancel(taskId: string, principal: string): Promise<TaskView> {
    const view = await this.get(taskId, principal);
    if (isTerminal(view.task.status)) {
      throw new McpError(ErrorCode.InvalidParams, `Task ${taskId} is already ${view.task.status}; only a running task can be cancelled`);
    }
    await this.watchForWrite(view.workflowId, view.runId);
    try {
      await this.rpc(() => this.client.workflow.getHandle(view.workflowId, view.runId).cancel());
      await this.written(taskId, view);
    } catch (error) {
      await this.written(taskId);
      // It may have closed between the read and the cancel: report what it became.
      const now = await this.get(taskId, principal);
      if (isTerminal(now.task.status)) {
        throw new McpError(ErrorCode.InvalidParams, `Task ${taskId} is already ${now.task.status}; only a running task can be cancelled`);
      }
      throw error;
    }
    log.info('task cancellation requested', { taskId, principal });
    return this.get(taskId, principal);
  }

  /**
   * Hands an answer to the workflow, sealed with who gave it (see answer-proof). A signal: durable as soon as this
   * returns, even with no worker running. While Temporal is unreachable it keeps trying for `patienceMs`, so an answer
   * the user gave is not dropped by an outage.
   */
  async respond(
    view: TaskView,
    response: InputResponse & { action: 'accept' | 'decline' },
    answeredBy: AnswerOrigin,
    patienceMs = WRITE_PATIENCE_MS,
  ): Promise<void> {
    try {
      await this.signalAnswer(view, response, answeredBy, patienceMs);
    } catch (error) {
      // The run ended between the read and the answer: nothing takes answers any more.
      if (error instanceof WorkflowNotFoundError) {
        throw new McpError(ErrorCode.InvalidParams, `Task ${view.task.taskId} ended before the answer reached it; nothing was recorded`);
      }
      throw error;
    }
  }

  /** {@link respond}, with Temporal's own errors (a run that ended: WorkflowNotFoundError). */
  private async signalAnswer(
    view: TaskView,
    response: InputResponse & { action: 'accept' | 'decline' },
    answeredBy: AnswerOrigin,
    patienceMs: number,
  ): Promise<void> {
    await this.watchForWrite(view.workflowId, view.runId);
    try {
      await retryWithBackoff(
        async () => {
          const originalRunId = await this.originalRunIdOf(view);
          const sealed = this.options.answerSeal.seal({ workflowId: view.workflowId, originalRunId }, response, answeredBy);
          await this.rpc(() => this.client.workflow.getHandle(view.workflowId, view.runId).signal(respondSignal, sealed));
        },
        {
          isRetryable: isTemporalUnavailable,
          deadline: Date.now() + patienceMs,
          onRetry: (error, attempt) => {
            if (attempt === 0)
              log.warn(`answer waits for Temporal: ${(error as Error).message}`, { taskId: view.task.taskId, key: response.key });
          },
        },
      );
    } catch (error) {
      // It may have landed all the same.
      await this.written(view.workflowId);
      throw error;
    }
    await this.written(view.workflowId, view);
    log.info('answer handed to the workflow', {
      taskId: view.task.taskId,
      key: response.key,
      action: response.action,
      principal: answeredBy.principal,
    });
  }

  /** The run's original run id, from its start event (a reset run's is the run it was reset from first); cached. */
  private async originalRunIdOf(view: { workflowId: string; runId: string }): Promise<string> {
    const cached = this.originalRunIds.get(view.runId);
    if (cached) return cached;
    const page = await this.rpc(() =>
      this.client.workflowService.getWorkflowExecutionHistory({
        namespace: this.client.options.namespace,
        execution: { workflowId: view.workflowId, runId: view.runId },
        maximumPageSize: 1,
      }),
    );
    const original = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.originalExecutionRunId || view.runId;
    setBounded(this.originalRunIds, view.runId, original, 10_000);
    return original;
  }

  /**
   * The tool result of a terminal task, as the original call would have returned it, with related-task `_meta`:
   * a workflow's return value, or its application failure as a tool error. Failed and cancelled tasks throw the
   * JSON-RPC error the call would have got; a cancelled one's says what the workflow reported having done before it
   * stopped, when it did.
   */
  async result(view: TaskView): Promise<CallToolResult> {
    const { taskId, status } = view.task;
    const related = { [RELATED_TASK_META_KEY]: { taskId }, ...webUiMeta(view) };
    if (status === 'cancelled') {
      const message =
        view.cancellationReport === undefined
          ? `Task ${taskId} was cancelled before it finished`
          : `Task ${taskId}: ${view.cancellationReport}`;
      throw new McpError(ErrorCode.InternalError, message, { taskId, status });
    }
    try {
      const result = view.result ?? (await this.rpc(() => this.completedResult(view.workflowId, view.runId, view.tool)));
      return { ...result, _meta: { ...result._meta, ...related } };
    } catch (error) {
      if (error instanceof WorkflowFailedError && error.cause instanceof ApplicationFailure) {
        if (error.cause.type === PROTOCOL_ERROR_FAILURE_TYPE) {
          const code = (error.cause.details?.[0] as { code?: unknown } | undefined)?.code;
          throw new McpError(typeof code === 'number' && Number.isInteger(code) ? code : ErrorCode.InternalError, error.cause.message, {
            taskId,
          });
        }
        return { content: [{ type: 'text', text: error.cause.message }], isError: true, _meta: related };
      }
      if (error instanceof WorkflowFailedError) {
        throw new McpError(ErrorCode.InternalError, `Task ${taskId} failed: ${describeFailure(error)}`, { taskId, status: 'failed' });
      }
      throw error;
    }
  }

  /** Notes a task this process just created for `principal`, so that {@link list} finds it before the store does. */
  private remember(principal: string, taskId: string): void {
    let own = this.recent.get(principal);
    if (!own) {
      own = new Map();
      setBounded(this.recent, principal, own, 10_000);
    }
    // The newest hundred: older ones are in the store by the time that many were created (it lags by about a second).
    setBounded(own, taskId, Date.now(), 100);
  }

  /**
   * One page of a visibility query: the workflow ids on it (a workflow that continued as new is listed once per run;
   * the task is the workflow), and the store's token of the next page, if any.
   */
  private async visiblePage(query: string, token: Uint8Array | undefined): Promise<{ ids: string[]; next?: Uint8Array }> {
    const page = await this.rpc(() =>
      this.client.workflowService.listWorkflowExecutions({
        namespace: this.client.options.namespace,
        query,
        pageSize: this.options.pageSize,
        ...(token && { nextPageToken: token }),
      }),
    );
    const ids = [...new Set((page.executions ?? []).map((info) => info.execution?.workflowId).filter((id): id is string => !!id))];
    const next = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
    return { ids, ...(next && { next }) };
  }

  /**
   * Tasks created here for `principal` within {@link RECENT_CREATION_MS} that the visibility store does not show yet,
   * newest first. Costs one visibility request, and only while such tasks exist; the ones the store shows are forgotten
   * (the listing made after this request has them, on their own page).
   */
  private async notYetVisible(principal: string): Promise<string[]> {
    const own = this.recent.get(principal);
    if (!own) return [];
    for (const [taskId, at] of own) if (Date.now() - at > RECENT_CREATION_MS) own.delete(taskId);
    if (own.size === 0) {
      this.recent.delete(principal);
      return [];
    }
    const candidates = [...own.keys()];
    const ids = candidates.map((id) => `'${id}'`).join(', ');
    const page = await this.rpc(() =>
      this.client.workflowService.listWorkflowExecutions({
        namespace: this.client.options.namespace,
        query: `${PRINCIPAL_SEARCH_ATTRIBUTE} = '${principal}' AND WorkflowId IN (${ids})`,
        pageSize: candidates.length,
      }),
    );
    for (const info of page.executions ?? []) if (info.execution?.workflowId) own.delete(info.execution.workflowId);
    return candidates.filter((id) => own.has(id)).reverse();
  }

  private async describeOwned(taskId: string, principal: string): Promise<WorkflowExecutionDescription> {
    return this.describeMarked(taskId, principal);
  }

  /**
   * Describes a task this bridge started (its mark holds for its run); of `principal` when given, of anyone otherwise
   * (an approver reads a task that is not theirs). Throws {@link taskNotFound} for anything else.
   */
  private async describeMarked(taskId: string, owner?: string): Promise<WorkflowExecutionDescription> {
    if (typeof taskId !== 'string' || !TASK_ID_PATTERN.test(taskId)) throw taskNotFound(String(taskId));
    let description: WorkflowExecutionDescription;
    try {
      description = await this.client.workflow.getHandle(taskId).describe();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw taskNotFound(taskId);
      throw error;
    }
    const principal = description.typedSearchAttributes.get(PRINCIPAL_KEY);
    if (principal === undefined || (owner !== undefined && principal !== owner)) throw taskNotFound(taskId);
    // Only what this bridge started, for a tool it declares, running that tool's workflow: anything else planted in
    // the namespace is "not found", exactly like a task that does not exist.
    const meta = description.memo?.[TASK_META_MEMO] as TaskMeta | undefined;
    const tool = typeof meta?.tool === 'string' ? this.tools.get(meta.tool) : undefined;
    const marked = {
      workflowId: taskId,
      principal,
      tool: meta?.tool ?? '',
      argumentsDigest: meta?.argumentsDigest,
      createdAt: meta?.createdAt,
    };
    if (!tool || tool.workflowType !== description.type || !this.options.marker.verify(meta?.marker, marked)) {
      throw taskNotFound(taskId);
    }
    // The mark must also be the run's own: a copy on another run (other arguments, a later start) is not the task.
    const start = await this.chainStart(description);
    const startedNear = Math.abs(start.startedAt - Date.parse(meta!.createdAt!)) <= MARK_START_TOLERANCE_MS;
    if (start.argumentsDigest !== meta!.argumentsDigest || !startedNear) throw taskNotFound(taskId);
    return description;
  }

  /**
   * The start of the run chain a described run belongs to (its first run: a workflow that continued as new or retried
   * keeps its chain): when it started and the digest of its input, read from its first history event once per process.
   */
  private async chainStart(description: WorkflowExecutionDescription): Promise<{ startedAt: number; argumentsDigest: string }> {
    const firstRunId = description.raw.workflowExecutionInfo?.firstRunId || description.runId;
    const known = this.chainStarts.get(firstRunId);
    if (known) return known;
    const page = await this.client.workflowService.getWorkflowExecutionHistory({
      namespace: this.client.options.namespace,
      execution: { workflowId: description.workflowId, runId: firstRunId },
      maximumPageSize: 1,
      skipArchival: true,
    });
    const event = page.history?.events?.[0];
    const payload = event?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    const input = payload ? this.client.options.loadedDataConverter.payloadConverter.fromPayload(payload) : undefined;
    const start = { startedAt: timestampToMs(event?.eventTime) ?? 0, argumentsDigest: argumentsDigest(input) };
    setBounded(this.chainStarts, firstRunId, start, CHAIN_STARTS_KEPT);
    return start;
  }

  /**
   * The open questions addressed to `principal` or one of `roles` that they may answer now, across every task in the
   * namespace, newest first as the visibility store keeps them: one visibility query a page (on the
   * {@link AWAITING_SEARCH_ATTRIBUTE} the workflows keep), then each task read and checked as any task read is.
   */
  async inbox(principal: string, roles: readonly string[], cursor?: string): Promise<{ items: InboxItem[]; nextCursor?: string }> {
    assertValidPrincipal(principal);
    const keywords = [`principal:${principal}`, ...roles.filter(isValidRole).map((role) => `role:${role}`)];
    const query = `${AWAITING_SEARCH_ATTRIBUTE} IN (${keywords.map((keyword) => `'${keyword}'`).join(', ')}) AND ExecutionStatus = 'Running'`;
    const binding = listBinding(`inbox:${principal}`, query);
    const token = cursor === undefined ? undefined : decodeCursor(cursor, binding);
    const { ids, next } = await this.visiblePage(query, token);
    const found = await Promise.all(
      ids.map((id) =>
        this.rpc(() => this.describeMarked(id)).catch((error: unknown) => {
          if (isTemporalUnavailable(error)) throw error;
          return undefined;
        }),
      ),
    );
    const items: InboxItem[] = [];
    for (const description of found) {
      if (!description || description.status.name !== 'RUNNING') continue;
      const published = description.memo?.[TASK_STATE_MEMO] as PublishedTaskState | undefined;
      const meta = description.memo?.[TASK_META_MEMO] as TaskMeta | undefined;
      for (const input of published?.awaiting ?? []) {
        if (answerRefusal(input, principal, roles) !== undefined) continue;
        items.push(inboxItemOf(description.workflowId, meta?.tool, input));
      }
    }
    return { items, ...(next && { nextCursor: encodeCursor(next, binding) }) };
  }

  /**
   * Hands one person's answer to an addressed question to the workflow, sealed with who they are (principal, roles at
   * this moment, the way it came) and their comment, as a Temporal Update the workflow validates against its own state.
   * Resolves with what the workflow recorded, or rejects with {@link AnswerRefusedError} saying why nothing was.
   * A question the caller may not see at all is {@link taskNotFound}, as for a task that does not exist.
   */
  /**
   * The question `key` of `taskId` as `by` may answer it now, or a refusal: "not found" for who is not in its audience
   * (as for a task that does not exist), {@link AnswerRefusedError} saying why otherwise.
   */
  async openQuestion(
    taskId: string,
    key: string,
    by: { principal: string; roles: readonly string[] },
  ): Promise<{ description: WorkflowExecutionDescription; input: AddressedInput }> {
    const description = await this.rpc(() => this.describeMarked(taskId));
    const published = description.memo?.[TASK_STATE_MEMO] as PublishedTaskState | undefined;
    const input = description.status.name === 'RUNNING' ? published?.awaiting?.find((candidate) => candidate.key === key) : undefined;
    const refusal = input ? answerRefusal(input, by.principal, by.roles) : 'not addressed';
    // Who is not in the audience learns nothing of the task.
    if (!input || refusal === 'this question is not addressed to you') {
      throw input ? taskNotFound(taskId) : new AnswerRefusedError(`Task ${taskId} has no open question "${key}" for you`);
    }
    if (refusal) throw new AnswerRefusedError(`${refusal[0].toUpperCase()}${refusal.slice(1)}`);
    return { description, input };
  }

  async decide(
    taskId: string,
    key: string,
    response: { action: 'accept' | 'decline' | 'delegate'; content?: InputContent; comment?: string },
    by: AnswerOrigin & { roles: string[] },
    patienceMs = 30_000,
  ): Promise<AnswerRecord> {
    // The approver waits for this call anyway: a busy Temporal slows the answer down within the patience, it does not
    // fail it. Each request keeps its own deadline (MCP_TEMPORAL_RPC_TIMEOUT_MS) and is tried again past it.
    const deadline = Date.now() + patienceMs;
    const patiently = <T>(work: () => Promise<T>) => retryWithBackoff(work, { isRetryable: isTemporalUnavailable, deadline });
    const { description, input } = await patiently(() => this.openQuestion(taskId, key, by));
    if (response.action === 'delegate') {
      const problem = delegationRefusal(input, by.principal, response.content?.to);
      if (problem) throw new AnswerRefusedError(`${problem[0].toUpperCase()}${problem.slice(1)}`);
      response = { ...response, content: { to: response.content!.to } };
    }
    if (response.action === 'accept') {
      const content = formFieldsOf(input.request.requestedSchema, response.content ?? {});
      const problem = checkFormContent(input.request.requestedSchema, content);
      if (problem) throw new AnswerRefusedError(`The answer does not fit the question: ${problem}`);
      response = { ...response, content: content as InputContent };
    }
    const originalRunId = await patiently(() => this.originalRunIdOf(description));
    const sealed = this.options.answerSeal.seal({ workflowId: description.workflowId, originalRunId }, { key, ...response }, by);
    await this.watchForWrite(description.workflowId, description.runId);
    // One Update id for every attempt: Temporal takes a repeated one as the same Update, so trying again is safe.
    const updateId = randomUUID();
    try {
      const record = await retryWithBackoff(
        () =>
          this.client.connection.withDeadline(deadline, () =>
            this.client.workflow
              .getHandle(description.workflowId, description.runId)
              .executeUpdate<AnswerRecord, [InputResponse]>(ANSWER_UPDATE_NAME, { args: [sealed], updateId }),
          ),
        {
          isRetryable: (error) => isUpdateRetryable(error, deadline),
          deadline,
          onRetry: (error, attempt) => {
            if (attempt === 0) log.warn(`decision sent again: ${describeServiceError(error)}`, { taskId, key });
          },
        },
      );
      log.info('decision recorded', { taskId, key, action: response.action, principal: by.principal });
      await this.written(taskId, description);
      return record;
    } catch (error) {
      await this.written(taskId);
      throw updateRefusal(error, taskId, patienceMs);
    }
  }

  /** The task a described workflow is: what its status calls for is read too, then mapped by {@link taskViewOf}. */
  private async view(description: WorkflowExecutionDescription): Promise<TaskView> {
    const meta = description.memo?.[TASK_META_MEMO] as TaskMeta | undefined;
    const published = description.memo?.[TASK_STATE_MEMO] as PublishedTaskState | undefined;
    const cancelRequested = description.raw.workflowExtendedInfo?.cancelRequested === true;
    const status = description.status.name;
    const snapshot: WorkflowSnapshot = {
      workflowId: description.workflowId,
      runId: description.runId,
      status,
      startTime: description.startTime,
      ...(description.closeTime && { closeTime: description.closeTime }),
      historyLength: description.historyLength,
      ...(meta && { meta }),
      ...(published && { published }),
      cancelRequested,
      ...(cancelRequested && { cancelRequestedAt: timestampToIso(description.raw.pendingWorkflowTask?.scheduledTime) }),
      ...this.webUi(description.workflowId),
    };
    const running = status === 'RUNNING' || status === 'CONTINUED_AS_NEW';
    if (running && !cancelRequested && pendingInputsOf(published).length > 0) {
      snapshot.answersAwaitingWorker = await this.answersAwaitingWorker(description, description.historyLength);
    }
    if (!cancelRequested && status === 'COMPLETED')
      snapshot.result = await this.completedResult(description.workflowId, description.runId, meta?.tool);
    if (!cancelRequested && status === 'FAILED') snapshot.failure = await this.failureOf(description.workflowId, description.runId);
    return taskViewOf(snapshot, { pollIntervalMs: this.options.pollIntervalMs });
  }

  /**
   * The tool result of a completed run: the workflow's return value through the tool's `toResult`. Read once per
   * process and kept (a closed run never changes).
   */
  private async completedResult(workflowId: string, runId: string, toolName: string | undefined): Promise<CallToolResult> {
    const known = this.completed.get(runId);
    if (known) return known;
    const output = await this.client.workflow.getHandle(workflowId, runId).result();
    const tool = toolName ? this.tools.get(toolName) : undefined;
    const full: CallToolResult = tool
      ? tool.toResult(output)
      : { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output as Record<string, unknown> };
    const { _meta: _dropped, ...result } = full;
    setBounded(this.completed, runId, result, COMPLETED_RESULTS_KEPT);
    return result;
  }

  /** How a failed run failed. Reading the failure itself may fail (Temporal unreachable): that is thrown. */
  private async failureOf(workflowId: string, runId: string): Promise<WorkflowFailure> {
    const failure = await this.client.workflow
      .getHandle(workflowId, runId)
      .result()
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    if (failure !== undefined && !(failure instanceof WorkflowFailedError)) throw failure;
    if (failure instanceof WorkflowFailedError && failure.cause instanceof ApplicationFailure) {
      return { kind: failure.cause.type === PROTOCOL_ERROR_FAILURE_TYPE ? 'protocol' : 'application', message: failure.cause.message };
    }
    return { kind: 'other', message: failure instanceof WorkflowFailedError ? describeFailure(failure) : 'The workflow failed.' };
  }

  /**
   * The input keys answered by a signal that no workflow task has processed yet, as of the described state (history up
   * to `asOfEvent`), with the time of the newest such answer. Reads history newest first, skips events newer than the
   * description, and stops at the last completed workflow task, so it costs a few events.
   */
  private async answersAwaitingWorker(
    execution: { workflowId: string; runId: string },
    asOfEvent: number,
  ): Promise<{ keys: Set<string>; at?: string }> {
    const { payloadConverter } = this.client.options.loadedDataConverter;
    const keys = new Set<string>();
    let at: string | undefined;
    let nextPageToken: Uint8Array | undefined;
    do {
      const page = await this.client.workflowService.getWorkflowExecutionHistoryReverse({
        namespace: this.client.options.namespace,
        execution: { workflowId: execution.workflowId, runId: execution.runId },
        maximumPageSize: 20,
        nextPageToken,
      });
      for (const event of page.history?.events ?? []) {
        // Events after the description belong to a newer state than the memo that was read.
        if (Number(event.eventId) > asOfEvent) continue;
        if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) return { keys, ...(at && { at }) };
        const signal = event.workflowExecutionSignaledEventAttributes;
        if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED && signal?.signalName === RESPOND_SIGNAL_NAME) {
          const payload = signal.input?.payloads?.[0];
          const response = payload ? (payloadConverter.fromPayload(payload) as InputResponse) : undefined;
          if (response && typeof response.key === 'string' && response.action !== 'cancel') {
            keys.add(response.key);
            at ??= timestampToIso(event.eventTime);
          }
        }
      }
      nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
    } while (nextPageToken);
    return { keys, ...(at && { at }) };
  }

  /**
   * Hands answers to outstanding input requests to the workflow, all or nothing: an answer that does not fit its
   * request fails the whole call with -32602 and nothing is sent. Answers to keys that are not outstanding (never
   * asked, already answered, or answered meanwhile) are ignored. `cancel` answers are ignored too: the request stays.
   * Returns the keys handed over.
   */
  async answer(view: TaskView, responses: Record<string, unknown>, answeredBy: AnswerOrigin): Promise<string[]> {
    const accepted: (InputResponse & { action: 'accept' | 'decline' })[] = [];
    const problems: string[] = [];
    for (const [key, raw] of Object.entries(responses)) {
      const input = view.inputs.find((candidate) => candidate.key === key);
      if (!input) continue;
      const response = raw as { action?: unknown; content?: unknown } | null;
      const action = response?.action;
      if (action !== 'accept' && action !== 'decline' && action !== 'cancel') {
        problems.push(`"${key}": action must be accept, decline or cancel`);
        continue;
      }
      if (action === 'cancel') continue;
      if (action === 'accept' && input.request.mode === 'form') {
        // Fields the form does not ask for are left out rather than refused.
        const content = formFieldsOf(input.request.requestedSchema, response?.content);
        const problem = checkFormContent(input.request.requestedSchema, content);
        if (problem) {
          problems.push(`"${key}": ${problem}`);
          continue;
        }
        accepted.push({ key, action, content: content as InputResponse['content'] });
      } else accepted.push({ key, action });
    }
    if (problems.length > 0) {
      throw new McpError(ErrorCode.InvalidParams, `Answers that do not fit the request: ${problems.join('; ')}. Nothing was passed on.`);
    }
    const handed: string[] = [];
    for (const response of accepted) {
      try {
        await this.signalAnswer(view, response, answeredBy, WRITE_PATIENCE_MS);
        handed.push(response.key);
      } catch (error) {
        // The task ended meanwhile: its keys are no longer outstanding, and answers to those are ignored.
        if (!(error instanceof WorkflowNotFoundError)) throw error;
      }
    }
    return handed;
  }
}

/** The content's values for the form's own fields; anything that is not an object is passed on for the check to refuse. */
function formFieldsOf(schema: FormInputRequest['requestedSchema'], content: unknown): unknown {
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return content ?? {};
  return Object.fromEntries(Object.entries(content).filter(([name]) => name in schema.properties));
}

function describeFailure(error: WorkflowFailedError): string {
  const cause = error.cause;
  if (cause instanceof TerminatedFailure) return 'the workflow was terminated';
  if (cause instanceof TimeoutFailure) return 'the workflow timed out';
  return cause?.message ?? error.message;
}

function timestampToMs(timestamp: temporal.api.workflow.v1.IPendingWorkflowTaskInfo['scheduledTime']): number | undefined {
  if (!timestamp?.seconds) return undefined;
  return Number(timestamp.seconds) * 1000 + Math.floor((timestamp.nanos ?? 0) / 1e6);
}

function timestampToIso(timestamp: temporal.api.workflow.v1.IPendingWorkflowTaskInfo['scheduledTime']): string | undefined {
  if (!timestamp?.seconds) return undefined;
  return new Date(Number(timestamp.seconds) * 1000 + Math.floor((timestamp.nanos ?? 0) / 1e6)).toISOString();
}

/** An answer the workflow (or the bridge, on its behalf) refused: nothing was recorded; the message says why. */
export class AnswerRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AnswerRefusedError';
  }
}

/** One open question in an approver's inbox: what the workflow chose to show, no more. */
export interface InboxItem {
  taskId: string;
  key: string;
  tool?: string;
  message: string;
  requestedSchema: FormInputRequest['requestedSchema'];
  /** Distinct acceptances the question needs, and how many it has. */
  required: number;
  accepted: number;
  askedAt: string;
  dueAt?: string;
}

function inboxItemOf(taskId: string, tool: string | undefined, input: AddressedInput): InboxItem {
  return {
    taskId,
    key: input.key,
    ...(tool && { tool }),
    message: input.request.message,
    requestedSchema: input.request.requestedSchema,
    required: input.audience.required ?? 1,
    accepted: input.answers.filter((answer) => answer.action === 'accept').length,
    askedAt: input.askedAt,
    ...(input.dueAt && { dueAt: input.dueAt }),
  };
}

/** Temporal refused for now (too busy, or the workflow's state was being reloaded): the same call may succeed shortly. */
function isTemporalBusy(error: unknown): boolean {
  const code = grpcStatusOf(error);
  return code === GrpcStatus.RESOURCE_EXHAUSTED || code === GrpcStatus.ABORTED;
}

function isDeadlineExceeded(error: unknown): boolean {
  return grpcStatusOf(error) === GrpcStatus.DEADLINE_EXCEEDED;
}

/**
 * Whether an answer's Update that failed with `error` is sent again (with the same Update id) before `deadline`:
 * Temporal unreachable or busy (RESOURCE_EXHAUSTED also while the workflow attempts to close), a request of the Update
 * that ran out of time early (DEADLINE_EXCEEDED before the answer's own deadline), or a workflow not ready for it
 * (FAILED_PRECONDITION, Temporal's WorkflowNotReady: the workflow task that carried the Update failed, for instance
 * because an event came in while it ran and its completion was refused, or the workflow task is being retried). None of
 * these recorded anything: the Update was not accepted.
 */
function isUpdateRetryable(error: unknown, deadline: number): boolean {
  if (isTemporalUnavailable(error) || isTemporalBusy(error)) return true;
  if (grpcStatusOf(error) === GrpcStatus.FAILED_PRECONDITION) return true;
  return error instanceof WorkflowUpdateRPCTimeoutOrCancelledError && isDeadlineExceeded(error.cause) && Date.now() < deadline;
}

/** Failure types Temporal itself gives an Update (`AcceptedUpdateCompletedWorkflow`: the workflow ended before it completed). */
const WORKFLOW_ENDED_UPDATE_FAILURES = new Set(['AcceptedUpdateCompletedWorkflow']);

/**
 * What an answer's Update that failed for good means to the person who gave it: an {@link AnswerRefusedError} saying
 * why nothing was recorded (the workflow refused it, the task ended first, the workflow could not take it in time), or
 * `error` itself when Temporal stayed unreachable (the retryable "Temporal is unavailable" the front-ends send).
 */
function updateRefusal(error: unknown, taskId: string, patienceMs: number): unknown {
  if (error instanceof WorkflowUpdateFailedError) {
    const cause = error.cause;
    if (cause instanceof ApplicationFailure && cause.type && WORKFLOW_ENDED_UPDATE_FAILURES.has(cause.type)) {
      return new AnswerRefusedError(`Task ${taskId} ended before the answer was recorded`);
    }
    return new AnswerRefusedError(plainMessage(cause ?? error).replace(/^Answer refused: /, ''));
  }
  // Closed before the Update was admitted (or aborted by the close): Temporal answers NOT_FOUND.
  if (error instanceof WorkflowNotFoundError) return new AnswerRefusedError(`Task ${taskId} ended before the answer was recorded`);
  const seconds = Math.round(patienceMs / 1000);
  if (grpcStatusOf(error) === GrpcStatus.FAILED_PRECONDITION) {
    return new AnswerRefusedError(
      `The workflow was not ready to take the answer within ${seconds} s (${describeServiceError(error)}); answer again later`,
    );
  }
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError || isDeadlineExceeded(error) || isTemporalBusy(error)) {
    return new AnswerRefusedError(
      `The workflow did not take the answer within ${seconds} s (is its worker running?); it may be recorded later: see the inbox`,
    );
  }
  return error;
}

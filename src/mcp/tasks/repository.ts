/**
 * The MCP task layer over Temporal: a task is a workflow execution, its id the workflow id. It knows no wire
 * generation; the protocol front-ends and the tools call it.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import { ApplicationFailure, TerminatedFailure, TimeoutFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { ErrorCode, McpError, RELATED_TASK_META_KEY, type CallToolResult, type Task } from '@modelcontextprotocol/sdk/types.js';
import {
  PRINCIPAL_SEARCH_ATTRIBUTE,
  PROTOCOL_ERROR_FAILURE_TYPE,
  RESPOND_SIGNAL_NAME,
  respondSignal,
  TASK_META_MEMO,
  TASK_STATE_MEMO,
  checkFormContent,
  pendingInputsOf,
  type FormInputRequest,
  type InputResponse,
  type PendingInput,
  type PublishedAction,
  type PublishedProgress,
  type PublishedTaskState,
  type TaskMeta,
} from '../../shared/task-contract';
import { webUiWorkflowUrl } from '../../shared/temporal-config';
import { WEB_UI_META } from '../../shared/wire';
import { log } from '../../util/log';
import { retryWithBackoff } from '../../util/wait';
import { isTemporalUnavailable, taskNotFound } from './errors';
import { HistoryWatch } from './history-watch';
import type { TaskMarker } from './marker';
import { Quotas, type QuotaOptions } from './quotas';
import { decodeCursor, encodeCursor, listBinding } from './list-cursor';
import { assertValidPrincipal, PRINCIPAL_KEY } from './principal';

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
  /** Open tasks and concurrent waits per principal; default 1000 and 64. */
  quotas?: Partial<QuotaOptions>;
  /** The Temporal Web UI's base URL: every task view links to its workflow there. None: no links. */
  webUiUrl?: string;
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

/** A task as the bridge sees it: the MCP Task plus what the server needs to serve it. */
export interface TaskView {
  task: Task;
  workflowId: string;
  runId: string;
  tool?: string;
  /** The first outstanding input request, when the task is `input_required`: the one to ask one at a time. */
  input?: PendingInput;
  /** Every outstanding input request (empty unless `input_required`), in the order the workflow asked them. */
  inputs: PendingInput[];
  /**
   * Set when the task completed with a tool error (the workflow's application failure): its message. Such a task reads
   * `completed` here; each protocol generation maps it by its own rule.
   */
  toolError?: string;
  /** Progress the workflow published, if any. */
  progress?: PublishedProgress;
  /** What the workflow offers to do now (running tasks only). */
  actions?: PublishedAction[];
  /** The length of the workflow's history when this was read (0 when not read from Temporal yet). */
  historyLength: number;
  /**
   * Set on a cancelled task whose workflow said, after it saw the cancel request, what it did before it stopped (the
   * contract's `cancelledStatusMessage`); it is also the task's status message.
   */
  cancellationReport?: string;
  /** The workflow in the Temporal Web UI, when the server knows the UI. */
  webUiUrl?: string;
}

/** The `_meta` that links a task's answers to its workflow in the Web UI (empty without a Web UI). */
export function webUiMeta(view: Pick<TaskView, 'webUiUrl'>): Record<string, string> {
  return view.webUiUrl ? { [WEB_UI_META]: view.webUiUrl } : {};
}

/**
 * The MCP task layer over Temporal. Holds no task state: every answer is read from Temporal, so any server process
 * serves any task.
 */
export class TemporalTaskBackend {
  /** The shared history long polls that wake waiting requests. */
  readonly watch: HistoryWatch;
  /** What each principal may hold at once. */
  readonly quotas: Quotas;

  constructor(
    readonly client: Client,
    readonly options: TaskBackendOptions,
    private readonly tools: ReadonlyMap<string, TaskTool>,
  ) {
    this.watch = new HistoryWatch(client);
    this.quotas = new Quotas(client, { maxOpenTasks: 1000, maxWaits: 64, ...options.quotas });
  }

  /**
   * Resolves once the task may have changed since `view` was read (its workflow's history has a newer event), or
   * after `timeoutMs`, or when `signal` aborts. Driven by Temporal's events: nothing is polled on a timer.
   */
  changed(view: TaskView, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.watch.changed(view.workflowId, view.historyLength, Math.max(timeoutMs, 0), signal);
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
    const argumentsDigest = idempotencyKey === undefined ? undefined : digest(canonicalJson(input));
    if (options.adoptOnly) {
      if (idempotencyKey === undefined) throw new McpError(ErrorCode.InvalidParams, 'adopt-only needs an idempotency key');
      return this.rpc(() => this.replay(workflowId, principal, tool.name, idempotencyKey, argumentsDigest));
    }
    await this.rpc(() => this.quotas.beginTask(principal));
    const ttl = Math.min(options.requestedTtl ?? tool.ttlMs ?? this.options.defaultTtlMs, this.options.maxTtlMs);
    const createdAt = new Date().toISOString();
    const meta: TaskMeta = {
      tool: tool.name,
      ttl,
      pollInterval: tool.pollIntervalMs ?? this.options.pollIntervalMs,
      createdAt,
      ...(argumentsDigest && { argumentsDigest }),
      marker: this.options.marker.sign(workflowId, principal, tool.name),
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
      if (error instanceof WorkflowExecutionAlreadyStartedError && idempotencyKey !== undefined) {
        const replayed = await this.rpc(() => this.replay(workflowId, principal, tool.name, idempotencyKey, argumentsDigest));
        log.info('task found again for a repeated idempotency key', { taskId: workflowId, principal, tool: tool.name });
        return replayed;
      }
      throw error;
    }
    log.info('task created', { taskId: workflowId, principal, tool: tool.name, workflowType: tool.workflowType, ttl });
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

  /** Reads the task; throws {@link taskNotFound} unless it exists and belongs to `principal`. */
  async get(taskId: string, principal: string): Promise<TaskView> {
    return this.rpc(async () => this.view(await this.describeOwned(taskId, principal)));
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
    const page = await this.rpc(() =>
      this.client.workflowService.listWorkflowExecutions({
        namespace: this.client.options.namespace,
        query,
        pageSize: this.options.pageSize,
        ...(token && { nextPageToken: token }),
      }),
    );
    // A workflow that continued as new is listed once per run; the task is the workflow.
    const ids = [...new Set((page.executions ?? []).map((info) => info.execution?.workflowId).filter((id): id is string => !!id))];
    // A task deleted by retention between the listing and the read is left out; an outage is reported.
    const views = await Promise.all(
      ids.map((id) =>
        this.get(id, principal).catch((error: unknown) => {
          if (isTemporalUnavailable(error)) throw error;
          return undefined;
        }),
      ),
    );
    const next = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
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
    try {
      await this.rpc(() => this.client.workflow.getHandle(view.workflowId, view.runId).cancel());
    } catch (error) {
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
   * Hands an answer to the workflow. A signal: durable as soon as this returns, even with no worker running. While
   * Temporal is unreachable it keeps trying for `patienceMs`, so an answer the user gave is not dropped by an outage.
   */
  async respond(view: TaskView, response: InputResponse, patienceMs = 120_000): Promise<void> {
    await retryWithBackoff(
      () => this.rpc(() => this.client.workflow.getHandle(view.workflowId, view.runId).signal(respondSignal, response)),
      {
        isRetryable: isTemporalUnavailable,
        deadline: Date.now() + patienceMs,
        onRetry: (error, attempt) => {
          if (attempt === 0)
            log.warn(`answer waits for Temporal: ${(error as Error).message}`, { taskId: view.task.taskId, key: response.key });
        },
      },
    );
    log.info('answer handed to the workflow', { taskId: view.task.taskId, key: response.key, action: response.action });
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
    const handle = this.client.workflow.getHandle(view.workflowId, view.runId);
    try {
      const output = await this.rpc(() => handle.result());
      const tool = view.tool ? this.tools.get(view.tool) : undefined;
      const result: CallToolResult = tool
        ? tool.toResult(output)
        : { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output as Record<string, unknown> };
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

  private async describeOwned(taskId: string, principal: string): Promise<WorkflowExecutionDescription> {
    if (typeof taskId !== 'string' || !TASK_ID_PATTERN.test(taskId)) throw taskNotFound(String(taskId));
    let description: WorkflowExecutionDescription;
    try {
      description = await this.client.workflow.getHandle(taskId).describe();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw taskNotFound(taskId);
      throw error;
    }
    if (description.typedSearchAttributes.get(PRINCIPAL_KEY) !== principal) throw taskNotFound(taskId);
    // Only what this bridge started, for a tool it declares, running that tool's workflow: anything else planted in
    // the namespace is "not found", exactly like a task that does not exist.
    const meta = description.memo?.[TASK_META_MEMO] as TaskMeta | undefined;
    const tool = typeof meta?.tool === 'string' ? this.tools.get(meta.tool) : undefined;
    if (!tool || tool.workflowType !== description.type || !this.options.marker.verify(meta?.marker, taskId, principal, tool.name)) {
      throw taskNotFound(taskId);
    }
    return description;
  }

  private async view(description: WorkflowExecutionDescription): Promise<TaskView> {
    const meta = description.memo?.[TASK_META_MEMO] as TaskMeta | undefined;
    const published = description.memo?.[TASK_STATE_MEMO] as PublishedTaskState | undefined;
    const cancelRequested = description.raw.workflowExtendedInfo?.cancelRequested === true;
    const handle = this.client.workflow.getHandle(description.workflowId, description.runId);
    const base = {
      taskId: description.workflowId,
      createdAt: meta?.createdAt ?? description.startTime.toISOString(),
      ttl: meta?.ttl ?? null,
      pollInterval: meta?.pollInterval ?? this.options.pollIntervalMs,
    };
    const closedAt = (description.closeTime ?? description.startTime).toISOString();
    const ids = {
      workflowId: description.workflowId,
      runId: description.runId,
      tool: meta?.tool,
      inputs: [],
      historyLength: description.historyLength,
      ...this.webUi(description.workflowId),
    };
    const closed = (status: Task['status'], statusMessage: string, toolError?: string): TaskView => ({
      ...ids,
      ...(toolError !== undefined && { toolError }),
      task: { ...base, status, statusMessage, lastUpdatedAt: closedAt },
    });

    // What the workflow said about the cancel once it saw it; the contract writes the field only then.
    const report =
      (cancelRequested || description.status.name === 'CANCELLED') && typeof published?.cancelledStatusMessage === 'string'
        ? published.cancelledStatusMessage
        : undefined;
    const cancelled = (): TaskView => ({
      ...closed('cancelled', report ?? 'Cancelled.'),
      ...(report !== undefined && { cancellationReport: report }),
    });

    // Once cancellation was requested the task reads cancelled for good, however the execution ends.
    if (cancelRequested && description.status.name !== 'RUNNING' && description.status.name !== 'CONTINUED_AS_NEW') {
      return cancelled();
    }
    switch (description.status.name) {
      case 'RUNNING':
      case 'CONTINUED_AS_NEW': {
        const updatedAt = published?.updatedAt ?? base.createdAt;
        if (cancelRequested) {
          const requestedAt = timestampToIso(description.raw.pendingWorkflowTask?.scheduledTime) ?? updatedAt;
          return {
            ...ids,
            ...(report !== undefined && { cancellationReport: report }),
            task: {
              ...base,
              status: 'cancelled',
              statusMessage: report ?? 'Cancelled; the workflow is winding down.',
              lastUpdatedAt: maxIso(updatedAt, requestedAt),
            },
          };
        }
        const asked = pendingInputsOf(published);
        // Answers signalled but not yet taken by the workflow (the worker may be down) are not asked again.
        const received = asked.length > 0 ? await this.answersAwaitingWorker(ids, description.historyLength) : undefined;
        const inputs = asked.filter((input) => !received?.keys.has(input.key));
        const lastUpdatedAt = received?.at ? maxIso(updatedAt, received.at) : updatedAt;
        const progress = published?.progress && { progress: published.progress };
        if (asked.length > 0 && inputs.length === 0) {
          return {
            ...ids,
            ...progress,
            task: { ...base, status: 'working', statusMessage: 'Answer received; resuming.', lastUpdatedAt },
          };
        }
        const statusMessage = inputs.length > 0 && inputs.length < asked.length ? inputs[0].request.message : published?.statusMessage;
        const actions = Array.isArray(published?.actions) && published.actions.length > 0 ? { actions: published.actions } : undefined;
        return {
          ...ids,
          ...actions,
          inputs,
          ...(inputs.length > 0 && { input: inputs[0] }),
          ...progress,
          task: {
            ...base,
            status: inputs.length > 0 ? 'input_required' : 'working',
            ...(statusMessage !== undefined && { statusMessage }),
            lastUpdatedAt,
          },
        };
      }
      case 'COMPLETED':
        return closed('completed', 'Completed.');
      case 'CANCELLED':
        return cancelled();
      case 'FAILED': {
        const failure = await handle.result().then(
          () => undefined,
          (error: unknown) => error,
        );
        // Reading the failure itself failed (e.g. Temporal unreachable): say so rather than report a status.
        if (failure !== undefined && !(failure instanceof WorkflowFailedError)) throw failure;
        if (failure instanceof WorkflowFailedError && failure.cause instanceof ApplicationFailure) {
          if (failure.cause.type === PROTOCOL_ERROR_FAILURE_TYPE) return closed('failed', failure.cause.message);
          return closed('completed', `Completed with an error: ${failure.cause.message}`, failure.cause.message);
        }
        return closed('failed', failure instanceof WorkflowFailedError ? describeFailure(failure) : 'The workflow failed.');
      }
      case 'TERMINATED':
        return closed('failed', 'The workflow was terminated by an operator.');
      case 'TIMED_OUT':
        return closed('failed', 'The workflow ran past its execution timeout.');
      default:
        return closed('failed', `The workflow ended as ${description.status.name}.`);
    }
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
  async answer(view: TaskView, responses: Record<string, unknown>): Promise<string[]> {
    const accepted: InputResponse[] = [];
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
    for (const response of accepted) await this.respond(view, response);
    return accepted.map((response) => response.key);
  }
}

/** The content's values for the form's own fields; anything that is not an object is passed on for the check to refuse. */
function formFieldsOf(schema: FormInputRequest['requestedSchema'], content: unknown): unknown {
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return content ?? {};
  return Object.fromEntries(Object.entries(content).filter(([name]) => name in schema.properties));
}

/** A UUID v4-shaped id from a digest of principal, tool and key: the same call always maps to the same task id. */
function derivedUuid(principal: string, tool: string, key: string): string {
  const bytes = createHash('sha256').update(`${principal}\0${tool}\0${key}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** JSON with object keys sorted, so equal arguments give equal text whatever order they were sent in. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function describeFailure(error: WorkflowFailedError): string {
  const cause = error.cause;
  if (cause instanceof TerminatedFailure) return 'the workflow was terminated';
  if (cause instanceof TimeoutFailure) return 'the workflow timed out';
  return cause?.message ?? error.message;
}

function timestampToIso(timestamp: temporal.api.workflow.v1.IPendingWorkflowTaskInfo['scheduledTime']): string | undefined {
  if (!timestamp?.seconds) return undefined;
  return new Date(Number(timestamp.seconds) * 1000 + Math.floor((timestamp.nanos ?? 0) / 1e6)).toISOString();
}

function maxIso(a: string, b: string): string {
  return a > b ? a : b;
}

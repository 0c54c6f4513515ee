/**
 * A task's life: created by starting its tool's workflow and binding the run it started (found again for a retried call
 * with the same idempotency key), and cancelled by requesting the workflow's cancellation.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type WorkflowExecutionDescription } from '@temporalio/client';
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { bindSignal, TASK_META_MEMO, type TaskMeta } from '../contract/task-contract';
import { readTaskMeta } from '../contract/memo-schemas';
import { argumentsDigest } from '../util/arguments-digest';
import { log } from '../util/log';
import { retryWithBackoff } from '../util/wait';
import { InvalidTaskRequestError, isTemporalUnavailable, TaskNotFoundError, TaskNotReadyError } from './errors';
import { legacyDerivedUuid } from './idempotency';
import type { TaskListing } from './listing';
import type { MarkedRuns } from './marked-runs';
import { WRITE_PATIENCE_MS, type TaskTool } from './options';
import { assertValidPrincipal, PRINCIPAL_KEY } from './principal';
import type { Quotas } from './quotas';
import type { TaskReads } from './reads';
import type { Snapshots } from './snapshots';
import { taskViewOf, type TaskView } from './task-view';
import type { TemporalAccess } from './temporal-access';

/** How a task is created. */
export interface CreateOptions {
  /** The ttl the client asked for; capped by the server's maximum. */
  requestedTtl?: number;
  /** The caller's idempotency key: a retried call with the same key gets the same task. */
  idempotencyKey?: string;
  /** Only find the task an earlier call with `idempotencyKey` made; start nothing. */
  adoptOnly?: boolean;
}

/** A call with an idempotency key: its tool and input, the workflow id they derive, the caller, the key and the digest. */
interface KeyedCall {
  tool: TaskTool;
  input: unknown;
  workflowId: string;
  principal: string;
  key: string;
  digest: string;
}

/** A task just created, or found again for a retried call (`replayed`). */
export type CreatedTask = TaskView & { replayed: boolean };

/**
 * How long a run the bridge starts waits for its binding before its first workflow task (Temporal's start delay; the
 * binding, sent with signal-with-start, ends the wait at once). Longer than the bridge keeps trying to bind it, so the
 * binding always comes first; a run the bridge could neither bind nor terminate (it stopped in between) starts after
 * it, and is never served.
 */
const BINDING_WAIT_MS = 15 * 60_000;

/**
 * The length of a run's history once the bridge has started and bound it: its start, the binding's signal, and the
 * first workflow task the binding scheduled.
 */
const CREATED_HISTORY_LENGTH = 3;

/** Creates and cancels tasks (see the module's comment). */
export class TaskLifecycle {
  /** Runs this process started and is binding now, by workflow id: a retried call of the same key waits for them. */
  private readonly binding = new Map<string, Promise<unknown>>();

  constructor(
    private readonly temporal: TemporalAccess,
    private readonly parts: { runs: MarkedRuns; snapshots: Snapshots; reads: TaskReads; listing: TaskListing; quotas: Quotas },
  ) {}

  /**
   * Starts the tool's workflow for `principal`; the task exists (durably) when this returns.
   *
   * With an idempotency key the workflow id is derived from principal, tool and key under the task key (and a task an
   * earlier version made for the key, under the plain digest it used, is found first), and Temporal refuses a second
   * start of that id (running, or closed and still retained), so a retried call gets the task the first one made
   * (`replayed`). The same key with other arguments is refused ({@link InvalidTaskRequestError}). `adoptOnly` starts
   * nothing: it finds the task of an earlier call with that key, or refuses.
   */
  async create(tool: TaskTool, input: unknown, principal: string, options: CreateOptions = {}): Promise<CreatedTask> {
    assertValidPrincipal(principal);
    const { temporal } = this;
    const { idempotencyKey } = options;
    const workflowId = `${tool.idPrefix}-${idempotencyKey === undefined ? randomUUID() : temporal.options.marker.keyedUuid(principal, tool.name, idempotencyKey)}`;
    const digest = argumentsDigest(input);
    if (idempotencyKey !== undefined) {
      const earlier = await temporal.rpc(() => this.legacyTask({ tool, input, workflowId, principal, key: idempotencyKey, digest }));
      if (earlier) return earlier;
    }
    if (options.adoptOnly) {
      if (idempotencyKey === undefined) throw new InvalidTaskRequestError('adopt-only needs an idempotency key');
      return temporal.rpc(() => this.replay({ tool, input, workflowId, principal, key: idempotencyKey, digest }));
    }
    const release = await temporal.rpc(() => this.parts.quotas.beginTask(principal));
    const ttl = Math.min(options.requestedTtl ?? tool.ttlMs ?? temporal.options.defaultTtlMs, temporal.options.maxTtlMs);
    const createdAt = new Date().toISOString();
    const meta: TaskMeta = {
      tool: tool.name,
      ttl,
      pollInterval: tool.pollIntervalMs ?? temporal.options.pollIntervalMs,
      createdAt,
      argumentsDigest: digest,
      marker: temporal.options.marker.sign({ workflowId, principal, tool: tool.name, argumentsDigest: digest, createdAt, bound: true }),
    };
    let handle;
    try {
      handle = await this.start(tool, input, workflowId, principal, meta);
    } catch (error) {
      // Nothing started: the place reserved under the quota is free again.
      release();
      if (error instanceof WorkflowExecutionAlreadyStartedError && idempotencyKey !== undefined) {
        const replayed = await temporal.rpc(() => this.replay({ tool, input, workflowId, principal, key: idempotencyKey, digest }));
        log.info('task found again for a repeated idempotency key', { taskId: workflowId, principal, tool: tool.name });
        return replayed;
      }
      throw error;
    }
    const runId = handle.firstExecutionRunId;
    const bound = await this.bindStarted(tool, input, workflowId, runId, release);
    log.info('task created', { taskId: workflowId, principal, tool: tool.name, workflowType: tool.workflowType, ttl });
    // Noted before the create answers: a tasks/list through any replica right after finds it.
    await this.parts.listing.remember(principal, workflowId);
    // This process made the start and bound it: its reads need not fetch it from history to check the mark against it.
    this.parts.runs.noteStart(runId, { startedAt: Date.parse(createdAt), argumentsDigest: digest, bound: true });
    const view = this.createdView(workflowId, runId, meta, createdAt);
    if (bound) this.parts.reads.keepCreated(view, principal);
    return { ...view, replayed: false };
  }

  /** Starts the tool's workflow as the run of a new task, waiting for its binding (see {@link bind}). */
  private start(tool: TaskTool, input: unknown, workflowId: string, principal: string, meta: TaskMeta) {
    const { temporal } = this;
    const taskQueue = tool.taskQueue ?? temporal.options.taskQueue;
    return temporal.rpc(() =>
      temporal.client.workflow.start(tool.workflowType, {
        taskQueue,
        workflowId,
        args: [input],
        memo: { [TASK_META_MEMO]: meta },
        typedSearchAttributes: [{ key: PRINCIPAL_KEY, value: principal }],
        // A second start of a derived id is a retried call: refused whether the first run is open or closed.
        workflowIdConflictPolicy: 'FAIL',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        // The run does nothing until the bridge has bound it (see bind).
        startDelay: BINDING_WAIT_MS,
      }),
    );
  }

  /**
   * Binds the run `runId` this process just started ({@link bind}): whether it is bound. When the binding fails, there
   * is no task: `release` frees its place under the quota, the run is terminated, and the failure is thrown.
   */
  private async bindStarted(tool: TaskTool, input: unknown, workflowId: string, runId: string, release: () => void): Promise<boolean> {
    const binding = this.bind(tool, input, workflowId, runId);
    this.binding.set(workflowId, binding);
    try {
      return await binding;
    } catch (error) {
      // No task: the run it started must not run on unserved, and its place under the quota is free again.
      release();
      await this.abandon(workflowId, runId, error);
      throw error;
    } finally {
      this.binding.delete(workflowId);
    }
  }

  /**
   * The view of the task whose run this process just started (at `createdAt`) and bound. It is built from the start itself (a
   * describe() could already show a later status), as a read of the run with just the events the create made would
   * map it; the next reads are served from it until the run moves on.
   */
  private createdView(workflowId: string, runId: string, meta: TaskMeta, createdAt: string): TaskView {
    const { temporal } = this;
    return taskViewOf(
      {
        workflowId,
        runId,
        status: 'RUNNING',
        startTime: new Date(createdAt),
        historyLength: CREATED_HISTORY_LENGTH,
        meta,
        cancelRequested: false,
        ...temporal.webUi(workflowId),
      },
      { pollIntervalMs: temporal.options.pollIntervalMs },
    );
  }

  /** Requests cancellation; the task reads `cancelled` from then on. A terminal task is refused. */
  async cancel(taskId: string, principal: string): Promise<TaskView> {
    const { reads } = this.parts;
    const view = await reads.get(taskId, principal);
    if (isTerminal(view.task.status)) throw notRunning(view);
    try {
      await reads.writing(taskId, view, async () => {
        await this.temporal.rpc(() => this.temporal.client.workflow.getHandle(view.workflowId, view.runId).cancel());
        return { value: undefined, onBasis: true };
      });
    } catch (error) {
      // It may have closed between the read and the cancel: report what it became.
      const now = await reads.get(taskId, principal);
      if (isTerminal(now.task.status)) throw notRunning(now);
      throw error;
    }
    log.info('task cancellation requested', { taskId, principal });
    return reads.get(taskId, principal);
  }

  /**
   * Binds the run this process just started: signals it the bridge's binding of its run id, which only a holder of the
   * key can make and which names no other run, so that a run replacing it is never served as the task. Sent with
   * signal-with-start, which also ends the run's start delay (a plain signal would not), and which with
   * `REJECT_DUPLICATE` never starts a run of its own. Kept trying for the write patience while Temporal is unavailable.
   */
  private async bind(tool: TaskTool, input: unknown, workflowId: string, runId: string): Promise<boolean> {
    const { temporal } = this;
    const signaled = await retryWithBackoff(
      () =>
        temporal.rpc(() =>
          temporal.client.workflow.signalWithStart(tool.workflowType, {
            workflowId,
            taskQueue: tool.taskQueue ?? temporal.options.taskQueue,
            args: [input],
            signal: bindSignal,
            signalArgs: [temporal.options.marker.bind(workflowId, runId)],
            workflowIdReusePolicy: 'REJECT_DUPLICATE',
          }),
        ),
      {
        isRetryable: isTemporalUnavailable,
        deadline: Date.now() + WRITE_PATIENCE_MS,
        onRetry: (error, attempt) => {
          if (attempt === 0) log.warn(`new task waits for Temporal to bind its run: ${(error as Error).message}`, { taskId: workflowId });
        },
      },
    );
    if (signaled.signaledRunId !== runId) {
      // Someone replaced the run between the start and the binding: that run is not the task, and reads say so.
      log.warn('the run of a new task was replaced before it was bound', { taskId: workflowId, runId, replacedBy: signaled.signaledRunId });
      return false;
    }
    return true;
  }

  /** Terminates a run this process started and could not bind (it has not run: it waits for its binding). */
  private async abandon(workflowId: string, runId: string, cause: unknown): Promise<void> {
    try {
      await this.temporal.rpc(() =>
        this.temporal.client.workflow.getHandle(workflowId, runId).terminate('the bridge could not bind the run; the task was not created'),
      );
      log.warn(`task not created: its run could not be bound (${(cause as Error).message}); the run was terminated`, {
        taskId: workflowId,
      });
    } catch (error) {
      log.error(
        `task not created: its run could not be bound (${(cause as Error).message}) nor terminated (${(error as Error).message}); ` +
          `it waits in its start delay for ${BINDING_WAIT_MS / 60_000} minutes, then runs without being served: terminate it`,
        { taskId: workflowId, runId },
      );
    }
  }

  /**
   * The task a call with the same idempotency key made before task ids of keys were keyed (their id was a plain digest
   * of principal, tool and key), found again as {@link replay} finds one; undefined when there is none.
   */
  private async legacyTask(call: KeyedCall): Promise<(TaskView & { replayed: true }) | undefined> {
    const workflowId = `${call.tool.idPrefix}-${legacyDerivedUuid(call.principal, call.tool.name, call.key)}`;
    try {
      await this.parts.runs.readRun(workflowId, call.principal);
    } catch (error) {
      if (error instanceof TaskNotFoundError) return undefined;
      throw error;
    }
    return this.replay({ ...call, workflowId });
  }

  /**
   * The task an earlier call with the same idempotency key made, checked to be the same call. When that call's process
   * stopped between starting the run and binding it, the run still waits for its binding: this call, the same one
   * (principal, tool, key and arguments), binds it and serves it.
   */
  private async replay(call: KeyedCall): Promise<TaskView & { replayed: true }> {
    const { tool, workflowId, principal, key, digest } = call;
    // A call of the same key still being set up in this process: its run is served once bound.
    await this.binding.get(workflowId)?.catch(() => undefined);
    let description: WorkflowExecutionDescription;
    try {
      description = await this.parts.runs.readRun(workflowId, principal);
    } catch (error) {
      if (!(error instanceof TaskNotFoundError)) throw error;
      const unbound = await this.bindLeftOver(call);
      if (!unbound) throw new InvalidTaskRequestError(`No task was started with idempotency key "${key}" for tool ${tool.name}`);
      description = unbound;
    }
    // Checked by the read above: a meta that does not fit is "not found" there.
    const meta = readTaskMeta(description.memo);
    if (meta?.tool !== tool.name || meta.argumentsDigest !== digest) {
      throw new InvalidTaskRequestError(
        `Idempotency key "${key}" was already used for a call of ${tool.name} with other arguments; use a new key for a new call`,
      );
    }
    return { ...(await this.parts.snapshots.view(description)), replayed: true };
  }

  /**
   * Binds the run an earlier call of the same key started and did not bind, when its meta is this call's; returns its
   * description once bound, or undefined when there is no such run (or another binding came first).
   */
  private async bindLeftOver(call: KeyedCall): Promise<WorkflowExecutionDescription | undefined> {
    const { tool, input, workflowId, principal, digest } = call;
    const waiting = await this.parts.runs.awaitingBinding(workflowId, principal);
    if (!waiting) return undefined;
    const meta = readTaskMeta(waiting.memo);
    // Another call's run under this key (other arguments) is refused as such by the caller, unbound or not.
    if (meta?.tool !== tool.name || meta.argumentsDigest !== digest) return waiting;
    // Only the one run this id ever had: a bridge starts a derived id once, so a run beside an earlier one replaced it
    // (a namespace writer's start over the real, bound run), and is never bound. Visibility lags: a run it does not
    // list yet is not bound now, and the caller is told to retry.
    const runs = await this.runsOf(workflowId);
    if (runs.length === 0 || (runs.length === 1 && runs[0] !== waiting.runId)) {
      throw new TaskNotReadyError(`The task of idempotency key "${call.key}" is still being set up; retry in a few seconds`, {
        taskId: workflowId,
      });
    }
    if (runs.length > 1) {
      log.warn('a run waiting for its binding is not the only run of its task: not bound', { taskId: workflowId, runId: waiting.runId });
      return undefined;
    }
    const binding = this.bind(tool, input, workflowId, waiting.runId);
    this.binding.set(workflowId, binding);
    try {
      if (!(await binding)) return undefined;
    } finally {
      this.binding.delete(workflowId);
    }
    log.warn('bound the run of a task whose creating call stopped before binding it', { taskId: workflowId, principal, tool: tool.name });
    await this.parts.listing.remember(principal, workflowId);
    // Read again, binding included: a run served is always one whose history holds its binding.
    return this.parts.runs.readRun(workflowId, principal);
  }

  /** The run ids visibility lists for `workflowId` (a task id: no quotes in it), two at the most. */
  private async runsOf(workflowId: string): Promise<string[]> {
    const runs: string[] = [];
    for await (const info of this.temporal.client.workflow.list({ query: `WorkflowId = '${workflowId}'`, pageSize: 2 })) {
      runs.push(info.runId);
      if (runs.length > 1) break;
    }
    return runs;
  }
}

/** The refusal of a cancel of a task that has ended. */
function notRunning(view: TaskView): InvalidTaskRequestError {
  return new InvalidTaskRequestError(`Task ${view.task.taskId} is already ${view.task.status}; only a running task can be cancelled`);
}

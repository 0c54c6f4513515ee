/**
 * A task's life: created by starting its tool's workflow (found again for a retried call with the same idempotency
 * key), and cancelled by requesting the workflow's cancellation.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type WorkflowExecutionDescription } from '@temporalio/client';
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { TASK_META_MEMO, type TaskMeta } from '../../shared/task-contract';
import { argumentsDigest } from '../../util/arguments-digest';
import { log } from '../../util/log';
import { InvalidTaskRequestError, TaskNotFoundError } from './errors';
import { derivedUuid } from './idempotency';
import type { TaskListing } from './listing';
import type { MarkedRuns } from './marked-runs';
import type { TaskTool } from './options';
import { assertValidPrincipal, PRINCIPAL_KEY } from './principal';
import type { Quotas } from './quotas';
import type { TaskReads } from './reads';
import type { Snapshots } from './snapshots';
import type { TaskView } from './task-view';
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

/** A task just created, or found again for a retried call (`replayed`). */
export type CreatedTask = TaskView & { replayed: boolean };

/** Creates and cancels tasks (see the module's comment). */
export class TaskLifecycle {
  constructor(
    private readonly temporal: TemporalAccess,
    private readonly parts: { runs: MarkedRuns; snapshots: Snapshots; reads: TaskReads; listing: TaskListing; quotas: Quotas },
  ) {}

  /**
   * Starts the tool's workflow for `principal`; the task exists (durably) when this returns.
   *
   * With an idempotency key the workflow id is derived from principal, tool and key, and Temporal refuses a second
   * start of that id (running, or closed and still retained), so a retried call gets the task the first one made
   * (`replayed`). The same key with other arguments is refused ({@link InvalidTaskRequestError}). `adoptOnly` starts
   * nothing: it finds the task of an earlier call with that key, or refuses.
   */
  async create(tool: TaskTool, input: unknown, principal: string, options: CreateOptions = {}): Promise<CreatedTask> {
    assertValidPrincipal(principal);
    const { temporal } = this;
    const { idempotencyKey } = options;
    const workflowId = `${tool.idPrefix}-${idempotencyKey === undefined ? randomUUID() : derivedUuid(principal, tool.name, idempotencyKey)}`;
    const digest = argumentsDigest(input);
    if (options.adoptOnly) {
      if (idempotencyKey === undefined) throw new InvalidTaskRequestError('adopt-only needs an idempotency key');
      return temporal.rpc(() => this.replay(workflowId, principal, tool.name, idempotencyKey, digest));
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
      marker: temporal.options.marker.sign({ workflowId, principal, tool: tool.name, argumentsDigest: digest, createdAt }),
    };
    let handle;
    try {
      handle = await temporal.rpc(() =>
        temporal.client.workflow.start(tool.workflowType, {
          taskQueue: tool.taskQueue ?? temporal.options.taskQueue,
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
        const replayed = await temporal.rpc(() => this.replay(workflowId, principal, tool.name, idempotencyKey, digest));
        log.info('task found again for a repeated idempotency key', { taskId: workflowId, principal, tool: tool.name });
        return replayed;
      }
      throw error;
    }
    log.info('task created', { taskId: workflowId, principal, tool: tool.name, workflowType: tool.workflowType, ttl });
    this.parts.listing.remember(principal, workflowId);
    // This process made the start: its reads need not fetch it from history to check the mark against it.
    this.parts.runs.noteStart(handle.firstExecutionRunId, { startedAt: Date.parse(createdAt), argumentsDigest: digest });
    // The answer is built from the start itself: a describe() could already show a later status.
    return {
      workflowId,
      runId: handle.firstExecutionRunId,
      tool: tool.name,
      inputs: [],
      historyLength: 0,
      replayed: false,
      ...temporal.webUi(workflowId),
      task: { taskId: workflowId, status: 'working', createdAt, lastUpdatedAt: createdAt, ttl, pollInterval: meta.pollInterval },
    };
  }

  /** Requests cancellation; the task reads `cancelled` from then on. A terminal task is refused. */
  async cancel(taskId: string, principal: string): Promise<TaskView> {
    const { reads } = this.parts;
    const view = await reads.get(taskId, principal);
    if (isTerminal(view.task.status)) throw notRunning(view);
    await reads.beforeWrite(view.workflowId, view.runId);
    try {
      await this.temporal.rpc(() => this.temporal.client.workflow.getHandle(view.workflowId, view.runId).cancel());
      await reads.afterWrite(taskId, view);
    } catch (error) {
      await reads.afterWrite(taskId);
      // It may have closed between the read and the cancel: report what it became.
      const now = await reads.get(taskId, principal);
      if (isTerminal(now.task.status)) throw notRunning(now);
      throw error;
    }
    log.info('task cancellation requested', { taskId, principal });
    return reads.get(taskId, principal);
  }

  /** The task an earlier call with the same idempotency key made, checked to be the same call. */
  private async replay(
    workflowId: string,
    principal: string,
    tool: string,
    key: string,
    digest: string,
  ): Promise<TaskView & { replayed: true }> {
    let description: WorkflowExecutionDescription;
    try {
      description = await this.parts.runs.describe(workflowId, principal);
    } catch (error) {
      if (error instanceof TaskNotFoundError) {
        throw new InvalidTaskRequestError(`No task was started with idempotency key "${key}" for tool ${tool}`);
      }
      throw error;
    }
    const meta = description.memo?.[TASK_META_MEMO] as TaskMeta | undefined;
    if (meta?.tool !== tool || meta.argumentsDigest !== digest) {
      throw new InvalidTaskRequestError(
        `Idempotency key "${key}" was already used for a call of ${tool} with other arguments; use a new key for a new call`,
      );
    }
    return { ...(await this.parts.snapshots.view(description)), replayed: true };
  }
}

/** The refusal of a cancel of a task that has ended. */
function notRunning(view: TaskView): InvalidTaskRequestError {
  return new InvalidTaskRequestError(`Task ${view.task.taskId} is already ${view.task.status}; only a running task can be cancelled`);
}

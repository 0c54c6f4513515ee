/**
 * `subscriptions/listen` for task status (SEP-2663): a 2026-07-28 client names task ids in
 * `params.notifications.taskIds` and gets a `notifications/tasks` carrying the detailed task (what `tasks/get` would
 * answer) each time one of them changes, on the stream of the listen request. The stream ends with the listen
 * request's empty result once every task it follows has finished or the server stops, or without it when the client
 * cancels it or goes away.
 *
 * The SDK's own listen router knows only the base protocol's change notifications, so task subscriptions are served
 * here, by the transports, before a request reaches the SDK. Nothing is kept but the open streams: the tasks are read
 * from Temporal.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolErrorCode,
  SERVER_INFO_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
  type ClientCapabilities,
} from '@modelcontextprotocol/server';
import type { ListenRequest, ListenSink } from '../endpoints';
import { envelopeRefusal } from './envelope';
import { isTemporalUnavailable, type TaskPort, TaskNotFoundError, type TaskView } from '../../core';
import { retryWithBackoff } from '../../util/wait';
import { jsonRpcFailureOf } from '../protocol/wire-errors';
import { TASKS_EXTENSION } from '../calls/call-plan';
import { servedRequest, type ServedParams } from '../calls/served-request';
import { detailedTask } from './task-shape';

/** Options of {@link TaskSubscriptions}. */
export interface TaskSubscriptionOptions {
  /** Open subscriptions this process serves at most; one more is refused with -32603. */
  maxSubscriptions?: number;
  /** Task ids one subscription may name at most; more is refused with -32602. */
  maxTaskIds?: number;
}

/** The method of a subscription. */
const LISTEN_METHOD = 'subscriptions/listen';

/** True for a `subscriptions/listen` request that asks for task status: the ones {@link TaskSubscriptions} serves. */
export function isTaskListen(message: unknown): message is ListenRequest {
  const request = message as ListenRequest | undefined;
  return (
    request?.method === LISTEN_METHOD &&
    (typeof request.id === 'string' || typeof request.id === 'number') &&
    typeof request.params?.notifications === 'object' &&
    request.params.notifications !== null &&
    'taskIds' in request.params.notifications
  );
}

/** How long a subscription's first read of a task waits for a Temporal out of reach before the listen is refused. */
const FIRST_READ_PATIENCE_MS = 30_000;

/** Serves task status subscriptions for every transport of a process. */
export class TaskSubscriptions {
  private open = 0;
  private readonly maxSubscriptions: number;
  private readonly maxTaskIds: number;

  constructor(
    private readonly core: TaskPort,
    private readonly serverInfo: { name: string; version: string },
    options: TaskSubscriptionOptions = {},
  ) {
    this.maxSubscriptions = options.maxSubscriptions ?? 1024;
    this.maxTaskIds = options.maxTaskIds ?? 100;
  }

  /** How many subscriptions are open now. */
  get openCount(): number {
    return this.open;
  }

  /**
   * Serves one listen request for `principal` until it ends. The principal follows only its own tasks: an id it may
   * not see is left out of the acknowledgement, exactly like one that does not exist. Refused before the
   * acknowledgement: a malformed envelope (-32602), a version not served (-32022), no tasks extension (-32021), bad
   * task ids (-32602), too many subscriptions (-32603).
   */
  async serve(request: ListenRequest, principal: string, sink: ListenSink): Promise<void> {
    const refuse = (code: number, message: string, data?: unknown) =>
      sink.send({ jsonrpc: '2.0', id: request.id, error: { code, message, ...(data !== undefined && { data }) } });
    // The envelope before the capability: a request without client capabilities is malformed (-32602), not one that
    // lacks the extension (-32021); a version not served is -32022 (2026-07-28, basic: per-request protocol fields).
    const malformed = envelopeRefusal(request.params);
    if (malformed) return refuse(malformed.code, malformed.message, malformed.data);
    const capabilities = request.params?._meta?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
    if (capabilities?.extensions?.[TASKS_EXTENSION] === undefined) {
      return refuse(
        ProtocolErrorCode.MissingRequiredClientCapability,
        `Task notifications need the ${TASKS_EXTENSION} extension: declare it in the request's client capabilities`,
        { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      );
    }
    const requested = request.params?.notifications?.taskIds;
    if (!Array.isArray(requested) || requested.some((id) => typeof id !== 'string')) {
      return refuse(ProtocolErrorCode.InvalidParams, 'Invalid params: notifications.taskIds must be an array of task ids');
    }
    const taskIds = [...new Set(requested as string[])];
    if (taskIds.length > this.maxTaskIds) {
      return refuse(ProtocolErrorCode.InvalidParams, `Invalid params: at most ${this.maxTaskIds} task ids per subscription`);
    }
    if (this.open >= this.maxSubscriptions) return refuse(ProtocolErrorCode.InternalError, 'Subscription limit reached');
    // The one request step every task request takes (its rate, its span and log context), and one of the principal's
    // waits: refused as any request is past them; once under way, its own errors are its own.
    let underWay = false;
    try {
      return await servedRequest(this.core, LISTEN_METHOD, principal, request.params as ServedParams | undefined, () =>
        this.core.waiting(principal, () => {
          underWay = true;
          return this.stream(request, taskIds, principal, sink, refuse);
        }),
      );
    } catch (error) {
      const failure = underWay ? undefined : jsonRpcFailureOf(error);
      if (!failure) throw error;
      return refuse(failure.code, failure.message, failure.data);
    }
  }

  /** The subscription once its wait is taken: the first reads, the acknowledgement, then each change until the end. */
  private async stream(
    request: ListenRequest,
    taskIds: string[],
    principal: string,
    sink: ListenSink,
    refuse: (code: number, message: string, data?: unknown) => Promise<void>,
  ): Promise<void> {
    this.open++;
    try {
      const first = new Map<string, TaskView>();
      try {
        for (const taskId of taskIds) {
          const view = await this.read(taskId, principal, sink.signal);
          if (view) first.set(taskId, view);
        }
      } catch (error) {
        // Temporal out of reach for longer than a read waits: retryable, never "not one of yours".
        const failure = jsonRpcFailureOf(error);
        if (!failure || sink.signal.aborted) throw error;
        return await refuse(failure.code, failure.message, failure.data);
      }
      const stamp = { [SUBSCRIPTION_ID_META_KEY]: request.id };
      await sink.send({
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { taskIds: [...first.keys()] }, _meta: stamp },
      });
      await Promise.all([...first.values()].map((view) => this.follow(view, principal, sink, stamp)));
      // Ended by the server (every task finished, or a shutdown): the stream closes with the request's response.
      if (sink.canReply()) {
        await sink.send({
          jsonrpc: '2.0',
          id: request.id,
          result: { resultType: 'complete', _meta: { ...stamp, [SERVER_INFO_META_KEY]: this.serverInfo } },
        });
      }
    } finally {
      this.open--;
    }
  }

  /** Sends the task as it is now, then each change of it, until it is terminal, gone, or the client goes away. */
  private async follow(view: TaskView, principal: string, sink: ListenSink, stamp: Record<string, unknown>): Promise<void> {
    const follower = this.core.follow(view.task.taskId, principal, { from: view, signal: sink.signal, changeKey: fingerprint });
    try {
      for await (const current of follower) {
        await sink.send({ jsonrpc: '2.0', method: 'notifications/tasks', params: { ...detailedTask(current), _meta: stamp } });
      }
    } catch (error) {
      // Gone (its retention passed, say): nothing more will change.
      if (!(error instanceof TaskNotFoundError)) throw error;
    }
  }

  /**
   * The task, `undefined` when the principal may not see it. While Temporal is out of reach the read is tried again
   * for up to {@link FIRST_READ_PATIENCE_MS} (or until the client goes), then fails: an outage is no verdict on a task.
   */
  private async read(taskId: string, principal: string, signal: AbortSignal): Promise<TaskView | undefined> {
    try {
      return await retryWithBackoff(() => this.core.get(taskId, principal), {
        isRetryable: (error) => isTemporalUnavailable(error) && !signal.aborted,
        deadline: Date.now() + FIRST_READ_PATIENCE_MS,
      });
    } catch (error) {
      if (error instanceof TaskNotFoundError) return undefined;
      throw error;
    }
  }
}

/** What makes a task worth announcing again: its status, its message, its questions, its last update. */
function fingerprint(view: TaskView): string {
  const { status, statusMessage, lastUpdatedAt } = view.task;
  return JSON.stringify([status, statusMessage, lastUpdatedAt, view.inputs.map((input) => input.key)]);
}

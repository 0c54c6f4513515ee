/**
 * The requests of a 2025-11-25 session that send nothing on their own stream, answered directly as JSON-RPC response
 * objects so that an HTTP transport can send plain JSON (see {@link answerAtOnce}).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, type ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { log } from '../../util/log';
import { jsonRpcFailureOf, JsonRpcError } from '../protocol/wire-errors';
import type { ToolDefinition } from '../tools/types';
import { planCall, type CallPlan } from '../calls/call-plan';
import type { Extra } from './connection';

/** Requests that never send anything on their own stream: an HTTP transport may answer them with plain JSON. */
const POLLING_METHODS = new Set(['tasks/get', 'tasks/list', 'tasks/cancel']);

/**
 * A request handler as the server registered it: checks, quota, span and error mapping included. A tools/call
 * answered at once is handed the plan made when it was received, so that its arguments are checked once.
 */
export type RegisteredHandler = (request: unknown, extra: Extra, plan?: CallPlan) => Promise<object>;

/** The handlers of each server that may be answered at once, and its tools by name, for {@link answerAtOnce}. */
const atOnce = new WeakMap<Server, { handlers: ReadonlyMap<string, RegisteredHandler>; tools: ReadonlyMap<string, ToolDefinition> }>();

/** The methods {@link answerAtOnce} may answer: the polls and tools/call. */
export function answerableAtOnce(method: string): boolean {
  return POLLING_METHODS.has(method) || method === 'tools/call';
}

/** Lets {@link answerAtOnce} answer `server`'s requests with `handlers` (of {@link answerableAtOnce} methods). */
export function enableAnswersAtOnce(
  server: Server,
  handlers: ReadonlyMap<string, RegisteredHandler>,
  tools: ReadonlyMap<string, ToolDefinition>,
): void {
  atOnce.set(server, { handlers, tools });
}

/**
 * Whether `message`'s handler sends nothing on the request's own stream (see {@link answerAtOnce}): false, or yes with
 * the plan of a tools/call (made here, once: the handler carries it out without checking the arguments again).
 */
function answeredAtOnce(
  server: Server,
  method: string,
  params: { name?: unknown; task?: unknown; arguments?: unknown } | undefined,
): false | { plan?: CallPlan } {
  if (POLLING_METHODS.has(method)) return {};
  const tools = atOnce.get(server)?.tools;
  if (method !== 'tools/call' || typeof params?.name !== 'string' || !tools) return false;
  const taskAugmented = typeof params.task === 'object' && params.task !== null;
  const plan = planCall({
    generation: 'mcp2025',
    taskAugmented,
    name: params.name,
    args: params.arguments,
    tools,
    capabilities: server.getClientCapabilities(),
  });
  switch (plan.kind) {
    // Refused, or arguments that do not fit: answered at once.
    case 'error':
    case 'result':
      return { plan };
    // A direct tool says which calls send nothing (no form, no wait).
    case 'direct':
      return plan.tool.answersAtOnce?.(plan.input) ? { plan } : false;
    // A task-augmented call that asks no confirmation starts the task and answers with it.
    case 'start':
      return plan.then === 'task' && !plan.confirmation ? { plan } : false;
    // Only a 2026-07-28 call resumes a round.
    case 'resume':
      return false;
  }
}

/**
 * Answers a request of a 2025-11-25 session that sends nothing on its own stream directly, as the JSON-RPC response
 * object, so that the HTTP transport can send it as a JSON response: the polls (`tasks/get`, `tasks/list`,
 * `tasks/cancel`: "servers SHOULD NOT upgrade to an SSE stream in response to a tasks/get request", MCP 2025-11-25,
 * tasks), a task-augmented `tools/call` that only starts its task, and a call of a direct tool whose arguments need
 * no stream (`DirectTool.answersAtOnce`: `task_status`, `approvals_inbox`, `approvals_answer` with an action, …). A
 * server that dies under such a request leaves its client a failed HTTP request to retry, where a stream would just
 * end and leave an SDK client waiting for its own request timeout; and the SDK's session transport answers every
 * request with a stream, through a conversion to web requests and back that costs more than the work itself.
 * Undefined for anything else, which the transport handles as usual.
 */
export async function answerAtOnce(
  server: Server,
  message: unknown,
  authInfo: Extra['authInfo'],
  sessionId: string | undefined,
): Promise<object | undefined> {
  const request = message as {
    jsonrpc?: unknown;
    id?: unknown;
    method?: unknown;
    params?: { _meta?: Record<string, unknown>; name?: unknown; task?: unknown; arguments?: unknown };
  } | null;
  if (
    request?.jsonrpc !== '2.0' ||
    typeof request.method !== 'string' ||
    !(typeof request.id === 'string' || typeof request.id === 'number')
  ) {
    return undefined;
  }
  const answered = answeredAtOnce(server, request.method, request.params);
  const handle = answered ? atOnce.get(server)?.handlers.get(request.method) : undefined;
  if (!answered || !handle) return undefined;
  const extra = {
    signal: new AbortController().signal,
    requestId: request.id,
    ...(authInfo && { authInfo }),
    ...(sessionId !== undefined && { sessionId }),
    ...(request.params?._meta && { _meta: request.params._meta }),
    sendNotification: (notification: ServerNotification) => server.notification(notification),
    sendRequest: () => Promise.reject(new JsonRpcError(ErrorCode.InternalError, 'A request answered at once sends no requests')),
  } as unknown as Extra;
  try {
    return { jsonrpc: '2.0', id: request.id, result: await handle(request, extra, answered.plan) };
  } catch (error) {
    const failure = jsonRpcFailureOf(error);
    if (!failure) log.error(`mcp (2025-11-25): ${request.method}: ${(error as Error).stack ?? error}`);
    // As the SDK's own transport would send it, so a client sees the same error on either path.
    return { jsonrpc: '2.0', id: request.id, error: failure ?? { code: ErrorCode.InternalError, message: 'Internal error' } };
  }
}

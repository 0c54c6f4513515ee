import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { REPLAYED_META } from '../shared/wire';
import { describeTool, idempotencyOf, invalidArgumentsResult, invalidArgumentsText, overBudgetResult, ttlOf } from './call-tool';
import { InputChannel, type InputChannelOptions } from './input-channel';
import { isTemporalUnavailable, temporalUnavailable, TemporalTaskBackend, type TaskView } from './task-backend';
import type { DirectTool, ToolDefinition } from './tools/types';

/** Key of the line a host may hand the model as soon as a task exists (MCP 2025-11-25). */
export const MODEL_IMMEDIATE_RESPONSE_META = 'io.modelcontextprotocol/model-immediate-response';

/** What the server tells a client about itself, in every generation. */
export const SERVER_INSTRUCTIONS =
  "Task tools run as durable tasks backed by Temporal workflows. A task may pause for a person's input " +
  '(status input_required); the question comes as an elicitation, or through the task_status and task_respond tools.';

/** Server name and version announced at initialize. */
export const SERVER_INFO = { name: 'temporal-mcp-tasks', version: '0.1.0' };

/**
 * The task as generation 1 (MCP 2025-11-25) reports it: a tool result with `isError: true` makes the task `failed`
 * ("For tool calls specifically, this includes cases where the tool call result has isError set to true"), with the
 * error text as its status message. tasks/result still returns that CallToolResult.
 */
export function gen1Task(view: TaskView): Task {
  if (view.toolError === undefined) return view.task;
  return { ...view.task, status: 'failed', statusMessage: view.toolError };
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Everything one MCP server instance needs; shared by all connections of a process. */
export interface BridgeDependencies {
  backend: TemporalTaskBackend;
  tools: readonly ToolDefinition[];
  /** The principal a request acts for; one local principal unless the transport authenticates. */
  principalOf(extra: Extra): string;
  input: InputChannelOptions;
  /** How long a plain (not task-augmented) call of a task tool waits before it answers with the task id. */
  inlineBudgetMs: number;
}

/**
 * Creates an MCP server for one connection: tools/list and tools/call for the declared tools, and tasks/* answered
 * from Temporal. Call once per connection (per Streamable HTTP session, or once for stdio).
 */
export function createBridgeServer(deps: BridgeDependencies): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: {
      tools: {},
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    },
    instructions: SERVER_INSTRUCTIONS,
  });
  const channels = new Map<string, InputChannel>();
  const channelFor = (principal: string) => {
    let channel = channels.get(principal);
    if (!channel) {
      channel = new InputChannel(server, deps.backend, principal, deps.input);
      channels.set(principal, channel);
    }
    return channel;
  };
  // The progress token of a task-augmented call stays valid for the task's life (MCP 2025-11-25).
  const progressTokens = new Map<string, string | number>();
  // Last status this connection saw per task: a change is announced with notifications/tasks/status.
  const seen = new Map<string, Task['status']>();
  // Last progress value sent per progress token: successive tasks/result calls on one token never go back.
  const progressSent = new Map<string | number, number>();
  const observe = (view: TaskView) => {
    const task = gen1Task(view);
    const before = seen.get(task.taskId);
    if (isTerminal(task.status)) {
      seen.delete(task.taskId);
      const token = progressTokens.get(task.taskId);
      if (token !== undefined) progressSent.delete(token);
      progressTokens.delete(task.taskId);
      for (const channel of channels.values()) channel.forget(task.taskId);
    } else seen.set(task.taskId, task.status);
    if (before !== undefined && before !== task.status) {
      server.notification({ method: 'notifications/tasks/status', params: task }).catch(() => undefined);
    }
  };
  const byName = new Map(deps.tools.map((tool) => [tool.name, tool]));
  const descriptors = deps.tools.map(describeTool);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: descriptors }));

  onRequest(server, CallToolRequestSchema, (request, extra) => mapTemporalErrors(callTool(request, extra)));

  async function callTool(request: CallToolRequest, extra: Extra) {
    const { name, arguments: rawArgs, task } = request.params;
    const tool = byName.get(name);
    if (!tool) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${name}"; available tools: ${[...byName.keys()].join(', ')}`);
    }
    const principal = deps.principalOf(extra);
    if (tool.kind === 'direct') {
      if (task)
        throw new McpError(
          ErrorCode.MethodNotFound,
          `Tool "${name}" does not support task-augmented calls (execution.taskSupport is "forbidden")`,
        );
      const parsed = tool.input.check(rawArgs ?? {});
      if (!parsed.ok) return invalidArgumentsResult(name, parsed.problems);
      return runDirectTool(tool, parsed.value, principal, extra);
    }
    if (!task && tool.taskSupport === 'required') {
      throw new McpError(
        ErrorCode.MethodNotFound,
        `Tool "${name}" must be called as a task: add params.task (execution.taskSupport is "required")`,
      );
    }
    const parsed = tool.input.check(rawArgs ?? {});
    if (!parsed.ok) {
      // A task-augmented call can only answer with a task, and none was created: a protocol error.
      if (task) throw new McpError(ErrorCode.InvalidParams, invalidArgumentsText(name, parsed.problems));
      return invalidArgumentsResult(name, parsed.problems);
    }
    const view = await deps.backend.create(tool, parsed.value, principal, {
      requestedTtl: ttlOf(task),
      ...idempotencyOf(request.params._meta as Record<string, unknown> | undefined),
    });
    observe(view);
    if (task) {
      const token = extra._meta?.progressToken;
      if (token !== undefined) progressTokens.set(view.task.taskId, token);
      const immediate = tool.immediateResponse?.(parsed.value, view.task.taskId);
      const meta = { ...(immediate && { [MODEL_IMMEDIATE_RESPONSE_META]: immediate }), ...(view.replayed && { [REPLAYED_META]: true }) };
      return { task: gen1Task(view), ...(Object.keys(meta).length > 0 && { _meta: meta }) };
    }
    const result = await awaitResult(view.task.taskId, principal, extra, deps.inlineBudgetMs);
    return result ?? overBudgetResult(await deps.backend.get(view.task.taskId, principal), deps.inlineBudgetMs);
  }

  onRequest(server, GetTaskRequestSchema, async (request, extra) => {
    const principal = deps.principalOf(extra);
    const view = await deps.backend.get(request.params.taskId, principal);
    observe(view);
    if (view.input) channelFor(principal).offer(view);
    return gen1Task(view);
  });

  onRequest(server, ListTasksRequestSchema, async (request, extra) => {
    const page = await deps.backend.list(deps.principalOf(extra), request.params?.cursor);
    return { tasks: page.views.map(gen1Task), ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }) };
  });

  onRequest(server, CancelTaskRequestSchema, async (request, extra) => {
    const view = await deps.backend.cancel(request.params.taskId, deps.principalOf(extra));
    observe(view);
    return gen1Task(view);
  });

  onRequest(
    server,
    GetTaskPayloadRequestSchema,
    async (request, extra) => (await awaitResult(request.params.taskId, deps.principalOf(extra), extra))!,
  );

  function runDirectTool(tool: DirectTool<any>, input: unknown, principal: string, extra: Extra) {
    return tool.handler(input, {
      client: deps.backend.client,
      backend: deps.backend,
      principal,
      ownedWorkflowId: (taskId) => deps.backend.ownedWorkflowId(taskId, principal),
      task: (taskId) => deps.backend.get(taskId, principal),
      awaitResult: (taskId, budgetMs) => awaitResult(taskId, principal, extra, budgetMs),
    });
  }

  /**
   * Waits until the task is terminal and returns its result, or undefined once `budgetMs` has passed. While it waits
   * and the task needs input, asks for it on this request's stream (once per input request; a dismissed one is not
   * asked again on this request). With a progress token on the request, sends progress notifications as it goes.
   */
  async function awaitResult(taskId: string, principal: string, extra: Extra, budgetMs = Infinity): Promise<CallToolResult | undefined> {
    const channel = channelFor(principal);
    const deadline = Date.now() + budgetMs;
    const progress = progressReporter(extra, progressTokens.get(taskId), progressSent);
    let dismissedKey: string | undefined;
    for (;;) {
      if (extra.signal.aborted) throw new McpError(ErrorCode.ConnectionClosed, 'Request was cancelled');
      if (Date.now() >= deadline) return undefined;
      let view: TaskView;
      try {
        view = await deps.backend.get(taskId, principal);
      } catch (error) {
        // tasks/result keeps blocking through a Temporal outage instead of failing the wait.
        if (!isTemporalUnavailable(error)) throw error;
        await sleep(deps.backend.options.pollIntervalMs, extra.signal);
        continue;
      }
      observe(view);
      progress(view);
      if (isTerminal(view.task.status)) return deps.backend.result(view);
      // One question at a time, in the order the workflow asked them; never one this connection already answered.
      const input = view.inputs.find((candidate) => candidate.key !== dismissedKey && !channel.answeredHere(taskId, candidate.key));
      if (input && channel.canAsk(input)) {
        // A bad answer is asked again (with what was wrong): tasks/result blocks until the task is terminal.
        const outcome = await channel.ask({ ...view, input }, extra.requestId, extra.signal);
        if (outcome.kind === 'dismissed') dismissedKey = input.key;
        if (outcome.kind === 'superseded') await sleep(view.task.pollInterval ?? deps.backend.options.pollIntervalMs, extra.signal);
        continue;
      }
      await sleep(
        Math.min(view.task.pollInterval ?? deps.backend.options.pollIntervalMs, Math.max(deadline - Date.now(), 0)),
        extra.signal,
      );
    }
  }

  return server;
}

/**
 * Registers a handler whose malformed params get -32602 Invalid params (the SDK's own parsing would answer
 * -32603), with the problem spelled out.
 */
function onRequest<Schema extends z.ZodObject<{ method: z.ZodLiteral<string> }>>(
  server: Server,
  schema: Schema,
  handler: (request: z.infer<Schema>, extra: Extra) => Promise<object>,
): void {
  const method = schema.shape.method.value;
  const anyParams = z.looseObject({ method: z.literal(method), params: z.unknown().optional() });
  server.setRequestHandler(
    anyParams as never,
    (async (request: unknown, extra: Extra) => {
      const parsed = schema.safeParse(request);
      if (!parsed.success) {
        throw new McpError(ErrorCode.InvalidParams, `Invalid params for ${method}: ${z.prettifyError(parsed.error).replace(/\n/g, ' ')}`);
      }
      return handler(parsed.data, extra);
    }) as never,
  );
}

/**
 * Progress notifications for a request that carries a progress token (or for a task whose creating call carried one):
 * the workflow's published progress when it
 * has some, otherwise a keep-alive with the status message at most every 10 s. Values only ever increase.
 */
function progressReporter(
  extra: Extra,
  taskToken: string | number | undefined,
  sent: Map<string | number, number>,
): (view: TaskView) => void {
  const token = extra._meta?.progressToken ?? taskToken;
  if (token === undefined) return () => undefined;
  let last = sent.get(token) ?? 0;
  let lastSentAt = 0;
  return (view) => {
    const published = view.progress;
    const message = published?.message ?? view.task.statusMessage;
    let value: number;
    if (published && published.progress > last) value = published.progress;
    else if (Date.now() - lastSentAt >= 10_000) value = last + (published ? 0.001 : 1);
    else return;
    last = value;
    sent.set(token, value);
    lastSentAt = Date.now();
    extra
      .sendNotification({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress: value,
          ...(published?.total !== undefined && { total: published.total }),
          ...(message && { message }),
        },
      })
      .catch(() => undefined);
  };
}

/** Turns "Temporal unreachable" into a retryable JSON-RPC error that says so. */
async function mapTemporalErrors<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (!(error instanceof McpError) && isTemporalUnavailable(error)) throw temporalUnavailable(error);
    throw error;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

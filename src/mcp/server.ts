import { Server } from '@modelcontextprotocol/sdk/server/index.js';
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
  RELATED_TASK_META_KEY,
  type CallToolRequest,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Task,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ADOPT_ONLY_META, IDEMPOTENCY_KEY_META, IDEMPOTENCY_KEY_PATTERN, REPLAYED_META } from '../shared/wire';
import { InputChannel, type InputChannelOptions } from './input-channel';
import { isTemporalUnavailable, isTerminalStatus, temporalUnavailable, TemporalTaskBackend, type TaskView } from './task-backend';
import type { DirectTool, ToolDefinition } from './tools/types';

/** Key of the line a host may hand the model as soon as a task exists (MCP 2025-11-25). */
export const MODEL_IMMEDIATE_RESPONSE_META = 'io.modelcontextprotocol/model-immediate-response';

/** Server name and version announced at initialize. */
export const SERVER_INFO = { name: 'temporal-mcp-tasks', version: '0.1.0' };

/** After this many answers that do not fit the form, tasks/result gives up with -32602 (the task keeps waiting). */
const MAX_INVALID_ANSWERS = 3;

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
    instructions:
      'Tools marked with execution.taskSupport run as durable tasks backed by Temporal workflows. They may pause for ' +
      "a person's input (status input_required): call tasks/result to receive the question as an elicitation.",
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
  const observe = (view: TaskView) => {
    const before = seen.get(view.task.taskId);
    if (isTerminalStatus(view.task.status)) {
      seen.delete(view.task.taskId);
      progressTokens.delete(view.task.taskId);
      for (const channel of channels.values()) channel.forget(view.task.taskId);
    } else seen.set(view.task.taskId, view.task.status);
    if (before !== undefined && before !== view.task.status) {
      server.notification({ method: 'notifications/tasks/status', params: view.task }).catch(() => undefined);
    }
  };
  const byName = new Map(deps.tools.map((tool) => [tool.name, tool]));
  const descriptors = deps.tools.map(describeTool);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: descriptors }));

  server.setRequestHandler(CallToolRequestSchema, (request, extra) => mapTemporalErrors(callTool(request, extra)));

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
    const view = await deps.backend.create(tool, parsed.value, principal, { requestedTtl: task?.ttl, ...idempotencyOf(request) });
    observe(view);
    if (task) {
      const token = extra._meta?.progressToken;
      if (token !== undefined) progressTokens.set(view.task.taskId, token);
      const immediate = tool.immediateResponse?.(parsed.value, view.task.taskId);
      const meta = { ...(immediate && { [MODEL_IMMEDIATE_RESPONSE_META]: immediate }), ...(view.replayed && { [REPLAYED_META]: true }) };
      return { task: view.task, ...(Object.keys(meta).length > 0 && { _meta: meta }) };
    }
    const result = await awaitResult(view.task.taskId, principal, extra, deps.inlineBudgetMs);
    return result ?? overBudgetResult(await deps.backend.get(view.task.taskId, principal), deps.inlineBudgetMs);
  }

  onTaskRequest(server, GetTaskRequestSchema, async (request, extra) => {
    const principal = deps.principalOf(extra);
    const view = await deps.backend.get(request.params.taskId, principal);
    observe(view);
    if (view.input) channelFor(principal).offer(view);
    return view.task;
  });

  onTaskRequest(server, ListTasksRequestSchema, async (request, extra) =>
    deps.backend.list(deps.principalOf(extra), request.params?.cursor),
  );

  onTaskRequest(server, CancelTaskRequestSchema, async (request, extra) => {
    const view = await deps.backend.cancel(request.params.taskId, deps.principalOf(extra));
    observe(view);
    return view.task;
  });

  onTaskRequest(
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
    const progress = progressReporter(extra, progressTokens.get(taskId));
    let dismissedKey: string | undefined;
    let invalidAnswers = 0;
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
      if (isTerminalStatus(view.task.status)) return deps.backend.result(view);
      if (view.input && view.input.key !== dismissedKey && channel.canAsk(view.input)) {
        const outcome = await channel.ask(view, extra.requestId, extra.signal);
        if (outcome.kind === 'dismissed') dismissedKey = view.input.key;
        if (outcome.kind === 'superseded') await sleep(view.task.pollInterval ?? deps.backend.options.pollIntervalMs, extra.signal);
        if (outcome.kind === 'invalid' && ++invalidAnswers >= MAX_INVALID_ANSWERS) {
          throw new McpError(
            ErrorCode.InvalidParams,
            `${MAX_INVALID_ANSWERS} answers in a row did not fit the requested form (last: ${outcome.problem}); ` +
              `task ${taskId} still waits for input: call tasks/result again to answer`,
          );
        }
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
 * Registers a tasks/* handler whose malformed params get -32602 Invalid params (the SDK's own parsing would answer
 * -32603), with the problem spelled out.
 */
function onTaskRequest<Schema extends z.ZodObject<{ method: z.ZodLiteral<string> }>>(
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

/** The call's idempotency key and adopt-only flag from its `_meta`; -32602 when they are malformed. */
function idempotencyOf(request: CallToolRequest): { idempotencyKey?: string; adoptOnly?: boolean } {
  const meta = request.params._meta as Record<string, unknown> | undefined;
  const key = meta?.[IDEMPOTENCY_KEY_META];
  const adoptOnly = meta?.[ADOPT_ONLY_META];
  if (key !== undefined && (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key))) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `_meta["${IDEMPOTENCY_KEY_META}"] must be 1-200 printable ASCII characters without spaces (a UUID, for example)`,
    );
  }
  if (adoptOnly !== undefined && typeof adoptOnly !== 'boolean') {
    throw new McpError(ErrorCode.InvalidParams, `_meta["${ADOPT_ONLY_META}"] must be true or false`);
  }
  if (adoptOnly && key === undefined) {
    throw new McpError(ErrorCode.InvalidParams, `_meta["${ADOPT_ONLY_META}"] needs _meta["${IDEMPOTENCY_KEY_META}"]`);
  }
  return { ...(key !== undefined && { idempotencyKey: key as string }), ...(adoptOnly === true && { adoptOnly }) };
}

/**
 * The answer to a plain call whose task outlived the wait: the task id and how to finish the job with the companion
 * tools. Marked isError, since it does not carry the tool's declared structured result.
 */
function overBudgetResult(view: TaskView, budgetMs: number): CallToolResult {
  const { taskId, status, statusMessage } = view.task;
  const question = view.input ? ` It is waiting for an answer to: "${view.input.request.message}" (answer with task_respond).` : '';
  return {
    content: [
      {
        type: 'text',
        text:
          `Not finished within the ${Math.round(budgetMs / 1000)} s this call may wait; the work goes on as task ${taskId} ` +
          `(${status}${statusMessage ? `: ${statusMessage}` : ''}).${question} ` +
          `Use task_status, task_result, task_respond or task_cancel with taskId "${taskId}" to follow it.`,
      },
    ],
    isError: true,
    _meta: { [RELATED_TASK_META_KEY]: { taskId } },
  };
}

/**
 * Progress notifications for a request that carries a progress token (or for a task whose creating call carried one):
 * the workflow's published progress when it
 * has some, otherwise a keep-alive with the status message at most every 10 s. Values only ever increase.
 */
function progressReporter(extra: Extra, taskToken?: string | number): (view: TaskView) => void {
  const token = extra._meta?.progressToken ?? taskToken;
  if (token === undefined) return () => undefined;
  let last = 0;
  let lastSentAt = 0;
  return (view) => {
    const published = view.progress;
    const message = published?.message ?? view.task.statusMessage;
    let value: number;
    if (published && published.progress > last) value = published.progress;
    else if (Date.now() - lastSentAt >= 10_000) value = last + (published ? 0.001 : 1);
    else return;
    last = value;
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

/** The tools/list entry of a tool. */
export function describeTool(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.input.jsonSchema,
    ...(tool.kind === 'workflow' && tool.output && { outputSchema: tool.output.jsonSchema }),
    ...(tool.annotations && { annotations: tool.annotations }),
    execution: { taskSupport: tool.kind === 'workflow' ? tool.taskSupport : 'forbidden' },
  };
}

function invalidArgumentsText(name: string, problems: string[]): string {
  return `Invalid arguments for tool ${name}: ${problems.join('; ')}`;
}

function invalidArgumentsResult(name: string, problems: string[]): CallToolResult {
  return { content: [{ type: 'text', text: `${invalidArgumentsText(name, problems)}. Fix them and call again.` }], isError: true };
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

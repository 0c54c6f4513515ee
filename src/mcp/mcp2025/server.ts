import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListResourcesRequestSchema,
  ListTasksRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { servedRequest, type ServedParams } from '../calls/served-request';
import { APP_RESOURCES, readAppResource } from '../app/ui';
import { describeTool } from '../calls/call-tool';
import { refusalBackoffMs } from './asking-pace';
import { asJsonRpcError, JsonRpcError } from '../protocol/wire-errors';
import { toolTables } from '../tools';
import { SERVER_INFO, SERVER_INSTRUCTIONS } from '../protocol/server-identity';
import { answerableAtOnce, enableAnswersAtOnce, type RegisteredHandler } from './at-once';
import type { CallPlan } from '../calls/call-plan';
import { answerOf, Mcp2025Connection, type Extra, type Mcp2025Dependencies } from './connection';

export { refusalBackoffMs };
export { mcp2025Task, Mcp2025Connection, type Mcp2025Dependencies } from './connection';
export { answerAtOnce } from './at-once';

/**
 * Creates an MCP server for one connection: tools/list and tools/call for the declared tools, and tasks/* answered
 * from Temporal. Call once per connection (per Streamable HTTP session, or once for stdio). The server only registers
 * handlers; what the connection holds lives in its {@link Mcp2025Connection}.
 */
export function createMcp2025Server(deps: Mcp2025Dependencies): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: {
      tools: {},
      resources: {},
      tasks: { ...(deps.listing && { list: {} }), cancel: {}, requests: { tools: { call: {} } } },
    },
    instructions: SERVER_INSTRUCTIONS,
  });
  const connection = new Mcp2025Connection(server, deps);
  server.onclose = () => connection.close();
  const descriptors = deps.tools.map(describeTool);
  const atOnce = new Map<string, RegisteredHandler>();
  const on = <Schema extends RequestSchema>(schema: Schema, handler: Handler<Schema>) => {
    const registered = onRequest(server, schema, handler, deps);
    if (answerableAtOnce(registered.method)) atOnce.set(registered.method, registered.handle);
  };
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: descriptors }));
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: APP_RESOURCES }));
  on(ReadResourceRequestSchema, (request) => readAppResource(request.params.uri));
  on(CallToolRequestSchema, (request, extra, plan) => connection.callTool(request, extra, plan));
  on(GetTaskRequestSchema, (request, extra) => connection.getTask(request.params.taskId, extra));
  if (deps.listing) on(ListTasksRequestSchema, (request, extra) => connection.listTasks(request.params?.cursor, extra));
  on(CancelTaskRequestSchema, (request, extra) => connection.cancelTask(request.params.taskId, extra));
  on(GetTaskPayloadRequestSchema, async (request, extra) => answerOf((await connection.awaitResult(request.params.taskId, extra))!));
  enableAnswersAtOnce(server, atOnce, toolTables(deps.tools).byName);
  return server;
}

type RequestSchema = z.ZodObject<{ method: z.ZodLiteral<string> }>;
type Handler<Schema extends RequestSchema> = (request: z.infer<Schema>, extra: Extra, plan?: CallPlan) => Promise<object>;

/**
 * Registers a handler whose malformed params get -32602 Invalid params (the SDK's own parsing would answer
 * -32603), with the problem spelled out, and whose "Temporal unreachable" failures get the retryable error. A
 * tools/call or tasks/* request counts against its principal's rate and runs in its own span and log context
 * (method, principal, tool, task).
 */
function onRequest<Schema extends RequestSchema>(
  server: Server,
  schema: Schema,
  handler: Handler<Schema>,
  { principalOf, core }: Pick<Mcp2025Dependencies, 'principalOf' | 'core'>,
): { method: string; handle: RegisteredHandler } {
  const method = schema.shape.method.value;
  const anyParams = z.looseObject({ method: z.literal(method), params: z.unknown().optional() });
  const traced = method === 'tools/call' || method.startsWith('tasks/');
  const handle = async (request: unknown, extra: Extra, plan?: CallPlan) => {
    const parsed = schema.safeParse(request);
    if (!parsed.success) {
      throw new JsonRpcError(ErrorCode.InvalidParams, `Invalid params for ${method}: ${z.prettifyError(parsed.error).replace(/\n/g, ' ')}`);
    }
    if (!traced) return mapTemporalErrors(handler(parsed.data, extra, plan));
    const params = (parsed.data as { params?: ServedParams }).params;
    return mapTemporalErrors(servedRequest(core, method, principalOf(extra), params, () => handler(parsed.data, extra, plan)));
  };
  server.setRequestHandler(anyParams as never, handle as never);
  return { method, handle };
}

/**
 * Errors as JSON-RPC errors (see `jsonRpcFailureOf`), thrown as they are: the SDK sends a thrown error's code,
 * message and data. "Temporal unreachable" becomes a retryable one that says so.
 */
async function mapTemporalErrors<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    throw asJsonRpcError(error);
  }
}

import { DecisionLog } from '../../src/approvals/decision-log';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  McpError,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@temporalio/client';
import { createBridge, type Bridge } from '../../src/mcp/bridge';
import { bridgeOptionsFromEnv, type BridgeTuning, type CreateBridgeOptions } from '../../src/mcp/bridge/bridge-options';
import type { ToolDefinition } from '../../src/mcp/tools/types';
import { pollUntil } from '../../src/util/wait';
import { testTemporalConfig } from './temporal';

/** Tuning that keeps tests quick: short polls and grace periods. */
export const FAST_TUNING: BridgeTuning = {
  core: { defaultTtlMs: 3_600_000, pollIntervalMs: 200, pageSize: 20 },
  input: { elicitationTimeoutMs: 60_000, pushGraceMs: 300, dismissCooldownMs: 60_000 },
  inlineBudgetMs: 30_000,
};

/** Options of {@link startBridge}. */
export interface TestBridgeOptions {
  client: Client;
  taskQueue: string;
  /** The principal of every request; default the credentials' (the local principal without them). */
  principal?: string;
  /** The roles of every request; default the credentials' (the local roles without them). */
  roles?: string[];
  /** The principal of requests without credentials. */
  localPrincipal?: string;
  /** Default {@link FAST_TUNING}. */
  tuning?: BridgeTuning;
  /** What it serves (a stack's bridges: the tools of what the stack runs, see test-stack.ts). */
  tools: readonly ToolDefinition[];
  /** Where the bridge keeps decision records (a directory); default MCP_DECISION_STORE. */
  decisionStore?: string;
  /** The bridge's decision log itself (a store of the test's own); default one of `decisionStore`. */
  decisions?: DecisionLog;
  /** Default {@link FAST_CLOSE_KEEPER}. */
  closeKeeper?: CreateBridgeOptions['closeKeeper'];
}

/** The close keeper of a test's bridge: a look every 2 s, over the last 2 minutes at start. */
export const FAST_CLOSE_KEEPER = { intervalMs: 2_000, lookbackMs: 120_000 };

/** A bridge on the run's dev server, sharing `client`, serving `options.tools`. */
export function startBridge(options: TestBridgeOptions): Promise<Bridge> {
  const { principal, roles } = options;
  const fromEnv = bridgeOptionsFromEnv();
  return createBridge({
    ...fromEnv,
    temporal: testTemporalConfig(options.taskQueue),
    client: options.client,
    tuning: options.tuning ?? FAST_TUNING,
    closeKeeper: options.closeKeeper ?? FAST_CLOSE_KEEPER,
    tools: options.tools,
    ...(principal && { principalOf: () => principal }),
    ...(roles && { rolesOf: () => roles }),
    ...(options.localPrincipal && { localPrincipal: options.localPrincipal }),
    ...((options.decisions || options.decisionStore) && {
      approvals: {
        ...fromEnv.approvals,
        decisions: options.decisions ?? DecisionLog.fromEnv({ ...process.env, MCP_DECISION_STORE: options.decisionStore }),
      },
    }),
  });
}

/** Chooses the answer to the `index`-th elicitation. */
export type Answerer = (params: ElicitRequest['params'], index: number) => ElicitResult | Promise<ElicitResult>;

/** Answers elicitations from a script and records every one it was sent. */
export class ScriptedUser {
  readonly asked: ElicitRequest['params'][] = [];
  constructor(private readonly answer: Answerer) {}

  /** Installs itself as `client`'s elicitation handler. */
  attach(client: McpClient): this {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      this.asked.push(request.params);
      return this.answer(request.params, this.asked.length - 1);
    });
    return this;
  }
}

/** The approver's answers. */
export const APPROVE: ElicitResult = { action: 'accept', content: { decision: 'approve', comment: 'fine' } };
export const REJECT: ElicitResult = { action: 'accept', content: { decision: 'reject', comment: 'wrong totals' } };

/** An SDK client that declares form elicitation and task support. */
export function newMcpClient(name = 'test-client', withElicitation = true): McpClient {
  return new McpClient(
    { name, version: '1.0.0' },
    { capabilities: { ...(withElicitation && { elicitation: { form: {} } }), tasks: { list: {}, cancel: {} } } },
  );
}

/** Connects `client` to a fresh server of `bridge` over the in-memory transport. */
export async function connectInMemory(bridge: Bridge, client: McpClient): Promise<() => Promise<void>> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const server = bridge.createMcp2025Server();
  await server.connect(serverTransport);
  await client.connect(clientTransport as Transport);
  return async () => {
    await client.close();
    await server.close();
  };
}

/**
 * A person's client named `name`, connected over Streamable HTTP to `url` (with `token` as its bearer token): with
 * `answer`, it declares form elicitation and answers from that script; without, it declares none. The caller closes it.
 */
export async function connectOverHttp(
  url: string,
  name: string,
  options: { answer?: Answerer; token?: string } = {},
): Promise<{ client: McpClient; user: ScriptedUser }> {
  const client = newMcpClient(name, options.answer !== undefined);
  const user = new ScriptedUser(options.answer ?? (() => ({ action: 'cancel' })));
  if (options.answer) user.attach(client);
  const headers = options.token === undefined ? undefined : { authorization: `Bearer ${options.token}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), headers && { requestInit: { headers } }));
  return { client, user };
}

/** Calls the tool `name` with `args` as a task (with `ttl`, if given) and returns the created task. */
export async function startTask(client: McpClient, name: string, args: unknown, ttl?: number): Promise<Task> {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args as Record<string, unknown>, task: ttl ? { ttl } : {} } },
    CreateTaskResultSchema,
  );
  return created.task;
}

/** tasks/get through the SDK client. */
export function getTask(client: McpClient, taskId: string): Promise<Task> {
  return client.experimental.tasks.getTask(taskId);
}

/** tasks/result through the SDK client, with a timeout fit for tests. */
export function taskResult(client: McpClient, taskId: string, timeout = 60_000): Promise<CallToolResult> {
  return client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { timeout });
}

/** Polls tasks/get until `accept(task)` holds. */
export async function waitForTask(client: McpClient, taskId: string, accept: (task: Task) => boolean, timeoutMs = 30_000): Promise<Task> {
  let task: Task | undefined;
  return pollUntil(
    async () => {
      task = await getTask(client, taskId);
      return accept(task) ? task : undefined;
    },
    { timeoutMs, intervalMs: 100, what: () => `task ${taskId} to leave ${task?.status} (${task?.statusMessage ?? ''}) (${timeoutMs} ms)` },
  );
}

/** The JSON-RPC error code a promise rejects with. */
export async function errorCodeOf(promise: Promise<unknown>): Promise<number | string> {
  try {
    await promise;
  } catch (error) {
    return error instanceof McpError ? error.code : `not an McpError: ${(error as Error).message}`;
  }
  return 'resolved';
}

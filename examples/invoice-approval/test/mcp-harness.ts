/**
 * The example served as a team serves it, for its MCP tests: a bridge of the sample tools beside the default ones
 * (`createBridge` with the options `serve` reads), over Streamable HTTP on a free loopback port, and MCP clients that
 * connect to it as a person's host does, answering the questions they are asked from a script.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { bridgeOptionsFromEnv, createBridge, DEFAULT_TOOLS, startHttpServer, type Bridge } from 'temporal-mcp-tasks';
import type { ActivityConfig } from '../src/activities';
import { SAMPLE_TOOLS } from '../src/tools';
import { bridgeSeal, testAddress } from './harness';

/** A bridge of the example served over HTTP until `close()`. */
export interface InvoiceServer {
  url: string;
  bridge: Bridge;
  close(): Promise<void>;
}

/**
 * Serves the sample tools for `principal` (every request without credentials acts for them) on `taskQueue`, keeping
 * decision records where the sample worker of `activities` checks them, and sealing answers as its worker expects.
 */
export async function startInvoiceServer(taskQueue: string, activities: ActivityConfig, principal: string): Promise<InvoiceServer> {
  const bridge = await createBridge({
    ...bridgeOptionsFromEnv({
      ...process.env,
      TEMPORAL_ADDRESS: testAddress(),
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: taskQueue,
      MCP_LOCAL_PRINCIPAL: principal,
      MCP_DECISION_STORE: activities.decisionStore,
    }),
    tools: [...SAMPLE_TOOLS, ...DEFAULT_TOOLS],
    answerSeal: bridgeSeal,
  });
  try {
    const http = await startHttpServer({ host: '127.0.0.1', port: 0, endpoints: bridge });
    return {
      url: http.url,
      bridge,
      close: async () => {
        await http.close(0);
        await bridge.close();
      },
    };
  } catch (error) {
    await bridge.close();
    throw error;
  }
}

/** Chooses the answer to the `index`-th question a person is asked. */
export type Answerer = (params: ElicitRequest['params'], index: number) => ElicitResult | Promise<ElicitResult>;

/** The approval a person gives, and the rejection. */
export const APPROVE: ElicitResult = { action: 'accept', content: { decision: 'approve', comment: 'fine' } };
export const REJECT: ElicitResult = { action: 'accept', content: { decision: 'reject', comment: 'wrong totals' } };

/** A person's MCP host: a client that declares tasks and, given `answer`, form elicitation; `asked` records the questions. */
export interface Person {
  client: Client;
  asked: ElicitRequest['params'][];
}

/** Connects a person's client to `url` over Streamable HTTP; close it with `client.close()`. */
export async function connectPerson(url: string, answer?: Answerer): Promise<Person> {
  const client = new Client(
    { name: 'invoice-example-test', version: '1.0.0' },
    { capabilities: { tasks: { list: {}, cancel: {} }, ...(answer && { elicitation: { form: {} } }) } },
  );
  const asked: ElicitRequest['params'][] = [];
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return answer(request.params, asked.length - 1);
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return { client, asked };
}

/** Starts `name` as a task of `client` with `args`; returns the created task and its `_meta`. */
export async function startTask(client: Client, name: string, args: object): Promise<{ task: Task; meta?: Record<string, unknown> }> {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args as Record<string, unknown>, task: {} } },
    CreateTaskResultSchema,
  );
  return { task: created.task, ...(created._meta && { meta: created._meta }) };
}

/** The task's result through tasks/result (answering the questions it asks on the way). */
export function taskResult(client: Client, taskId: string): Promise<CallToolResult> {
  return client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { timeout: 60_000 });
}

/** Reads `taskId` with tasks/get until `done` holds of it, failing after `timeoutMs`. */
export async function waitForTask(client: Client, taskId: string, done: (task: Task) => boolean, timeoutMs = 60_000): Promise<Task> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (done(task)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} did not reach the state waited for (last: ${JSON.stringify(task)})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The JSON-RPC error code `call` fails with, or undefined when it succeeds. */
export async function errorCodeOf(call: Promise<unknown>): Promise<number | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    return (error as { code?: number }).code;
  }
}

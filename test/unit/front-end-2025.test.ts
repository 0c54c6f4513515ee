/**
 * The 2025-11-25 front-end in memory, over a fake task core: what the wire says for each thing the core answers, with
 * the SDK's own client and in-memory transport and no Temporal. The end-to-end suites check the same paths against a
 * real one; these pin the rendering.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { ServiceError } from '@temporalio/client';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema, CreateTaskResultSchema, ErrorCode, RELATED_TASK_META_KEY } from '@modelcontextprotocol/sdk/types.js';
import { createMcp2025Server, type Mcp2025Dependencies } from '../../src/mcp/mcp2025/server';
import { CallSeal } from '../../src/mcp/protocol/signed-call';
import type { Approvals } from '../../src/approvals/approvals';
import { FakeCore, PRINCIPAL, report, view } from '../helpers/fake-core';

async function connect(core: FakeCore): Promise<{ client: McpClient; close(): Promise<void> }> {
  const deps: Mcp2025Dependencies = {
    core,
    approvals: {} as Approvals,
    tools: [report],
    principalOf: () => PRINCIPAL,
    rolesOf: () => [],
    input: { elicitationTimeoutMs: 1000, pushGraceMs: 0, dismissCooldownMs: 1000 },
    inlineBudgetMs: 1000,
    seal: new CallSeal('k'.repeat(32), 60_000),
    listing: true,
  };
  const server = createMcp2025Server(deps);
  const client = new McpClient({ name: 'front-end-test', version: '1.0.0' }, { capabilities: { tasks: { list: {}, cancel: {} } } });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  await client.connect(clientTransport as Transport);
  return {
    client,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

/** The JSON-RPC error `promise` rejects with: its code and message as the client read them. */
async function refusal(promise: Promise<unknown>): Promise<{ code: unknown; message: string }> {
  return promise.then(
    () => ({ code: 'none', message: '' }),
    (error: { code?: unknown; message: string }) => ({ code: error.code, message: error.message }),
  );
}

let core: FakeCore;
let session: { client: McpClient; close(): Promise<void> };
beforeEach(async () => {
  core = new FakeCore();
  session = await connect(core);
});
afterEach(() => session.close());

test('a task-augmented call starts the task with the checked arguments and answers with it', async () => {
  const created = await session.client.request(
    { method: 'tools/call', params: { name: 'report', arguments: { region: 'north' }, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );
  expect(created.task).toMatchObject({ taskId: 'report-1', status: 'working', statusMessage: 'Working' });
  expect(core.created).toEqual([{ tool: 'report', input: { region: 'north' }, principal: PRINCIPAL, options: { requestedTtl: 60_000 } }]);
});

test('tasks/get and tasks/list render the core’s views; the listing pages on the core’s cursor', async () => {
  for (const id of ['a', 'b', 'c']) core.tasks.set(id, view(id));
  expect(await session.client.experimental.tasks.getTask('b')).toMatchObject({ taskId: 'b', status: 'working' });
  const first = await session.client.experimental.tasks.listTasks();
  expect(first.tasks.map((task) => task.taskId)).toEqual(['a', 'b']);
  const second = await session.client.experimental.tasks.listTasks(first.nextCursor);
  expect(second.tasks.map((task) => task.taskId)).toEqual(['c']);
  expect(second.nextCursor).toBeUndefined();
});

test('the core’s errors reach the client as JSON-RPC errors with the core’s words, prefixed once by the client', async () => {
  expect(await refusal(session.client.experimental.tasks.getTask('nonesuch'))).toEqual({
    code: ErrorCode.InvalidParams,
    message: 'MCP error -32602: Task not found: nonesuch',
  });
  core.failWith = new ServiceError('connect failed', {
    cause: Object.assign(new Error('14 UNAVAILABLE: no connection'), { code: GrpcStatus.UNAVAILABLE, details: '', metadata: {} }),
  });
  const unavailable = await refusal(session.client.experimental.tasks.getTask('a'));
  expect(unavailable.code).toBe(ErrorCode.InternalError);
  expect(unavailable.message).toMatch(/^MCP error -32603: Temporal is unavailable right now \(.*\); retry shortly$/);
});

test('an ended task: tasks/result is the call’s answer, a tool error makes the task failed, a protocol failure is its error', async () => {
  const result = { content: [{ type: 'text' as const, text: 'North: 12 stores' }] };
  core.tasks.set('done', view('done', { status: 'COMPLETED', closeTime: new Date(), result }));
  core.tasks.set('tool-error', view('tool-error', { status: 'FAILED', failure: { kind: 'application', message: 'No such region' } }));
  core.tasks.set('refused', view('refused', { status: 'FAILED', failure: { kind: 'protocol', message: 'Region unknown', code: -32602 } }));
  expect(await session.client.experimental.tasks.getTaskResult('done', CallToolResultSchema)).toEqual({
    ...result,
    _meta: { [RELATED_TASK_META_KEY]: { taskId: 'done' } },
  });
  expect(await session.client.experimental.tasks.getTask('tool-error')).toMatchObject({
    status: 'failed',
    statusMessage: 'No such region',
  });
  expect(await session.client.experimental.tasks.getTaskResult('tool-error', CallToolResultSchema)).toMatchObject({
    isError: true,
    content: [{ type: 'text', text: 'No such region' }],
  });
  expect(await refusal(session.client.experimental.tasks.getTaskResult('refused', CallToolResultSchema))).toEqual({
    code: -32602,
    message: 'MCP error -32602: Region unknown',
  });
});

/**
 * MCP 2026-07-28 with the tasks extension, SEP-2663) on the same endpoint as 2025-11-25, driven by
 * real clients this project did not write: FastMCP 4.1.4 with fastmcp-tasks 4.1.4, the MCP Python SDK 2.3 and the MCP
 * TypeScript SDK v2 client.
 */
import { Client as Mcp2026Client, StreamableHTTPClientTransport as Mcp2026HttpTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as Mcp2026StdioTransport } from '@modelcontextprotocol/client/stdio';
import { ROOT } from '../helpers/dev-server';
import { z } from 'zod';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { APPROVE, getTask, newMcpClient, ScriptedUser, taskResult } from '../helpers/mcp';
import { sampleInvoice, startInvoiceTask } from '../helpers/example';
import { startStack, type TestStack } from '../helpers/test-stack';
import { serverEnv } from '../helpers/processes';
import { pythonClients, runPythonClient } from '../helpers/python';
import { eventually, expectedWebUiLink } from '../helpers/temporal';
import { WEB_UI_META } from '../../src/contract/wire';
import { mcp2026Request, openListen, type RawRequestOptions } from '../helpers/mcp2026';
import { paidLineItems } from '../helpers/ledger';

const TASKS = 'io.modelcontextprotocol/tasks';
let stack: TestStack;
let python: string;

beforeAll(async () => {
  [python, stack] = await Promise.all([
    pythonClients(),
    startStack({ name: 'mcp2026', servers: [{ args: ['--tools', 'examples/invoice-approval/tools.yaml'] }] }),
  ]);
}, 240_000);

afterAll(() => stack?.stop());

interface TaskOutcome {
  taskId: string;
  status: string;
  isError: boolean;
  structured: { outcome?: string; payments?: unknown[] } | null;
  asked: string[];
  protocolVersion?: string;
  /** The routing headers of each HTTP request the client sent (scenario `task`). */
  sent?: { method: string | null; mcpName: string | null }[];
}

/** One 2026-07-28 request written by hand, with the headers a conforming client sends unless `headers` says otherwise. */
const rpc = (method: string, params: Record<string, unknown>, options: RawRequestOptions = {}) =>
  mcp2026Request(stack.server.url, method, params, options);

/** Opens a subscriptions/listen by hand and reads its stream to the end: every JSON-RPC message, in order. */
async function listenRaw(id: string, taskIds: string[]): Promise<Array<Record<string, any>>> {
  const response = await openListen(stack.server.url, id, taskIds);
  const text = await response.text();
  if (response.headers.get('content-type')?.startsWith('application/json')) return [JSON.parse(text)];
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)));
}

const paid = (taskId: string) => paidLineItems(stack.activities.ledgerDir, taskId);

async function mcp2025Client() {
  const client = newMcpClient('mcp2025-client');
  const user = new ScriptedUser(() => APPROVE);
  user.attach(client);
  await client.connect(new StreamableHTTPClientTransport(new URL(stack.server.url)));
  return { client, user };
}

async function waitForStatus(taskId: string, status: string) {
  return eventually(async () => {
    const answer = await rpc('tasks/get', { taskId });
    return answer.body.result?.status === status ? answer.body.result : undefined;
  }, `task ${taskId} ${status}`);
}

describe('FastMCP 4.1.4 with fastmcp-tasks 4.1.4, the newest release (tasks extension)', () => {
  test('runs the invoice as a task: tasks/get shows the question, tasks/update answers it, each line item is paid once', async () => {
    const out = await runPythonClient<TaskOutcome>(python, stack.server.url, ['task', 'approve'], sampleInvoice());
    expect(out.status).toBe('completed');
    expect(out.structured?.outcome).toBe('paid');
    expect(out.asked).toHaveLength(1);
    expect(await paid(out.taskId)).toEqual(['LI-1', 'LI-2']);
    // The client names the tool in Mcp-Name, and no task in its tasks/* requests: the server reads those from the
    // body (docs/protocol.md). Once a release sends it, a missing header can be refused.
    const sent = out.sent ?? [];
    expect(sent.filter((request) => request.method === 'tools/call')).toEqual([{ method: 'tools/call', mcpName: 'process_invoice' }]);
    const taskRequests = sent.filter((request) => request.method?.startsWith('tasks/'));
    expect(taskRequests.map((request) => request.method)).toEqual(expect.arrayContaining(['tasks/get', 'tasks/update']));
    expect(taskRequests.filter((request) => request.mcpName !== null)).toEqual([]);
  });

  test('a rejection completes the task with the rejected outcome and pays nothing', async () => {
    const out = await runPythonClient<TaskOutcome>(python, stack.server.url, ['task', 'reject'], sampleInvoice());
    expect(out.status).toBe('completed');
    expect(out.structured?.outcome).toBe('rejected');
    expect(await paid(out.taskId)).toEqual([]);
  });

  test('tasks/cancel is acknowledged and the task reads cancelled', async () => {
    const out = await runPythonClient<TaskOutcome>(python, stack.server.url, ['cancel'], sampleInvoice());
    expect(out.status).toBe('cancelled');
    expect(await paid(out.taskId)).toEqual([]);
  });
});

describe('MCP Python SDK 2.3 without the tasks extension', () => {
  test('a plain call speaks 2026-07-28 and asks its question as input_required, answered by the retried call', async () => {
    const out = await runPythonClient<TaskOutcome>(python, stack.server.url, ['plain'], sampleInvoice());
    expect(out.protocolVersion).toBe('2026-07-28');
    expect(out.isError).toBe(false);
    expect(out.structured?.outcome).toBe('paid');
    expect(out.asked).toHaveLength(1);
  });

  test('over stdio the first message decides: a server/discover probe gets 2026-07-28 and the same input_required round', async () => {
    const out = await runPythonClient<TaskOutcome>(python, 'stdio', ['plain'], sampleInvoice(), serverEnv(stack.taskQueue));
    expect(out.protocolVersion).toBe('2026-07-28');
    expect(out.structured?.outcome).toBe('paid');
    expect(out.asked).toHaveLength(1);
  });

  test('tasks/get without the extension gets -32021 naming the capability', async () => {
    const created = await runPythonClient<TaskOutcome>(python, stack.server.url, ['create'], sampleInvoice());
    const out = await runPythonClient<{ code: number; data: unknown }>(python, stack.server.url, ['no-extension', created.taskId]);
    expect(out.code).toBe(-32021);
    expect(out.data).toEqual({ requiredCapabilities: { extensions: { [TASKS]: {} } } });
    await rpc('tasks/cancel', { taskId: created.taskId });
  });
});

describe('one task core, two generations', () => {
  test('a task a 2025-11-25 client created is finished by a 2026-07-28 client', async () => {
    const { client } = await mcp2025Client();
    try {
      const task = await startInvoiceTask(client, sampleInvoice());
      const out = await runPythonClient<TaskOutcome>(python, stack.server.url, ['finish', task.taskId]);
      expect(out.status).toBe('completed');
      expect(out.structured?.outcome).toBe('paid');
      expect((await getTask(client, task.taskId)).status).toBe('completed');
    } finally {
      await client.close();
    }
  });

  test('a task a 2026-07-28 client created is finished by a 2025-11-25 client through tasks/result', async () => {
    const created = await runPythonClient<TaskOutcome>(python, stack.server.url, ['create'], sampleInvoice());
    const { client, user } = await mcp2025Client();
    try {
      const result = await taskResult(client, created.taskId);
      expect(result.structuredContent).toMatchObject({ outcome: 'paid' });
      expect(user.asked).toHaveLength(1);
      expect((await waitForStatus(created.taskId, 'completed')).result.structuredContent.outcome).toBe('paid');
    } finally {
      await client.close();
    }
  });
});

describe('MCP TypeScript SDK v2 client: task status on subscriptions/listen', () => {
  async function mcp2026Client(withTasks = true, over: 'http' | 'stdio' = 'http') {
    const client = new Mcp2026Client(
      { name: 'ts-v2-client', version: '1.0.0' },
      {
        capabilities: { elicitation: { form: {} }, ...(withTasks && { extensions: { [TASKS]: {} } }) },
        // The client probes with server/discover and speaks 2026-07-28 when the server does.
        versionNegotiation: { mode: 'auto' },
      },
    );
    await client.connect(
      over === 'http'
        ? new Mcp2026HttpTransport(new URL(stack.server.url))
        : new Mcp2026StdioTransport({
            command: 'npm',
            args: ['run', '-s', 'serve'],
            cwd: ROOT,
            env: serverEnv(stack.taskQueue),
            stderr: 'ignore',
          }),
    );
    const notes: Array<Record<string, any>> = [];
    client.setNotificationHandler(
      'notifications/tasks',
      { params: z.looseObject({ taskId: z.string(), status: z.string() }) },
      (params) => {
        notes.push(params);
      },
    );
    return { client, notes };
  }

  test('notifications/tasks carry each change as tasks/get would show it, to the end of the task', async () => {
    const { client, notes } = await mcp2026Client();
    try {
      // The SDK's client has no tasks of its own: the task is made by hand, followed through the client's listen().
      const created = (await rpc('tools/call', { name: 'process_invoice', arguments: sampleInvoice() })).body.result as { taskId: string };
      const subscription = await client.listen({ taskIds: [created.taskId] } as never);

      const question = await eventually(async () => notes.find((note) => note.status === 'input_required'), 'the question notified');
      expect(Object.keys(question.inputRequests)).toEqual(['approval']);
      expect(question.taskId).toBe(created.taskId);
      await rpc('tasks/update', { taskId: created.taskId, inputResponses: { approval: APPROVE } });

      expect(await subscription.closed).toBe('graceful');
      const last = await eventually(async () => notes.find((note) => note.status === 'completed'), 'the completed task notified');
      expect(last).toMatchObject({ taskId: created.taskId, result: { structuredContent: { outcome: 'paid' } } });
      expect(notes[notes.length - 1]).toBe(last);
      // Every notification is a change: no two in a row show the same state.
      const states = notes.map((note) => JSON.stringify([note.status, note.statusMessage, note.lastUpdatedAt]));
      expect(new Set(states).size).toBe(states.length);
      expect(notes.every((note) => note.taskId === created.taskId)).toBe(true);
      expect(await paid(created.taskId)).toEqual(['LI-1', 'LI-2']);
    } finally {
      await client.close();
    }
  });

  test('over stdio: the subscription follows the task to its end beside ordinary requests', async () => {
    const { client, notes } = await mcp2026Client(true, 'stdio');
    try {
      const created = (await rpc('tools/call', { name: 'process_invoice', arguments: sampleInvoice({ vendorId: 'V-666' }) })).body
        .result as { taskId: string };
      const subscription = await client.listen({ taskIds: [created.taskId] } as never);
      // Requests keep flowing on the same connection while the subscription is open.
      const tools = await client.listTools();
      expect(tools.tools.map((tool) => tool.name)).toContain('process_invoice');
      expect(await subscription.closed).toBe('graceful');
      // The client may hand a notification to its handler after it settled the subscription that carried it.
      const last = await eventually(async () => notes.find((note) => note.status === 'completed'), 'the completed task notified');
      expect(last).toMatchObject({ result: { structuredContent: { outcome: 'invalid' } } });
    } finally {
      await client.close();
    }
  });

  test('closing the subscription ends it; a client without the extension is refused with -32021', async () => {
    const { client } = await mcp2026Client();
    const plain = await mcp2026Client(false);
    try {
      const created = (await rpc('tools/call', { name: 'process_invoice', arguments: sampleInvoice() })).body.result as { taskId: string };
      const subscription = await client.listen({ taskIds: [created.taskId] } as never);
      await subscription.close();
      expect(await subscription.closed).toBe('local');
      await expect(plain.client.listen({ taskIds: [created.taskId] } as never)).rejects.toMatchObject({ code: -32021 });
      await rpc('tasks/cancel', { taskId: created.taskId });
    } finally {
      await client.close();
      await plain.client.close();
    }
  });
});

describe('the wire, written by hand', () => {
  test('tools/call answers with the flat task (resultType "task", ttlMs, pollIntervalMs), no legacy fields', async () => {
    const answer = await rpc('tools/call', { name: 'process_invoice', arguments: sampleInvoice() });
    const result = answer.body.result!;
    // The SDK adds an empty content array, which keeps the result a valid CallToolResult for core-schema readers.
    expect(Object.keys(result).sort()).toEqual(
      ['_meta', 'content', 'createdAt', 'lastUpdatedAt', 'pollIntervalMs', 'resultType', 'status', 'taskId', 'ttlMs'].sort(),
    );
    expect(result.content).toEqual([]);
    expect(result).toMatchObject({ resultType: 'task', status: 'working' });
    expect(result._meta[WEB_UI_META]).toBe(expectedWebUiLink(result.taskId));
    expect(result.createdAt).toBe(result.lastUpdatedAt);
    await rpc('tasks/cancel', { taskId: result.taskId });
  });

  test('tasks/update ignores unknown keys, refuses an answer that does not fit with -32602, and changes nothing', async () => {
    const taskId = (await rpc('tools/call', { name: 'process_invoice', arguments: sampleInvoice() })).body.result!.taskId as string;
    const waiting = await waitForStatus(taskId, 'input_required');
    expect(Object.keys(waiting.inputRequests)).toEqual(['approval']);
    expect(waiting._meta[WEB_UI_META]).toBe(expectedWebUiLink(taskId));
    expect(waiting.inputRequests.approval).toMatchObject({ method: 'elicitation/create', params: { mode: 'form' } });

    const unknown = await rpc('tasks/update', { taskId, inputResponses: { nonsense: { action: 'accept', content: {} } } });
    expect(unknown.body.result).toMatchObject({ resultType: 'complete' });
    const misfit = await rpc('tasks/update', {
      taskId,
      inputResponses: { approval: { action: 'accept', content: { decision: 'perhaps' } } },
    });
    expect(misfit.body.error?.code).toBe(-32602);
    expect(misfit.body.error?.message).toMatch(/decision/);
    const after = (await rpc('tasks/get', { taskId })).body.result!;
    expect(after.status).toBe('input_required');
    expect(after.inputRequests).toEqual(waiting.inputRequests);

    await rpc('tasks/update', { taskId, inputResponses: { approval: { action: 'accept', content: { decision: 'approve' } } } });
    // An answered key is not outstanding any more: answering it again is ignored.
    const again = await rpc('tasks/update', {
      taskId,
      inputResponses: { approval: { action: 'accept', content: { decision: 'reject' } } },
    });
    expect(again.body.result).toMatchObject({ resultType: 'complete' });
    const completed = await waitForStatus(taskId, 'completed');
    expect(completed.result.structuredContent.outcome).toBe('paid');
    expect(completed._meta[WEB_UI_META]).toBe(expectedWebUiLink(taskId));
    expect(completed.result._meta[WEB_UI_META]).toBe(expectedWebUiLink(taskId));
    // tasks/cancel on a terminal task is acknowledged and changes nothing.
    expect((await rpc('tasks/cancel', { taskId })).body.result).toMatchObject({ resultType: 'complete' });
    expect((await rpc('tasks/get', { taskId })).body.result!.status).toBe('completed');
  });

  test('two questions open at once are both in inputRequests; a partial answer leaves the other outstanding', async () => {
    const taskId = (await rpc('tools/call', { name: 'onboard_vendor', arguments: { vendorName: 'Acme' } })).body.result!.taskId as string;
    const waiting = await eventually(async () => {
      const task = (await rpc('tasks/get', { taskId })).body.result;
      return Object.keys(task?.inputRequests ?? {}).length === 2 ? task : undefined;
    }, 'both questions');
    expect(Object.keys(waiting!.inputRequests).sort()).toEqual(['bank-account', 'tax-id']);
    await rpc('tasks/update', { taskId, inputResponses: { 'tax-id': { action: 'accept', content: { taxId: 'DE123456789' } } } });
    const partial = await eventually(async () => {
      const task = (await rpc('tasks/get', { taskId })).body.result;
      return task?.status === 'input_required' && Object.keys(task.inputRequests).length === 1 ? task : undefined;
    }, 'one question left');
    expect(Object.keys(partial!.inputRequests)).toEqual(['bank-account']);
    await rpc('tasks/update', {
      taskId,
      inputResponses: { 'bank-account': { action: 'accept', content: { iban: 'DE89370400440532013000' } } },
    });
    const done = await waitForStatus(taskId, 'completed');
    expect(done.result.structuredContent).toEqual({
      vendorName: 'Acme',
      active: true,
      taxId: 'DE123456789',
      iban: 'DE89370400440532013000',
    });
  });

  test('a plain call of a tool that runs only as a task, without the extension, gets -32021', async () => {
    const answer = await rpc('tools/call', { name: 'sales_report', arguments: { region: 'north' } }, { tasks: false });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe(-32021);
    expect(answer.body.error?.data).toEqual({ requiredCapabilities: { extensions: { [TASKS]: {} } } });
  });

  test('header checks: an Mcp-Name that disagrees with the body gets HTTP 400 with -32020', async () => {
    const answer = await rpc(
      'tasks/get',
      { taskId: 'invoice-00000000-0000-4000-8000-000000000000' },
      { headers: { 'mcp-name': 'another' } },
    );
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe(-32020);
    const method = await rpc('tools/list', {}, { headers: { 'mcp-method': 'tasks/get' } });
    expect(method.status).toBe(400);
    expect(method.body.error?.code).toBe(-32020);
  });

  test('tasks/result and tasks/list do not exist in this generation (-32601); an unknown task is -32602', async () => {
    const taskId = 'invoice-00000000-0000-4000-8000-000000000000';
    expect((await rpc('tasks/result', { taskId })).body.error?.code).toBe(-32601);
    expect((await rpc('tasks/list', {})).body.error?.code).toBe(-32601);
    expect((await rpc('tasks/get', { taskId })).body.error?.code).toBe(-32602);
  });

  test("subscriptions/listen acknowledges only the caller's task ids, stamps the subscription id, ends with the listen result", async () => {
    const taskId = (await rpc('tools/call', { name: 'process_invoice', arguments: sampleInvoice({ vendorId: 'V-666' }) })).body.result!
      .taskId as string;
    const unknown = 'invoice-00000000-0000-4000-8000-000000000000';
    const messages = await listenRaw('sub-1', [taskId, unknown]);
    expect(messages[0]).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: [taskId] }, _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1' } },
    });
    const notes = messages.filter((message) => message.method === 'notifications/tasks');
    expect(notes.length).toBeGreaterThan(0);
    expect(notes.every((note) => note.params._meta['io.modelcontextprotocol/subscriptionId'] === 'sub-1')).toBe(true);
    expect(notes[notes.length - 1].params).toMatchObject({
      taskId,
      status: 'completed',
      result: { structuredContent: { outcome: 'invalid' } },
    });
    expect(messages[messages.length - 1]).toMatchObject({ id: 'sub-1', result: { resultType: 'complete' } });

    const nothing = await listenRaw('sub-2', [unknown]);
    expect(nothing.map((message) => message.method ?? 'result')).toEqual(['notifications/subscriptions/acknowledged', 'result']);
    expect(nothing[0].params.notifications).toEqual({ taskIds: [] });
    const tooMany = await listenRaw(
      'sub-3',
      Array.from({ length: 101 }, (_, index) => `task-${index}`),
    );
    expect(tooMany[0].error.code).toBe(-32602);
  });

  test('a plain call: a host that renders Apps gets the task at once; a client that cannot be asked gets the question', async () => {
    const ui = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } };
    const forView = (await rpc('tools/call', { name: 'process_invoice', arguments: sampleInvoice() }, { capabilities: ui })).body.result!;
    expect(forView).toMatchObject({ resultType: 'complete', structuredContent: { pendingTask: { status: 'working' } } });
    expect(forView.isError).toBeUndefined();
    const view = await rpc('resources/read', { uri: 'ui://temporal-mcp-tasks/task-view.html' }, { capabilities: ui });
    expect(view.body.result!.contents[0]).toMatchObject({
      mimeType: 'text/html;profile=mcp-app',
      text: expect.stringMatching(/^<!doctype html>/i),
    });

    const mute = (await rpc('tools/call', { name: 'process_invoice', arguments: sampleInvoice() }, { capabilities: {} })).body.result!;
    expect(mute.isError).toBeUndefined();
    expect(mute.structuredContent.pendingTask).toMatchObject({ status: 'input_required', question: { key: 'approval', mode: 'form' } });
    expect(mute._meta[WEB_UI_META]).toBe(expectedWebUiLink(mute.structuredContent.pendingTask.taskId));
    for (const taskId of [forView.structuredContent.pendingTask.taskId, mute.structuredContent.pendingTask.taskId]) {
      await rpc('tasks/cancel', { taskId });
    }
  });

  test('server/discover advertises the tasks extension', async () => {
    const answer = await rpc('server/discover', {});
    expect(answer.body.result?.capabilities.extensions).toEqual({ [TASKS]: {} });
    expect(answer.body.result?.supportedVersions).toContain('2026-07-28');
  });
});

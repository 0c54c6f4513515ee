import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type ElicitResult,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import type { Bridge } from '../../src/mcp/bridge';
import { loadToolsFile } from '../../src/mcp/tools/config-file';
import { defaultToolResult } from '../../src/mcp/tools/define';
import { ROOT } from '../helpers/dev-server';
import { startStack, type TestStack } from '../helpers/test-stack';
import { FAST_TUNING, getTask, ScriptedUser, taskResult, waitForTask, type Answerer } from '../helpers/mcp';
import { TOOLS_WITH_SAMPLES } from '../helpers/example';

const declared = loadToolsFile(path.join(ROOT, 'examples', 'invoice-approval', 'tools.yaml'));
let stack: TestStack;

beforeAll(async () => {
  stack = await startStack({ name: 'declared' });
});

afterEach(() => stack.closeClients());

afterAll(() => stack?.stop());

async function bridgeWith(options: { inlineBudgetMs?: number; principal?: string } = {}): Promise<Bridge> {
  return stack.addBridge({
    tools: [...TOOLS_WITH_SAMPLES, ...declared],
    tuning: { ...FAST_TUNING, inlineBudgetMs: options.inlineBudgetMs ?? FAST_TUNING.inlineBudgetMs },
    principal: options.principal,
  });
}

const connect = (bridge: Bridge, answer?: Answerer) => stack.person('declared', { bridge, ...(answer && { answer }) });

async function startTask(client: McpClient, name: string, args: Record<string, unknown>) {
  const { CreateTaskResultSchema } = await import('@modelcontextprotocol/sdk/types.js');
  return (await client.request({ method: 'tools/call', params: { name, arguments: args, task: {} } }, CreateTaskResultSchema)).task;
}

describe('tools declared in a configuration file', () => {
  test('tools/list shows them with their JSON Schemas, task support and the companion tools', async () => {
    const { client } = await connect(await bridgeWith());
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('request_time_off')).toMatchObject({
      execution: { taskSupport: 'optional' },
      inputSchema: { required: ['employee', 'days'] },
      outputSchema: { type: 'object', anyOf: [{ required: ['approved', 'days'] }, { required: ['pendingTask'] }] },
    });
    expect(byName.get('sales_report')?.execution?.taskSupport).toBe('required');
    expect(byName.get('submit_expense_report')?.execution?.taskSupport).toBe('optional');
    for (const name of ['task_status', 'task_result', 'task_respond', 'task_cancel'])
      expect(byName.get(name)?.execution?.taskSupport).toBe('forbidden');
  });

  test('a workflow speaking the contract with raw Temporal primitives asks its question and returns its value', async () => {
    const bridge = await bridgeWith();
    const { client, user } = await connect(bridge, () => ({ action: 'accept', content: { approve: true, note: 'enjoy' } }));
    // Polled by a client that cannot be asked: the question is not pushed to the one that answers it on tasks/result.
    const { client: observer } = await connect(bridge);
    const task = await startTask(client, 'request_time_off', { employee: 'Ada', days: 3 });
    expect(task.taskId).toMatch(/^time-off-/);
    const waiting = await waitForTask(observer, task.taskId, (t) => t.status === 'input_required');
    expect(waiting.statusMessage).toMatch(/approve 3 day/);
    const result = await taskResult(client, task.taskId);
    expect(result).toMatchObject({
      structuredContent: { approved: true, days: 3, note: 'enjoy' },
      _meta: { [RELATED_TASK_META_KEY]: { taskId: task.taskId } },
    });
    expect(user.asked).toHaveLength(1);
  });

  test('a URL-mode question reaches a client that supports it, and the form-only client can answer it with task_respond', async () => {
    const bridge = await bridgeWith();
    const client = new McpClient({ name: 'url-client', version: '1' }, { capabilities: { elicitation: { form: {}, url: {} }, tasks: {} } });
    const user = new ScriptedUser(() => ({ action: 'accept' })).attach(client);
    await stack.connect(client, bridge);
    const task = await startTask(client, 'sign_contract', { contractId: 'C-7', signer: 'Ada' });
    expect((await taskResult(client, task.taskId)).structuredContent).toEqual({ contractId: 'C-7', signed: true });
    expect(user.asked[0]).toMatchObject({
      mode: 'url',
      url: expect.stringMatching(/^https:\/\/sign\.example\.com\/contracts\/C-7/),
      elicitationId: `${task.taskId}/signature`,
    });

    const { client: formOnly, user: formUser } = await connect(bridge, () => ({ action: 'cancel' }));
    const other = await startTask(formOnly, 'sign_contract', { contractId: 'C-8', signer: 'Bob' });
    await waitForTask(formOnly, other.taskId, (t) => t.status === 'input_required');
    const status = (await formOnly.callTool({ name: 'task_status', arguments: { taskId: other.taskId } })) as CallToolResult;
    expect((status.content[0] as { text: string }).text).toMatch(/open https:\/\/sign\.example\.com\/contracts\/C-8/);
    await formOnly.callTool({ name: 'task_respond', arguments: { taskId: other.taskId, action: 'decline' } });
    expect((await taskResult(formOnly, other.taskId)).structuredContent).toEqual({ contractId: 'C-8', signed: false });
    expect(formUser.asked).toHaveLength(0);
  });

  test('2025-11-25: an application failure of the workflow is a tool error, its task failed with the message, tasks/result the isError result', async () => {
    const { client } = await connect(await bridgeWith());
    const task = await startTask(client, 'request_time_off', { employee: 'Ada', days: 30 });
    const done = await waitForTask(client, task.taskId, (t) => t.status === 'failed');
    expect(done.statusMessage).toMatch(/more than the 20 days/);
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.find((t) => t.taskId === task.taskId)?.status).toBe('failed');
    const result = await taskResult(client, task.taskId);
    expect(result.isError).toBe(true);
    expect(result.content[0]).toMatchObject({ text: expect.stringMatching(/split it/) });
  });

  test('2025-11-25 asks two questions a workflow has open at once one after the other, on one tasks/result', async () => {
    const answers: Record<string, Record<string, string>> = {
      'tax id': { taxId: 'DE123456789' },
      IBAN: { iban: 'DE89370400440532013000' },
    };
    const { client, user } = await connect(await bridgeWith(), (params) => {
      const field = Object.keys(answers).find((name) => params.message.includes(name))!;
      return { action: 'accept', content: answers[field] };
    });
    const task = await startTask(client, 'onboard_vendor', { vendorName: 'Acme' });
    const result = await taskResult(client, task.taskId);
    expect(user.asked.map((asked) => asked.message)).toEqual([
      'What is the tax id of Acme?',
      'Which bank account (IBAN) should Acme be paid to?',
    ]);
    expect(result.structuredContent).toEqual({ vendorName: 'Acme', active: true, taxId: 'DE123456789', iban: 'DE89370400440532013000' });
  });

  test('a plain workflow that knows nothing of MCP is working, then completed with its return value as structured content', async () => {
    const { client } = await connect(await bridgeWith());
    const task = await startTask(client, 'sales_report', { region: 'north' });
    expect((await getTask(client, task.taskId)).status).toBe('working');
    const result = await taskResult(client, task.taskId);
    expect(result.structuredContent).toEqual({ region: 'north', orders: 35, revenue: 4375 });
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
  });

  test('arguments are checked against the declared JSON Schema, naming the field', async () => {
    const { client } = await connect(await bridgeWith());
    const result = (await client.callTool({
      name: 'request_time_off',
      arguments: { employee: 'Ada', days: 0, extra: 1 },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    // The first problem only; the undeclared "extra" is stripped, not reported.
    expect((result.content[0] as { text: string }).text).toMatch(/Invalid arguments for tool request_time_off: days: must be >= 1\./);
  });

  test('a terminated workflow is failed', async () => {
    const { client } = await connect(await bridgeWith());
    const task = await startTask(client, 'request_time_off', { employee: 'Ada', days: 2 });
    await waitForTask(client, task.taskId, (t) => t.status === 'input_required');
    await stack.temporal.workflow.getHandle(task.taskId).terminate('operator stopped it');
    expect((await waitForTask(client, task.taskId, (t) => t.status === 'failed')).statusMessage).toMatch(/terminated/);
  });
});

describe('loadToolsFile', () => {
  const write = (name: string, text: string) => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'tools-file-')), name);
    writeFileSync(file, text);
    return file;
  };

  test.each([
    [
      'a missing workflowType',
      'tools.json',
      '{"tools":[{"name":"x","description":"d","inputSchema":{"type":"object"}}]}',
      /tools\[0\]\.workflowType/,
    ],
    [
      'an unknown field',
      'tools.yaml',
      'tools:\n  - name: x\n    description: d\n    workflowType: W\n    inputSchema: { type: object }\n    queue: q\n',
      /tools\[0\]: Unrecognized key: "queue"/,
    ],
    [
      'an input schema that is not an object schema',
      'tools.json',
      '{"tools":[{"name":"x","description":"d","workflowType":"W","inputSchema":{"type":"string"}}]}',
      /tools\[0\]\.inputSchema: must be a JSON Schema of "type": "object"/,
    ],
    [
      'an invalid JSON Schema',
      'tools.json',
      '{"tools":[{"name":"x","description":"d","workflowType":"W","inputSchema":{"type":"object","properties":{"a":{"type":"nonsense"}}}}]}',
      /tools\[0\]\.inputSchema: schema is invalid/,
    ],
    [
      'a duplicate name',
      'tools.json',
      '{"tools":[{"name":"x","description":"d","workflowType":"W","inputSchema":{"type":"object"}},{"name":"x","description":"d","workflowType":"W","inputSchema":{"type":"object"}}]}',
      /tools\[1\]\.name: "x" is declared twice/,
    ],
    ['broken YAML', 'tools.yml', 'tools: [\n', /not valid YAML/],
    ['no tools', 'tools.json', '{"tools":[]}', /tools: list at least one tool/],
  ])('rejects %s, naming the field', (_, name, text, expected) => {
    expect(() => loadToolsFile(write(name, text))).toThrow(expected);
  });
});

describe('defaultToolResult', () => {
  test('passes a CallToolResult through, turns an object into structured content, and anything else into text', () => {
    const ready = { content: [{ type: 'text' as const, text: 'hi' }], isError: false };
    expect(defaultToolResult(ready)).toEqual(ready);
    expect(defaultToolResult({ a: 1 })).toEqual({ content: [{ type: 'text', text: '{\n  "a": 1\n}' }], structuredContent: { a: 1 } });
    expect(defaultToolResult(42)).toEqual({ content: [{ type: 'text', text: '42' }] });
  });
});

describe('clients without task support', () => {
  const report = {
    employee: 'Grace',
    currency: 'EUR',
    items: [
      { description: 'Train', amount: 80 },
      { description: 'Hotel', amount: 120.5 },
    ],
  };

  test('a plain call finishes inline: two questions asked on the call’s stream, progress notifications on its token', async () => {
    const { client, user } = await connect(await bridgeWith(), (params): ElicitResult =>
      /cost center/.test(params.message)
        ? { action: 'accept', content: { costCenter: 'CC-200 Sales' } }
        : { action: 'accept', content: { approve: true } },
    );
    const progress: Progress[] = [];
    const result = await client.callTool({ name: 'submit_expense_report', arguments: report }, CallToolResultSchema, {
      onprogress: (update) => progress.push(update),
      timeout: 60_000,
    });
    expect(result.structuredContent).toEqual({
      status: 'reimbursed',
      employee: 'Grace',
      total: 200.5,
      currency: 'EUR',
      costCenter: 'CC-200 Sales',
    });
    expect(user.asked.map((question) => question.message)).toEqual([
      expect.stringMatching(/Approve Grace/),
      expect.stringMatching(/cost center/),
    ]);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[progress.length - 1]).toMatchObject({ total: 4 });
    expect(progress.map((p) => p.progress)).toEqual([...progress.map((p) => p.progress)].sort((a, b) => a - b));
  });

  test('a task-augmented call’s progress token reports the task’s progress while tasks/result waits', async () => {
    const { client } = await connect(await bridgeWith(), (params): ElicitResult =>
      /cost center/.test(params.message)
        ? { action: 'accept', content: { costCenter: 'CC-100 Engineering' } }
        : { action: 'accept', content: { approve: true } },
    );
    const { CreateTaskResultSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const progress: Progress[] = [];
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'submit_expense_report', arguments: report, task: {} } },
      CreateTaskResultSchema,
      { onprogress: (update) => progress.push(update) },
    );
    const result = await taskResult(client, task.taskId);
    expect(result.structuredContent).toMatchObject({ status: 'reimbursed', costCenter: 'CC-100 Engineering' });
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[progress.length - 1]).toMatchObject({ total: 4 });
  });

  test('past the wait budget, a plain call returns the task id; the companion tools answer, follow and finish it', async () => {
    // Shorter than the two 200 ms durable timers before the first question: the budget ends first on any machine.
    const bridge = await bridgeWith({ inlineBudgetMs: 300 });
    const { client } = await connect(bridge);
    const first = (await client.callTool({ name: 'submit_expense_report', arguments: report })) as CallToolResult;
    const text = (first.content[0] as { text: string }).text;
    expect(text).toMatch(/^Not finished within the \d+ s this call may wait; the work goes on as task /);
    expect(text).toMatch(/task_respond/);
    const taskId = (first._meta?.[RELATED_TASK_META_KEY] as { taskId: string }).taskId;

    await waitForTask(client, taskId, (t) => t.status === 'input_required');
    const status = (await client.callTool({ name: 'task_status', arguments: { taskId } })) as CallToolResult;
    expect(status.structuredContent).toMatchObject({ task: { status: 'input_required' }, question: { key: 'manager-approval' } });
    const bad = (await client.callTool({
      name: 'task_respond',
      arguments: { taskId, action: 'accept', content: { approve: 'yes' } },
    })) as CallToolResult;
    expect(bad).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/"approve" must be true or false. Nothing was recorded/) }],
    });
    await client.callTool({ name: 'task_respond', arguments: { taskId, action: 'accept', content: { approve: true } } });

    const next = await waitForTask(client, taskId, (t) => t.status === 'input_required' && /cost center/.test(t.statusMessage ?? ''));
    expect(next.status).toBe('input_required');
    await client.callTool({ name: 'task_respond', arguments: { taskId, action: 'accept', content: { costCenter: 'CC-300 Operations' } } });
    const done = (await client.callTool({ name: 'task_result', arguments: { taskId, waitSeconds: 20 } })) as CallToolResult;
    expect(done.structuredContent).toMatchObject({ status: 'reimbursed', costCenter: 'CC-300 Operations' });

    // Another principal cannot see or steer it.
    const { client: stranger } = await connect(await bridgeWith({ principal: 'someone-else' }));
    for (const name of ['task_status', 'task_result', 'task_cancel']) {
      const denied = (await stranger.callTool({ name, arguments: { taskId } })) as CallToolResult;
      expect(denied).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/Task not found/) }] });
    }
    const cancelDone = (await client.callTool({ name: 'task_cancel', arguments: { taskId } })) as CallToolResult;
    expect(cancelDone).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/already completed/) }] });
  });
});

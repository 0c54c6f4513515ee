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
import { defineWorkflowTool } from 'temporal-mcp-tasks';
import type { Bridge } from '../../src/mcp/bridge';
import { loadToolsFile, type ToolEntry } from '../../src/mcp/tools/config-file';
import { defaultToolResult } from '../../src/mcp/tools/define';
import { startStack } from '../helpers/test-stack';
import { FAST_TUNING, getTask, ScriptedUser, taskResult, waitForTask, type Answerer } from '../helpers/mcp';
import {
  ASK_BOTH_WORKFLOW_TYPE,
  ECHO_WORKFLOW_TYPE,
  QUESTION_KEY,
  RAW_ASK_WORKFLOW_TYPE,
  REVIEW_WORKFLOW_TYPE,
  ReviewInputSchema,
  VISIT_WORKFLOW_TYPE,
  type ReviewInput,
  type ReviewResult,
} from '../fixtures/definitions';
import { FIXTURES, type FixtureStack } from '../fixtures/stack';
import { askRequesterTool, toolsFileEntry } from '../fixtures/tools';

const subject = { type: 'string', minLength: 1, description: 'What the requester is asked about.' };

/** The fixtures' workflows declared in a tools file, as a team declares workflows without code in the server. */
const FILE_TOOLS: ToolEntry[] = [
  {
    name: 'raw_ask',
    description: 'Asks the requester about a subject through the raw task contract.',
    workflowType: RAW_ASK_WORKFLOW_TYPE,
    taskSupport: 'optional',
    idPrefix: 'raw-ask',
    inputSchema: { type: 'object', properties: { subject }, required: ['subject'], additionalProperties: false },
    outputSchema: {
      type: 'object',
      properties: { subject: { type: 'string' }, approved: { type: 'boolean' }, comment: { type: 'string' } },
      required: ['subject', 'approved'],
    },
  },
  {
    name: 'report',
    description: 'Echoes the region it is given, after `holdMs`; a workflow that knows nothing of MCP.',
    workflowType: ECHO_WORKFLOW_TYPE,
    taskSupport: 'required',
    inputSchema: {
      type: 'object',
      properties: {
        region: { type: 'string', enum: ['north', 'south', 'east', 'west'], description: 'The region.' },
        holdMs: { type: 'integer', minimum: 0, maximum: 60_000, description: 'How long the report takes.' },
      },
      required: ['region'],
    },
  },
  { ...toolsFileEntry(askRequesterTool), name: 'ask_from_file', idPrefix: 'filed' },
  {
    name: 'ask_both',
    description: 'Asks the requester two things about a subject at once.',
    workflowType: ASK_BOTH_WORKFLOW_TYPE,
    inputSchema: { type: 'object', properties: { subject }, required: ['subject'] },
  },
  {
    name: 'visit',
    description: 'Sends the requester to the page of a subject and reports whether they went.',
    workflowType: VISIT_WORKFLOW_TYPE,
    inputSchema: { type: 'object', properties: { subject }, required: ['subject'] },
  },
];

/** The review workflow declared with the TypeScript API; its result uses the default mapping. */
const reviewTool = defineWorkflowTool<ReviewInput, ReviewResult>({
  name: 'review',
  description: 'Runs checks on a subject, then asks the requester to approve it and for a note.',
  inputSchema: ReviewInputSchema,
  workflowType: REVIEW_WORKFLOW_TYPE,
});

let declared: ReturnType<typeof loadToolsFile>;
let stack: FixtureStack;

beforeAll(async () => {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'declared-tools-')), 'tools.json');
  writeFileSync(file, JSON.stringify({ tools: FILE_TOOLS }));
  declared = loadToolsFile(file);
  stack = await startStack({ name: 'declared', app: FIXTURES });
});

afterEach(() => stack.closeClients());

afterAll(() => stack?.stop());

async function bridgeWith(options: { inlineBudgetMs?: number; principal?: string } = {}): Promise<Bridge> {
  return stack.addBridge({
    tools: [...FIXTURES.tools, reviewTool, ...declared],
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
    expect(byName.get('raw_ask')).toMatchObject({
      execution: { taskSupport: 'optional' },
      inputSchema: { required: ['subject'] },
      outputSchema: { type: 'object', anyOf: [{ required: ['subject', 'approved'] }, { required: ['pendingTask'] }] },
    });
    expect(byName.get('report')?.execution?.taskSupport).toBe('required');
    expect(byName.get(reviewTool.name)?.execution?.taskSupport).toBe('optional');
    for (const name of ['task_status', 'task_result', 'task_respond', 'task_cancel'])
      expect(byName.get(name)?.execution?.taskSupport).toBe('forbidden');
  });

  test('a workflow speaking the contract with raw Temporal primitives asks its question and returns its value', async () => {
    const bridge = await bridgeWith();
    const { client, user } = await connect(bridge, () => ({ action: 'accept', content: { decision: 'approve', comment: 'enjoy' } }));
    // Polled by a client that cannot be asked: the question is not pushed to the one that answers it on tasks/result.
    const { client: observer } = await connect(bridge);
    const task = await startTask(client, 'raw_ask', { subject: 'Ada' });
    expect(task.taskId).toMatch(/^raw-ask-/);
    const waiting = await waitForTask(observer, task.taskId, (t) => t.status === 'input_required');
    expect(waiting.statusMessage).toMatch(/an answer about Ada/);
    const result = await taskResult(client, task.taskId);
    expect(result).toMatchObject({
      structuredContent: { subject: 'Ada', approved: true, comment: 'enjoy' },
      _meta: { [RELATED_TASK_META_KEY]: { taskId: task.taskId } },
    });
    expect(user.asked).toHaveLength(1);
  });

  test('a URL-mode question reaches a client that supports it, and the form-only client can answer it with task_respond', async () => {
    const bridge = await bridgeWith();
    const client = new McpClient({ name: 'url-client', version: '1' }, { capabilities: { elicitation: { form: {}, url: {} }, tasks: {} } });
    const user = new ScriptedUser(() => ({ action: 'accept' })).attach(client);
    await stack.connect(client, bridge);
    const task = await startTask(client, 'visit', { subject: 'page-7' });
    expect((await taskResult(client, task.taskId)).structuredContent).toEqual({ subject: 'page-7', visited: true });
    expect(user.asked[0]).toMatchObject({
      mode: 'url',
      url: expect.stringMatching(/^https:\/\/pages\.example\.com\/visit\/page-7\?/),
      elicitationId: `${task.taskId}/visit`,
    });

    const { client: formOnly, user: formUser } = await connect(bridge, () => ({ action: 'cancel' }));
    const other = await startTask(formOnly, 'visit', { subject: 'page-8' });
    await waitForTask(formOnly, other.taskId, (t) => t.status === 'input_required');
    const status = (await formOnly.callTool({ name: 'task_status', arguments: { taskId: other.taskId } })) as CallToolResult;
    expect((status.content[0] as { text: string }).text).toMatch(/open https:\/\/pages\.example\.com\/visit\/page-8\?/);
    await formOnly.callTool({ name: 'task_respond', arguments: { taskId: other.taskId, action: 'decline' } });
    expect((await taskResult(formOnly, other.taskId)).structuredContent).toEqual({ subject: 'page-8', visited: false });
    expect(formUser.asked).toHaveLength(0);
  });

  test('2025-11-25: an application failure of the workflow is a tool error, its task failed with the message, tasks/result the isError result', async () => {
    const { client } = await connect(await bridgeWith());
    const task = await startTask(client, 'ask_from_file', { subject: 'Ada', refuse: 'too many days; split it' });
    const done = await waitForTask(client, task.taskId, (t) => t.status === 'failed');
    expect(done.statusMessage).toMatch(/"Ada" was refused: too many days/);
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.find((t) => t.taskId === task.taskId)?.status).toBe('failed');
    const result = await taskResult(client, task.taskId);
    expect(result.isError).toBe(true);
    expect(result.content[0]).toMatchObject({ text: expect.stringMatching(/split it/) });
  });

  test('2025-11-25 asks two questions a workflow has open at once one after the other, on one tasks/result', async () => {
    const answers: Record<string, Record<string, string>> = {
      '(first)': { note: 'one' },
      '(second)': { note: 'two' },
    };
    const { client, user } = await connect(await bridgeWith(), (params) => {
      const field = Object.keys(answers).find((name) => params.message.includes(name))!;
      return { action: 'accept', content: answers[field] };
    });
    const task = await startTask(client, 'ask_both', { subject: 'Acme' });
    const result = await taskResult(client, task.taskId);
    expect(user.asked.map((asked) => asked.message)).toEqual(['Add a note (first) on Acme.', 'Add a note (second) on Acme.']);
    expect(result.structuredContent).toEqual({ subject: 'Acme', first: 'one', second: 'two' });
  });

  test('a plain workflow that knows nothing of MCP is working, then completed with its return value as structured content', async () => {
    const { client } = await connect(await bridgeWith());
    const task = await startTask(client, 'report', { region: 'north', holdMs: 1000 });
    expect((await getTask(client, task.taskId)).status).toBe('working');
    const result = await taskResult(client, task.taskId);
    expect(result.structuredContent).toEqual({ region: 'north', holdMs: 1000 });
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
  });

  test('arguments are checked against the declared JSON Schema, naming the field', async () => {
    const { client } = await connect(await bridgeWith());
    const result = (await client.callTool({
      name: 'raw_ask',
      arguments: { subject: '', extra: 1 },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    // The first problem only; the undeclared "extra" is stripped, not reported.
    expect((result.content[0] as { text: string }).text).toMatch(
      /Invalid arguments for tool raw_ask: subject: must NOT have fewer than 1 characters\./,
    );
  });

  test('a terminated workflow is failed', async () => {
    const { client } = await connect(await bridgeWith());
    const task = await startTask(client, 'ask_from_file', { subject: 'Ada' });
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
  // Two checks, then two questions: progress runs to a total of 4.
  const review: ReviewInput = { subject: 'Grace', checks: 2 };

  test('a plain call finishes inline: two questions asked on the call’s stream, progress notifications on its token', async () => {
    const { client, user } = await connect(await bridgeWith(), (params): ElicitResult =>
      /Add a note/.test(params.message)
        ? { action: 'accept', content: { note: 'for sales' } }
        : { action: 'accept', content: { decision: 'approve' } },
    );
    const progress: Progress[] = [];
    const result = await client.callTool({ name: reviewTool.name, arguments: review }, CallToolResultSchema, {
      onprogress: (update) => progress.push(update),
      timeout: 60_000,
    });
    expect(result.structuredContent).toEqual({ subject: 'Grace', outcome: 'approved', note: 'for sales' });
    expect(user.asked.map((question) => question.message)).toEqual([
      expect.stringMatching(/Approve Grace/),
      expect.stringMatching(/Add a note/),
    ]);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[progress.length - 1]).toMatchObject({ total: 4 });
    expect(progress.map((p) => p.progress)).toEqual([...progress.map((p) => p.progress)].sort((a, b) => a - b));
  });

  test('a task-augmented call’s progress token reports the task’s progress while tasks/result waits', async () => {
    const { client } = await connect(await bridgeWith(), (params): ElicitResult =>
      /Add a note/.test(params.message)
        ? { action: 'accept', content: { note: 'for engineering' } }
        : { action: 'accept', content: { decision: 'approve' } },
    );
    const { CreateTaskResultSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const progress: Progress[] = [];
    const { task } = await client.request(
      { method: 'tools/call', params: { name: reviewTool.name, arguments: review, task: {} } },
      CreateTaskResultSchema,
      { onprogress: (update) => progress.push(update) },
    );
    const result = await taskResult(client, task.taskId);
    expect(result.structuredContent).toMatchObject({ outcome: 'approved', note: 'for engineering' });
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[progress.length - 1]).toMatchObject({ total: 4 });
  });

  test('past the wait budget, a plain call returns the task id; the companion tools answer, follow and finish it', async () => {
    // Shorter than the two 200 ms durable timers before the first question: the budget ends first on any machine.
    const bridge = await bridgeWith({ inlineBudgetMs: 300 });
    const { client } = await connect(bridge);
    const first = (await client.callTool({ name: reviewTool.name, arguments: review })) as CallToolResult;
    const text = (first.content[0] as { text: string }).text;
    expect(text).toMatch(/^Not finished within the \d+ s this call may wait; the work goes on as task /);
    expect(text).toMatch(/task_respond/);
    const taskId = (first._meta?.[RELATED_TASK_META_KEY] as { taskId: string }).taskId;

    await waitForTask(client, taskId, (t) => t.status === 'input_required');
    const status = (await client.callTool({ name: 'task_status', arguments: { taskId } })) as CallToolResult;
    expect(status.structuredContent).toMatchObject({ task: { status: 'input_required' }, question: { key: QUESTION_KEY } });
    const bad = (await client.callTool({
      name: 'task_respond',
      arguments: { taskId, action: 'accept', content: { decision: 'yes' } },
    })) as CallToolResult;
    expect(bad).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/"decision" must be one of approve, reject. Nothing was recorded/) }],
    });
    await client.callTool({ name: 'task_respond', arguments: { taskId, action: 'accept', content: { decision: 'approve' } } });

    const next = await waitForTask(client, taskId, (t) => t.status === 'input_required' && /Add a note/.test(t.statusMessage ?? ''));
    expect(next.status).toBe('input_required');
    await client.callTool({ name: 'task_respond', arguments: { taskId, action: 'accept', content: { note: 'for operations' } } });
    const done = (await client.callTool({ name: 'task_result', arguments: { taskId, waitSeconds: 20 } })) as CallToolResult;
    expect(done.structuredContent).toMatchObject({ outcome: 'approved', note: 'for operations' });

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

/**
 * MCP 2026-07-28 (with the tasks extension, SEP-2663) on the same endpoint as 2025-11-25, driven by
 * real clients this project did not write: FastMCP 4.1.4 with fastmcp-tasks 4.1.4, the MCP Python SDK 2.3 and the MCP
 * TypeScript SDK v2 client.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as Mcp2026Client, StreamableHTTPClientTransport as Mcp2026HttpTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as Mcp2026StdioTransport } from '@modelcontextprotocol/client/stdio';
import { ROOT } from '../helpers/dev-server';
import { z } from 'zod';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { APPROVE, getTask, newMcpClient, ScriptedUser, taskResult } from '../helpers/mcp';
import { startStack } from '../helpers/test-stack';
import { serverEnv } from '../helpers/processes';
import { pythonClients, runPythonClient } from '../helpers/python';
import { eventually, expectedWebUiLink } from '../helpers/temporal';
import { WEB_UI_META } from '../../src/contract/wire';
import type { ToolEntry } from '../../src/mcp/tools/config-file';
import { mcp2026Request, openListen, type RawRequestOptions } from '../helpers/mcp2026';
import { ASK_BOTH_WORKFLOW_TYPE, ECHO_WORKFLOW_TYPE, QUESTION_KEY, type AskInput } from '../fixtures/definitions';
import { answersSent, askInput, FIXTURES, type FixtureStack, startAskTask } from '../fixtures/stack';
import { askRequesterTool, toolsFileEntry } from '../fixtures/tools';

const TASKS = 'io.modelcontextprotocol/tasks';

/** Tools of this file's own, declared in a tools file as a team declares workflows without code in the server. */
const FILE_TOOLS: ToolEntry[] = [
  {
    name: 'ask_both',
    description: 'Asks the requester two things about a subject at once.',
    workflowType: ASK_BOTH_WORKFLOW_TYPE,
    idPrefix: 'both',
    inputSchema: { type: 'object', properties: { subject: { type: 'string', minLength: 1 } }, required: ['subject'] },
  },
  {
    name: 'report',
    description: 'Echoes the region it is given; a workflow that knows nothing of MCP, run only as a task.',
    workflowType: ECHO_WORKFLOW_TYPE,
    taskSupport: 'required',
    inputSchema: {
      type: 'object',
      properties: { region: { type: 'string', enum: ['north', 'south', 'east', 'west'], description: 'The region.' } },
      required: ['region'],
    },
  },
];

/** `tools` as a tools file in a fresh temporary folder. */
function toolsFile(tools: ToolEntry[]): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'mcp2026-tools-')), 'tools.json');
  writeFileSync(file, JSON.stringify({ tools }));
  return file;
}

let stack: FixtureStack;
let python: string;

beforeAll(async () => {
  [python, stack] = await Promise.all([
    pythonClients(),
    startStack({
      name: 'mcp2026',
      app: FIXTURES,
      // Of two `--tools` the last counts: this file's tools beside the fixtures' ask_requester.
      servers: [{ args: ['--tools', toolsFile([toolsFileEntry(askRequesterTool), ...FILE_TOOLS])] }],
    }),
  ]);
}, 240_000);

afterAll(() => stack?.stop());

interface TaskOutcome {
  taskId: string;
  status: string;
  isError: boolean;
  structured: { subject?: string; outcome?: string } | null;
  text: string[];
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

/** The Python client's arguments that call `ask_requester` with `input`. */
const askRequesterArgs = (input: AskInput) => ['--tool', askRequesterTool.name, '--arguments', JSON.stringify(input)];

/** `npm run -s serve` serving the fixtures' tools and no sample, over stdio. */
const STDIO_SERVE = ['run', '-s', 'serve', '--', ...FIXTURES.serveArgs()];

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
  test('runs a tool as a task: tasks/get shows the question, tasks/update answers it once, the approval is the result', async () => {
    const input = askInput();
    const out = await runPythonClient<TaskOutcome>(python, stack.server.url, ['task', 'approve', ...askRequesterArgs(input)]);
    expect(out.status).toBe('completed');
    expect(out.isError).toBe(false);
    expect(out.structured).toEqual({ subject: input.subject, outcome: 'approved' });
    expect(out.asked).toHaveLength(1);
    expect(await answersSent(stack.temporal, out.taskId)).toBe(1);
    // The client names the tool in Mcp-Name, and no task in its tasks/* requests: the server reads those from the
    // body (docs/protocol.md). Once a release sends it, a missing header can be refused.
    const sent = out.sent ?? [];
    expect(sent.filter((request) => request.method === 'tools/call')).toEqual([{ method: 'tools/call', mcpName: askRequesterTool.name }]);
    const taskRequests = sent.filter((request) => request.method?.startsWith('tasks/'));
    expect(taskRequests.map((request) => request.method)).toEqual(expect.arrayContaining(['tasks/get', 'tasks/update']));
    expect(taskRequests.filter((request) => request.mcpName !== null)).toEqual([]);
  });

  test('a rejection reaches the workflow, which ends the task completed with its tool error and no result', async () => {
    const input = askInput();
    const out = await runPythonClient<TaskOutcome>(python, stack.server.url, ['task', 'reject', ...askRequesterArgs(input)]);
    // A tool error ends a task completed in this generation: the result carries it.
    expect(out.status).toBe('completed');
    expect(out.isError).toBe(true);
    expect(out.structured).toBeNull();
    expect(out.text.join('\n')).toContain(`"${input.subject}" was rejected`);
    expect(out.asked).toHaveLength(1);
    expect(await answersSent(stack.temporal, out.taskId)).toBe(1);
  });

  test('tasks/cancel is acknowledged and the task reads cancelled; no answer reached the workflow', async () => {
    const out = await runPythonClient<TaskOutcome>(python, stack.server.url, ['cancel', ...askRequesterArgs(askInput())]);
    expect(out.status).toBe('cancelled');
    const handle = stack.temporal.workflow.getHandle(out.taskId);
    const ended = await eventually(async () => {
      const { status } = await handle.describe();
      return status.name === 'RUNNING' ? undefined : status.name;
    }, 'the workflow to end');
    expect(ended).toBe('CANCELLED');
    expect(await answersSent(stack.temporal, out.taskId)).toBe(0);
  });
});

describe('MCP Python SDK 2.3 without the tasks extension', () => {
  test('a plain call speaks 2026-07-28 and asks its question as input_required, answered by the retried call', async () => {
    const input = askInput();
    const out = await runPythonClient<TaskOutcome>(python, stack.server.url, ['plain', ...askRequesterArgs(input)]);
    expect(out.protocolVersion).toBe('2026-07-28');
    expect(out.isError).toBe(false);
    expect(out.structured).toEqual({ subject: input.subject, outcome: 'approved' });
    expect(out.asked).toHaveLength(1);
  });

  test('over stdio the first message decides: a server/discover probe gets 2026-07-28 and the same input_required round', async () => {
    const input = askInput();
    const out = await runPythonClient<TaskOutcome>(
      python,
      'stdio',
      ['plain', ...askRequesterArgs(input), '--', ...FIXTURES.serveArgs()],
      undefined,
      serverEnv(stack.taskQueue),
    );
    expect(out.protocolVersion).toBe('2026-07-28');
    expect(out.isError).toBe(false);
    expect(out.structured).toEqual({ subject: input.subject, outcome: 'approved' });
    expect(out.asked).toHaveLength(1);
  });

  test('tasks/get without the extension gets -32021 naming the capability', async () => {
    const created = await runPythonClient<TaskOutcome>(python, stack.server.url, ['create', ...askRequesterArgs(askInput())]);
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
      const input = askInput();
      const task = await startAskTask(client, input);
      const out = await runPythonClient<TaskOutcome>(python, stack.server.url, ['finish', task.taskId, '--tool', askRequesterTool.name]);
      expect(out.status).toBe('completed');
      expect(out.structured).toEqual({ subject: input.subject, outcome: 'approved' });
      expect((await getTask(client, task.taskId)).status).toBe('completed');
    } finally {
      await client.close();
    }
  });

  test('a task a 2026-07-28 client created is finished by a 2025-11-25 client through tasks/result', async () => {
    const input = askInput();
    const created = await runPythonClient<TaskOutcome>(python, stack.server.url, ['create', ...askRequesterArgs(input)]);
    const { client, user } = await mcp2025Client();
    try {
      const result = await taskResult(client, created.taskId);
      // The 2025-11-25 client answered with APPROVE, whose comment the workflow returns.
      const approved = { subject: input.subject, outcome: 'approved', comment: APPROVE.content!.comment };
      expect(result.structuredContent).toEqual(approved);
      expect(user.asked).toHaveLength(1);
      expect((await waitForStatus(created.taskId, 'completed')).result.structuredContent).toEqual(approved);
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
            args: STDIO_SERVE,
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
      const input = askInput();
      const created = (await rpc('tools/call', { name: askRequesterTool.name, arguments: input })).body.result as { taskId: string };
      const subscription = await client.listen({ taskIds: [created.taskId] } as never);

      const question = await eventually(async () => notes.find((note) => note.status === 'input_required'), 'the question notified');
      expect(Object.keys(question.inputRequests)).toEqual([QUESTION_KEY]);
      expect(question.taskId).toBe(created.taskId);
      await rpc('tasks/update', { taskId: created.taskId, inputResponses: { [QUESTION_KEY]: APPROVE } });

      expect(await subscription.closed).toBe('graceful');
      const last = await eventually(async () => notes.find((note) => note.status === 'completed'), 'the completed task notified');
      expect(last).toMatchObject({
        taskId: created.taskId,
        result: { structuredContent: { subject: input.subject, outcome: 'approved', comment: APPROVE.content!.comment } },
      });
      expect(notes[notes.length - 1]).toBe(last);
      // Every notification is a change: no two in a row show the same state.
      const states = notes.map((note) => JSON.stringify([note.status, note.statusMessage, note.lastUpdatedAt]));
      expect(new Set(states).size).toBe(states.length);
      expect(notes.every((note) => note.taskId === created.taskId)).toBe(true);
      expect(await answersSent(stack.temporal, created.taskId)).toBe(1);
    } finally {
      await client.close();
    }
  });

  test('over stdio: the subscription follows the task to its end beside ordinary requests', async () => {
    const { client, notes } = await mcp2026Client(true, 'stdio');
    try {
      // Refused before it asks anything, the task runs to its end on its own.
      const input = askInput({ refuse: 'the subject is on hold' });
      const created = (await rpc('tools/call', { name: askRequesterTool.name, arguments: input })).body.result as { taskId: string };
      const subscription = await client.listen({ taskIds: [created.taskId] } as never);
      // Requests keep flowing on the same connection while the subscription is open.
      const tools = await client.listTools();
      expect(tools.tools.map((tool) => tool.name)).toContain(askRequesterTool.name);
      expect(await subscription.closed).toBe('graceful');
      // The client may hand a notification to its handler after it settled the subscription that carried it.
      const last = await eventually(async () => notes.find((note) => note.status === 'completed'), 'the completed task notified');
      expect(last).toMatchObject({
        taskId: created.taskId,
        result: {
          isError: true,
          content: [{ type: 'text', text: expect.stringContaining(`"${input.subject}" was refused: ${input.refuse}`) }],
        },
      });
    } finally {
      await client.close();
    }
  });

  test('closing the subscription ends it; a client without the extension is refused with -32021', async () => {
    const { client } = await mcp2026Client();
    const plain = await mcp2026Client(false);
    try {
      const created = (await rpc('tools/call', { name: askRequesterTool.name, arguments: askInput() })).body.result as { taskId: string };
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
    const answer = await rpc('tools/call', { name: askRequesterTool.name, arguments: askInput() });
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
    const input = askInput();
    const taskId = (await rpc('tools/call', { name: askRequesterTool.name, arguments: input })).body.result!.taskId as string;
    const waiting = await waitForStatus(taskId, 'input_required');
    expect(Object.keys(waiting.inputRequests)).toEqual([QUESTION_KEY]);
    expect(waiting._meta[WEB_UI_META]).toBe(expectedWebUiLink(taskId));
    expect(waiting.inputRequests[QUESTION_KEY]).toMatchObject({ method: 'elicitation/create', params: { mode: 'form' } });

    const unknown = await rpc('tasks/update', { taskId, inputResponses: { nonsense: { action: 'accept', content: {} } } });
    expect(unknown.body.result).toMatchObject({ resultType: 'complete' });
    const misfit = await rpc('tasks/update', {
      taskId,
      inputResponses: { [QUESTION_KEY]: { action: 'accept', content: { decision: 'perhaps' } } },
    });
    expect(misfit.body.error?.code).toBe(-32602);
    expect(misfit.body.error?.message).toMatch(/decision/);
    const after = (await rpc('tasks/get', { taskId })).body.result!;
    expect(after.status).toBe('input_required');
    expect(after.inputRequests).toEqual(waiting.inputRequests);

    await rpc('tasks/update', { taskId, inputResponses: { [QUESTION_KEY]: { action: 'accept', content: { decision: 'approve' } } } });
    // An answered key is not outstanding any more: answering it again is ignored.
    const again = await rpc('tasks/update', {
      taskId,
      inputResponses: { [QUESTION_KEY]: { action: 'accept', content: { decision: 'reject' } } },
    });
    expect(again.body.result).toMatchObject({ resultType: 'complete' });
    const completed = await waitForStatus(taskId, 'completed');
    // The first answer decided it: the second, a rejection, would have made it a tool error.
    expect(completed.result.structuredContent).toEqual({ subject: input.subject, outcome: 'approved' });
    expect(await answersSent(stack.temporal, taskId)).toBe(1);
    expect(completed._meta[WEB_UI_META]).toBe(expectedWebUiLink(taskId));
    expect(completed.result._meta[WEB_UI_META]).toBe(expectedWebUiLink(taskId));
    // tasks/cancel on a terminal task is acknowledged and changes nothing.
    expect((await rpc('tasks/cancel', { taskId })).body.result).toMatchObject({ resultType: 'complete' });
    expect((await rpc('tasks/get', { taskId })).body.result!.status).toBe('completed');
  });

  test('two questions open at once are both in inputRequests; a partial answer leaves the other outstanding', async () => {
    const { subject } = askInput();
    const taskId = (await rpc('tools/call', { name: 'ask_both', arguments: { subject } })).body.result!.taskId as string;
    const waiting = await eventually(async () => {
      const task = (await rpc('tasks/get', { taskId })).body.result;
      return Object.keys(task?.inputRequests ?? {}).length === 2 ? task : undefined;
    }, 'both questions');
    expect(Object.keys(waiting!.inputRequests).sort()).toEqual(['first', 'second']);
    await rpc('tasks/update', { taskId, inputResponses: { first: { action: 'accept', content: { note: 'first note' } } } });
    const partial = await eventually(async () => {
      const task = (await rpc('tasks/get', { taskId })).body.result;
      return task?.status === 'input_required' && Object.keys(task.inputRequests).length === 1 ? task : undefined;
    }, 'one question left');
    expect(Object.keys(partial!.inputRequests)).toEqual(['second']);
    await rpc('tasks/update', { taskId, inputResponses: { second: { action: 'accept', content: { note: 'second note' } } } });
    const done = await waitForStatus(taskId, 'completed');
    expect(done.result.structuredContent).toEqual({ subject, first: 'first note', second: 'second note' });
  });

  test('a plain call of a tool that runs only as a task, without the extension, gets -32021', async () => {
    const answer = await rpc('tools/call', { name: 'report', arguments: { region: 'north' } }, { tasks: false });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe(-32021);
    expect(answer.body.error?.data).toEqual({ requiredCapabilities: { extensions: { [TASKS]: {} } } });
  });

  test('header checks: an Mcp-Name that disagrees with the body gets HTTP 400 with -32020', async () => {
    const answer = await rpc('tasks/get', { taskId: 'ask-00000000-0000-4000-8000-000000000000' }, { headers: { 'mcp-name': 'another' } });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe(-32020);
    const method = await rpc('tools/list', {}, { headers: { 'mcp-method': 'tasks/get' } });
    expect(method.status).toBe(400);
    expect(method.body.error?.code).toBe(-32020);
  });

  test('tasks/result and tasks/list do not exist in this generation (-32601); an unknown task is -32602', async () => {
    const taskId = 'ask-00000000-0000-4000-8000-000000000000';
    expect((await rpc('tasks/result', { taskId })).body.error?.code).toBe(-32601);
    expect((await rpc('tasks/list', {})).body.error?.code).toBe(-32601);
    expect((await rpc('tasks/get', { taskId })).body.error?.code).toBe(-32602);
  });

  test("subscriptions/listen acknowledges only the caller's task ids, stamps the subscription id, ends with the listen result", async () => {
    // Refused before it asks anything, the task runs to its end on its own.
    const input = askInput({ refuse: 'the subject is on hold' });
    const taskId = (await rpc('tools/call', { name: askRequesterTool.name, arguments: input })).body.result!.taskId as string;
    const unknown = 'ask-00000000-0000-4000-8000-000000000000';
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
      result: {
        isError: true,
        content: [{ type: 'text', text: expect.stringContaining(`"${input.subject}" was refused: ${input.refuse}`) }],
      },
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
    const forView = (await rpc('tools/call', { name: askRequesterTool.name, arguments: askInput() }, { capabilities: ui })).body.result!;
    expect(forView).toMatchObject({ resultType: 'complete', structuredContent: { pendingTask: { status: 'working' } } });
    expect(forView.isError).toBeUndefined();
    const view = await rpc('resources/read', { uri: 'ui://temporal-mcp-tasks/task-view.html' }, { capabilities: ui });
    expect(view.body.result!.contents[0]).toMatchObject({
      mimeType: 'text/html;profile=mcp-app',
      text: expect.stringMatching(/^<!doctype html>/i),
    });

    const mute = (await rpc('tools/call', { name: askRequesterTool.name, arguments: askInput() }, { capabilities: {} })).body.result!;
    expect(mute.isError).toBeUndefined();
    expect(mute.structuredContent.pendingTask).toMatchObject({ status: 'input_required', question: { key: QUESTION_KEY, mode: 'form' } });
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

/**
 * What the HTTP headers of a request must say, and what each kind of request is answered with, over the real HTTP
 * transport against the real Temporal dev server:
 * - 2026-07-28 `Mcp-Param-*` headers (SEP-2243): the task tools mark `taskId` with `x-mcp-header`, a real SDK v2 client
 *   mirrors it, and a call whose headers are missing or disagree with its arguments is refused (HTTP 400, -32020)
 *   before anything happens, for the built-in tools and for a tools file's own marks;
 * - `subscriptions/listen` naming a version not served (HTTP 400, -32022, as the SDK answers its own requests), and a
 *   listen without client capabilities on stdio (-32602, a malformed envelope, not -32021);
 * - 2025-11-25 sessions: a call of a direct tool that sends nothing on its stream is answered with plain JSON, one that
 *   may put a form or wait is streamed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client as Mcp2026Client, StreamableHTTPClientTransport as Mcp2026HttpTransport } from '@modelcontextprotocol/client';
import { MCP2026_PROTOCOL_VERSIONS } from '../../src/mcp/mcp2026/envelope';
import { loadToolsFile } from '../../src/mcp/tools/config-file';
import { ADOPT_ONLY_META, IDEMPOTENCY_KEY_META } from '../../src/contract/wire';
import { ROOT } from '../helpers/dev-server';
import { startStack } from '../helpers/test-stack';
import { ECHO_WORKFLOW_TYPE, QUESTION_KEY } from '../fixtures/definitions';
import { askInput, FIXTURES, type FixtureStack } from '../fixtures/stack';
import { APPROVE } from '../helpers/mcp';
import { serverEnv } from '../helpers/processes';
import { eventually } from '../helpers/temporal';

const TASKS = 'io.modelcontextprotocol/tasks';
let stack: FixtureStack;

beforeAll(async () => {
  // A tools file may mark arguments of its own: the region of this report is mirrored into Mcp-Param-Region.
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'headers-')), 'tools.yaml');
  writeFileSync(
    file,
    [
      'tools:',
      '  - name: regional_report',
      '    description: Echoes the region it is given.',
      `    workflowType: ${ECHO_WORKFLOW_TYPE}`,
      '    inputSchema:',
      '      type: object',
      '      properties:',
      '        region: { type: string, enum: [north, south], description: The region., x-mcp-header: Region }',
      '      required: [region]',
      '',
    ].join('\n'),
  );
  stack = await startStack({ name: 'headers', app: FIXTURES, bridge: { tools: [...FIXTURES.tools, ...loadToolsFile(file)] }, http: true });
});

afterAll(() => stack?.stop());

interface Answer {
  status: number;
  contentType: string;
  body: { id?: unknown; result?: Record<string, any>; error?: { code: number; message: string; data?: any } };
}

/** Reads a JSON answer, or the last JSON-RPC message of an SSE stream. */
async function read(response: Response): Promise<Answer> {
  const text = await response.text();
  const contentType = response.headers.get('content-type') ?? '';
  const data = contentType.startsWith('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .filter((line) => line.startsWith('{'))
        .pop()
    : text;
  return { status: response.status, contentType, body: data ? JSON.parse(data) : {} };
}

/**
 * A 2026-07-28 request written by hand: the standard headers of a conforming client, and exactly the `Mcp-Param-*`
 * headers given in `headers` (nothing mirrored on its own). `meta` is added to the envelope.
 */
async function send2026(
  method: string,
  params: Record<string, unknown>,
  options: { headers?: Record<string, string>; meta?: Record<string, unknown>; version?: string } = {},
): Promise<Answer> {
  const version = options.version ?? '2026-07-28';
  const name = (params.taskId ?? params.name) as string | undefined;
  const response = await fetch(stack.http.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': version,
      'mcp-method': method,
      ...(name !== undefined && { 'mcp-name': name }),
      ...options.headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': version,
          'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} }, extensions: { [TASKS]: {} } },
          ...options.meta,
        },
      },
    }),
  });
  return read(response);
}

/** A new task of `ask_requester`, waiting for its requester's answer (its question {@link QUESTION_KEY}). */
async function waitingTask(): Promise<string> {
  const created = await send2026('tools/call', { name: 'ask_requester', arguments: askInput() });
  const taskId = created.body.result!.taskId as string;
  await eventually(
    async () => ((await send2026('tasks/get', { taskId })).body.result?.status === 'input_required' ? true : undefined),
    'the task to ask its question',
    60_000,
  );
  return taskId;
}

const unknownTask = 'ask-00000000-0000-4000-8000-000000000000';
const base64 = (text: string) => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;
const respondArgs = (taskId: string) => ({ taskId, action: 'accept', content: { decision: 'approve', comment: 'fine' } });

describe('Mcp-Param-* headers (2026-07-28, SEP-2243)', () => {
  test('tools/list: task_status, task_respond and approvals_answer mark taskId with x-mcp-header "TaskId"', async () => {
    const listed = await send2026('tools/list', {});
    const tools = new Map((listed.body.result!.tools as Array<{ name: string; inputSchema: any }>).map((tool) => [tool.name, tool]));
    for (const name of ['task_status', 'task_respond', 'approvals_answer', 'task_result', 'task_cancel']) {
      expect({ name, mark: tools.get(name)?.inputSchema.properties.taskId['x-mcp-header'] }).toEqual({ name, mark: 'TaskId' });
    }
    expect(tools.get('regional_report')?.inputSchema.properties.region['x-mcp-header']).toBe('Region');
    // Nothing else is marked: a client sends no header the server does not expect.
    const marked = [...tools.values()].filter((tool) => JSON.stringify(tool.inputSchema).includes('x-mcp-header')).map((tool) => tool.name);
    expect(marked.sort()).toEqual(['approvals_answer', 'regional_report', 'task_cancel', 'task_respond', 'task_result', 'task_status']);
  });

  test('the SDK v2 client mirrors taskId into Mcp-Param-TaskId and is served; with a cold cache it recovers from the -32020', async () => {
    const taskId = (await send2026('tools/call', { name: 'ask_requester', arguments: askInput() })).body.result!.taskId as string;
    const sent: Array<{ method: string | null; taskIdHeader: string | null; status: number }> = [];
    const recording: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const headers = new Headers(input instanceof Request ? input.headers : init?.headers);
      sent.push({ method: headers.get('mcp-method'), taskIdHeader: headers.get('mcp-param-taskid'), status: response.status });
      return response;
    };
    const connect = async () => {
      const client = new Mcp2026Client(
        { name: 'headers-test', version: '1.0.0' },
        { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } },
      );
      await client.connect(new Mcp2026HttpTransport(new URL(stack.http.url), { fetch: recording }));
      return client;
    };
    const listed = await connect();
    try {
      await listed.listTools();
      sent.length = 0;
      const status = await listed.callTool({ name: 'task_status', arguments: { taskId } });
      expect(status.isError).toBeFalsy();
      expect((status.structuredContent as { task: { taskId: string } }).task.taskId).toBe(taskId);
      expect(sent).toEqual([{ method: 'tools/call', taskIdHeader: taskId, status: 200 }]);
    } finally {
      await listed.close();
    }

    // A client that has not listed the tools yet sends no header: refused with -32020, it lists them and retries.
    const cold = await connect();
    try {
      sent.length = 0;
      const status = await cold.callTool({ name: 'task_status', arguments: { taskId } });
      expect(status.isError).toBeFalsy();
      expect(sent.map((request) => request.method)).toContain('tools/list');
      expect(sent[0]).toEqual({ method: 'tools/call', taskIdHeader: null, status: 400 });
      expect(sent[sent.length - 1]).toEqual({ method: 'tools/call', taskIdHeader: taskId, status: 200 });
    } finally {
      await cold.close();
    }
    await send2026('tasks/cancel', { taskId });
  });

  test('task_respond whose Mcp-Param-TaskId is missing, names another task, is malformed or not plain ASCII: HTTP 400, -32020, nothing recorded', async () => {
    const taskId = await waitingTask();
    const other = await waitingTask();
    const call = { name: 'task_respond', arguments: respondArgs(taskId) };
    const refusals = [
      await send2026('tools/call', call),
      await send2026('tools/call', call, { headers: { 'mcp-param-taskid': other } }),
      await send2026('tools/call', call, { headers: { 'mcp-param-taskid': '=?base64?not base64!?=' } }),
      await send2026('tools/call', call, { headers: { 'mcp-param-taskid': base64(other) } }),
      await send2026('tools/call', call, { headers: { 'mcp-param-taskid': `${taskId}\u00e9` } }),
    ];
    for (const refusal of refusals) {
      expect({ status: refusal.status, code: refusal.body.error?.code, id: refusal.body.id }).toEqual({ status: 400, code: -32020, id: 7 });
      expect(refusal.body.result).toBeUndefined();
    }
    expect(refusals[0].body.error?.message).toMatch(/Mcp-Param-TaskId/);
    // Nothing was recorded: the task still waits for the same question.
    const still = await send2026('tasks/get', { taskId });
    expect(still.body.result).toMatchObject({ status: 'input_required', inputRequests: { [QUESTION_KEY]: expect.anything() } });

    // The same value sent as base64 (the sentinel any value may use) is the value: served, and the answer recorded.
    const accepted = await send2026('tools/call', call, { headers: { 'mcp-param-taskid': base64(taskId) } });
    expect(accepted.status).toBe(200);
    expect(accepted.body.result?.isError).toBeFalsy();
    expect((await send2026('tasks/get', { taskId })).body.result?.status).not.toBe('input_required');
    // Header names compare case-insensitively; the plain value is served too.
    const plain = await send2026(
      'tools/call',
      { name: 'task_respond', arguments: respondArgs(other) },
      { headers: { 'MCP-PARAM-TASKID': other } },
    );
    expect(plain.status).toBe(200);
    expect(plain.body.result?.isError).toBeFalsy();
  });

  test('an argument that is absent (or null) is expected in no header: the call is served and its arguments judged', async () => {
    const missing = await send2026('tools/call', { name: 'task_status', arguments: {} });
    expect(missing.status).toBe(200);
    expect(missing.body.result).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/Invalid arguments for tool task_status/) }],
    });
    const nulled = await send2026('tools/call', {
      name: 'approvals_answer',
      arguments: { taskId: null, key: 'approval', action: 'accept' },
    });
    expect(nulled.status).toBe(200);
    expect(nulled.body.result?.isError).toBe(true);
  });

  test("a tools file's own mark: a start without Mcp-Param-Region is refused before any task exists", async () => {
    const key = `headers-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const call = { name: 'regional_report', arguments: { region: 'north' } };
    const refused = await send2026('tools/call', call, { meta: { [IDEMPOTENCY_KEY_META]: key } });
    expect({ status: refused.status, code: refused.body.error?.code }).toEqual({ status: 400, code: -32020 });
    const wrong = await send2026('tools/call', call, { meta: { [IDEMPOTENCY_KEY_META]: key }, headers: { 'mcp-param-region': 'south' } });
    expect({ status: wrong.status, code: wrong.body.error?.code }).toEqual({ status: 400, code: -32020 });
    // Adopting the task of that key finds none: the refused calls started nothing.
    const adopt = await send2026('tools/call', call, {
      meta: { [IDEMPOTENCY_KEY_META]: key, [ADOPT_ONLY_META]: true },
      headers: { 'mcp-param-region': 'north' },
    });
    expect(adopt.body.error?.code).toBe(-32602);
    const started = await send2026('tools/call', call, { meta: { [IDEMPOTENCY_KEY_META]: key }, headers: { 'mcp-param-region': 'north' } });
    expect(started.status).toBe(200);
    expect(started.body.result).toMatchObject({ resultType: 'task', status: 'working' });
  });
});

describe('subscriptions/listen: the version and the envelope', () => {
  test('over HTTP, a version not served is HTTP 400 with -32022 and the versions served, as the SDK answers its own requests', async () => {
    const listen = await send2026('subscriptions/listen', { notifications: { taskIds: [] } }, { version: '2099-01-01' });
    expect(listen.status).toBe(400);
    expect(listen.contentType).toMatch(/^application\/json/);
    expect(listen.body.error).toMatchObject({ code: -32022, data: { supported: [...MCP2026_PROTOCOL_VERSIONS], requested: '2099-01-01' } });
    const sdk = await send2026('tools/list', {}, { version: '2099-01-01' });
    expect({ status: sdk.status, code: sdk.body.error?.code, supported: sdk.body.error?.data?.supported }).toEqual({
      status: listen.status,
      code: listen.body.error?.code,
      supported: listen.body.error?.data?.supported,
    });
    const discover = await send2026('server/discover', {});
    expect(discover.body.result?.supportedVersions).toEqual([...MCP2026_PROTOCOL_VERSIONS]);
  });

  test('over stdio, a listen without client capabilities is -32602 (malformed envelope), a version not served -32022', async () => {
    const child = spawn('npm', ['run', '-s', 'serve', '--', '--no-samples'], {
      cwd: ROOT,
      env: serverEnv(stack.taskQueue),
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const byId = new Map<unknown, { error?: { code: number; message: string; data?: any } }>();
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const message = JSON.parse(line);
      if (message.id !== undefined) byId.set(message.id, message);
    });
    const listen = (id: number, meta: Record<string, unknown>) =>
      child.stdin!.write(
        `${JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications: { taskIds: [] }, _meta: meta } })}\n`,
      );
    try {
      // The first message speaks 2026-07-28 (it decides the connection's generation) but declares no capabilities.
      listen(1, { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' });
      listen(2, { 'io.modelcontextprotocol/protocolVersion': '2099-01-01', 'io.modelcontextprotocol/clientCapabilities': {} });
      listen(3, { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} });
      await eventually(async () => (byId.size >= 3 ? true : undefined), 'three answers on stdout', 60_000);
      expect(byId.get(1)?.error).toMatchObject({ code: -32602, message: expect.stringMatching(/clientCapabilities/) });
      expect(byId.get(2)?.error).toMatchObject({
        code: -32022,
        data: { supported: [...MCP2026_PROTOCOL_VERSIONS], requested: '2099-01-01' },
      });
      expect(byId.get(3)?.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } });
    } finally {
      child.stdin!.end();
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once('exit', resolve)));
    }
  });
});

describe('2025-11-25 sessions: plain JSON for calls that send nothing on their stream', () => {
  /** Opens a session by hand (a client that can show forms) and returns a sender of its requests. */
  async function session(): Promise<(method: string, params: Record<string, unknown>) => Promise<Answer>> {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const opened = await fetch(stack.http.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: { elicitation: { form: {} } }, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    const sessionId = opened.headers.get('mcp-session-id')!;
    await opened.text();
    const inSession = { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    await fetch(stack.http.url, {
      method: 'POST',
      headers: inSession,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    let id = 1;
    return async (method, params) =>
      read(
        await fetch(stack.http.url, {
          method: 'POST',
          headers: inSession,
          body: JSON.stringify({ jsonrpc: '2.0', id: id++, method, params }),
        }),
      );
  }

  test('task_status, task_respond, task_result without a wait, approvals_inbox and approvals_answer with an action answer as JSON', async () => {
    const request = await session();
    const taskId = await waitingTask();
    const call = (name: string, args: Record<string, unknown>) => request('tools/call', { name, arguments: args });
    const answers = {
      task_status: await call('task_status', { taskId }),
      task_result: await call('task_result', { taskId, waitSeconds: 0 }),
      approvals_inbox: await call('approvals_inbox', {}),
      approvals_answer: await call('approvals_answer', {
        taskId: unknownTask,
        key: 'approval',
        action: 'accept',
        content: { decision: 'approve' },
      }),
      bad_arguments: await call('task_status', { taskId: 42 }),
      task_respond: await call('task_respond', { taskId, action: 'accept', content: APPROVE.content }),
    };
    for (const [name, answer] of Object.entries(answers)) {
      expect({ name, status: answer.status, contentType: answer.contentType }).toEqual({
        name,
        status: 200,
        contentType: 'application/json',
      });
      expect(answer.body.result?.content).toBeDefined();
    }
    expect((answers.task_status.body.result?.structuredContent as { task: { taskId: string } }).task.taskId).toBe(taskId);
    // approvals_answer about a task that does not exist is a tool error, answered at once all the same.
    expect(answers.approvals_answer.body.result?.isError).toBe(true);
    expect(answers.bad_arguments.body.result?.isError).toBe(true);
    expect(answers.task_respond.body.result?.isError).toBeFalsy();
  });

  test('approvals_answer without an action (a form put on the call) and task_result with a wait are streamed', async () => {
    const request = await session();
    const form = await request('tools/call', { name: 'approvals_answer', arguments: { taskId: unknownTask, key: 'approval' } });
    const wait = await request('tools/call', { name: 'task_result', arguments: { taskId: unknownTask, waitSeconds: 5 } });
    for (const answer of [form, wait]) {
      expect(answer.contentType).toMatch(/^text\/event-stream/);
      expect(answer.body.result?.isError).toBe(true);
    }
  });
});

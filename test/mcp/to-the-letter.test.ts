/**
 * Rules of the MCP texts (2025-11-25 tasks, the 2026-07-28 base, SEP-2663), each held on a real dev server through
 * real SDK clients (in memory for 2025-11-25) and hand-written 2026-07-28 requests over Streamable HTTP.
 */
import { getEventListeners } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  RELATED_TASK_META_KEY,
  type ElicitResult,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { z } from 'zod';
import { defineWorkflowTool } from 'temporal-mcp-tasks';
import { HistoryWatch } from '../../src/core/history-watch';
import { loadToolsFile, type ToolEntry } from '../../src/mcp/tools/config-file';
import { respondSignal } from '../../src/contract/task-contract';
import { refusalBackoffMs } from '../../src/mcp/mcp2025/server';
import { pollUntil, sleep } from '../../src/util/wait';
import { errorCodeOf, newMcpClient, ScriptedUser, taskResult, waitForTask } from '../helpers/mcp';
import { freePort, temporalDev } from '../helpers/dev-server';
import { mcp2026Request, type RawRequestOptions } from '../helpers/mcp2026';
import { startStack } from '../helpers/test-stack';
import { eventually, sendAnswer } from '../helpers/temporal';
import { ASK_BOTH_WORKFLOW_TYPE, ECHO_WORKFLOW_TYPE, QUESTION_KEY } from '../fixtures/definitions';
import { askInput, FIXTURES, type FixtureStack } from '../fixtures/stack';
import { askRequesterTool, toolsFileEntry } from '../fixtures/tools';

const region = { type: 'string', enum: ['north', 'south', 'east', 'west'], description: 'The region.' };
const holdMs = { type: 'integer', minimum: 0, maximum: 60_000, description: 'How long the report takes.' };

/** Tools of this file's own, declared in a tools file as a team declares workflows without code in the server. */
const FILE_TOOLS: ToolEntry[] = [
  {
    name: 'report',
    description: 'Echoes the region it is given, after `holdMs`; a workflow that knows nothing of MCP.',
    workflowType: ECHO_WORKFLOW_TYPE,
    taskSupport: 'required',
    inputSchema: { type: 'object', properties: { region, holdMs }, required: ['region'] },
  },
  {
    name: 'refresh_report',
    description: 'Echoes the region it is given, after the user confirms it (asked before anything starts).',
    workflowType: ECHO_WORKFLOW_TYPE,
    idPrefix: 'refresh',
    inputSchema: { type: 'object', properties: { region }, required: ['region'] },
    confirm: {
      message: 'Rebuild the {{region}} report now? It replaces the published one.',
      requestedSchema: {
        type: 'object',
        properties: { reason: { type: 'string', minLength: 3, description: 'Why it is rebuilt.' } },
        required: ['reason'],
      },
      into: 'confirmation',
    },
  },
  {
    name: 'ask_both',
    description: 'Asks the requester two things about a subject at once.',
    workflowType: ASK_BOTH_WORKFLOW_TYPE,
    idPrefix: 'both',
    inputSchema: { type: 'object', properties: { subject: { type: 'string', minLength: 1 } }, required: ['subject'] },
  },
];

/** A tool whose workflow returns a result the tool reports as a tool error, with the workflow's `reason` as its text. */
const refusedReport = defineWorkflowTool<{ reason: string }, { reason: string }>({
  name: 'refused_report',
  description: 'Echoes a reason, reported as a tool error.',
  inputSchema: z.object({ reason: z.string().min(1).describe('The text of the error.') }),
  workflowType: ECHO_WORKFLOW_TYPE,
  toResult: (output) => ({ content: [{ type: 'text', text: output.reason }], isError: true }),
});

/** `tools` as a tools file in a fresh temporary folder. */
function toolsFile(tools: ToolEntry[]): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'letter-tools-')), 'tools.json');
  writeFileSync(file, JSON.stringify({ tools }));
  return file;
}

let stack: FixtureStack;

/**
 * The principals of the requests over HTTP, one per test: the server lets each make 5 task requests a second
 * (MCP_TASK_OPS_PER_SECOND), so no test spends what another needs and none has to wait for it to come back.
 */
const HTTP_PRINCIPALS = ['letter', 'letter-http', 'bad-arguments', 'request-state', 'confirmation', 'json-get', 'tight-loop'] as const;
type HttpPrincipal = (typeof HTTP_PRINCIPALS)[number];
const TOKENS = Object.fromEntries(HTTP_PRINCIPALS.map((principal) => [principal, `${principal}-${randomUUID()}`])) as Record<
  HttpPrincipal,
  string
>;

beforeAll(async () => {
  const tools = [...FIXTURES.tools, ...loadToolsFile(toolsFile(FILE_TOOLS)), refusedReport];
  stack = await startStack({
    name: 'letter',
    app: FIXTURES,
    bridge: { tools, principal: 'letter' },
    servers: [
      {
        env: {
          MCP_TASK_OPS_PER_SECOND: '5',
          MCP_AUTH_TOKENS: HTTP_PRINCIPALS.map((principal) => `${principal}=${TOKENS[principal]}`).join(','),
        },
        // Of two `--tools` the last counts: this file's tools beside the fixtures' ask_requester.
        args: ['--tools', toolsFile([toolsFileEntry(askRequesterTool), ...FILE_TOOLS])],
      },
    ],
  });
}, 120_000);

afterAll(() => stack?.stop());

/** An SDK client on a fresh 2025-11-25 connection of the bridge, with every message the server sent it. */
async function connect(withElicitation = true) {
  const client = newMcpClient('letter', withElicitation);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const received: JSONRPCMessage[] = [];
  const mcp = stack.bridge.createMcp2025Server();
  await mcp.connect(serverTransport);
  await client.connect(clientTransport as Transport);
  const sdkHandler = clientTransport.onmessage!;
  clientTransport.onmessage = (message, extra) => {
    received.push(message);
    sdkHandler(message, extra);
  };
  return {
    client,
    received,
    close: async () => {
      await client.close();
      await mcp.close();
    },
  };
}

/** One 2026-07-28 request written by hand, as `principal`; `headers` replaces or (with undefined) removes standard headers. */
const rpc = (method: string, params: Record<string, unknown>, options: RawRequestOptions = {}, principal: HttpPrincipal = 'letter') =>
  mcp2026Request(stack.server.url, method, params, {
    ...options,
    headers: { authorization: `Bearer ${TOKENS[principal]}`, ...options.headers },
  });

describe('2025-11-25', () => {
  test('two questions open at once: dismissing the first and answering the second records the second once', async () => {
    const { client, close } = await connect();
    try {
      let dismissed = false;
      const user = new ScriptedUser((params): ElicitResult => {
        const key = (params._meta as Record<string, unknown>)['temporal-mcp-tasks/input-key'];
        if (!dismissed && user.asked.length === 1) {
          dismissed = true;
          return { action: 'cancel' };
        }
        return { action: 'accept', content: { note: `${String(key)} note` } };
      }).attach(client);
      const created = await client.request(
        { method: 'tools/call', params: { name: 'ask_both', arguments: askInput(), task: {} } },
        CreateTaskResultSchema,
      );
      // The first tasks/result asks the first question (dismissed), then the second (answered), then keeps blocking.
      const stop = new AbortController();
      let settled = false;
      const first = client.experimental.tasks
        .getTaskResult(created.task.taskId, CallToolResultSchema, { signal: stop.signal, timeout: 120_000 })
        .finally(() => (settled = true))
        .catch((error: Error) => error);
      // The second answer taken by the workflow: only the dismissed question is open.
      await pollUntil(
        async () => {
          const view = await stack.bridge.core.get(created.task.taskId, 'letter', { watch: false });
          return user.asked.length >= 2 && view.inputs.map((input) => input.key).join() === 'first' ? true : undefined;
        },
        { timeoutMs: 30_000, what: 'the second answer recorded, the first question still open' },
      );
      const keyOf = (index: number) => (user.asked[index]._meta as Record<string, unknown>)['temporal-mcp-tasks/input-key'];
      expect(user.asked.map((_, index) => keyOf(index))).toEqual(['first', 'second']);
      // The task is not terminal: the request still blocks.
      expect(settled).toBe(false);
      stop.abort();
      expect(await first).toBeInstanceOf(Error);
      // A later tasks/result asks only the question still open: the second answer was taken, once.
      const result = await taskResult(client, created.task.taskId);
      expect(result.isError).toBeFalsy();
      expect(user.asked.map((_, index) => keyOf(index))).toEqual(['first', 'second', 'first']);
    } finally {
      await close();
    }
  });

  test('two questions and a client that dismisses every question: one tasks/result asks each once, then neither again until the dismissal pause has passed', async () => {
    const { client, close } = await connect();
    try {
      const reads = () => {
        const { watched, fetched } = stack.bridge.core.readStats();
        return watched + fetched;
      };
      let readsAtSecondDismissal: number | undefined;
      const user = new ScriptedUser((): ElicitResult => {
        if (user.asked.length === 2) readsAtSecondDismissal = reads();
        return { action: 'cancel' };
      }).attach(client);
      const keyOf = (index: number) => (user.asked[index]._meta as Record<string, unknown>)['temporal-mcp-tasks/input-key'];
      const created = await client.request(
        { method: 'tools/call', params: { name: 'ask_both', arguments: askInput(), task: {} } },
        CreateTaskResultSchema,
      );
      const { taskId } = created.task;
      const pending = taskResult(client, taskId, 120_000);
      // Seen through to its end below; until then, a failed check must not leave it unhandled.
      pending.catch(() => undefined);
      // After the second dismissal the request reads the task again: a question asked again would go out from that
      // read, before this client's next round trip.
      await eventually(
        async () => (readsAtSecondDismissal !== undefined && reads() > readsAtSecondDismissal ? true : undefined),
        'the task read after both questions were dismissed',
      );
      await client.ping();
      expect(user.asked.map((_, index) => keyOf(index))).toEqual(['first', 'second']);

      // An event of the task wakes the request, which reads it again: still nothing is asked.
      const handle = stack.temporal.workflow.getHandle(taskId);
      const readsBeforeEvent = reads();
      await handle.signal(respondSignal, { key: 'not-asked', action: 'cancel' });
      await eventually(async () => (reads() > readsBeforeEvent ? true : undefined), 'the task read after its event');
      await client.ping();
      expect(user.asked).toHaveLength(2);

      // Answered elsewhere, the task ends and the same request returns its result, without asking anything more.
      await sendAnswer(handle, { key: 'first', action: 'accept', content: { note: 'first note' } });
      await sendAnswer(handle, { key: 'second', action: 'accept', content: { note: 'second note' } });
      expect((await pending).isError).toBeFalsy();
      expect(user.asked).toHaveLength(2);
    } finally {
      await close();
    }
  });

  test('a workflow that returns a result with isError is a failed task, with the error as its status message; tasks/result gives the result', async () => {
    const { client, close } = await connect();
    try {
      new ScriptedUser(() => ({ action: 'cancel' })).attach(client);
      const created = await client.request(
        { method: 'tools/call', params: { name: refusedReport.name, arguments: { reason: 'The region is on hold.' }, task: {} } },
        CreateTaskResultSchema,
      );
      const task = await waitForTask(client, created.task.taskId, (candidate) => candidate.status !== 'working');
      expect(task.status).toBe('failed');
      expect(task.statusMessage).toMatch(/on hold/);
      const result = await taskResult(client, created.task.taskId);
      expect(result.isError).toBe(true);
      expect(result._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: created.task.taskId });
    } finally {
      await close();
    }
  });

  test('progress notifications of a task carry the related-task _meta', async () => {
    const { client, received, close } = await connect();
    try {
      const created = await client.request(
        {
          method: 'tools/call',
          params: { name: 'report', arguments: { region: 'north', holdMs: 1000 }, task: {}, _meta: { progressToken: 'p-1' } },
        },
        CreateTaskResultSchema,
      );
      await taskResult(client, created.task.taskId);
      const progress = received.filter((message) => 'method' in message && message.method === 'notifications/progress');
      expect(progress.length).toBeGreaterThan(0);
      for (const message of progress) {
        expect((message as { params: { _meta?: Record<string, unknown> } }).params._meta?.[RELATED_TASK_META_KEY]).toEqual({
          taskId: created.task.taskId,
        });
      }
    } finally {
      await close();
    }
  });

  test('a task is found by tasks/list as soon as tasks/get can read it', async () => {
    const { client, close } = await connect();
    try {
      const created = await client.request(
        { method: 'tools/call', params: { name: 'report', arguments: { region: 'south' }, task: {} } },
        CreateTaskResultSchema,
      );
      const listed = await client.experimental.tasks.listTasks();
      expect(listed.tasks.map((task) => task.taskId)).toContain(created.task.taskId);
    } finally {
      await close();
    }
  });

  test('a client that keeps answering badly is asked again after a growing pause, not in a hot loop', async () => {
    const { client, close } = await connect();
    try {
      const askedAt: number[] = [];
      const user = new ScriptedUser(() => {
        askedAt.push(Date.now());
        return { action: 'accept', content: { decision: 'maybe' } };
      }).attach(client);
      const created = await client.request(
        { method: 'tools/call', params: { name: 'ask_requester', arguments: askInput(), task: {} } },
        CreateTaskResultSchema,
      );
      const waiting = taskResult(client, created.task.taskId, 120_000).catch(() => undefined);
      await pollUntil(() => (askedAt.length >= 4 ? true : undefined), { timeoutMs: 60_000, what: 'the question asked four times' });
      // Each bad answer is followed by a pause of 1, 2, 4 s… before the next question (milliseconds in a hot loop): the
      // gaps seen here can only be longer, never shorter, however slow the machine.
      const gaps = askedAt.slice(1, 4).map((at, index) => at - askedAt[index]);
      gaps.forEach((gap, index) => expect(gap).toBeGreaterThanOrEqual(0.9 * refusalBackoffMs(index + 1)));
      expect(user.asked[1].message).toMatch(/Your previous answer could not be used/);
      await client.experimental.tasks.cancelTask(created.task.taskId);
      await waiting;
    } finally {
      await close();
    }
  });

  test('a task-augmented call with a bad ttl or idempotency key is refused before its confirmation is asked', async () => {
    const { client, close } = await connect();
    try {
      const user = new ScriptedUser(() => ({ action: 'accept', content: { reason: 'late orders' } })).attach(client);
      const before = (await client.experimental.tasks.listTasks()).tasks.length;
      for (const params of [{ task: { ttl: -5 } }, { task: {}, _meta: { 'temporal-mcp-tasks/idempotency-key': 'has space' } }]) {
        const refused = await client
          .request(
            { method: 'tools/call', params: { name: 'refresh_report', arguments: { region: 'east' }, ...params } },
            CreateTaskResultSchema,
          )
          .catch((error: Error) => error);
        expect(refused).toMatchObject({ code: -32602 });
        // The message as the server wrote it, under the one prefix the client's SDK puts before it.
        expect((refused as Error).message).toMatch(/^MCP error -32602: (params\.task\.ttl|_meta\[)/);
      }
      expect(user.asked).toEqual([]);
      expect((await client.experimental.tasks.listTasks()).tasks.length).toBe(before);
    } finally {
      await close();
    }
  });

  test('a confirmation is asked on the call before anything starts; no starts nothing, yes starts the task with the answer', async () => {
    const { client, close } = await connect();
    try {
      let answer: ElicitResult = { action: 'decline' };
      const user = new ScriptedUser(() => answer).attach(client);
      const declined = await client.callTool({ name: 'refresh_report', arguments: { region: 'east' } }, CallToolResultSchema);
      expect(declined.isError).toBe(true);
      expect(JSON.stringify(declined.content)).toMatch(/Not started/);
      expect(user.asked[0].message).toBe('Rebuild the east report now? It replaces the published one.');
      const before = (await client.experimental.tasks.listTasks()).tasks.length;
      answer = { action: 'accept', content: { reason: 'late orders' } };
      const done = await client.callTool({ name: 'refresh_report', arguments: { region: 'east' } }, CallToolResultSchema);
      expect(done.structuredContent).toMatchObject({ region: 'east' });
      const after = (await client.experimental.tasks.listTasks()).tasks.length;
      expect(after).toBe(before + 1);
    } finally {
      await close();
    }
  });

  test('a client that cannot be asked gets the confirmation and answers it with confirm_start', async () => {
    const { client, close } = await connect(false);
    try {
      const pending = await client.callTool({ name: 'refresh_report', arguments: { region: 'west' } }, CallToolResultSchema);
      const token = (pending.structuredContent as { pendingConfirmation: { confirmation: string } }).pendingConfirmation.confirmation;
      const refused = await client.callTool({
        name: 'confirm_start',
        arguments: { confirmation: token, action: 'accept', content: { reason: 'x' } },
      });
      expect(refused.isError).toBe(true);
      const started = await client.callTool({
        name: 'confirm_start',
        arguments: { confirmation: token, action: 'accept', content: { reason: 'quarter closed' } },
      });
      const taskId = (started.structuredContent as { taskId: string }).taskId;
      const task = await waitForTask(client, taskId, (candidate) => candidate.status === 'completed');
      expect(task.status).toBe('completed');
      const forged = await client.callTool({ name: 'confirm_start', arguments: { confirmation: `${token}x`, action: 'accept' } });
      expect(forged.isError).toBe(true);
    } finally {
      await close();
    }
  });
});

describe('2025-11-25 over HTTP', () => {
  test('a task-augmented tools/call, tasks/get, tasks/list and tasks/cancel are answered with JSON; tasks/result streams', async () => {
    const seen: Array<{ method: string; contentType: string | null }> = [];
    const recording: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: string }) : undefined;
      if (init?.method === 'POST' && body?.method) seen.push({ method: body.method, contentType: response.headers.get('content-type') });
      return response;
    };
    const client = newMcpClient('letter-http');
    await client.connect(
      new StreamableHTTPClientTransport(new URL(stack.server.url), {
        fetch: recording,
        requestInit: { headers: { authorization: `Bearer ${TOKENS['letter-http']}` } },
      }),
    );
    try {
      const created = await client.request(
        { method: 'tools/call', params: { name: 'report', arguments: { region: 'north' }, task: {} } },
        CreateTaskResultSchema,
      );
      const taskId = created.task.taskId;
      expect((await client.experimental.tasks.getTask(taskId)).taskId).toBe(taskId);
      await client.experimental.tasks.listTasks();
      await taskResult(client, taskId);
      expect(await errorCodeOf(client.experimental.tasks.cancelTask(taskId))).toBe(-32602);
      const unknown = 'report-00000000-0000-4000-8000-000000000000';
      expect(await errorCodeOf(client.experimental.tasks.getTask(unknown))).toBe(-32602);
      // Answered with JSON (tasks/get) or on a stream (tasks/result), the message is the server's, prefixed once by the client.
      for (const refused of [() => client.experimental.tasks.getTask(unknown), () => client.experimental.tasks.getTaskResult(unknown)]) {
        expect(await refused().catch((error: Error) => error.message)).toBe(`MCP error -32602: Task not found: ${unknown}`);
      }
      const typeOf = (method: string) => [
        ...new Set(seen.filter((entry) => entry.method === method).map((entry) => entry.contentType?.split(';')[0])),
      ];
      expect(typeOf('tools/call')).toEqual(['application/json']);
      expect(typeOf('tasks/get')).toEqual(['application/json']);
      expect(typeOf('tasks/list')).toEqual(['application/json']);
      expect(typeOf('tasks/cancel')).toEqual(['application/json']);
      expect(typeOf('tasks/result')).toEqual(['text/event-stream']);
    } finally {
      await client.close();
    }
  });
});

describe('2026-07-28 over HTTP', () => {
  test('subscriptions/listen gets the standard header checks: HTTP 400 with -32020, and -32021 as HTTP 400', async () => {
    const listen = { notifications: { taskIds: ['ask-00000000-0000-4000-8000-000000000000'] } };
    const noMethod = await rpc('subscriptions/listen', listen, { headers: { 'mcp-method': undefined } });
    expect([noMethod.status, noMethod.body.error?.code]).toEqual([400, -32020]);
    const noVersion = await rpc('subscriptions/listen', listen, { headers: { 'mcp-protocol-version': undefined } });
    expect([noVersion.status, noVersion.body.error?.code]).toEqual([400, -32020]);
    const otherVersion = await rpc('subscriptions/listen', listen, { headers: { 'mcp-protocol-version': '2025-11-25' } });
    expect(otherVersion.status).toBe(400);
    const otherMethod = await rpc('subscriptions/listen', listen, { headers: { 'mcp-method': 'tools/list' } });
    expect([otherMethod.status, otherMethod.body.error?.code]).toEqual([400, -32020]);
    const noExtension = await rpc('subscriptions/listen', listen, { tasks: false });
    expect([noExtension.status, noExtension.body.error?.code]).toEqual([400, -32021]);
  });

  test('arguments that do not fit the input schema are a tool error, for task clients too', async () => {
    const answer = await rpc('tools/call', { name: 'ask_requester', arguments: { subject: 42 } }, {}, 'bad-arguments');
    expect(answer.status).toBe(200);
    expect(answer.body.result?.isError).toBe(true);
    expect(JSON.stringify(answer.body.result?.content)).toMatch(/Invalid arguments/);
  });

  test('a requestState is honoured only on a retry of the call it was issued for', async () => {
    const args = askInput();
    const send = (method: string, params: Record<string, unknown>, options: RawRequestOptions) =>
      rpc(method, params, options, 'request-state');
    const round = await send('tools/call', { name: 'ask_requester', arguments: args }, { tasks: false });
    expect(round.body.result?.resultType).toBe('input_required');
    const state = round.body.result!.requestState as string;
    const otherTool = await send('tools/call', { name: 'report', arguments: { region: 'north' }, requestState: state }, { tasks: false });
    expect(otherTool.body.error?.code).toBe(-32602);
    const otherArgs = await send(
      'tools/call',
      { name: 'ask_requester', arguments: { ...args, holdMs: 0 }, requestState: state },
      { tasks: false },
    );
    expect(otherArgs.body.error?.code).toBe(-32602);
    const same = await send(
      'tools/call',
      { name: 'ask_requester', arguments: args, requestState: state, inputResponses: { [QUESTION_KEY]: { action: 'decline' } } },
      { tasks: false },
    );
    expect(same.body.error).toBeUndefined();
  });

  test('a confirmation before start is an input_required round; its answer starts the task the client asked for', async () => {
    const send = (method: string, params: Record<string, unknown>) => rpc(method, params, {}, 'confirmation');
    const first = await send('tools/call', { name: 'refresh_report', arguments: { region: 'north' } });
    expect(first.body.result?.resultType).toBe('input_required');
    expect(first.body.result).not.toHaveProperty('taskId');
    const [key] = Object.keys(first.body.result!.inputRequests);
    const second = await send('tools/call', {
      name: 'refresh_report',
      arguments: { region: 'north' },
      requestState: first.body.result!.requestState,
      inputResponses: { [key]: { action: 'accept', content: { reason: 'audit' } } },
    });
    expect(second.body.result?.resultType).toBe('task');
    expect(second.body.result).not.toHaveProperty('requestState');
  });

  test('tasks/get is answered with a JSON response, not an SSE stream', async () => {
    const created = await rpc('tools/call', { name: 'report', arguments: { region: 'west' } }, {}, 'json-get');
    const read = await rpc('tasks/get', { taskId: created.body.result!.taskId }, {}, 'json-get');
    expect(read.body.result?.taskId).toBe(created.body.result!.taskId);
    expect(read.contentType).toMatch(/^application\/json/);
  });

  test('a principal polling in a tight loop is slowed with a retryable error', async () => {
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => rpc('tasks/get', { taskId: 'ask-00000000-0000-4000-8000-000000000000' }, {}, 'tight-loop')),
    );
    const seconds = (Date.now() - started) / 1000;
    const limited = answers.filter((answer) => answer.body.error?.data?.retryAfterMs !== undefined);
    // The server lets 5 a second through, after a burst of 10: no more than that in the time the 40 took, however long
    // that was here (all 40 without the limit).
    expect(answers.length - limited.length).toBeLessThanOrEqual(Math.floor(10 + 5 * seconds) + 1);
    for (const answer of limited) expect(answer.body.error?.data).toMatchObject({ retryable: true, retryAfterMs: expect.any(Number) });
  });
});

describe('the history watch', () => {
  test('long polls leave no abort listeners behind', async () => {
    const handle = await stack.temporal.workflow.start(ECHO_WORKFLOW_TYPE, {
      taskQueue: `${stack.taskQueue}-idle`,
      workflowId: `letter-watch-${Date.now()}`,
      args: [{ region: 'north' }],
    });
    const watch = new HistoryWatch(stack.temporal, { longPollMs: 100, lingerMs: 50 });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const stop = new AbortController();
      const waited = watch.changed(handle.workflowId, 1_000_000, 120_000, stop.signal);
      // Twelve long polls of 100 ms: a listener left behind by each would be twelve on the watch's signal.
      await pollUntil(() => (watch.stats().polls >= 12 ? true : undefined), { timeoutMs: 60_000, what: 'twelve long polls' });
      const signals = (watch as unknown as { watches: Map<string, { stop: AbortController }> }).watches;
      const own = signals.get(handle.workflowId)!;
      expect(getEventListeners(own.stop.signal, 'abort').length).toBeLessThanOrEqual(1);
      stop.abort();
      await waited;
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
      watch.close();
      await handle.terminate();
    }
  });

  test('watches whose Temporal went away close with their connection; no retry fires on the closed connection later', async () => {
    // A Temporal of its own, stopped under the watches: their polls fail and the client's retries are pending.
    const port = await freePort();
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-watch-'));
    await temporalDev('start', port, stateDir);
    const connection = await Connection.connect({ address: `127.0.0.1:${port}` });
    const client = new TemporalClient({ connection });
    const uncaught: Error[] = [];
    const onUncaught = (error: Error) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const watch = new HistoryWatch(client, { retryMs: 100 });
      const ids: string[] = [];
      for (let index = 0; index < 20; index++) {
        const started = await client.workflow.start('nothing', { taskQueue: 'nobody', workflowId: `letter-gone-${index}` });
        watch.keep(started.workflowId, started.firstExecutionRunId, 60_000);
        ids.push(started.workflowId);
      }
      await pollUntil(() => (ids.every((id) => watch.seen(id)?.healthy) ? true : undefined), {
        timeoutMs: 30_000,
        what: 'every watch to have read its history',
      });
      await temporalDev('stop', port, stateDir);
      // Every watch's poll has failed: each is between two attempts when the connection closes.
      await pollUntil(() => (ids.every((id) => watch.seen(id)?.healthy === false) ? true : undefined), {
        timeoutMs: 30_000,
        what: 'every watch to have lost Temporal',
      });
      watch.close();
      const polls = watch.stats().polls;
      await connection.close();
      // Nothing can be waited for here, only given the time to happen: a retry of a failed poll comes within a few
      // seconds (the watches' own pauses start at 100 ms, the client's at 170 ms), and a slower machine only
      // lengthens the window.
      await sleep(8_000);
      expect(watch.stats().polls).toBe(polls);
      expect(uncaught.map((error) => error.message)).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
      await temporalDev('stop', port, stateDir).catch(() => undefined);
    }
  }, 120_000);

  test('watches past the long polls Temporal holds at once back off: the others stay served, and the refusals are counted', async () => {
    // A Temporal that holds 4 long polls of a namespace at once (frontend.namespaceCount), under 8 watches.
    const port = await freePort();
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-watch-'));
    // Idle long polls held for 10 minutes: a served watch polls once, and no refused one takes its place meanwhile.
    await temporalDev('start', port, stateDir, { TEMPORAL_NAMESPACE_LONG_POLLS: '4', TEMPORAL_HISTORY_LONG_POLL: '10m' });
    const connection = await Connection.connect({ address: `127.0.0.1:${port}` });
    const client = new TemporalClient({ connection });
    const watch = new HistoryWatch(client, { retryMs: 200, longPollMs: 15 * 60_000 });
    try {
      const ids: string[] = [];
      for (let index = 0; index < 8; index++) {
        const started = await client.workflow.start('nothing', { taskQueue: 'nobody', workflowId: `letter-busy-${index}` });
        watch.keep(started.workflowId, started.firstExecutionRunId, 60_000);
        ids.push(started.workflowId);
      }
      const healthy = () => ids.filter((id) => watch.seen(id)?.healthy).length;
      await eventually(
        async () => (healthy() === 4 && watch.stats().failures >= 4 ? true : undefined),
        '4 watches served, the others refused',
      );
      // Refused ones wait twice as long at each refusal (200 ms, 400 ms, 800 ms…, ±20 %): refused a few times each, they
      // try less than once a second, where they would try five times a second without the back-off.
      await pollUntil(() => (watch.stats().failures >= 4 * 4 ? true : undefined), { timeoutMs: 60_000, what: 'four refusals each' });
      const before = { polls: watch.stats().polls, at: Date.now() };
      // A window measured on this clock: slowness only lengthens it, and the bound grows with it.
      await sleep(6_000);
      const attempts = watch.stats().polls - before.polls;
      const seconds = (Date.now() - before.at) / 1000;
      expect(attempts).toBeLessThan(4 * seconds);
      expect(healthy()).toBe(4);
    } finally {
      watch.close();
      await connection.close();
      await temporalDev('stop', port, stateDir).catch(() => undefined);
    }
  }, 120_000);
});

/**
 * A workflow written with Temporal's Python SDK (examples/python) served as an MCP task from a tools file: the Python
 * worker and the MCP server run as a user starts them, and a real MCP client drives the task over Streamable HTTP.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema, type ElicitResult, type Task } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@temporalio/client';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { answer, ApprovalClients, awaitInInbox, inbox, makePeople, textOf, writeTokensFile } from '../helpers/approvals';
import { freePort, ROOT } from '../helpers/dev-server';
import { connectOverHttp, getTask, ScriptedUser, taskResult, waitForTask, type Answerer } from '../helpers/mcp';
import {
  spawnHttpServer,
  spawnHttpServerOnFreePort,
  spawnPythonWorker,
  type HttpServerProcess,
  type SpawnedProcess,
} from '../helpers/processes';
import { pythonWorkerEnvironment } from '../helpers/python';
import { connectClient, eventually, sendAnswer, uniqueTaskQueue } from '../helpers/temporal';

// The Python worker polls a queue of its own; the server's default queue has no worker, so a task that runs at all
// ran on the queue the tools file names.
const pythonQueue = uniqueTaskQueue('python-worker');
const serverQueue = uniqueTaskQueue('python-server');
const ISO_INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const REQUEST = { item: 'Standing desk', amount: 349.9, requester: 'Ada' };

let worker: SpawnedProcess | undefined;
let server: HttpServerProcess | undefined;
let temporal: { client: Client; close(): Promise<void> } | undefined;
const clients: McpClient[] = [];

/** examples/python/tools.yaml with its task queue replaced by this file's own. */
function toolsFileFor(taskQueue: string): string {
  const declared = parseYaml(readFileSync(path.join(ROOT, 'examples/python/tools.yaml'), 'utf8')) as { tools: { taskQueue?: string }[] };
  for (const tool of declared.tools) tool.taskQueue = taskQueue;
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-python-')), 'tools.yaml');
  writeFileSync(file, stringifyYaml(declared));
  return file;
}

beforeAll(async () => {
  // Each process is kept as soon as it runs, so that afterAll stops it even when the other failed to start.
  const started = await Promise.allSettled([
    pythonWorkerEnvironment()
      .then((python) => spawnPythonWorker(python, 'examples/python/worker.py', pythonQueue))
      .then((spawned) => (worker = spawned)),
    freePort()
      // Questions are pushed as a server would push them (a short grace after a tasks/get): a tasks/result that comes
      // after a push waits for the pushed question's answer, so each question reaches the user once.
      .then((port) => spawnHttpServer(serverQueue, port, {}, ['--tools', toolsFileFor(pythonQueue)]))
      .then((spawned) => (server = spawned)),
    connectClient().then((connected) => (temporal = connected)),
  ]);
  const failed = started.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}, 300_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await server?.kill();
  await worker?.kill();
  await temporal?.close();
});

/** An MCP client on the spawned server whose user answers every question with `answer`. */
async function connect(answer: ElicitResult | Answerer): Promise<{ client: McpClient; user: ScriptedUser }> {
  const connected = await connectOverHttp(server!.url, 'python-workflow', { answer: typeof answer === 'function' ? answer : () => answer });
  clients.push(connected.client);
  return connected;
}

/** Calls request_purchase as a task and returns the created task. */
async function startPurchaseTask(client: McpClient): Promise<Task> {
  const created = await client.request(
    { method: 'tools/call', params: { name: 'request_purchase', arguments: REQUEST, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task;
}

test('request_purchase: the Python workflow asks its approval form over MCP and returns its structured result', async () => {
  const { client, user } = await connect({ action: 'accept', content: { decision: 'approve', comment: 'within budget' } });
  const { tools } = await client.listTools();
  expect(tools.find((tool) => tool.name === 'request_purchase')?.inputSchema.required).toEqual(['item', 'amount', 'requester']);

  const task = await startPurchaseTask(client);
  const result = await taskResult(client, task.taskId);

  expect(user.asked).toHaveLength(1);
  expect(user.asked[0]).toMatchObject({
    message: 'Approve buying Standing desk for 349.90 EUR, requested by Ada?',
    requestedSchema: {
      type: 'object',
      properties: { decision: { type: 'string', enum: ['approve', 'reject'] }, comment: { type: 'string' } },
      required: ['decision'],
    },
    _meta: { 'io.modelcontextprotocol/related-task': { taskId: task.taskId }, 'temporal-mcp-tasks/input-key': 'approval' },
  });
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toEqual({
    ...REQUEST,
    approved: true,
    decision: 'approve',
    comment: 'within budget',
    decidedAt: expect.stringMatching(ISO_INSTANT),
    decidedBy: expect.stringMatching(/^local:/),
  });
  expect((await getTask(client, task.taskId)).status).toBe('completed');
});

test('request_purchase: a declined approval form ends the Python workflow with approved false', async () => {
  const { client, user } = await connect({ action: 'decline' });
  const task = await startPurchaseTask(client);
  const result = await taskResult(client, task.taskId);

  expect(user.asked).toHaveLength(1);
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toEqual({
    ...REQUEST,
    approved: false,
    decision: 'declined',
    decidedAt: expect.stringMatching(ISO_INSTANT),
    decidedBy: expect.stringMatching(/^local:/),
  });
});

test('request_purchase: the Python workflow ignores answers for other keys, cancel, and content that does not fit its form', async () => {
  // The user answers only once the checks below are done: the server may put the question to them at any time.
  let release: () => void = () => undefined;
  const checked = new Promise<void>((resolve) => (release = resolve));
  const { client, user } = await connect(async () => {
    await checked;
    return { action: 'accept', content: { decision: 'reject', comment: 'buy it used' } };
  });
  const task = await startPurchaseTask(client);
  await waitForTask(client, task.taskId, (t) => t.status === 'input_required');

  // Signalled past the bridge, straight to the workflow, which must check them itself: sealed as a bridge seals them,
  // and one plain approval, as anyone who can write the namespace could send it, which must answer nothing.
  const handle = temporal!.client.workflow.getHandle(task.taskId);
  const answers: Parameters<typeof sendAnswer>[1][] = [
    { key: 'another', action: 'accept', content: { decision: 'approve' } },
    { key: 'approval', action: 'cancel' },
    { key: 'approval', action: 'accept', content: { decision: 'maybe' } },
    { key: 'approval', action: 'accept', content: { decision: 'approve', budget: 'unlimited' } },
  ];
  for (const answer of answers) {
    await sendAnswer(handle, answer);
  }
  await handle.signal('mcp.respond', { key: 'approval', action: 'accept', content: { decision: 'approve' } });
  await eventually(async () => {
    const { events } = await handle.fetchHistory();
    const signalled = events!.map((event) => !!event.workflowExecutionSignaledEventAttributes).lastIndexOf(true);
    return events!.slice(signalled).some((event) => event.workflowTaskCompletedEventAttributes) ? true : undefined;
  }, 'a workflow task completed after the last signal');

  const published = (await handle.describe()).memo?.mcpTask as { status: string; updatedAt: string; inputs: { key: string }[] };
  expect(published.status).toBe('input_required');
  expect(published.inputs.map((input) => input.key)).toEqual(['approval']);
  expect(new Date(published.updatedAt).toISOString()).toBe(published.updatedAt);
  expect((await getTask(client, task.taskId)).status).toBe('input_required');

  // The client polled tasks/get: the question is pushed on its GET stream. The tasks/result it sends before answering
  // waits for that answer rather than putting the question to the user a second time.
  await eventually(async () => (user.asked.length === 1 ? true : undefined), 'the pushed question');
  const pending = taskResult(client, task.taskId);
  release();
  const result = await pending;
  expect(user.asked).toHaveLength(1);
  expect(result.structuredContent).toMatchObject({ approved: false, decision: 'reject', comment: 'buy it used' });
});

test('request_budget: a Python workflow addresses its question to a role; the requester is not asked, a budget owner answers through the inbox', async () => {
  // ada asks (and holds the role: still not for her own request); ben owns budgets; cy has no role.
  const people = makePeople({ ada: 'budget-owner', ben: 'budget-owner', cy: '' });
  const withTokens = await spawnHttpServerOnFreePort(serverQueue, { MCP_AUTH_TOKENS_FILE: writeTokensFile(people) }, [
    '--tools',
    toolsFileFor(pythonQueue),
  ]);
  const approvals = new ApprovalClients();
  try {
    const [ada, ben, cy] = await Promise.all(
      [people.ada, people.ben, people.cy].map((person) => approvals.connect(withTokens.url, person)),
    );
    const created = await ada.request(
      { method: 'tools/call', params: { name: 'request_budget', arguments: { purpose: 'team offsite', amount: 4200 }, task: {} } },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    const waiting = await waitForTask(ada, taskId, (task) => task.statusMessage === 'Waiting for 1 approval by budget-owner');
    expect(waiting.status).toBe('working');

    const entry = await awaitInInbox(ben, taskId);
    expect(entry).toMatchObject({
      key: 'approval',
      required: 1,
      accepted: 0,
      message: 'Approve a budget of 4200.00 EUR for team offsite?',
    });
    expect((await inbox(ada)).some((item) => item.taskId === taskId)).toBe(false);
    expect(textOf(await answer(ada, taskId, 'approve'))).toBe(
      'This is your own request: someone else must approve it. Nothing was recorded.',
    );
    expect(textOf(await answer(cy, taskId, 'approve'))).toBe(
      `No question "approval" of task ${taskId} awaits your answer. Nothing was recorded.`,
    );
    expect(textOf(await answer(ben, taskId, 'maybe' as 'approve'))).toMatch(/does not fit the question.*Nothing was recorded/);

    const approved = await answer(ben, taskId, 'approve', { comment: 'fits the plan' });
    expect(approved.isError).toBeFalsy();
    expect(textOf(await answer(ben, taskId, 'approve'))).toMatch(
      /^(You have answered this question already|No question "approval" of task .* awaits your answer)\. Nothing was recorded\.$/,
    );
    const result = await taskResult(ada, taskId);
    expect(result.structuredContent).toEqual({
      purpose: 'team offsite',
      amount: 4200,
      approved: true,
      decidedBy: people.ben.principal,
      roles: ['budget-owner'],
      decidedAt: expect.stringMatching(ISO_INSTANT),
      comment: 'fits the plan',
    });
    expect((await inbox(ben)).some((item) => item.taskId === taskId)).toBe(false);
  } finally {
    await approvals.closeAll();
    await withTokens.kill();
  }
});

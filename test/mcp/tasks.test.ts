import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  type ElicitResult,
  RELATED_TASK_META_KEY,
  TaskStatusNotificationSchema,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { APP_MIME_TYPE, TASK_VIEW_URI, UI_EXTENSION } from '../../src/mcp/app/ui';
import type { Bridge } from '../../src/mcp/bridge';
import { pollUntil } from '../../src/util/wait';
import { respondSignal, TASK_STATE_MEMO } from '../../src/contract/task-contract';
import { QUESTION_KEY, type HoldResult } from '../fixtures/definitions';
import { activityCompletions, answersSent, askInput, FIXTURES, startAskTask, type FixtureStack } from '../fixtures/stack';
import { askRequesterTool, holdTool, releaseHoldTool, TOOLS_WITH_FIXTURES } from '../fixtures/tools';
import {
  APPROVE,
  FAST_TUNING,
  type Answerer,
  errorCodeOf,
  getTask,
  newMcpClient,
  REJECT,
  startTask,
  taskResult,
  waitForTask,
} from '../helpers/mcp';
import { startStack } from '../helpers/test-stack';
import { eventually, sendAnswer } from '../helpers/temporal';

let stack: FixtureStack;
/** How long a plain call may wait inline: long, so that a call that waited it out cannot pass for one that did not. */
const INLINE_BUDGET_MS = 60_000;

beforeAll(async () => {
  stack = await startStack({
    name: 'mcp-tasks',
    app: FIXTURES,
    bridge: { tools: [holdTool, releaseHoldTool, ...TOOLS_WITH_FIXTURES], tuning: { ...FAST_TUNING, inlineBudgetMs: INLINE_BUDGET_MS } },
  });
});

afterEach(() => stack.closeClients());

afterAll(() => stack?.stop());

/** A connected SDK client whose user answers with `answer`. */
const connect = (answer: Answerer = () => APPROVE, options: { principalBridge?: Bridge; elicitation?: boolean } = {}) =>
  stack.person('tasks-test', {
    ...((options.elicitation ?? true) && { answer }),
    ...(options.principalBridge && { bridge: options.principalBridge }),
  });

/**
 * A client of the same principal that cannot be asked anything: it polls without being offered the questions it sees
 * (a client that can be asked gets them pushed after the grace period, and a test counting questions would race it).
 */
async function observer() {
  return (await connect(undefined, { elicitation: false })).client;
}

/** The reads of tasks the file's bridge has made, from Temporal or from its watches. */
function reads(): number {
  const { watched, fetched } = stack.bridge.core.readStats();
  return watched + fetched;
}

/** Runs `work` with the worker stopped, then starts it again. */
async function withoutWorker(work: () => Promise<void>): Promise<void> {
  await stack.stopWorker();
  try {
    await work();
  } finally {
    await stack.startWorker();
  }
}

/** Arguments of `ask_requester` that refuse the request before anything is asked: a task that fails at once. */
const refused = () => askInput({ refuse: 'not in the catalogue' });

/** The text of a tool result's first content block. */
const textOf = (result: object) => (result as { content: Array<{ text: string }> }).content[0].text;

describe('task-augmented tools/call', () => {
  test('tools/list: ask_requester declares optional task support, an input schema with descriptions and an output schema', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === askRequesterTool.name)!;
    expect(tool.execution?.taskSupport).toBe('optional');
    expect(tool.inputSchema.required).toEqual(['subject']);
    expect((tool.inputSchema.properties as Record<string, { description?: string }>).subject.description).toMatch(/named in the question/);
    // The tool's own result, or the task that goes on (a plain call that answers before the end).
    const [own, pending] = (tool.outputSchema as unknown as { anyOf: Array<{ properties: Record<string, unknown> }> }).anyOf;
    expect(own.properties).toHaveProperty('outcome');
    expect(pending.properties).toHaveProperty('pendingTask');
    expect(tool._meta).toMatchObject({ ui: { resourceUri: TASK_VIEW_URI }, 'ui/resourceUri': TASK_VIEW_URI });
    expect(tools.find((t) => t.name === releaseHoldTool.name)?.execution?.taskSupport).toBe('forbidden');
  });

  test('resources: the task view is listed and read as one HTML document; another uri is -32002', async () => {
    const { client } = await connect();
    expect((await client.listResources()).resources).toEqual([expect.objectContaining({ uri: TASK_VIEW_URI, mimeType: APP_MIME_TYPE })]);
    const { contents } = await client.readResource({ uri: TASK_VIEW_URI });
    expect(contents).toHaveLength(1);
    const html = (contents[0] as { text: string }).text;
    expect(contents[0].mimeType).toBe(APP_MIME_TYPE);
    expect(html).toMatch(/^<!doctype html>/i);
    // Self-contained: no script or style loaded from elsewhere.
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=/i);
    expect(await errorCodeOf(client.readResource({ uri: 'ui://temporal-mcp-tasks/other.html' }))).toBe(-32002);
  });

  test('the approve path: working → input_required → elicitation on tasks/result → completed, answered once', async () => {
    const { client, user } = await connect();
    const notifications: Task[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
      notifications.push(notification.params as Task);
    });
    const input = askInput();
    const seen: Task['status'][] = [];
    let result: unknown;
    let taskId = '';
    for await (const message of client.experimental.tasks.callToolStream(
      { name: askRequesterTool.name, arguments: input },
      CallToolResultSchema,
      { task: { ttl: 120_000 }, timeout: 60_000 },
    )) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'taskStatus' && seen[seen.length - 1] !== message.task.status) seen.push(message.task.status);
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    expect(taskId).toMatch(/^ask-[0-9a-f-]{36}$/);
    expect(seen).toEqual(expect.arrayContaining(['input_required']));
    expect(user.asked).toHaveLength(1);
    expect(user.asked[0]._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId });
    expect(user.asked[0].message).toBe(`Approve ${input.subject}?`);
    expect((result as { isError?: boolean }).isError).toBeFalsy();
    expect(result).toMatchObject({
      structuredContent: { outcome: 'approved', subject: input.subject, comment: 'fine' },
      _meta: { [RELATED_TASK_META_KEY]: { taskId } },
    });
    expect((await getTask(client, taskId)).status).toBe('completed');
    expect(await answersSent(stack.temporal, taskId)).toBe(1);
    // The status changes the server observed were announced, in a legal order.
    const announced = notifications.filter((n) => n.taskId === taskId).map((n) => n.status);
    expect(announced).toEqual(expect.arrayContaining(['input_required', 'completed']));
    expect(announced[announced.length - 1]).toBe('completed');
  });

  test('CreateTaskResult: the task exists, with the granted ttl, poll interval and an immediate response for the model', async () => {
    const { client } = await connect();
    const input = askInput();
    const created = await client.request(
      { method: 'tools/call', params: { name: askRequesterTool.name, arguments: input, task: { ttl: 30 * 24 * 3600_000 } } },
      CreateTaskResultSchema,
    );
    // Capped at the namespace's retention (24 h on the dev server); without a request, the default applies.
    expect(created.task).toMatchObject({ status: 'working', ttl: 86_400_000, pollInterval: 200 });
    expect((await startAskTask(client)).ttl).toBe(3_600_000);
    expect(created._meta?.['io.modelcontextprotocol/model-immediate-response']).toBe(
      `Asking the requester about ${input.subject} (task ${created.task.taskId}).`,
    );
    const fetched = await getTask(client, created.task.taskId);
    expect(fetched.createdAt).toBe(created.task.createdAt);
    await client.experimental.tasks.cancelTask(created.task.taskId);
  });

  test('reject: a tool error with the reason, so the task is failed (2025-11-25)', async () => {
    const { client } = await connect(() => REJECT);
    const input = askInput();
    const task = await startAskTask(client, input);
    const result = await taskResult(client, task.taskId);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(`"${input.subject}" was rejected: wrong totals`);
    const read = await getTask(client, task.taskId);
    expect(read.status).toBe('failed');
    expect(read.statusMessage).toContain('was rejected: wrong totals');
    expect(await answersSent(stack.temporal, task.taskId)).toBe(1);
  });

  test('decline: the task fails with the decline as its reason', async () => {
    const { client } = await connect(() => ({ action: 'decline' }));
    const input = askInput();
    const task = await startAskTask(client, input);
    const result = await taskResult(client, task.taskId);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(`"${input.subject}" was declined`);
    expect((await getTask(client, task.taskId)).status).toBe('failed');
  });

  test('cancel: the request stays pending and is asked again on the next tasks/result', async () => {
    let readsAtDismissal: number | undefined;
    const { client, user } = await connect((_, index) => {
      if (index > 0) return APPROVE;
      readsAtDismissal = reads();
      return { action: 'cancel' };
    });
    const quiet = await observer();
    const task = await startAskTask(client);
    await waitForTask(quiet, task.taskId, (t) => t.status === 'input_required');
    // The first tasks/result asks once, is dismissed, and keeps blocking without asking again.
    const stop = new AbortController();
    let settled = false;
    const first = client.experimental.tasks
      .getTaskResult(task.taskId, CallToolResultSchema, { signal: stop.signal, timeout: 60_000 })
      .finally(() => (settled = true))
      .catch((error: Error) => error);
    // After the dismissal the request reads the task again, finds only the dismissed question, and waits for the
    // task's next event: a question asked again would go out from that read, before this client's next round trip.
    await pollUntil(() => (readsAtDismissal !== undefined && reads() > readsAtDismissal ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the task read again after the dismissal',
    });
    await client.ping();
    expect(user.asked).toHaveLength(1);
    expect(settled).toBe(false);
    stop.abort();
    expect(await first).toBeInstanceOf(Error);
    expect((await getTask(quiet, task.taskId)).status).toBe('input_required');
    const result = await taskResult(client, task.taskId);
    expect(user.asked).toHaveLength(2);
    expect(result.structuredContent).toMatchObject({ outcome: 'approved' });
  });

  test('a refusal before any question: the task is failed with the reason as its status message; tasks/result gives the isError result', async () => {
    const { client, user } = await connect();
    const input = refused();
    const task = await startAskTask(client, input);
    const result = await taskResult(client, task.taskId);
    expect(result.isError).toBe(true);
    expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringContaining(`was refused: ${input.refuse}`) });
    // MCP 2025-11-25: a tool result with isError makes the task failed, whatever way the workflow ended.
    const read = await getTask(client, task.taskId);
    expect(read.status).toBe('failed');
    expect(read.statusMessage).toContain(`was refused: ${input.refuse}`);
    expect(user.asked).toHaveLength(0);
  });

  test('a held task stays working with its statusMessage and offers its release; release_hold ends the hold once', async () => {
    const { client } = await connect();
    const subject = `order ${Date.now()}`;
    const task = await startTask(client, holdTool.name, { subject, holdMs: 86_400_000 });
    const pending = taskResult(client, task.taskId, 60_000);
    const waiting = await waitForTask(client, task.taskId, (t) => t.status === 'working' && /is held/.test(t.statusMessage ?? ''));
    expect(waiting.statusMessage).toBe(`"${subject}" is held`);
    // The workflow offers the release as an action (the task view shows it as a button).
    const status = await client.callTool({ name: 'task_status', arguments: { taskId: task.taskId } });
    expect((status.structuredContent as { actions: unknown[] }).actions).toEqual([{ tool: releaseHoldTool.name, title: 'Release now' }]);

    const released = await client.callTool({ name: releaseHoldTool.name, arguments: { taskId: task.taskId } });
    expect(released.isError).toBeFalsy();
    expect(released.structuredContent).toMatchObject({ principal: stack.bridge.localPrincipal, via: releaseHoldTool.name });

    const result = await pending;
    expect(result.structuredContent as unknown as HoldResult).toMatchObject({
      subject,
      refused: [],
      effect: `"${subject}" was carried out`,
    });
    // Releasing again gets the same release, and the effect stays carried out once.
    const again = await client.callTool({ name: releaseHoldTool.name, arguments: { taskId: task.taskId } });
    expect(again.structuredContent).toEqual(released.structuredContent);
    expect((await stack.temporal.workflow.getHandle(task.taskId).result()) as HoldResult).toEqual(result.structuredContent);
  });

  test("release_hold: another principal's task is refused with -32602, and nothing is asked", async () => {
    const principal = `release-${Date.now()}`;
    const own = await stack.addBridge({ principal, tools: [holdTool, releaseHoldTool, ...TOOLS_WITH_FIXTURES] });
    const mine = await connect(() => ({ action: 'cancel' }), { principalBridge: own });
    const other = await connect();
    try {
      const task = await startTask(mine.client, holdTool.name, { subject: 'not yours', holdMs: 86_400_000 });
      await waitForTask(mine.client, task.taskId, (t) => /is held/.test(t.statusMessage ?? ''));
      const release = await other.client
        .callTool({ name: releaseHoldTool.name, arguments: { taskId: task.taskId } })
        .catch((error: { code?: number }) => error);
      expect((release as { code?: number }).code).toBe(ErrorCode.InvalidParams);
      expect(other.user.asked).toHaveLength(0);
      expect((await getTask(mine.client, task.taskId)).statusMessage).toBe('"not yours" is held');
    } finally {
      await stack.terminateRunningOf(principal);
    }
  });

  test('a plain call from a client that cannot be asked returns at the question, not as an error, and task_respond answers it', async () => {
    const { client } = await connect(undefined, { elicitation: false });
    const started = Date.now();
    const result = await client.callTool({ name: askRequesterTool.name, arguments: askInput() }, undefined, {
      timeout: 2 * INLINE_BUDGET_MS,
    });
    // Answered at the question, not at the end of the budget: well before it, however slow this machine is.
    expect(Date.now() - started).toBeLessThan(INLINE_BUDGET_MS / 2);
    expect(result.isError).toBeFalsy();
    const { pendingTask } = result.structuredContent as { pendingTask: { taskId: string; status: string; question: Record<string, any> } };
    expect(pendingTask).toMatchObject({ status: 'input_required', question: { key: QUESTION_KEY, mode: 'form' } });
    expect(pendingTask.question.requestedSchema.required).toEqual(['decision']);
    expect(textOf(result)).toMatch(/task_respond.*decision \(one of approve, reject\), required/);
    const answered = await client.callTool({
      name: 'task_respond',
      arguments: { taskId: pendingTask.taskId, key: QUESTION_KEY, action: 'accept', content: { decision: 'approve' } },
    });
    expect(answered.isError).toBeFalsy();
    const done = await client.callTool({ name: 'task_result', arguments: { taskId: pendingTask.taskId, waitSeconds: 30 } });
    expect(done.structuredContent).toMatchObject({ outcome: 'approved' });
  });

  test('a plain call from a host that renders Apps answers at once with the task, for the task view to follow', async () => {
    const client = new McpClient(
      { name: 'apps-host', version: '1.0.0' },
      { capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } } },
    );
    await stack.connect(client);
    const result = await client.callTool({ name: askRequesterTool.name, arguments: askInput() });
    expect(result.isError).toBeFalsy();
    const { pendingTask } = result.structuredContent as { pendingTask: { taskId: string; status: string } };
    expect(pendingTask.status).toBe('working');
    expect(result._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: pendingTask.taskId });
    await client.callTool({ name: 'task_cancel', arguments: { taskId: pendingTask.taskId } });
  });

  test('a plain call (no task) runs the workflow to the end, asking its question inline', async () => {
    const { client, user } = await connect();
    const result = await client.callTool({ name: askRequesterTool.name, arguments: askInput() }, undefined, { timeout: 60_000 });
    expect(result.structuredContent).toMatchObject({ outcome: 'approved' });
    expect(user.asked).toHaveLength(1);
  });
});

describe('input_required answers', () => {
  test('an answer that does not fit the form is asked again with the reason, and the task stays input_required', async () => {
    const { client, user } = await connect((_, index) => (index === 0 ? { action: 'accept', content: { decision: 'perhaps' } } : APPROVE));
    const task = await startAskTask(client);
    const result = await taskResult(client, task.taskId);
    expect(user.asked).toHaveLength(2);
    expect(user.asked[1].message).toMatch(/previous answer could not be used/);
    expect(result.structuredContent).toMatchObject({ outcome: 'approved' });
  });

  test('tasks/result never gives up on bad answers: it asks again until one fits, then returns the result', async () => {
    const { client, user } = await connect((_, index) => (index < 4 ? { action: 'accept', content: { decision: 'perhaps' } } : APPROVE));
    const task = await startAskTask(client);
    const result = await taskResult(client, task.taskId);
    expect(user.asked).toHaveLength(5);
    expect(result.structuredContent).toMatchObject({ outcome: 'approved' });
  });

  test('a client that only polls tasks/get receives the elicitation as a server request and finishes the task', async () => {
    const { client, user } = await connect();
    const task = await startAskTask(client);
    const done = await waitForTask(client, task.taskId, (t) => t.status === 'completed', 30_000);
    expect(done.status).toBe('completed');
    expect(user.asked).toHaveLength(1);
    expect(user.asked[0]._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: task.taskId });
  });

  test('one answer per input request: a second connection polling the same task is not asked after the first answered', async () => {
    const first = await connect();
    const second = await connect();
    const task = await startAskTask(first.client);
    await waitForTask(await observer(), task.taskId, (t) => t.status === 'input_required');
    const result = await taskResult(first.client, task.taskId);
    await waitForTask(second.client, task.taskId, (t) => t.status === 'completed');
    expect(result.structuredContent).toMatchObject({ outcome: 'approved' });
    expect(first.user.asked.length + second.user.asked.length).toBe(1);
  });
});

describe('tasks/* errors and state', () => {
  test.each([
    ['tasks/get', (c: ReturnType<typeof newMcpClient>, id: string) => getTask(c, id)],
    ['tasks/result', (c: ReturnType<typeof newMcpClient>, id: string) => taskResult(c, id)],
    ['tasks/cancel', (c: ReturnType<typeof newMcpClient>, id: string) => c.experimental.tasks.cancelTask(id)],
  ])('%s: an unknown task id gets -32602', async (_, call) => {
    const { client } = await connect();
    expect(await errorCodeOf(call(client, 'ask-00000000-0000-4000-8000-000000000000'))).toBe(ErrorCode.InvalidParams);
    expect(await errorCodeOf(call(client, 'not a task id'))).toBe(ErrorCode.InvalidParams);
  });

  test('tasks/cancel: a working task becomes cancelled at once and stays cancelled; tasks/result reports the cancellation', async () => {
    const { client, user } = await connect();
    const task = await startAskTask(client);
    await waitForTask(await observer(), task.taskId, (t) => t.status === 'input_required');
    const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled.status).toBe('cancelled');
    expect((await getTask(client, task.taskId)).status).toBe('cancelled');
    await eventually(
      async () => ((await stack.temporal.workflow.getHandle(task.taskId).describe()).status.name === 'CANCELLED' ? true : undefined),
      'the workflow to close',
    );
    expect((await getTask(client, task.taskId)).status).toBe('cancelled');
    expect(await errorCodeOf(taskResult(client, task.taskId))).toBe(ErrorCode.InternalError);
    expect(user.asked).toHaveLength(0);
  });

  test('tasks/cancel after a step was done: tasks/get and tasks/result give what the workflow reports of its wind-down', async () => {
    const { client, user } = await connect(() => new Promise<ElicitResult>(() => undefined));
    const input = askInput({ noteSteps: true });
    const task = await startAskTask(client, input);
    // The question is asked on this tasks/result's stream (and left unanswered); the request ends once the task reads cancelled.
    const waiting = taskResult(client, task.taskId).then(
      () => undefined,
      (error: unknown) => error,
    );
    await eventually(async () => (user.asked.length === 1 ? true : undefined), 'the question on tasks/result');
    expect(await activityCompletions(stack.temporal, task.taskId, 'noteStep')).toBe(1);

    expect((await client.experimental.tasks.cancelTask(task.taskId)).status).toBe('cancelled');
    const report = `Cancelled before "${input.subject}" was decided; nothing was done about "${input.subject}".`;
    const seen: Task[] = [];
    const settled = await waitForTask(client, task.taskId, (t) => {
      seen.push(t);
      return t.statusMessage === report;
    });
    // Cancelled from the cancel on, whatever the message said meanwhile.
    expect(new Set(seen.map((t) => t.status))).toEqual(new Set(['cancelled']));
    expect(settled.status).toBe('cancelled');
    expect(await waiting).toMatchObject({ code: ErrorCode.InternalError });

    const error = await taskResult(client, task.taskId).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toMatchObject({ code: ErrorCode.InternalError, message: expect.stringContaining(`Task ${task.taskId}: ${report}`) });
    expect(await activityCompletions(stack.temporal, task.taskId, 'noteStep')).toBe(1);
    expect((await stack.temporal.workflow.getHandle(task.taskId).describe()).status.name).toBe('CANCELLED');
    expect(user.asked).toHaveLength(1);
  });

  test('tasks/cancel: a terminal task gets -32602 and stays as it was', async () => {
    const { client } = await connect();
    const task = await startAskTask(client, refused());
    await waitForTask(client, task.taskId, (t) => t.status === 'failed');
    expect(await errorCodeOf(client.experimental.tasks.cancelTask(task.taskId))).toBe(ErrorCode.InvalidParams);
    expect((await getTask(client, task.taskId)).status).toBe('failed');
  });

  test('a cancelled task stays cancelled even if the workflow finishes its work afterwards', async () => {
    const { client } = await connect();
    const task = await startAskTask(client);
    await waitForTask(await observer(), task.taskId, (t) => t.status === 'input_required');
    // Stop the worker so the cancellation cannot be processed before the approval is.
    await withoutWorker(async () => {
      await client.experimental.tasks.cancelTask(task.taskId);
      expect((await getTask(client, task.taskId)).status).toBe('cancelled');
    });
    await eventually(
      async () => ((await stack.temporal.workflow.getHandle(task.taskId).describe()).closeTime ? true : undefined),
      'the workflow to close',
    );
    expect((await getTask(client, task.taskId)).status).toBe('cancelled');
  });

  test('a cancelled task stays cancelled when an operator terminates it afterwards', async () => {
    const { client } = await connect();
    const task = await startAskTask(client);
    await waitForTask(client, task.taskId, (t) => t.status === 'input_required');
    await withoutWorker(async () => {
      await client.experimental.tasks.cancelTask(task.taskId);
      await stack.temporal.workflow.getHandle(task.taskId).terminate('operator cleanup');
      expect((await getTask(client, task.taskId)).status).toBe('cancelled');
    });
  });

  test('a question pushed to a client that polls is not put to it again by a later tasks/result: that request waits for the pushed one', async () => {
    let answerPushed: (answer: ElicitResult) => void = () => undefined;
    const pushedAnswer = new Promise<ElicitResult>((resolve) => (answerPushed = resolve));
    const { client, user } = await connect((_, index) => (index === 0 ? pushedAnswer : APPROVE));
    const task = await startAskTask(client);
    await waitForTask(client, task.taskId, (t) => t.status === 'input_required');
    await eventually(async () => (user.asked.length === 1 ? true : undefined), 'the pushed question');
    // The user has the question in front of them; the client calls tasks/result meanwhile, which reads the task and
    // finds that question open: asking it again would go out from that read, before this client's next round trip.
    const readsBefore = reads();
    const result = taskResult(client, task.taskId);
    result.catch(() => undefined);
    await pollUntil(() => (reads() > readsBefore ? true : undefined), { timeoutMs: 30_000, what: 'tasks/result to read the task' });
    await client.ping();
    expect(user.asked).toHaveLength(1);
    answerPushed(APPROVE);
    expect((await result).structuredContent).toMatchObject({ outcome: 'approved' });
    expect(user.asked).toHaveLength(1);
  });

  test('an answer given elsewhere that the workflow refuses does not take the open question away: the user is asked once', async () => {
    let answerHeld: (answer: ElicitResult) => void = () => undefined;
    const held = new Promise<ElicitResult>((resolve) => (answerHeld = resolve));
    const { client, user } = await connect(() => held);
    const quiet = await observer();
    const task = await startAskTask(client);
    await waitForTask(quiet, task.taskId, (t) => t.status === 'input_required');
    const result = taskResult(client, task.taskId);
    result.catch(() => undefined);
    await eventually(async () => (user.asked.length === 1 ? true : undefined), 'the question on tasks/result');

    // While the user looks at it, an answer that does not fit the form comes in through Temporal: received (the task
    // reads "Answer received" until a worker takes it), then refused by the workflow.
    const handle = stack.temporal.workflow.getHandle(task.taskId);
    await sendAnswer(handle, { key: QUESTION_KEY, action: 'accept', content: { decision: 'maybe' } });
    await eventually(async () => {
      const { events } = await handle.fetchHistory();
      const signalled = events!.map((event) => !!event.workflowExecutionSignaledEventAttributes).lastIndexOf(true);
      return events!.slice(signalled).some((event) => event.workflowTaskCompletedEventAttributes) ? true : undefined;
    }, 'the workflow to take the refused answer');
    // One more event, and the read it wakes: a question asked again would go out from that read.
    const readsBefore = reads();
    await handle.signal(respondSignal, { key: 'not-asked', action: 'cancel' });
    await pollUntil(() => (reads() > readsBefore ? true : undefined), { timeoutMs: 30_000, what: 'the task read after its event' });
    await client.ping();
    expect(user.asked).toHaveLength(1);

    answerHeld(APPROVE);
    expect((await result).structuredContent).toMatchObject({ outcome: 'approved' });
    expect(user.asked).toHaveLength(1);
  });

  test('tools/call errors: unknown tool and invalid arguments get -32602 for tasks; a plain call gets an isError result', async () => {
    const { client } = await connect();
    const before = (await client.experimental.tasks.listTasks()).tasks.length;
    const request = (params: Record<string, unknown>) =>
      client.request({ method: 'tools/call', params: params as never }, CallToolResultSchema.passthrough());
    expect(await errorCodeOf(request({ name: 'nope', arguments: {}, task: {} }))).toBe(ErrorCode.InvalidParams);
    const bad = { subject: '', holdMs: -1 };
    expect(await errorCodeOf(request({ name: askRequesterTool.name, arguments: bad, task: {} }))).toBe(ErrorCode.InvalidParams);
    const plain = await client.callTool({ name: askRequesterTool.name, arguments: bad });
    expect(plain.isError).toBe(true);
    expect(JSON.stringify(plain.content)).toMatch(/subject.*holdMs/);
    expect(await errorCodeOf(request({ name: releaseHoldTool.name, arguments: { taskId: 'x' }, task: {} }))).toBe(ErrorCode.MethodNotFound);
    const foreign = await client
      .callTool({ name: releaseHoldTool.name, arguments: { taskId: 'hold-00000000-0000-4000-8000-000000000000' } })
      .catch((e) => e);
    expect(foreign.code ?? foreign.isError).toBe(ErrorCode.InvalidParams);
    expect((await client.experimental.tasks.listTasks()).tasks.length).toBe(before);
  });

  test('tasks/get and tasks/list keep answering while no worker runs; an answer given meanwhile is not asked again', async () => {
    const { client, user } = await connect();
    const quiet = await observer();
    const task = await startAskTask(client);
    await waitForTask(quiet, task.taskId, (t) => t.status === 'input_required');
    await stack.stopWorker();
    // Read from what Temporal keeps (a read that needed a worker, a query, would not be answered while none runs).
    expect((await getTask(quiet, task.taskId)).status).toBe('input_required');

    // Answer through tasks/result while the worker is down: the answer is durable, the task reads working.
    const result = taskResult(client, task.taskId);
    await waitForTask(quiet, task.taskId, (t) => t.status === 'working');
    expect(user.asked).toHaveLength(1);
    const listed = await eventually(async () => {
      const page = await quiet.experimental.tasks.listTasks();
      return page.tasks.find((t) => t.taskId === task.taskId);
    }, 'the task in tasks/list');
    expect(listed.status).toBe('working');

    await stack.startWorker();
    expect((await result).structuredContent).toMatchObject({ outcome: 'approved' });
    expect(user.asked).toHaveLength(1);
  });

  test('tasks/list: paginated with opaque cursors, every task once, and only the caller’s tasks', async () => {
    const principal = `list-${Date.now()}`;
    const own = await stack.addBridge({
      principal,
      tuning: { ...FAST_TUNING, core: { defaultTtlMs: 3_600_000, pollIntervalMs: 200, pageSize: 2 } },
    });
    const mine = await connect(undefined, { principalBridge: own });
    const other = await connect();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await startAskTask(mine.client, refused())).taskId);

    const collect = async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await mine.client.experimental.tasks.listTasks(cursor);
        expect(page.tasks.length).toBeLessThanOrEqual(2);
        seen.push(...page.tasks.map((t) => t.taskId));
        cursor = page.nextCursor;
      } while (cursor);
      // Visibility is eventually consistent, and a task that finishes during a walk moves from the open tasks to the
      // finished ones: walk again until the store has settled.
      return seen.length === ids.length && new Set(seen).size === ids.length ? seen : undefined;
    };
    const listed = await eventually(collect, 'all five tasks in tasks/list, once each');
    expect([...listed].sort()).toEqual([...ids].sort());

    const othersView = await other.client.experimental.tasks.listTasks();
    expect(othersView.tasks.map((t) => t.taskId)).not.toEqual(expect.arrayContaining([ids[0]]));
    expect(await errorCodeOf(getTask(other.client, ids[0]))).toBe(ErrorCode.InvalidParams);
    expect(await errorCodeOf(other.client.experimental.tasks.cancelTask(ids[0]))).toBe(ErrorCode.InvalidParams);
    expect(await errorCodeOf(mine.client.experimental.tasks.listTasks('garbage'))).toBe(ErrorCode.InvalidParams);
    const outOfRange = Buffer.from(JSON.stringify({ t: 1e300, id: 'x' })).toString('base64url');
    expect(await errorCodeOf(mine.client.experimental.tasks.listTasks(outOfRange))).toBe(ErrorCode.InvalidParams);
  });

  test('a workflow state memo written by the workflow is what tasks/get reports', async () => {
    const { client } = await connect(() => ({ action: 'cancel' }), { elicitation: false });
    const task = await startAskTask(client);
    const seen = await waitForTask(client, task.taskId, (t) => t.status === 'input_required');
    const memo = (await stack.temporal.workflow.getHandle(task.taskId).describe()).memo?.[TASK_STATE_MEMO] as {
      statusMessage: string;
      updatedAt: string;
    };
    expect(seen.statusMessage).toBe(memo.statusMessage);
    expect(seen.lastUpdatedAt).toBe(memo.updatedAt);
    await sendAnswer(stack.temporal.workflow.getHandle(task.taskId), { key: QUESTION_KEY, action: 'decline' });
    const done = await waitForTask(client, task.taskId, (t) => t.status === 'failed');
    expect(new Date(done.lastUpdatedAt).getTime()).toBeGreaterThanOrEqual(new Date(seen.lastUpdatedAt).getTime());
  });
});

describe('2025-11-25 to the letter', () => {
  function callWithParams(client: Awaited<ReturnType<typeof connect>>['client'], params: Record<string, unknown>) {
    return client.request({ method: 'tools/call', params: params as never }, CreateTaskResultSchema);
  }

  test('tools/call: a ttl that is negative, fractional or not a number, and arguments of the wrong type, get -32602 naming the field', async () => {
    const { client } = await connect();
    for (const ttl of [-1, 1.5, 'soon']) {
      const error = await callWithParams(client, { name: askRequesterTool.name, arguments: askInput(), task: { ttl } }).catch(
        (e: Error) => e,
      );
      expect((error as { code?: number }).code).toBe(ErrorCode.InvalidParams);
      expect((error as Error).message).toMatch(/ttl/);
    }
    const error = await callWithParams(client, { name: askRequesterTool.name, arguments: 'a subject', task: {} }).catch((e: Error) => e);
    expect((error as { code?: number }).code).toBe(ErrorCode.InvalidParams);
    expect((error as Error).message).toMatch(/arguments/);
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.every((t) => t.ttl === null || t.ttl >= 0)).toBe(true);
  });

  test('the CreateTaskResult is the start itself: working, created as last updated, the same createdAt tasks/get shows later', async () => {
    const { client } = await connect(() => ({ action: 'cancel' }), { elicitation: false });
    const task = await startAskTask(client);
    expect(task.status).toBe('working');
    expect(task.lastUpdatedAt).toBe(task.createdAt);
    const later = await waitForTask(client, task.taskId, (t) => t.status === 'input_required');
    expect(later.createdAt).toBe(task.createdAt);
    await client.experimental.tasks.cancelTask(task.taskId);
  });

  test('an answer the worker has not taken yet reads working "Answer received" with a lastUpdatedAt that moved', async () => {
    const { client } = await connect(() => ({ action: 'cancel' }), { elicitation: false });
    const task = await startAskTask(client);
    const waiting = await waitForTask(client, task.taskId, (t) => t.status === 'input_required');
    await withoutWorker(async () => {
      // Sent past the bridge, straight to Temporal: the bridge learns of it from the history's event stream.
      await sendAnswer(stack.temporal.workflow.getHandle(task.taskId), {
        key: QUESTION_KEY,
        action: 'accept',
        content: { decision: 'approve' },
      });
      const received = await waitForTask(client, task.taskId, (t) => t.status !== 'input_required');
      expect(received.status).toBe('working');
      expect(received.statusMessage).toMatch(/Answer received/);
      expect(received.lastUpdatedAt > waiting.lastUpdatedAt).toBe(true);
    });
    expect((await taskResult(client, task.taskId)).structuredContent).toMatchObject({ outcome: 'approved' });
  });

  test('an input this connection answered is not asked again on it, even while tasks/result is called again', async () => {
    const { client, user } = await connect();
    const task = await startAskTask(client);
    await waitForTask(await observer(), task.taskId, (t) => t.status === 'input_required');
    const [first, second] = await Promise.all([taskResult(client, task.taskId), taskResult(client, task.taskId)]);
    expect(first.structuredContent).toMatchObject({ outcome: 'approved' });
    expect(second.structuredContent).toEqual(first.structuredContent);
    expect(user.asked).toHaveLength(1);
  });
});

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
import { PaymentsLedger } from '../../examples/invoice-approval/src/activities/payments';
import { pollUntil } from '../../src/util/wait';
import { respondSignal, TASK_STATE_MEMO } from '../../src/contract/task-contract';
import { APPROVE, FAST_TUNING, type Answerer, errorCodeOf, getTask, newMcpClient, REJECT, taskResult, waitForTask } from '../helpers/mcp';
import { sampleInvoice, startInvoiceTask } from '../helpers/example';
import { startStack, type TestStack } from '../helpers/test-stack';
import { daysFromToday, eventually, sendAnswer } from '../helpers/temporal';

let stack: TestStack;
/** How long a plain call may wait inline: long, so that a call that waited it out cannot pass for one that did not. */
const INLINE_BUDGET_MS = 60_000;

beforeAll(async () => {
  stack = await startStack({ name: 'mcp-tasks', bridge: { tuning: { ...FAST_TUNING, inlineBudgetMs: INLINE_BUDGET_MS } } });
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

async function ledgerFor(taskId: string) {
  return (await new PaymentsLedger(stack.activities.ledgerDir).entries()).filter((entry) => entry.taskId === taskId);
}

describe('task-augmented tools/call', () => {
  test('tools/list: process_invoice declares optional task support, an input schema with descriptions and an output schema', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'process_invoice')!;
    expect(tool.execution?.taskSupport).toBe('optional');
    expect(tool.inputSchema.required).toEqual(expect.arrayContaining(['vendorId', 'invoiceNumber', 'currency', 'lineItems']));
    expect((tool.inputSchema.properties as Record<string, { description?: string }>).currency.description).toMatch(/ISO 4217/);
    // The tool's own result, or the task that goes on (a plain call that answers before the end).
    const [own, pending] = (tool.outputSchema as unknown as { anyOf: Array<{ properties: Record<string, unknown> }> }).anyOf;
    expect(own.properties).toHaveProperty('payments');
    expect(pending.properties).toHaveProperty('pendingTask');
    expect(tool._meta).toMatchObject({ ui: { resourceUri: TASK_VIEW_URI }, 'ui/resourceUri': TASK_VIEW_URI });
    expect(tools.find((t) => t.name === 'release_scheduled_payment')?.execution?.taskSupport).toBe('forbidden');
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

  test('the approve path: working → input_required → elicitation on tasks/result → completed, paid once', async () => {
    const { client, user } = await connect();
    const notifications: Task[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
      notifications.push(notification.params as Task);
    });
    const invoice = sampleInvoice();
    const seen: Task['status'][] = [];
    let result: unknown;
    let taskId = '';
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'process_invoice', arguments: invoice },
      CallToolResultSchema,
      { task: { ttl: 120_000 }, timeout: 60_000 },
    )) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'taskStatus' && seen[seen.length - 1] !== message.task.status) seen.push(message.task.status);
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    expect(taskId).toMatch(/^invoice-[0-9a-f-]{36}$/);
    expect(seen).toEqual(expect.arrayContaining(['input_required']));
    expect(user.asked).toHaveLength(1);
    expect(user.asked[0]._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId });
    expect(user.asked[0].message).toContain(invoice.invoiceNumber);
    expect(result).toMatchObject({
      isError: false,
      structuredContent: { outcome: 'paid', invoiceNumber: invoice.invoiceNumber, total: 200.75 },
      _meta: { [RELATED_TASK_META_KEY]: { taskId } },
    });
    expect((await getTask(client, taskId)).status).toBe('completed');
    expect((await ledgerFor(taskId)).map((e) => e.lineItemId).sort()).toEqual(['LI-1', 'LI-2']);
    // The status changes the server observed were announced, in a legal order.
    const announced = notifications.filter((n) => n.taskId === taskId).map((n) => n.status);
    expect(announced).toEqual(expect.arrayContaining(['input_required', 'completed']));
    expect(announced[announced.length - 1]).toBe('completed');
  });

  test('CreateTaskResult: the task exists, with the granted ttl, poll interval and an immediate response for the model', async () => {
    const { client } = await connect();
    const created = await client.request(
      { method: 'tools/call', params: { name: 'process_invoice', arguments: sampleInvoice(), task: { ttl: 30 * 24 * 3600_000 } } },
      CreateTaskResultSchema,
    );
    // Capped at the namespace's retention (24 h on the dev server); without a request, the default applies.
    expect(created.task).toMatchObject({ status: 'working', ttl: 86_400_000, pollInterval: 200 });
    expect((await startInvoiceTask(client, sampleInvoice())).ttl).toBe(3_600_000);
    expect(created._meta?.['io.modelcontextprotocol/model-immediate-response']).toMatch(/approval/);
    const fetched = await getTask(client, created.task.taskId);
    expect(fetched.createdAt).toBe(created.task.createdAt);
    await client.experimental.tasks.cancelTask(created.task.taskId);
  });

  test('reject: a tool error saying nothing was paid, so the task is failed (2025-11-25), and nothing is paid', async () => {
    const { client } = await connect(() => REJECT);
    const task = await startInvoiceTask(client, sampleInvoice());
    const result = await taskResult(client, task.taskId);
    expect(result.isError).toBe(true);
    expect(result.content[0]).toMatchObject({ text: expect.stringMatching(/was rejected; nothing was paid\.$/) });
    expect((await getTask(client, task.taskId)).status).toBe('failed');
    expect(result.structuredContent).toMatchObject({ outcome: 'rejected', approval: { decision: 'reject', comment: 'wrong totals' } });
    expect(await ledgerFor(task.taskId)).toEqual([]);
  });

  test('decline: the task fails with a rejected outcome', async () => {
    const { client } = await connect(() => ({ action: 'decline' }));
    const task = await startInvoiceTask(client, sampleInvoice());
    const result = await taskResult(client, task.taskId);
    expect(result.structuredContent).toMatchObject({ outcome: 'rejected', approval: { decision: 'decline' } });
  });

  test('cancel: the request stays pending and is asked again on the next tasks/result', async () => {
    let readsAtDismissal: number | undefined;
    const { client, user } = await connect((_, index) => {
      if (index > 0) return APPROVE;
      readsAtDismissal = reads();
      return { action: 'cancel' };
    });
    const quiet = await observer();
    const task = await startInvoiceTask(client, sampleInvoice());
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
    expect(result.structuredContent).toMatchObject({ outcome: 'paid' });
  });

  test('ERP rejection: the task is failed with the reason as its status message; tasks/result gives the isError result', async () => {
    const { client, user } = await connect();
    const task = await startInvoiceTask(client, sampleInvoice({ vendorId: 'V-666' }));
    const result = await taskResult(client, task.taskId);
    expect(result.isError).toBe(true);
    expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/on hold/) });
    expect(result.structuredContent).toMatchObject({ outcome: 'invalid' });
    // MCP 2025-11-25: a tool result with isError makes the task failed, whatever way the workflow ended.
    const read = await getTask(client, task.taskId);
    expect(read.status).toBe('failed');
    expect(read.statusMessage).toMatch(/on hold/);
    expect(user.asked).toHaveLength(0);
  });

  test('a scheduled payment keeps the task working with a statusMessage, and release_scheduled_payment pays it early', async () => {
    const { client } = await connect();
    const payOn = daysFromToday(120);
    const task = await startInvoiceTask(
      client,
      sampleInvoice({
        lineItems: [
          { lineItemId: 'NOW', description: 'now', amount: 1 },
          { lineItemId: 'LATER', description: 'later', amount: 2.5, payOn },
        ],
      }),
    );
    const pending = taskResult(client, task.taskId, 60_000);
    const waiting = await waitForTask(client, task.taskId, (t) => t.status === 'working' && /scheduled:/.test(t.statusMessage ?? ''));
    expect(waiting.statusMessage).toContain(`LATER (EUR 2.50) on ${payOn}`);
    // The workflow offers the release as an action (the task view shows it as a button).
    const status = await client.callTool({ name: 'task_status', arguments: { taskId: task.taskId } });
    expect((status.structuredContent as { actions: unknown[] }).actions).toEqual([
      {
        tool: 'release_scheduled_payment',
        arguments: { lineItemId: 'LATER' },
        title: 'Pay LATER now',
        description: `EUR 2.50, scheduled for ${payOn}`,
      },
    ]);

    const wrong = await client.callTool({ name: 'release_scheduled_payment', arguments: { taskId: task.taskId, lineItemId: 'NOW' } });
    expect(wrong).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/already paid/) }] });
    const released = await client.callTool({ name: 'release_scheduled_payment', arguments: { taskId: task.taskId, lineItemId: 'LATER' } });
    expect(released.isError).toBeFalsy();
    expect(released.structuredContent).toMatchObject({ lineItemId: 'LATER', amount: 2.5 });

    const result = await pending;
    expect(result.structuredContent).toMatchObject({ outcome: 'paid', scheduled: [] });
    expect((await ledgerFor(task.taskId)).map((e) => e.lineItemId).sort()).toEqual(['LATER', 'NOW']);
    // Releasing again is idempotent: the same payment, no second ledger line.
    const again = await client.callTool({ name: 'release_scheduled_payment', arguments: { taskId: task.taskId, lineItemId: 'LATER' } });
    expect(again.structuredContent).toEqual(released.structuredContent);
    expect(await ledgerFor(task.taskId)).toHaveLength(2);
  });

  test("release_scheduled_payment: another principal's task is refused with -32602, and nothing is asked", async () => {
    const principal = `release-${Date.now()}`;
    const mine = await connect(() => ({ action: 'cancel' }), { principalBridge: await stack.addBridge({ principal }) });
    const other = await connect();
    try {
      const task = await startInvoiceTask(mine.client, sampleInvoice());
      await waitForTask(mine.client, task.taskId, (t) => t.status === 'input_required');
      const release = await other.client
        .callTool({ name: 'release_scheduled_payment', arguments: { taskId: task.taskId, lineItemId: 'LI-1' } })
        .catch((error: { code?: number }) => error);
      expect((release as { code?: number }).code).toBe(ErrorCode.InvalidParams);
      expect(other.user.asked).toHaveLength(0);
    } finally {
      await stack.terminateRunningOf(principal);
    }
  });

  test('a plain call from a client that cannot be asked returns at the question, not as an error, and task_respond answers it', async () => {
    const { client } = await connect(undefined, { elicitation: false });
    const started = Date.now();
    const result = await client.callTool({ name: 'process_invoice', arguments: sampleInvoice() }, undefined, {
      timeout: 2 * INLINE_BUDGET_MS,
    });
    // Answered at the question, not at the end of the budget: well before it, however slow this machine is.
    expect(Date.now() - started).toBeLessThan(INLINE_BUDGET_MS / 2);
    expect(result.isError).toBeFalsy();
    const { pendingTask } = result.structuredContent as { pendingTask: { taskId: string; status: string; question: Record<string, any> } };
    expect(pendingTask).toMatchObject({ status: 'input_required', question: { key: 'approval', mode: 'form' } });
    expect(pendingTask.question.requestedSchema.required).toEqual(['decision']);
    expect((result.content as Array<{ text: string }>)[0].text).toMatch(/task_respond.*decision \(one of approve, reject\), required/);
    const answered = await client.callTool({
      name: 'task_respond',
      arguments: { taskId: pendingTask.taskId, key: 'approval', action: 'accept', content: { decision: 'approve' } },
    });
    expect(answered.isError).toBeFalsy();
    const done = await client.callTool({ name: 'task_result', arguments: { taskId: pendingTask.taskId, waitSeconds: 30 } });
    expect(done.structuredContent).toMatchObject({ outcome: 'paid' });
  });

  test('a plain call from a host that renders Apps answers at once with the task, for the task view to follow', async () => {
    const client = new McpClient(
      { name: 'apps-host', version: '1.0.0' },
      { capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } } },
    );
    await stack.connect(client);
    const result = await client.callTool({ name: 'process_invoice', arguments: sampleInvoice() });
    expect(result.isError).toBeFalsy();
    const { pendingTask } = result.structuredContent as { pendingTask: { taskId: string; status: string } };
    expect(pendingTask.status).toBe('working');
    expect(result._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: pendingTask.taskId });
    await client.callTool({ name: 'task_cancel', arguments: { taskId: pendingTask.taskId } });
  });

  test('a plain call (no task) runs the invoice to the end, asking for approval inline', async () => {
    const { client, user } = await connect();
    const result = await client.callTool({ name: 'process_invoice', arguments: sampleInvoice() }, undefined, { timeout: 60_000 });
    expect(result.structuredContent).toMatchObject({ outcome: 'paid' });
    expect(user.asked).toHaveLength(1);
  });
});

describe('input_required answers', () => {
  test('an answer that does not fit the form is asked again with the reason, and the task stays input_required', async () => {
    const { client, user } = await connect((_, index) => (index === 0 ? { action: 'accept', content: { decision: 'perhaps' } } : APPROVE));
    const task = await startInvoiceTask(client, sampleInvoice());
    const result = await taskResult(client, task.taskId);
    expect(user.asked).toHaveLength(2);
    expect(user.asked[1].message).toMatch(/previous answer could not be used/);
    expect(result.structuredContent).toMatchObject({ outcome: 'paid' });
  });

  test('tasks/result never gives up on bad answers: it asks again until one fits, then returns the result', async () => {
    const { client, user } = await connect((_, index) => (index < 4 ? { action: 'accept', content: { decision: 'perhaps' } } : APPROVE));
    const task = await startInvoiceTask(client, sampleInvoice());
    const result = await taskResult(client, task.taskId);
    expect(user.asked).toHaveLength(5);
    expect(result.structuredContent).toMatchObject({ outcome: 'paid' });
  });

  test('a client that only polls tasks/get receives the elicitation as a server request and finishes the task', async () => {
    const { client, user } = await connect();
    const task = await startInvoiceTask(client, sampleInvoice());
    const done = await waitForTask(client, task.taskId, (t) => t.status === 'completed', 30_000);
    expect(done.status).toBe('completed');
    expect(user.asked).toHaveLength(1);
    expect(user.asked[0]._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: task.taskId });
  });

  test('one answer per input request: a second connection polling the same task is not asked after the first answered', async () => {
    const first = await connect();
    const second = await connect();
    const task = await startInvoiceTask(first.client, sampleInvoice());
    await waitForTask(await observer(), task.taskId, (t) => t.status === 'input_required');
    const result = await taskResult(first.client, task.taskId);
    await waitForTask(second.client, task.taskId, (t) => t.status === 'completed');
    expect(result.structuredContent).toMatchObject({ outcome: 'paid' });
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
    expect(await errorCodeOf(call(client, 'invoice-00000000-0000-4000-8000-000000000000'))).toBe(ErrorCode.InvalidParams);
    expect(await errorCodeOf(call(client, 'not a task id'))).toBe(ErrorCode.InvalidParams);
  });

  test('tasks/cancel: a working task becomes cancelled at once and stays cancelled; tasks/result reports the cancellation', async () => {
    const { client, user } = await connect();
    const task = await startInvoiceTask(client, sampleInvoice());
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

  test('tasks/cancel after a partial payment: tasks/get and tasks/result say LI-1 was paid and LI-2 was not, as the ledger holds', async () => {
    const { client, user } = await connect();
    const task = await startInvoiceTask(
      client,
      sampleInvoice({
        lineItems: [
          { lineItemId: 'LI-1', description: 'Printer paper, 20 boxes', amount: 120.5 },
          { lineItemId: 'LI-2', description: 'Toner cartridges', amount: 80.25, payOn: daysFromToday(90) },
        ],
      }),
    );
    // The approval is asked on this tasks/result's stream; it ends once the task reads cancelled.
    const waiting = taskResult(client, task.taskId).then(
      () => undefined,
      (error: unknown) => error,
    );
    await waitForTask(client, task.taskId, (t) => t.status === 'working' && /scheduled:/.test(t.statusMessage ?? ''));
    expect((await ledgerFor(task.taskId)).map((entry) => entry.lineItemId)).toEqual(['LI-1']);

    expect((await client.experimental.tasks.cancelTask(task.taskId)).status).toBe('cancelled');
    const report = 'Cancelled after paying LI-1 (EUR 120.50); LI-2 was not paid.';
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
    expect((await ledgerFor(task.taskId)).map((entry) => entry.lineItemId)).toEqual(['LI-1']);
    expect((await stack.temporal.workflow.getHandle(task.taskId).describe()).status.name).toBe('CANCELLED');
    expect(user.asked).toHaveLength(1);
  });

  test('tasks/cancel: a terminal task gets -32602 and stays as it was', async () => {
    const { client } = await connect();
    const task = await startInvoiceTask(client, sampleInvoice({ vendorId: 'V-404' }));
    await waitForTask(client, task.taskId, (t) => t.status === 'failed');
    expect(await errorCodeOf(client.experimental.tasks.cancelTask(task.taskId))).toBe(ErrorCode.InvalidParams);
    expect((await getTask(client, task.taskId)).status).toBe('failed');
  });

  test('a cancelled task stays cancelled even if the workflow finishes its work afterwards', async () => {
    const { client } = await connect();
    const task = await startInvoiceTask(client, sampleInvoice());
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
    const task = await startInvoiceTask(client, sampleInvoice());
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
    const task = await startInvoiceTask(client, sampleInvoice());
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
    expect((await result).structuredContent).toMatchObject({ outcome: 'paid' });
    expect(user.asked).toHaveLength(1);
  });

  test('an answer given elsewhere that the workflow refuses does not take the open question away: the user is asked once', async () => {
    let answerHeld: (answer: ElicitResult) => void = () => undefined;
    const held = new Promise<ElicitResult>((resolve) => (answerHeld = resolve));
    const { client, user } = await connect(() => held);
    const quiet = await observer();
    const task = await startInvoiceTask(client, sampleInvoice());
    await waitForTask(quiet, task.taskId, (t) => t.status === 'input_required');
    const result = taskResult(client, task.taskId);
    result.catch(() => undefined);
    await eventually(async () => (user.asked.length === 1 ? true : undefined), 'the question on tasks/result');

    // While the user looks at it, an answer that does not fit the form comes in through Temporal: received (the task
    // reads "Answer received" until a worker takes it), then refused by the workflow.
    const handle = stack.temporal.workflow.getHandle(task.taskId);
    await sendAnswer(handle, { key: 'approval', action: 'accept', content: { decision: 'maybe' } });
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
    expect((await result).structuredContent).toMatchObject({ outcome: 'paid' });
    expect(user.asked).toHaveLength(1);
  });

  test('tools/call errors: unknown tool and invalid arguments get -32602 for tasks; a plain call gets an isError result', async () => {
    const { client } = await connect();
    const before = (await client.experimental.tasks.listTasks()).tasks.length;
    const request = (params: Record<string, unknown>) =>
      client.request({ method: 'tools/call', params: params as never }, CallToolResultSchema.passthrough());
    expect(await errorCodeOf(request({ name: 'nope', arguments: {}, task: {} }))).toBe(ErrorCode.InvalidParams);
    const bad = sampleInvoice({ currency: 'EURO', lineItems: [] });
    expect(await errorCodeOf(request({ name: 'process_invoice', arguments: bad, task: {} }))).toBe(ErrorCode.InvalidParams);
    const plain = await client.callTool({ name: 'process_invoice', arguments: bad });
    expect(plain.isError).toBe(true);
    expect(JSON.stringify(plain.content)).toMatch(/currency.*ISO 4217.*lineItems.*at least one line item/);
    expect(await errorCodeOf(request({ name: 'release_scheduled_payment', arguments: { taskId: 'x', lineItemId: 'y' }, task: {} }))).toBe(
      ErrorCode.MethodNotFound,
    );
    const foreign = await client
      .callTool({
        name: 'release_scheduled_payment',
        arguments: { taskId: 'invoice-00000000-0000-4000-8000-000000000000', lineItemId: 'y' },
      })
      .catch((e) => e);
    expect(foreign.code ?? foreign.isError).toBe(ErrorCode.InvalidParams);
    expect((await client.experimental.tasks.listTasks()).tasks.length).toBe(before);
  });

  test('tasks/get and tasks/list keep answering while no worker runs; an answer given meanwhile is not asked again', async () => {
    const { client, user } = await connect();
    const quiet = await observer();
    const task = await startInvoiceTask(client, sampleInvoice());
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
    expect((await result).structuredContent).toMatchObject({ outcome: 'paid' });
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
    for (let i = 0; i < 5; i++) ids.push((await startInvoiceTask(mine.client, sampleInvoice({ vendorId: 'V-404' }))).taskId);

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
    const task = await startInvoiceTask(client, sampleInvoice());
    const seen = await waitForTask(client, task.taskId, (t) => t.status === 'input_required');
    const memo = (await stack.temporal.workflow.getHandle(task.taskId).describe()).memo?.[TASK_STATE_MEMO] as {
      statusMessage: string;
      updatedAt: string;
    };
    expect(seen.statusMessage).toBe(memo.statusMessage);
    expect(seen.lastUpdatedAt).toBe(memo.updatedAt);
    await sendAnswer(stack.temporal.workflow.getHandle(task.taskId), { key: 'approval', action: 'decline' });
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
      const error = await callWithParams(client, { name: 'process_invoice', arguments: sampleInvoice(), task: { ttl } }).catch(
        (e: Error) => e,
      );
      expect((error as { code?: number }).code).toBe(ErrorCode.InvalidParams);
      expect((error as Error).message).toMatch(/ttl/);
    }
    const error = await callWithParams(client, { name: 'process_invoice', arguments: 'an invoice', task: {} }).catch((e: Error) => e);
    expect((error as { code?: number }).code).toBe(ErrorCode.InvalidParams);
    expect((error as Error).message).toMatch(/arguments/);
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.every((t) => t.ttl === null || t.ttl >= 0)).toBe(true);
  });

  test('the CreateTaskResult is the start itself: working, created as last updated, the same createdAt tasks/get shows later', async () => {
    const { client } = await connect(() => ({ action: 'cancel' }), { elicitation: false });
    const task = await startInvoiceTask(client, sampleInvoice());
    expect(task.status).toBe('working');
    expect(task.lastUpdatedAt).toBe(task.createdAt);
    const later = await waitForTask(client, task.taskId, (t) => t.status === 'input_required');
    expect(later.createdAt).toBe(task.createdAt);
    await client.experimental.tasks.cancelTask(task.taskId);
  });

  test('an answer the worker has not taken yet reads working "Answer received" with a lastUpdatedAt that moved', async () => {
    const { client } = await connect(() => ({ action: 'cancel' }), { elicitation: false });
    const task = await startInvoiceTask(client, sampleInvoice());
    const waiting = await waitForTask(client, task.taskId, (t) => t.status === 'input_required');
    await withoutWorker(async () => {
      // Sent past the bridge, straight to Temporal: the bridge learns of it from the history's event stream.
      await sendAnswer(stack.temporal.workflow.getHandle(task.taskId), {
        key: 'approval',
        action: 'accept',
        content: { decision: 'approve' },
      });
      const received = await waitForTask(client, task.taskId, (t) => t.status !== 'input_required');
      expect(received.status).toBe('working');
      expect(received.statusMessage).toMatch(/Answer received/);
      expect(received.lastUpdatedAt > waiting.lastUpdatedAt).toBe(true);
    });
    expect((await taskResult(client, task.taskId)).structuredContent).toMatchObject({ outcome: 'paid' });
  });

  test('an input this connection answered is not asked again on it, even while tasks/result is called again', async () => {
    const { client, user } = await connect();
    const task = await startInvoiceTask(client, sampleInvoice());
    await waitForTask(await observer(), task.taskId, (t) => t.status === 'input_required');
    const [first, second] = await Promise.all([taskResult(client, task.taskId), taskResult(client, task.taskId)]);
    expect(first.structuredContent).toMatchObject({ outcome: 'paid' });
    expect(second.structuredContent).toEqual(first.structuredContent);
    expect(user.asked).toHaveLength(1);
  });
});

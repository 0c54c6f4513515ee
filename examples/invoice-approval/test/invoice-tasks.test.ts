/**
 * The invoice flow as an agent's host meets it: `process_invoice` and `release_scheduled_payment` served by a bridge
 * over Streamable HTTP, a 2025-11-25 client with tasks whose person answers the approval, and the payments ledger as
 * the witness of what was paid.
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode, RELATED_TASK_META_KEY, type Task } from '@modelcontextprotocol/sdk/types.js';
import { NativeConnection } from '@temporalio/worker';
import type { InvoiceResult } from '../src/invoice';
import { daysFromToday, paidLineItems, quietTemporalLogs, startSampleWorker, tempActivityConfig, testAddress } from './harness';
import { sampleInvoice } from './invoices';
import {
  APPROVE,
  connectPerson,
  errorCodeOf,
  REJECT,
  startInvoiceServer,
  startTask,
  taskResult,
  waitForTask,
  type Answerer,
  type InvoiceServer,
  type Person,
} from './mcp-harness';

const taskQueue = `invoice-mcp-${randomUUID().slice(0, 8)}`;
const activities = tempActivityConfig();
const principal = `local:invoice-${randomUUID().slice(0, 8)}`;
let connection: NativeConnection;
let worker: { stop(): Promise<void> };
let server: InvoiceServer;
const people: Person[] = [];

beforeAll(async () => {
  quietTemporalLogs();
  connection = await NativeConnection.connect({ address: testAddress() });
  worker = await startSampleWorker(connection, taskQueue, activities);
  server = await startInvoiceServer(taskQueue, activities, principal);
});

afterEach(async () => {
  await Promise.all(people.splice(0).map((person) => person.client.close()));
});

afterAll(async () => {
  await server?.close();
  await worker?.stop();
  await connection?.close();
});

/** A person of the file's principal whose host answers with `answer` (none: a host that cannot be asked). */
async function person(answer?: Answerer, url = server.url): Promise<Person> {
  const connected = await connectPerson(url, answer);
  people.push(connected);
  return connected;
}

const paid = (taskId: string) => paidLineItems(activities.ledgerDir, taskId);

test('tools/list: process_invoice takes an invoice with described fields and may run as a task; the release is a plain call', async () => {
  const { client } = await person();
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === 'process_invoice')!;
  expect(tool.execution?.taskSupport).toBe('optional');
  expect(tool.inputSchema.required).toEqual(expect.arrayContaining(['vendorId', 'invoiceNumber', 'currency', 'lineItems']));
  expect((tool.inputSchema.properties as Record<string, { description?: string }>).currency.description).toMatch(/ISO 4217/);
  const [own] = (tool.outputSchema as unknown as { anyOf: Array<{ properties: Record<string, unknown> }> }).anyOf;
  expect(own.properties).toHaveProperty('payments');
  expect(tools.find((t) => t.name === 'release_scheduled_payment')?.execution?.taskSupport).toBe('forbidden');
});

test('approved: the approval is asked once, naming the invoice, and each line item is paid once', async () => {
  const { client, asked } = await person(() => APPROVE);
  const invoice = sampleInvoice();
  const { task, meta } = await startTask(client, 'process_invoice', invoice);
  expect(task.taskId).toMatch(/^invoice-[0-9a-f-]{36}$/);
  expect(meta?.['io.modelcontextprotocol/model-immediate-response']).toMatch(/approval/);
  const result = await taskResult(client, task.taskId);
  expect(asked).toHaveLength(1);
  expect(asked[0].message).toContain(invoice.invoiceNumber);
  expect(asked[0]._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: task.taskId });
  expect(result).toMatchObject({
    isError: false,
    structuredContent: { outcome: 'paid', invoiceNumber: invoice.invoiceNumber, total: 200.75 },
  });
  expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
  expect(await paid(task.taskId)).toEqual(['LI-1', 'LI-2']);
});

test('rejected: a tool error saying nothing was paid, the task failed, and the ledger holds nothing of it', async () => {
  const { client } = await person(() => REJECT);
  const { task } = await startTask(client, 'process_invoice', sampleInvoice());
  const result = await taskResult(client, task.taskId);
  expect(result.isError).toBe(true);
  expect(result.content[0]).toMatchObject({ text: expect.stringMatching(/was rejected; nothing was paid\.$/) });
  expect(result.structuredContent).toMatchObject({ outcome: 'rejected', approval: { decision: 'reject', comment: 'wrong totals' } });
  expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('failed');
  expect(await paid(task.taskId)).toEqual([]);
});

test('the ERP holds the vendor: the task fails with the reason as its status message, nobody is asked, nothing is paid', async () => {
  const { client, asked } = await person(() => APPROVE);
  const { task } = await startTask(client, 'process_invoice', sampleInvoice({ vendorId: 'V-666' }));
  const result = await taskResult(client, task.taskId);
  expect(result).toMatchObject({ isError: true, structuredContent: { outcome: 'invalid' } });
  expect(result.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/on hold/) });
  const read = await client.experimental.tasks.getTask(task.taskId);
  expect(read.status).toBe('failed');
  expect(read.statusMessage).toMatch(/on hold/);
  expect(asked).toHaveLength(0);
  expect(await paid(task.taskId)).toEqual([]);
});

test('a scheduled line item keeps the task working; release_scheduled_payment pays it early, once', async () => {
  const { client } = await person(() => APPROVE);
  const payOn = daysFromToday(120);
  const { task } = await startTask(
    client,
    'process_invoice',
    sampleInvoice({
      lineItems: [
        { lineItemId: 'NOW', description: 'now', amount: 1 },
        { lineItemId: 'LATER', description: 'later', amount: 2.5, payOn },
      ],
    }),
  );
  const pending = taskResult(client, task.taskId);
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

  expect((await pending).structuredContent).toMatchObject({ outcome: 'paid', scheduled: [] });
  expect(await paid(task.taskId)).toEqual(['LATER', 'NOW']);
  // Releasing again is idempotent: the same payment, no second ledger line.
  const again = await client.callTool({ name: 'release_scheduled_payment', arguments: { taskId: task.taskId, lineItemId: 'LATER' } });
  expect(again.structuredContent).toEqual(released.structuredContent);
  expect(await paid(task.taskId)).toEqual(['LATER', 'NOW']);
});

test("release_scheduled_payment on another principal's task is refused with -32602, and nothing is paid", async () => {
  const other = await startInvoiceServer(taskQueue, activities, `local:other-${randomUUID().slice(0, 8)}`);
  try {
    const { client } = await person(undefined);
    const { task } = await startTask(
      client,
      'process_invoice',
      sampleInvoice({ lineItems: [{ lineItemId: 'LATER', description: 'later', amount: 3, payOn: daysFromToday(60) }] }),
    );
    await waitForTask(client, task.taskId, (t) => t.status === 'input_required');
    const stranger = await person(undefined, other.url);
    const release = stranger.client.callTool({
      name: 'release_scheduled_payment',
      arguments: { taskId: task.taskId, lineItemId: 'LATER' },
    });
    expect(await errorCodeOf(release)).toBe(ErrorCode.InvalidParams);
    expect((await client.experimental.tasks.cancelTask(task.taskId)).status).toBe('cancelled');
    expect(await paid(task.taskId)).toEqual([]);
  } finally {
    await other.close();
  }
});

test('cancelled after a partial payment: tasks/get and tasks/result say LI-1 was paid and LI-2 was not, as the ledger holds', async () => {
  const { client, asked } = await person(() => APPROVE);
  const { task } = await startTask(
    client,
    'process_invoice',
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
  expect(await paid(task.taskId)).toEqual(['LI-1']);

  expect((await client.experimental.tasks.cancelTask(task.taskId)).status).toBe('cancelled');
  const report = 'Cancelled after paying LI-1 (EUR 120.50); LI-2 was not paid.';
  const seen: Task[] = [];
  await waitForTask(client, task.taskId, (t) => {
    seen.push(t);
    return t.statusMessage === report;
  });
  // Cancelled from the cancel on, whatever the message said meanwhile.
  expect(new Set(seen.map((t) => t.status))).toEqual(new Set(['cancelled']));
  expect(await waiting).toMatchObject({ code: ErrorCode.InternalError });
  expect(await taskResult(client, task.taskId).catch((error: unknown) => error)).toMatchObject({
    code: ErrorCode.InternalError,
    message: expect.stringContaining(`Task ${task.taskId}: ${report}`),
  });
  expect(await paid(task.taskId)).toEqual(['LI-1']);
  expect(asked).toHaveLength(1);
});

test('an invoice that does not fit the schema: -32602 as a task, an isError result naming each field as a plain call; no task', async () => {
  const { client } = await person(() => APPROVE);
  const before = (await client.experimental.tasks.listTasks()).tasks.length;
  const bad = sampleInvoice({ currency: 'EURO', lineItems: [] });
  expect(await errorCodeOf(startTask(client, 'process_invoice', bad))).toBe(ErrorCode.InvalidParams);
  const plain = await client.callTool({ name: 'process_invoice', arguments: bad as never });
  expect(plain.isError).toBe(true);
  expect(JSON.stringify(plain.content)).toMatch(/currency.*ISO 4217.*lineItems.*at least one line item/);
  expect((await client.experimental.tasks.listTasks()).tasks.length).toBe(before);
});

test('a plain call from a host that can be asked runs the invoice to the end, asking inline', async () => {
  const { client, asked } = await person(() => APPROVE);
  const result = await client.callTool({ name: 'process_invoice', arguments: sampleInvoice() as never }, undefined, { timeout: 60_000 });
  expect((result.structuredContent as InvoiceResult).outcome).toBe('paid');
  expect(asked).toHaveLength(1);
});

import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { AnswerSeal } from 'temporal-mcp-tasks';
import { respondSignal, TASK_STATE_MEMO, type PublishedTaskState } from 'temporal-mcp-tasks/workflow';
import { FixtureErp } from '../src/activities/erp';
import { PaymentsLedger } from '../src/activities/payments';
import { INVOICE_WORKFLOW_TYPE, releaseScheduledPaymentUpdate, type Invoice, type InvoiceResult } from '../src/invoice';
import {
  bridgeSeal,
  daysFromToday,
  eventually,
  originalRunIdOf,
  paidLineItems,
  quietTemporalLogs,
  sealedRelease,
  sendAnswer,
  startSampleWorker,
  tempActivityConfig,
  testAddress,
  workflowBundle,
} from './harness';
import { sampleInvoice } from './invoices';

const { EventType } = temporal.api.enums.v1;
const taskQueue = `invoice-wf-${randomUUID().slice(0, 8)}`;
const activities = tempActivityConfig({ paymentFailAttempts: 2 });
let env: TestWorkflowEnvironment;
let client: Client;
let worker: { stop(): Promise<void> };

beforeAll(async () => {
  quietTemporalLogs();
  env = await TestWorkflowEnvironment.createFromExistingServer({ address: testAddress() });
  client = env.client;
  worker = await startSampleWorker(env.nativeConnection, taskQueue, activities);
});

afterAll(async () => {
  await worker?.stop();
  await env?.teardown();
});

function start(invoice: Invoice) {
  return client.workflow.start(INVOICE_WORKFLOW_TYPE, { taskQueue, workflowId: `wf-${randomUUID()}`, args: [invoice] });
}

async function published(workflowId: string): Promise<PublishedTaskState | undefined> {
  return (await client.workflow.getHandle(workflowId).describe()).memo?.[TASK_STATE_MEMO] as PublishedTaskState | undefined;
}

/** The reason a rejected Update gives (the validator's message). */
async function updateRejection(update: Promise<unknown>): Promise<string> {
  try {
    await update;
  } catch (error) {
    return (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message;
  }
  return 'accepted';
}

function awaitApprovalRequest(workflowId: string) {
  return eventually(async () => {
    const state = await published(workflowId);
    return state?.status === 'input_required' ? state : undefined;
  }, 'the approval request');
}

const APPROVE = { key: 'approval', action: 'accept', content: { decision: 'approve' } } as const;

/** An invoice whose LI-1 is paid at once and LI-2 in 90 days. */
function partlyScheduled(overrides: Partial<Invoice> = {}): Invoice {
  return sampleInvoice({
    lineItems: [
      { lineItemId: 'LI-1', description: 'Printer paper, 20 boxes', amount: 120.5 },
      { lineItemId: 'LI-2', description: 'Toner cartridges', amount: 80.25, payOn: daysFromToday(90) },
    ],
    ...overrides,
  });
}

const paid = (taskId: string) => paidLineItems(activities.ledgerDir, taskId);

/** Cancels the workflow and waits until it has closed. */
async function cancelAndWait(handle: Awaited<ReturnType<typeof start>>): Promise<void> {
  await handle.cancel();
  await expect(handle.result()).rejects.toThrow();
  expect((await handle.describe()).status.name).toBe('CANCELLED');
}

/** Approves, then waits until LI-1 is paid and LI-2 waits on its timer. */
async function approveAndAwaitTimer(handle: Awaited<ReturnType<typeof start>>): Promise<void> {
  await awaitApprovalRequest(handle.workflowId);
  await sendAnswer(handle, APPROVE);
  await eventually(
    async () => ((await published(handle.workflowId))?.statusMessage?.includes('scheduled:') ? true : undefined),
    'the timer',
  );
}

const erp = () => new FixtureErp(activities.erpRegistryDir);

/** An invoice of one line item due now (each payment here fails twice first, so fewer items keep the tests short). */
const oneItem = () => sampleInvoice({ lineItems: [{ lineItemId: 'LI-1', description: 'Printer paper', amount: 12 }] });

describe('invoiceWorkflow', () => {
  test('publishes an approval request, then pays every line item once despite failing payment attempts', async () => {
    const invoice = sampleInvoice();
    const handle = await start(invoice);
    const state = await awaitApprovalRequest(handle.workflowId);
    expect(state.input?.key).toBe('approval');
    expect(state.input?.request).toMatchObject({ mode: 'form', requestedSchema: { required: ['decision'] } });
    expect(state.statusMessage).toContain(invoice.invoiceNumber);

    await sendAnswer(handle, { key: 'approval', action: 'accept', content: { decision: 'approve' } });
    const result = (await handle.result()) as InvoiceResult;

    expect(result.outcome).toBe('paid');
    expect(result.total).toBe(200.75);
    expect(result.payments.map((p) => p.lineItemId)).toEqual(['LI-1', 'LI-2']);
    const entries = (await new PaymentsLedger(activities.ledgerDir).entries()).filter((e) => e.taskId === handle.workflowId);
    expect(entries.map((e) => e.key).sort()).toEqual([`${handle.workflowId}/LI-1`, `${handle.workflowId}/LI-2`]);
    expect(entries.map((e) => e.paymentId).sort()).toEqual(result.payments.map((p) => p.paymentId).sort());
    // The recorded history replays without non-determinism against the current workflow code.
    await Worker.runReplayHistory({ workflowBundle: workflowBundle() }, await handle.fetchHistory(), handle.workflowId);
  });

  test('takes only answers a bridge sealed for this run, and keeps a record of those it refused', async () => {
    const handle = await start(oneItem());
    await awaitApprovalRequest(handle.workflowId);
    const run = { workflowId: handle.workflowId, originalRunId: await originalRunIdOf(handle) };
    const by = { principal: 'static:mallory' };
    const tampered = bridgeSeal.seal(run, { key: 'approval', action: 'decline' }, by);
    const forgeries = [
      // A plain Temporal client with write access to the namespace, as the CLI would send it.
      APPROVE,
      // Sealed by a bridge, but for another run of the same workflow id.
      bridgeSeal.seal({ ...run, originalRunId: randomUUID() }, APPROVE, by),
      // A sealed decline turned into an approval.
      { ...tampered, action: 'accept', content: APPROVE.content, sealed: tampered.sealed!.replace('"decline"', '"accept"') },
      // Sealed with a key that is not the bridge's.
      new AnswerSeal(randomBytes(32)).seal(run, APPROVE, by),
    ];
    for (const forged of forgeries) await handle.signal(respondSignal, forged);
    const state = await eventually(async () => {
      const current = await published(handle.workflowId);
      return (current?.refusedAnswers?.length ?? 0) >= forgeries.length ? current : undefined;
    }, 'four refusals');
    expect(state.status).toBe('input_required');
    expect(state.refusedAnswers!.map((refused) => refused.reason)).toEqual([
      'it carries no seal',
      'its seal was made for another run',
      'its seal does not hold (a proof that does not match)',
      expect.stringMatching(/^its seal does not hold \(a proof made with key \S+, not this worker's key \S+\)$/),
    ]);
    expect(await paid(handle.workflowId)).toEqual([]);

    await sendAnswer(handle, APPROVE, 'static:alice');
    expect(((await handle.result()) as InvoiceResult).outcome).toBe('paid');
    await Worker.runReplayHistory({ workflowBundle: workflowBundle() }, await handle.fetchHistory(), handle.workflowId);
  });

  test('a reset run takes the answer again, or replays it, and pays nothing twice', async () => {
    const handle = await start(partlyScheduled());
    await approveAndAwaitTimer(handle);
    const { events } = await handle.fetchHistory();
    const completions = events!.filter((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
    const answeredAt = Number(events!.find((event) => event.workflowExecutionSignaledEventAttributes)!.eventId);
    // Reset to the workflow task that took the answer: the reset run takes it again (its seal names the original run);
    // reset to the last one: the reset run replays it.
    const takingAnswer = completions.find((event) => Number(event.eventId) > answeredAt)!.eventId;
    const afterAnswer = completions.at(-1)!.eventId;
    for (const eventId of [afterAnswer, takingAnswer]) {
      const current = (await handle.describe()).runId;
      const { runId } = await client.workflowService.resetWorkflowExecution({
        namespace: 'default',
        workflowExecution: { workflowId: handle.workflowId, runId: current },
        reason: 'test',
        workflowTaskFinishEventId: eventId,
        requestId: randomUUID(),
      });
      const reset = client.workflow.getHandle(handle.workflowId, runId!);
      // A workflow task that failed (a non-determinism) stays pending and is retried: the timer is never reached.
      await eventually(async () => {
        const description = await reset.describe();
        const state = description.memo?.[TASK_STATE_MEMO] as PublishedTaskState | undefined;
        const settled = !description.raw.pendingWorkflowTask && description.historyLength > Number(eventId) + 1;
        return settled && state?.statusMessage?.includes('scheduled:') ? true : undefined;
      }, 'the reset run to reach the timer');
      expect((await published(handle.workflowId))?.refusedAnswers).toBeUndefined();
      await Worker.runReplayHistory({ workflowBundle: workflowBundle() }, await reset.fetchHistory(), handle.workflowId);
    }
    expect(await paid(handle.workflowId)).toEqual(['LI-1']);
    await handle.terminate();
  });

  test('ignores answers for other keys, cancel answers and content that does not fit the form', async () => {
    const handle = await start(sampleInvoice());
    await awaitApprovalRequest(handle.workflowId);
    await sendAnswer(handle, { key: 'other', action: 'accept', content: { decision: 'approve' } });
    await sendAnswer(handle, { key: 'approval', action: 'cancel' });
    await sendAnswer(handle, { key: 'approval', action: 'accept', content: { decision: 'maybe' } });
    await sendAnswer(handle, { key: 'approval', action: 'accept', content: {} });
    // Wait until the worker has processed all four signals, then check that the request is still pending.
    await eventually(async () => ((await handle.describe()).raw.pendingWorkflowTask ? undefined : true), 'the signals to be processed');
    expect((await published(handle.workflowId))?.status).toBe('input_required');

    await sendAnswer(handle, { key: 'approval', action: 'accept', content: { decision: 'reject', comment: 'wrong PO' } });
    const result = (await handle.result()) as InvoiceResult;
    expect(result.outcome).toBe('rejected');
    expect(result.reason).toContain('wrong PO');
    expect(result.payments).toEqual([]);
  });

  test('a decline ends the invoice rejected, with nothing paid', async () => {
    const handle = await start(sampleInvoice());
    await awaitApprovalRequest(handle.workflowId);
    await sendAnswer(handle, { key: 'approval', action: 'decline' });
    const result = (await handle.result()) as InvoiceResult;
    expect(result).toMatchObject({ outcome: 'rejected', approval: { decision: 'decline' }, payments: [] });
  });

  test.each([
    ['an unknown vendor', { vendorId: 'V-404' }, 'does not exist'],
    ['a vendor on hold', { vendorId: 'V-666' }, 'on hold'],
    ['an invoice number the ERP booked before', { invoiceNumber: 'INV-0001' }, 'already processed'],
  ])('refuses %s without asking for approval', async (_, overrides, reason) => {
    const handle = await start(sampleInvoice(overrides));
    const result = (await handle.result()) as InvoiceResult;
    expect(result.outcome).toBe('invalid');
    expect(result.reason).toContain(reason);
  });

  test('refuses a second invoice with the same number for the same vendor once the first was approved', async () => {
    const invoice = oneItem();
    const first = await start(invoice);
    await awaitApprovalRequest(first.workflowId);
    await sendAnswer(first, APPROVE);
    expect(await first.result()).toMatchObject({ outcome: 'paid' });
    expect(await erp().holder(invoice.vendorId, invoice.invoiceNumber)).toBe(first.workflowId);
    const second = (await (await start(invoice)).result()) as InvoiceResult;
    expect(second).toMatchObject({ outcome: 'invalid', reason: expect.stringContaining('already processed') });
  });

  test('validation registers nothing: a second task with a number awaiting approval is asked too, and the ERP refuses whichever is approved second', async () => {
    const invoice = oneItem();
    const first = await start(invoice);
    const second = await start(invoice);
    await awaitApprovalRequest(first.workflowId);
    await awaitApprovalRequest(second.workflowId);
    expect(await erp().holder(invoice.vendorId, invoice.invoiceNumber)).toBeUndefined();

    await sendAnswer(second, APPROVE);
    expect(await second.result()).toMatchObject({ outcome: 'paid' });
    await sendAnswer(first, APPROVE);
    const refused = (await first.result()) as InvoiceResult;
    expect(refused).toMatchObject({ outcome: 'invalid', approval: { decision: 'approve' }, payments: [] });
    expect(refused.reason).toContain('already processed');
    expect(await paid(first.workflowId)).toEqual([]);
    expect(await erp().holder(invoice.vendorId, invoice.invoiceNumber)).toBe(second.workflowId);
    await Worker.runReplayHistory({ workflowBundle: workflowBundle() }, await first.fetchHistory(), first.workflowId);
  });

  test.each([
    ['rejected', { key: 'approval', action: 'accept', content: { decision: 'reject' } }],
    ['declined', { key: 'approval', action: 'decline' }],
    ['cancelled before approval', undefined],
  ] as const)('an invoice %s does not block its number: the same number is paid by the next task', async (_, answer) => {
    const invoice = oneItem();
    const first = await start(invoice);
    await awaitApprovalRequest(first.workflowId);
    if (answer) {
      await sendAnswer(first, answer);
      expect(await first.result()).toMatchObject({ outcome: 'rejected' });
    } else await cancelAndWait(first);

    const next = await start(invoice);
    await awaitApprovalRequest(next.workflowId);
    await sendAnswer(next, APPROVE);
    expect(await next.result()).toMatchObject({ outcome: 'paid' });
  });

  test('cancelled after approval with nothing paid yet, it releases the number and says nothing was paid', async () => {
    const invoice = sampleInvoice({
      lineItems: [{ lineItemId: 'LI-1', description: 'Later', amount: 5, payOn: daysFromToday(30) }],
    });
    const first = await start(invoice);
    await awaitApprovalRequest(first.workflowId);
    await sendAnswer(first, APPROVE);
    await eventually(
      async () => ((await published(first.workflowId))?.statusMessage?.includes('scheduled:') ? true : undefined),
      'the timer',
    );
    expect(await erp().holder(invoice.vendorId, invoice.invoiceNumber)).toBe(first.workflowId);
    await cancelAndWait(first);
    expect((await published(first.workflowId))?.cancelledStatusMessage).toBe(
      'Cancelled after approval, before any payment; nothing was paid.',
    );
    expect(await erp().holder(invoice.vendorId, invoice.invoiceNumber)).toBeUndefined();
    await Worker.runReplayHistory({ workflowBundle: workflowBundle() }, await first.fetchHistory(), first.workflowId);
  });

  test('cancelled after paying LI-1, it reports LI-1 paid and LI-2 not, and keeps the number registered', async () => {
    const invoice = partlyScheduled();
    const handle = await start(invoice);
    await approveAndAwaitTimer(handle);
    await cancelAndWait(handle);
    const state = await published(handle.workflowId);
    expect(state?.cancelledStatusMessage).toBe('Cancelled after paying LI-1 (EUR 120.50); LI-2 was not paid.');
    expect(state?.statusMessage).toBe(state?.cancelledStatusMessage);
    expect(state?.actions).toBeUndefined();
    expect(await paid(handle.workflowId)).toEqual(['LI-1']);
    // Part of the invoice was paid: the same number must not be paid again by another task.
    expect(await erp().holder(invoice.vendorId, invoice.invoiceNumber)).toBe(handle.workflowId);
    expect(await (await start(invoice)).result()).toMatchObject({ outcome: 'invalid' });
    await Worker.runReplayHistory({ workflowBundle: workflowBundle() }, await handle.fetchHistory(), handle.workflowId);
  });

  test('a cancel during a payment waits for it to settle, and the report says what the ledger holds', async () => {
    const handle = await start(partlyScheduled());
    await awaitApprovalRequest(handle.workflowId);
    await sendAnswer(handle, APPROVE);
    await eventually(
      async () => ((await published(handle.workflowId))?.statusMessage?.includes('paying line item LI-1') ? true : undefined),
      'the payment',
    );
    await cancelAndWait(handle);
    const report = (await published(handle.workflowId))?.cancelledStatusMessage;
    const paidNow = await paid(handle.workflowId);
    expect(report).toBe(
      paidNow.length === 0
        ? 'Cancelled after approval, before any payment; nothing was paid.'
        : 'Cancelled after paying LI-1 (EUR 120.50); LI-2 was not paid.',
    );
    // No payment attempt is left running that could pay after the report.
    const pending = (await handle.describe()).raw.pendingActivities ?? [];
    expect(pending).toEqual([]);
  });

  test('waits on a durable timer for a future pay date, and pays early on release', async () => {
    const payOn = daysFromToday(90);
    const invoice = sampleInvoice({
      lineItems: [
        { lineItemId: 'NOW', description: 'Due now', amount: 10 },
        { lineItemId: 'PAST', description: 'Due last week', amount: 5, payOn: daysFromToday(-7) },
        { lineItemId: 'LATER', description: 'Due in three months', amount: 99.99, payOn },
      ],
    });
    const handle = await start(invoice);
    await awaitApprovalRequest(handle.workflowId);
    expect(await updateRejection(handle.executeUpdate(releaseScheduledPaymentUpdate, { args: [{ lineItemId: 'LATER' }] }))).toMatch(
      /not approved/,
    );
    await sendAnswer(handle, { key: 'approval', action: 'accept', content: { decision: 'approve' } });

    const waiting = await eventually(async () => {
      const state = await published(handle.workflowId);
      return state?.status === 'working' && state.statusMessage?.includes('scheduled:') ? state : undefined;
    }, 'the scheduled status');
    expect(waiting.status).toBe('working');
    expect(waiting.statusMessage).toContain(`LATER (EUR 99.99) on ${payOn}`);
    expect(waiting.statusMessage).toContain('paid 2 of 3');

    expect(await updateRejection(handle.executeUpdate(releaseScheduledPaymentUpdate, { args: [{ lineItemId: 'NOW' }] }))).toMatch(
      /already paid/,
    );
    expect(await updateRejection(handle.executeUpdate(releaseScheduledPaymentUpdate, { args: [{ lineItemId: 'NOPE' }] }))).toMatch(
      /no line item/,
    );
    // Only a release the bridge sealed is taken: a plain one is refused and pays nothing.
    expect(await updateRejection(handle.executeUpdate(releaseScheduledPaymentUpdate, { args: [{ lineItemId: 'LATER' }] }))).toMatch(
      /Release refused: it carries no seal/,
    );
    const payment = await handle.executeUpdate(releaseScheduledPaymentUpdate, { args: [await sealedRelease(handle, 'LATER')] });
    expect(payment).toMatchObject({ lineItemId: 'LATER', amount: 99.99, releasedBy: { principal: 'test:releaser' } });

    const result = (await handle.result()) as InvoiceResult;
    expect(result.outcome).toBe('paid');
    expect(result.payments.map((p) => p.lineItemId)).toEqual(['NOW', 'PAST', 'LATER']);
    const ledger = (await new PaymentsLedger(activities.ledgerDir).entries()).filter((e) => e.taskId === handle.workflowId);
    expect(ledger).toHaveLength(3);
    await Worker.runReplayHistory({ workflowBundle: workflowBundle() }, await handle.fetchHistory(), handle.workflowId);
  });

  test('cancellation ends the workflow cancelled while it waits for approval, saying nothing was paid', async () => {
    const handle = await start(sampleInvoice());
    await awaitApprovalRequest(handle.workflowId);
    await cancelAndWait(handle);
    const state = await published(handle.workflowId);
    expect(state).toMatchObject({ status: 'working', cancelledStatusMessage: 'Cancelled before approval; nothing was paid.' });
    expect(state?.inputs).toBeUndefined();
    await Worker.runReplayHistory({ workflowBundle: workflowBundle() }, await handle.fetchHistory(), handle.workflowId);
  });
});

/**
 * Histories recorded with the invoice workflow of commit 496b623, before the ERP registered on approval and before a
 * cancelled invoice reported its payments (test/histories): workflows of that code still running are
 * replayed by this one.
 */
describe('invoiceWorkflow replays histories of the code before the patches', () => {
  const dir = path.join(__dirname, 'histories');
  test.each(readdirSync(dir).filter((name) => name.endsWith('.json')))('%s replays without non-determinism', async (name) => {
    const history = temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(path.join(dir, name), 'utf8')));
    await Worker.runReplayHistory({ workflowBundle: workflowBundle() }, history, `legacy-${name}`);
  });
});

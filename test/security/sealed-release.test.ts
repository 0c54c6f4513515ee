/**
 * The invoice's release of a scheduled payment is sealed like an answer: a namespace writer's Update (no seal, a forged
 * one, or the bridge's seal of another task) pays nothing early and is kept as refused; the release through the MCP
 * tool pays at once and the payment says who released it. Against the run's dev server, through real SDK clients.
 */
import { randomUUID } from 'node:crypto';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { PaymentsLedger } from '../../examples/invoice-approval/src/activities/payments';
import {
  RELEASES_MEMO,
  releaseScheduledPaymentUpdate,
  type InvoiceResult,
  type Payment,
  type PublishedReleases,
  type ReleasePaymentRequest,
} from '../../examples/invoice-approval/src/invoice';
import { APPROVE, newMcpClient, ScriptedUser, taskResult, waitForTask } from '../helpers/mcp';
import { sampleInvoice, startInvoiceTask } from '../helpers/example';
import { daysFromToday, eventually } from '../helpers/temporal';
import { startStack, type TestStack } from '../helpers/test-stack';

const principal = `release-${randomUUID().slice(0, 8)}`;
let stack: TestStack;

beforeAll(async () => {
  stack = await startStack({ name: 'release', bridge: { principal } });
});

afterEach(() => stack.closeClients());

afterAll(async () => {
  if (!stack) return;
  await stack.terminateRunningOf(principal);
  await stack.stop();
});

/** The owner's client, approving every invoice it is asked about. */
async function owner(): Promise<McpClient> {
  const client = newMcpClient('release-owner');
  new ScriptedUser(() => APPROVE).attach(client);
  await stack.connect(client);
  return client;
}

/** An approved invoice task whose LI-1 is paid and whose LI-2 waits for a date three months away; and its result. */
async function approvedWithScheduledLine(client: McpClient): Promise<{ taskId: string; result: Promise<unknown> }> {
  const task = await startInvoiceTask(
    client,
    sampleInvoice({
      lineItems: [
        { lineItemId: 'LI-1', description: 'Paid on approval', amount: 10 },
        { lineItemId: 'LI-2', description: 'Paid in three months', amount: 99.99, payOn: daysFromToday(90) },
      ],
    }),
  );
  const result = taskResult(client, task.taskId, 60_000);
  await waitForTask(client, task.taskId, (seen) => seen.status === 'working' && /scheduled:/.test(seen.statusMessage ?? ''));
  return { taskId: task.taskId, result };
}

/** Why the workflow failed an Update sent past the bridge. */
async function refusalOf(update: Promise<unknown>): Promise<string> {
  try {
    await update;
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError) return error.cause?.message ?? error.message;
    throw error;
  }
  throw new Error('the Update was taken');
}

async function paidLines(taskId: string): Promise<string[]> {
  const entries = await new PaymentsLedger(stack.activities.ledgerDir).entries();
  return entries
    .filter((entry) => entry.taskId === taskId)
    .map((entry) => entry.lineItemId)
    .sort();
}

async function releasesOf(taskId: string): Promise<PublishedReleases | undefined> {
  return (await stack.temporal.workflow.getHandle(taskId).describe()).memo?.[RELEASES_MEMO] as PublishedReleases | undefined;
}

describe('releases only a bridge can ask for', () => {
  test('a plain Temporal client releases nothing; the release through the MCP tool pays at once and records who', async () => {
    const client = await owner();
    const { taskId, result } = await approvedWithScheduledLine(client);
    const handle = stack.temporal.workflow.getHandle(taskId);

    // The namespace writer's release, as `temporal workflow update execute` sends it, and one with a forged seal.
    expect(await refusalOf(handle.executeUpdate(releaseScheduledPaymentUpdate, { args: [{ lineItemId: 'LI-2' }] }))).toBe(
      'Release refused: it carries no seal',
    );
    const { workflowId } = handle;
    const { originalRunId } = await eventually(async () => {
      const { events } = await handle.fetchHistory();
      const id = events![0].workflowExecutionStartedEventAttributes?.originalExecutionRunId;
      return id ? { originalRunId: id } : undefined;
    }, 'the original run id');
    const forged: ReleasePaymentRequest = {
      lineItemId: 'LI-2',
      sealed: JSON.stringify({
        v: 1,
        kind: 'action',
        workflowId,
        originalRunId,
        update: 'releaseScheduledPayment',
        subject: { lineItemId: 'LI-2' },
        requestedBy: { principal },
        requestedAt: new Date().toISOString(),
      }),
      proof: 'v1.AAAAAAAA.forged',
    };
    expect(await refusalOf(handle.executeUpdate(releaseScheduledPaymentUpdate, { args: [forged] }))).toMatch(
      /^Release refused: its seal does not hold \(a proof made with key AAAAAAAA/,
    );
    expect(await paidLines(taskId)).toEqual(['LI-1']);
    expect((await releasesOf(taskId))?.refused).toEqual([
      { update: 'releaseScheduledPayment', subject: 'LI-2', reason: 'it carries no seal', at: expect.any(String) },
      {
        update: 'releaseScheduledPayment',
        subject: 'LI-2',
        reason: expect.stringMatching(/^its seal does not hold/),
        at: expect.any(String),
      },
    ]);

    // The owner's release through the bridge pays at once, and says who released it.
    const released = await client.callTool({ name: 'release_scheduled_payment', arguments: { taskId, lineItemId: 'LI-2' } });
    expect(released.isError).toBeFalsy();
    const releasedBy = { principal, via: 'release_scheduled_payment', at: expect.any(String) };
    expect(released.structuredContent).toMatchObject({ lineItemId: 'LI-2', amount: 99.99, releasedBy });
    expect(await paidLines(taskId)).toEqual(['LI-1', 'LI-2']);
    const outcome = (await result) as { structuredContent: InvoiceResult };
    expect(outcome.structuredContent.payments.find((payment: Payment) => payment.lineItemId === 'LI-2')?.releasedBy).toEqual(releasedBy);
    expect(outcome.structuredContent.payments.find((payment: Payment) => payment.lineItemId === 'LI-1')?.releasedBy).toBeUndefined();
    expect((await releasesOf(taskId))?.released).toEqual([{ lineItemId: 'LI-2', ...releasedBy }]);
  });

  test("the bridge's sealed release copied onto another task is refused there", async () => {
    const client = await owner();
    const first = await approvedWithScheduledLine(client);
    const second = await approvedWithScheduledLine(client);
    expect(
      (await client.callTool({ name: 'release_scheduled_payment', arguments: { taskId: first.taskId, lineItemId: 'LI-2' } })).isError,
    ).toBeFalsy();
    await first.result;
    // The Update's argument, as the first task's history holds it.
    const { events } = await stack.temporal.workflow.getHandle(first.taskId).fetchHistory();
    const accepted = events!.find(
      (event) => event.workflowExecutionUpdateAcceptedEventAttributes,
    )!.workflowExecutionUpdateAcceptedEventAttributes!;
    const sealed = stack.temporal.options.loadedDataConverter.payloadConverter.fromPayload(
      accepted.acceptedRequest!.input!.args!.payloads![0],
    ) as ReleasePaymentRequest;
    expect(sealed.sealed).toEqual(expect.any(String));
    expect(
      await refusalOf(stack.temporal.workflow.getHandle(second.taskId).executeUpdate(releaseScheduledPaymentUpdate, { args: [sealed] })),
    ).toBe('Release refused: its seal was made for another run');
    expect(await paidLines(second.taskId)).toEqual(['LI-1']);
    // The refusal leaves the task as it was: its owner still releases the line.
    expect(
      (await client.callTool({ name: 'release_scheduled_payment', arguments: { taskId: second.taskId, lineItemId: 'LI-2' } })).isError,
    ).toBeFalsy();
    await second.result;
    expect(await paidLines(second.taskId)).toEqual(['LI-1', 'LI-2']);
  });
});

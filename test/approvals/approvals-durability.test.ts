/**
 * Approvals survive crashes: the MCP server, the worker and the Temporal dev server are SIGKILLed between the first and
 * the second approval of an invoice that needs two; after the restart nothing is lost (the first approval still
 * counts), nobody is asked again (the first approver's inbox is empty, a repeat is refused), and each line item is paid
 * once. A stack of its own (the drill's rig), since the shared dev server is killed here.
 */
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { readNotifications } from '../../src/activities/notifications';
import { PaymentsLedger } from '../../examples/invoice-approval/src/activities/payments';
import type { InvoiceResult } from '../../examples/invoice-approval/src/invoice';
import { Rig } from '../../scripts/lib/rig';
import { answer, ApprovalClients, awaitInInbox, inbox, makePeople, textOf, writeTokensFile } from '../helpers/approvals';
import { taskResult, waitForTask } from '../helpers/mcp';
import { daysFromToday } from '../helpers/temporal';
import { sampleInvoice } from '../helpers/example';

const people = makePeople({ sam: 'ap-approver', ann: 'ap-approver', bob: 'ap-approver' });
let rig: Rig;
let passed = false;

beforeAll(async () => {
  rig = new Rig({
    name: 'approvals-kill',
    workerEnv: { INVOICE_APPROVER_ROLE: 'ap-approver', INVOICE_SECOND_APPROVER_ABOVE: '1000', PAYMENT_DELAY_MS: '200' },
    serverEnv: { MCP_AUTH_TOKENS_FILE: writeTokensFile(people) },
  });
  await rig.up();
}, 300_000);

afterAll(async () => {
  await rig?.down(!passed);
});

test('the server, the worker and Temporal killed between two approvals: the first still counts, nobody is asked again, each line item paid once', async () => {
  let clients = new ApprovalClients();
  const connect = (person: (typeof people)[keyof typeof people]): Promise<McpClient> => clients.connect(rig.url, person);
  const [sam, ann] = await Promise.all([connect(people.sam), connect(people.ann)]);
  const invoice = sampleInvoice({
    lineItems: [
      { lineItemId: 'LI-1', description: 'Servers', amount: 9_000 },
      { lineItemId: 'LI-2', description: 'Rack space, next quarter', amount: 3_000, payOn: daysFromToday(90) },
    ],
  });
  const created = await sam.request(
    { method: 'tools/call', params: { name: 'process_invoice', arguments: invoice as never, task: {} } },
    CreateTaskResultSchema,
  );
  const { taskId } = created.task;
  await awaitInInbox(ann, taskId, undefined, 60_000);
  expect((await answer(ann, taskId, 'approve', { comment: 'first of two' })).isError).toBeFalsy();
  await waitForTask(
    sam,
    taskId,
    (task) => task.statusMessage?.startsWith('Waiting for 1 of 2 approvals by ap-approver, escalates ') ?? false,
  );

  await clients.closeAll();
  await rig.killAndRestart({ server: true, worker: true, temporal: true });

  clients = new ApprovalClients();
  const [sam2, ann2, bob] = await Promise.all([connect(people.sam), connect(people.ann), connect(people.bob)]);
  try {
    // Nothing lost: bob sees one of two approvals given; nobody asked again: ann's inbox is empty and a repeat is refused.
    const entry = await awaitInInbox(bob, taskId, (item) => item.accepted === 1, 60_000);
    expect(entry).toMatchObject({ required: 2, accepted: 1 });
    expect((await inbox(ann2)).some((item) => item.taskId === taskId)).toBe(false);
    expect(textOf(await answer(ann2, taskId, 'approve'))).toBe('You have answered this question already. Nothing was recorded.');

    expect((await answer(bob, taskId, 'approve')).isError).toBeFalsy();
    await waitForTask(sam2, taskId, (task) => /scheduled: LI-2/.test(task.statusMessage ?? ''), 60_000);
    expect((await sam2.callTool({ name: 'release_scheduled_payment', arguments: { taskId, lineItemId: 'LI-2' } })).isError).toBeFalsy();
    const result = await taskResult(sam2, taskId);
    const outcome = result.structuredContent as InvoiceResult;
    expect(outcome.outcome).toBe('paid');
    expect(outcome.approval?.approvers?.map((a) => [a.principal, a.decision, a.comment])).toEqual([
      [people.ann.principal, 'approve', 'first of two'],
      [people.bob.principal, 'approve', undefined],
    ]);
    const payments = (await new PaymentsLedger(rig.ledgerDir).entries()).filter((entry) => entry.taskId === taskId);
    expect(payments.map((payment) => payment.lineItemId).sort()).toEqual(['LI-1', 'LI-2']);
    const notifications = (await readNotifications(rig.outbox)).filter((n) => n.taskId === taskId);
    expect(notifications.map((n) => n.kind)).toEqual(['asked', 'decided']);
    passed = true;
  } finally {
    await clients.closeAll();
  }
});

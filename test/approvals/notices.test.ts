/**
 * Every notice is carried out before the task ends: however a question ends (approved, rejected, declined, expired,
 * cancelled), its `decided` notice has reached the submitter and everyone who was asked, by mail and by webhook, by
 * the time the workflow has closed. An activity the workflow scheduled in the task that completed it would never run.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { randomUUID } from 'node:crypto';
import type { DecisionNotification } from '../../src/contract/approvals';
import { notificationDeliveryFromEnv } from '../../src/activities/notification-delivery-config';
import { answer, ApprovalClients, awaitInInbox, callAnswer, makePeople, writeTokensFile } from '../helpers/approvals';
import { deliveryEnv, MailReceiver, WebhookReceiver } from '../helpers/receivers';
import { FIXTURES, startDecisionTask, type FixtureStack } from '../fixtures/stack';
import { startStack } from '../helpers/test-stack';

const SECRET = `whsec_${Buffer.alloc(32, 44).toString('base64')}`;

// sam asks; ann and bob may approve (one approval is enough).
const principals = makePeople({ sam: '', ann: 'ap-approver', bob: 'ap-approver' });

let dir: string;
let hooks: WebhookReceiver;
let mailbox: MailReceiver;
let stack: FixtureStack;
const clients = new ApprovalClients();

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-notices-'));
  [hooks, mailbox] = await Promise.all([WebhookReceiver.start(SECRET), MailReceiver.start()]);
  const people = Object.entries(principals).map(([name, person]) => ({
    name,
    principals: [person.principal],
    roles: person.roles.split(',').filter(Boolean),
    email: `${name}@example.com`,
    webhook: `${hooks.url}/${name}`,
  }));
  writeFileSync(path.join(dir, 'approvers.json'), JSON.stringify({ people }));
  const env = { MCP_AUTH_TOKENS_FILE: writeTokensFile(principals), MCP_TASK_OPS_PER_SECOND: '0' };
  const delivery = deliveryEnv({ directory: path.join(dir, 'approvers.json'), mailbox, secret: SECRET, ledger: path.join(dir, 'sent') });
  stack = await startStack({
    name: 'notices',
    app: FIXTURES,
    activities: { notificationDelivery: notificationDeliveryFromEnv(delivery) },
    servers: [{ env }],
  });
}, 120_000);

afterAll(async () => {
  await clients.closeAll();
  await stack?.stop();
  await Promise.all([hooks?.stop(), mailbox?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Asks ann and bob to approve a subject of its own (due after `dueAfterMs`, when given); its task id and subject (which
 * the mail's subject names).
 */
async function submit(client: McpClient, dueAfterMs?: number): Promise<{ taskId: string; subject: string }> {
  const subject = `Order ${randomUUID().slice(0, 8)}`;
  const taskId = await startDecisionTask(client, { subject, roles: ['ap-approver'], ...(dueAfterMs && { dueAfterMs }) });
  return { taskId, subject };
}

/** Waits until the task's workflow has closed, as Temporal says, and returns how. */
async function closed(on: FixtureStack, taskId: string): Promise<string> {
  return (await on.temporal.workflow
    .getHandle(taskId)
    .result()
    .then(
      () => 'COMPLETED',
      (error: Error) => error.name,
    )) as string;
}

/**
 * The `decided` notice of `taskId` each person received, read at once (no waiting: it was delivered before the
 * workflow closed): by mail its subject and lead, by webhook its outcome.
 */
function decidedNotices({
  taskId,
  subject,
}: {
  taskId: string;
  subject: string;
}): Record<string, { mail: string[]; webhook: (string | undefined)[] }> {
  const seen: Record<string, { mail: string[]; webhook: (string | undefined)[] }> = {};
  for (const name of Object.keys(principals)) {
    const mail = mailbox
      .to(`${name}@example.com`)
      .filter(
        (message) =>
          message.headers.subject.includes(subject) && !/^(Approval requested|Reminder|Escalated|Handed)/.test(message.headers.subject),
      )
      .map((message) => `${message.headers.subject.split(':')[0]} | ${message.text.split('\n')[2]}`);
    const webhook = hooks
      .delivered(`/${name}`)
      .map((call) => JSON.parse(call.body) as { type: string; data: { notification: DecisionNotification } })
      .filter((body) => body.type === 'approval.decided' && body.data.notification.taskId === taskId)
      .map((body) => body.data.notification.outcome);
    seen[name] = { mail, webhook };
  }
  return seen;
}

test.each([
  ['approved', 'accept', 'COMPLETED', 'Approved', 'accepted', 'was approved'],
  ['rejected', 'reject', 'COMPLETED', 'Declined', 'declined', 'was declined'],
  ['declined', 'decline', 'COMPLETED', 'Declined', 'declined', 'was declined'],
] as const)(
  'notices: %s, the submitter and both approvers were told by mail and webhook before the workflow closed',
  async (_ending, action, closing, subject, outcome, words) => {
    const [sam, ann] = await Promise.all([
      clients.connect(stack.server.url, principals.sam),
      clients.connect(stack.server.url, principals.ann),
    ]);
    const submitted = await submit(sam);
    const { taskId } = submitted;
    await awaitInInbox(ann, taskId);
    const answered =
      action === 'decline'
        ? await callAnswer(ann, { taskId, key: 'approval', action: 'decline' })
        : await answer(ann, taskId, action === 'accept' ? 'approve' : 'reject');
    expect(answered.isError ?? false).toBe(false);
    expect(await closed(stack, taskId)).toBe(closing);
    expect(decidedNotices(submitted)).toEqual({
      sam: { mail: [`${subject} | Your request ${words}.`], webhook: [outcome] },
      ann: { mail: [`${subject} | sam's request you were asked about ${words}; nothing waits for you.`], webhook: [outcome] },
      bob: { mail: [`${subject} | sam's request you were asked about ${words}; nothing waits for you.`], webhook: [outcome] },
    });
  },
);

test('notices: expired, nobody answered in time; everyone was told before the workflow closed', async () => {
  const sam = await clients.connect(stack.server.url, principals.sam);
  // Nobody answers in time: the question is due after 3 s.
  const submitted = await submit(sam, 3_000);
  expect(await closed(stack, submitted.taskId)).toBe('COMPLETED');
  const told = (who: string) =>
    `Overdue | ${who} was not answered in time: it ended overdue${who === 'Your request' ? '.' : '; nothing waits for you.'}`;
  expect(decidedNotices(submitted)).toEqual({
    sam: { mail: [told('Your request')], webhook: ['overdue'] },
    ann: { mail: [told("sam's request you were asked about")], webhook: ['overdue'] },
    bob: { mail: [told("sam's request you were asked about")], webhook: ['overdue'] },
  });
});

test('notices: cancelled while it waited for approval; everyone was told before the workflow closed cancelled', async () => {
  const [sam, ann] = await Promise.all([
    clients.connect(stack.server.url, principals.sam),
    clients.connect(stack.server.url, principals.ann),
  ]);
  const submitted = await submit(sam);
  const { taskId } = submitted;
  await awaitInInbox(ann, taskId);
  await sam.experimental.tasks.cancelTask(taskId);
  expect(await closed(stack, taskId)).toBe('WorkflowFailedError');
  const { status } = await stack.temporal.workflow.getHandle(taskId).describe();
  expect(status.name).toBe('CANCELLED');
  expect(decidedNotices(submitted)).toEqual({
    sam: { mail: ['Cancelled | Your request was cancelled before it was decided.'], webhook: ['cancelled'] },
    ann: {
      mail: ["Cancelled | sam's request you were asked about was cancelled before it was decided; nothing waits for you."],
      webhook: ['cancelled'],
    },
    bob: {
      mail: ["Cancelled | sam's request you were asked about was cancelled before it was decided; nothing waits for you."],
      webhook: ['cancelled'],
    },
  });
});

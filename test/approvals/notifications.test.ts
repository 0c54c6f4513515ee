/**
 * Approvers are reached, not only written down: the worker's notification activity delivers each notification about an
 * addressed question to the people of the approvers directory, by webhook (signed as Standard Webhooks prescribe) and
 * by mail (SMTP), to real receivers in this process, each delivery once across the activity's retries, and never to
 * the submitter, who holds the approver role too.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { DefaultLogger } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { NOTIFY_ACTIVITY, type DecisionNotification } from '../../src/contract/approvals';
import { notificationDeliveryFromEnv } from '../../src/activities/notification-delivery-config';
import { createNotificationActivities, readNotifications } from '../../src/activities/notifications';
import { pollUntil } from '../../src/util/wait';
import { ApprovalClients, makePeople, writeTokensFile } from '../helpers/approvals';
import { deliveryEnv, MailReceiver, WebhookReceiver, type WebhookCall } from '../helpers/receivers';
import { ApprovalLinks } from '../../src/records/approval-links';
import { taskKeyFromEnv } from '../../src/shared/task-key';
import { FIXTURES, startDecisionTask, type FixtureStack } from '../fixtures/stack';
import { startStack } from '../helpers/test-stack';

const SECRET = `whsec_${Buffer.alloc(32, 42).toString('base64')}`;
const OTHER_SECRET = `whsec_${Buffer.alloc(32, 43).toString('base64')}`;

// sam asks and holds the approver role; ann and bob approve; mia manages (not asked until an escalation).
const principals = makePeople({ sam: 'ap-approver', ann: 'ap-approver', bob: 'ap-approver', mia: 'ap-manager' });

let dir: string;
let hooks: WebhookReceiver;
let mailbox: MailReceiver;
let stack: FixtureStack;
const clients = new ApprovalClients();

/** The directory file: each person under a plain name, their principal, roles, a mail address and a webhook. */
function writeDirectory(): string {
  const people = Object.entries(principals).map(([name, person]) => ({
    name,
    principals: [person.principal],
    roles: person.roles.split(',').filter(Boolean),
    email: `${name}@example.com`,
    webhook: `${hooks.url}/${name}`,
  }));
  const file = path.join(dir, 'approvers.json');
  writeFileSync(file, JSON.stringify({ people }, null, 2));
  return file;
}

/** The delivery settings as the worker reads them from its environment. */
function deliveryOf(ledger: string): NodeJS.ProcessEnv {
  return deliveryEnv({
    directory: path.join(dir, 'approvers.json'),
    mailbox,
    secret: SECRET,
    ledger: path.join(dir, ledger),
    taskViewUrl: 'https://tasks.example.com/view/{taskId}',
    publicUrl: PUBLIC_URL,
  });
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-notify-'));
  [hooks, mailbox] = await Promise.all([WebhookReceiver.start(SECRET), MailReceiver.start()]);
  writeDirectory();
  const env = { MCP_AUTH_TOKENS_FILE: writeTokensFile(principals), MCP_TASK_OPS_PER_SECOND: '0' };
  stack = await startStack({
    name: 'notifications',
    app: FIXTURES,
    activities: { notificationDelivery: notificationDeliveryFromEnv(deliveryOf('sent-by-worker')) },
    servers: [{ env }],
  });
}, 120_000);

afterAll(async () => {
  await clients.closeAll();
  await stack?.stop();
  await Promise.all([hooks?.stop(), mailbox?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

/** An activity context outside a worker, logging errors only (the failures here are expected). */
function activityEnvironment(): MockActivityEnvironment {
  return new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
}

/**
 * Asks the holders of ap-approver for two approvals of an order of its own, with details; its task id and order number.
 * The question's line is over 100 characters, so a mail's subject cuts it.
 */
async function submit(client: McpClient): Promise<{ taskId: string; order: string }> {
  const order = `ORD-${randomUUID().slice(0, 8)}`;
  const taskId = await startDecisionTask(client, {
    subject: `order ${order}: four laptops for the support team, and a support contract for the second half of the year`,
    roles: ['ap-approver'],
    required: 2,
    details: { order, units: 4, total: 6_800 },
  });
  return { taskId, order };
}

/** The attempt on which the task's completed `mcpNotify` activity succeeded, once it did. */
async function notifyCompletedOnAttempt(taskId: string): Promise<number | undefined> {
  const history = await stack.temporal.workflow.getHandle(taskId).fetchHistory();
  const events = history.events ?? [];
  const scheduled = events.find((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === NOTIFY_ACTIVITY);
  if (!scheduled) return undefined;
  const completed = events.find(
    (event) => String(event.activityTaskCompletedEventAttributes?.scheduledEventId) === String(scheduled.eventId),
  );
  if (!completed) return undefined;
  const started = events.find((event) => String(event.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled.eventId));
  return started?.activityTaskStartedEventAttributes?.attempt ?? undefined;
}

/** The approvals page the mail and webhooks link each question to. */
const PUBLIC_URL = 'https://approvals.example.com';

/** The question a link names, read with the task key of the environment the worker delivers with. */
function linkTarget(link: string) {
  return new ApprovalLinks(taskKeyFromEnv(deliveryOf('sent-by-worker'))).read(new URL(link).searchParams.get('q')!);
}

function bodyOf(call: WebhookCall): {
  type: string;
  timestamp: string;
  data: { recipient: string; subject: string; text: string; link?: string; answerLink?: string; notification: DecisionNotification };
} {
  return JSON.parse(call.body);
}

test('notifications: a question reaches its approvers by webhook and mail once each across a retry, never the asker who holds the role', async () => {
  // ann's mailbox is busy the first time: that attempt of the activity fails after the other deliveries went through.
  let annTurnedAway = false;
  mailbox.refuse = (address) => {
    if (address !== 'ann@example.com' || annTurnedAway) return false;
    annTurnedAway = true;
    return true;
  };
  const sam = await clients.connect(stack.server.url, principals.sam);
  const { taskId, order } = await submit(sam);

  const attempt = await pollUntil(() => notifyCompletedOnAttempt(taskId), {
    timeoutMs: 60_000,
    intervalMs: 250,
    what: `the asked notification of ${taskId} to complete`,
  });
  expect(mailbox.refused).toEqual(['ann@example.com']);
  expect(attempt).toBeGreaterThanOrEqual(2);

  // Each approver got one mail and one webhook call; the submitter (who holds the role) and the manager none.
  const annMail = mailbox.to('ann@example.com');
  const bobMail = mailbox.to('bob@example.com');
  expect([annMail.length, bobMail.length]).toEqual([1, 1]);
  expect(mailbox.to('sam@example.com')).toEqual([]);
  expect(mailbox.to('mia@example.com')).toEqual([]);
  expect(hooks.delivered('/ann')).toHaveLength(1);
  expect(hooks.delivered('/bob')).toHaveLength(1);
  expect(hooks.calls.filter((call) => call.path === '/sam' || call.path === '/mia')).toEqual([]);
  expect(hooks.calls.every((call) => call.verified)).toBe(true);
  expect(readdirSync(path.join(dir, 'sent-by-worker')).filter((name) => name.endsWith('.json'))).toHaveLength(4);

  // The mail: sender, subject, a stable Message-ID of its own per person, and what the approver needs to answer.
  const mail = annMail[0];
  expect(mail.from).toBe('approvals@example.com');
  // The question's first line, cut between words at 100 characters.
  expect(mail.headers.subject).toBe(
    `Approval requested: Approve order ${order}: four laptops for the support team, and a support contract for the…`,
  );
  expect(mail.headers['message-id']).toMatch(/^<[A-Za-z0-9_-]{32}@example\.com>$/);
  expect(bobMail[0].headers['message-id']).not.toBe(mail.headers['message-id']);
  expect(mail.headers['auto-submitted']).toBe('auto-generated');
  expect(mail.text).toContain('Hello ann,');
  expect(mail.text).toContain('sam asks for your approval.');
  expect(mail.text).toContain('Submitted by: sam');
  expect(mail.text).toContain(`  order: ${order}\n  units: 4\n  total: 6800\n`);
  expect(mail.text).toContain('Progress: 0 of 2 approvals.');
  expect(mail.text).toContain(`approvals_answer with taskId "${taskId}" and key "approval"`);
  expect(mail.text).toContain(`Task view: https://tasks.example.com/view/${encodeURIComponent(taskId)}`);
  // It leads with ann's own signed link to the question on the approvals page, before the MCP instructions.
  const annLink = /Answer on the approvals page: (\S+)/.exec(mail.text)?.[1];
  expect(linkTarget(annLink!)).toEqual({ person: 'ann', taskId, key: 'approval' });
  expect(mail.text.indexOf(annLink!)).toBeLessThan(mail.text.indexOf('approvals_inbox'));

  // The webhook call: Standard Webhooks headers, the event type, the message and the notification.
  const call = hooks.delivered('/bob')[0];
  expect(call.headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9_-]{32}$/);
  expect(call.headers['webhook-id']).not.toBe(hooks.delivered('/ann')[0].headers['webhook-id']);
  const body = bodyOf(call);
  expect(body.type).toBe('approval.asked');
  expect(body.data.recipient).toBe('bob');
  expect(body.data.notification).toMatchObject({ kind: 'asked', taskId, key: 'approval', accepted: 0, required: 2 });
  expect(body.data.text).toContain('sam asks for your approval.');
  expect(body.timestamp).toBe(body.data.notification.at);
  // The same link as bob's mail, for bob: signed with the task key, naming him, the task and the question.
  expect(body.data.answerLink!.startsWith(`${PUBLIC_URL}/approvals?q=`)).toBe(true);
  expect(linkTarget(body.data.answerLink!)).toEqual({ person: 'bob', taskId, key: 'approval' });
  expect(body.data.text).toContain(body.data.answerLink);

  // The signature holds for the shared secret only, and for the body as sent only.
  const headers = call.headers as Record<string, string>;
  expect(() => new Webhook(SECRET).verify(call.body, headers)).not.toThrow();
  expect(() => new Webhook(OTHER_SECRET).verify(call.body, headers)).toThrow(WebhookVerificationError);
  expect(() => new Webhook(SECRET).verify(call.body.replace('"bob"', '"eve"'), headers)).toThrow(WebhookVerificationError);

  // The outbox still has the notification, as before.
  expect((await readNotifications(stack.activities.notificationOutbox)).map((n) => n.id)).toContain(`${taskId}/approval/asked/1`);
});

test('notifications: a retried activity delivers only what failed; the message shows submitter, the subject with its lines and amounts, 1 of 2 and how to answer', async () => {
  const config = notificationDeliveryFromEnv(deliveryOf('sent-direct'))!;
  const outbox = path.join(dir, 'direct.jsonl');
  const notify = createNotificationActivities(outbox, config)[NOTIFY_ACTIVITY];
  const taskId = `invoice-direct-${Date.now()}`;
  const notification: DecisionNotification = {
    id: `${taskId}/approval/reminder/1`,
    kind: 'reminder',
    taskId,
    key: 'approval',
    message: 'Approve invoice INV-77 from vendor V-100 (Acme Office Supplies): EUR 6,800.00 in 2 line item(s)?',
    audience: { roles: ['ap-approver'], required: 2 },
    requester: principals.sam.principal,
    answeredBy: [principals.ann.principal],
    subject: {
      vendorId: 'V-100',
      vendorName: 'Acme Office Supplies',
      invoiceNumber: 'INV-77',
      currency: 'EUR',
      total: 6_800,
      lineItems: [
        { lineItemId: 'LI-1', description: 'Laptops, 4 units', amount: 5_600 },
        { lineItemId: 'LI-2', description: 'Support contract, second half', amount: 1_200, payOn: '2027-02-24' },
      ],
    },
    accepted: 1,
    required: 2,
    escalatesAt: '2026-11-30T09:00:00.000Z',
    dueAt: '2026-12-03T09:00:00.000Z',
    at: new Date().toISOString(),
  };
  // bob's webhook fails on the first attempt.
  let failed = false;
  hooks.answer = (call) => {
    if (call.path !== '/bob' || failed || !call.body.includes(taskId)) return 204;
    failed = true;
    return 500;
  };
  mailbox.refuse = () => false;
  const mailBefore = mailbox.mail.length;
  const forTask = (calls: WebhookCall[]) => calls.filter((call) => call.body.includes(taskId));

  const first = activityEnvironment().run(notify, notification);
  await expect(first).rejects.toThrow(ApplicationFailure);
  await expect(first).rejects.toThrow(/1 of 2 deliveries of notification .* failed .*: webhook to bob: 127\.0\.0\.1:\d+ answered HTTP 500/);
  expect(forTask(hooks.calls).map((call) => [call.path, call.status])).toEqual([['/bob', 500]]);
  expect(mailbox.mail.slice(mailBefore).map((mail) => mail.to)).toEqual([['bob@example.com']]);

  await activityEnvironment().run(notify, notification);
  expect(forTask(hooks.calls).map((call) => [call.path, call.status])).toEqual([
    ['/bob', 500],
    ['/bob', 204],
  ]);
  // A third run, as a duplicate of the activity would be, sends nothing.
  await activityEnvironment().run(notify, notification);
  expect(forTask(hooks.calls)).toHaveLength(2);
  const sent = mailbox.mail.slice(mailBefore);
  expect(sent.map((mail) => mail.to)).toEqual([['bob@example.com']]);

  const mail = sent[0];
  expect(mail.headers.subject).toBe(
    'Reminder: approval requested: Approve invoice INV-77 from vendor V-100 (Acme Office Supplies): EUR 6,800.00 in 2 line item(s)?',
  );
  expect(mail.text).toContain("Reminder: sam's request still waits for your approval.");
  expect(mail.text).toContain('Submitted by: sam');
  expect(mail.text).toContain('  vendorName: Acme Office Supplies\n  invoiceNumber: INV-77\n  currency: EUR\n  total: EUR 6,800.00\n');
  expect(mail.text).toContain('    - lineItemId: LI-1, description: "Laptops, 4 units", amount: EUR 5,600.00\n');
  expect(mail.text).toContain(
    '    - lineItemId: LI-2, description: "Support contract, second half", amount: EUR 1,200.00, payOn: 2027-02-24\n',
  );
  expect(mail.text).toContain('Progress: 1 of 2 approvals.');
  expect(mail.text).toContain('Escalates: Mon 30 Nov 2026, 09:00 UTC');
  expect(mail.text).toContain('Due: Thu 3 Dec 2026, 09:00 UTC');
  expect(mail.text).toContain('approvals_inbox lists the questions waiting for you.');
  expect(mail.text).toContain(`approvals_answer with taskId "${taskId}" and key "approval"`);
  const call = forTask(hooks.delivered('/bob'))[0];
  expect(bodyOf(call).type).toBe('approval.reminder');
  expect(bodyOf(call).data.text).toBe(mail.text);

  // Every attempt wrote the outbox line; readers keep the first of each id.
  expect(await readNotifications(outbox)).toEqual([notification]);
});

import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Context, log } from '@temporalio/activity';
import { defineSearchAttributeKey, IllegalStateError, SearchAttributeType } from '@temporalio/common';
import { NOTIFY_ACTIVITY, type DecisionNotification } from '../contract/approvals';
import { PRINCIPAL_SEARCH_ATTRIBUTE } from '../contract/task-contract';
import { NotificationDeliverer, type NotificationDeliveryConfig } from './notification-delivery';
import { heartbeating } from '../util/heartbeat';

const PRINCIPAL = defineSearchAttributeKey(PRINCIPAL_SEARCH_ATTRIBUTE, SearchAttributeType.KEYWORD);

/**
 * The {@link NOTIFY_ACTIVITY} activity. It appends each notification about an addressed question (asked, reminder,
 * escalated, delegated, decided) to the outbox, a JSON-lines file, one object a line, for an operator to tail or ship
 * with the log pipeline; a retried activity may append a line twice, with the same `id`, so readers keep the first
 * line of each id. With `delivery`, it then reaches the people of the approvers directory the notification is for, by
 * webhook and by mail, each delivery once across retries (see {@link NotificationDeliverer}); a delivery that fails
 * fails the activity, and Temporal retries it.
 */
export function createNotificationActivities(outboxFile: string, delivery?: NotificationDeliveryConfig) {
  const file = path.resolve(outboxFile);
  const deliverer = delivery && new NotificationDeliverer(delivery);
  return {
    async [NOTIFY_ACTIVITY](notification: DecisionNotification): Promise<void> {
      await heartbeating(async () => {
        await appendToOutbox(file, notification);
        if (!deliverer) return;
        await deliverer.deliver(notification.requester !== undefined ? notification : await withRequester(notification));
      });
    },
  };
}

/**
 * `notification` with its `requester` read from the calling workflow's `McpPrincipal` search attribute, for workflows
 * that send notifications without one: the submitter is not asked to approve their own request. Unchanged when there
 * is no client to ask (an activity test environment) or the workflow has no principal.
 */
async function withRequester(notification: DecisionNotification): Promise<DecisionNotification> {
  const context = Context.current();
  let client;
  try {
    client = context.client;
  } catch (error) {
    if (error instanceof IllegalStateError) return notification;
    throw error;
  }
  const execution = context.info.workflowExecution;
  const description = await client.workflow.getHandle(execution?.workflowId ?? notification.taskId, execution?.runId).describe();
  const requester = description.typedSearchAttributes.get(PRINCIPAL);
  return requester !== undefined ? { ...notification, requester } : notification;
}

/** Appends `notification` to the outbox as one line, synced before it returns. */
async function appendToOutbox(file: string, notification: DecisionNotification): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const handle = await fs.open(file, 'a', 0o600);
  try {
    // One write per line in append mode: lines of concurrent activities never interleave.
    await handle.write(`${JSON.stringify(notification)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  log.info('notification written', { id: notification.id, kind: notification.kind, outbox: file });
}

/** The outbox file: NOTIFICATION_OUTBOX, default `.data/notifications.jsonl` in the current folder. */
export function notificationOutboxFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.NOTIFICATION_OUTBOX || path.join('.data', 'notifications.jsonl'));
}

/** The notifications in an outbox file, first line of each id, in the order written; none when there is no file. */
export async function readNotifications(outboxFile: string): Promise<DecisionNotification[]> {
  const text = await fs.readFile(outboxFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  const seen = new Map<string, DecisionNotification>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const notification = JSON.parse(line) as DecisionNotification;
    if (!seen.has(notification.id)) seen.set(notification.id, notification);
  }
  return [...seen.values()];
}

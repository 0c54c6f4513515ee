import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Context, log } from '@temporalio/activity';
import { defineSearchAttributeKey, IllegalStateError, SearchAttributeType } from '@temporalio/common';
import { NOTIFY_ACTIVITY, type DecisionNotification } from '../contract/approvals';
import { PRINCIPAL_SEARCH_ATTRIBUTE } from '../contract/task-contract';
import { NotificationDeliverer } from './notification-delivery';
import type { NotificationDeliveryConfig } from './notification-delivery-config';
import type { PayloadKeys } from '../shared/payload-keys';
import { heartbeating } from '../util/heartbeat';

const PRINCIPAL = defineSearchAttributeKey(PRINCIPAL_SEARCH_ATTRIBUTE, SearchAttributeType.KEYWORD);

/**
 * The {@link NOTIFY_ACTIVITY} activity. It appends each notification about an addressed question (asked, reminder,
 * escalated, delegated, decided) to the outbox, a JSON-lines file, one object a line, for an operator to tail or ship
 * with the log pipeline; a retried activity may append a line twice, with the same `id`, so readers keep the first
 * line of each id. With `delivery`, it then reaches the people of the approvers directory the notification is for, by
 * webhook and by mail, each delivery once across retries (see {@link NotificationDeliverer}); a delivery that fails
 * fails the activity, and Temporal retries it. With `keys` (MCP_PAYLOAD_KEYS), what a line says of the question (its
 * message and subject, the invoice's words) is written encrypted, the rest in the clear (see {@link readNotifications}).
 */
export function createNotificationActivities(outboxFile: string, delivery?: NotificationDeliveryConfig, keys?: PayloadKeys) {
  const file = path.resolve(outboxFile);
  const deliverer = delivery && new NotificationDeliverer(delivery);
  return {
    async [NOTIFY_ACTIVITY](notification: DecisionNotification): Promise<void> {
      await heartbeating(async () => {
        await appendToOutbox(file, notification, keys);
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

/** An outbox line whose question is encrypted: the message and subject, AES-256-GCM under `keyId`, bound to the id. */
interface EncryptedNotification extends Omit<DecisionNotification, 'message' | 'subject'> {
  encrypted: { keyId: string; data: string };
}

/** What an outbox line says in the clear and what it encrypts, with `keys`. */
function outboxLine(notification: DecisionNotification, keys?: PayloadKeys): DecisionNotification | EncryptedNotification {
  if (!keys) return notification;
  const { message, subject, ...rest } = notification;
  const sealed = keys.seal(Buffer.from(JSON.stringify({ message, subject })), Buffer.from(notification.id));
  return { ...rest, encrypted: { keyId: sealed.keyId, data: Buffer.from(sealed.data).toString('base64url') } };
}

/** Appends `notification` to the outbox as one line, synced before it returns. */
async function appendToOutbox(file: string, notification: DecisionNotification, keys?: PayloadKeys): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  const handle = await fs.open(file, 'a', 0o600);
  try {
    // One write per line in append mode: lines of concurrent activities never interleave.
    await handle.write(`${JSON.stringify(outboxLine(notification, keys))}\n`);
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

/**
 * The notifications in an outbox file, first line of each id, in the order written; none when there is no file. Lines
 * written encrypted are read with `keys`; without them (or with keys that do not hold theirs) reading throws, naming
 * the key.
 */
export async function readNotifications(outboxFile: string, keys?: PayloadKeys): Promise<DecisionNotification[]> {
  const text = await fs.readFile(outboxFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  const seen = new Map<string, DecisionNotification>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const written = JSON.parse(line) as DecisionNotification | EncryptedNotification;
    if (seen.has(written.id)) continue;
    if (!('encrypted' in written)) {
      seen.set(written.id, written);
      continue;
    }
    const { encrypted, ...rest } = written;
    if (!keys)
      throw new Error(`${outboxFile}: notification ${written.id} is encrypted (key "${encrypted.keyId}"): read it with MCP_PAYLOAD_KEYS`);
    const question = JSON.parse(
      keys.open({ keyId: encrypted.keyId, data: Buffer.from(encrypted.data, 'base64url') }, Buffer.from(written.id)).toString('utf8'),
    ) as Pick<DecisionNotification, 'message' | 'subject'>;
    seen.set(written.id, { ...rest, ...question });
  }
  return [...seen.values()];
}

import { promises as fs } from 'node:fs';
import path from 'node:path';
import { log } from '@temporalio/activity';
import { NOTIFY_ACTIVITY, type DecisionNotification } from '../approvals/contract';

/**
 * The notification outbox: the {@link NOTIFY_ACTIVITY} activity appends each notification about an addressed question
 * (asked, reminder, escalated, delegated) to a JSON-lines file, one object a line, for an operator to wire to mail or
 * chat (tail it, or ship it with the log pipeline). Delivery is at least once: a retried activity may append a line
 * twice, with the same `id`, so readers keep the first line of each id.
 */
export function createNotificationActivities(outboxFile: string) {
  const file = path.resolve(outboxFile);
  return {
    async [NOTIFY_ACTIVITY](notification: DecisionNotification): Promise<void> {
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
    },
  };
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

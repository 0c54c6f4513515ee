import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeNotificationDelivery, notificationDeliveryFromEnv, redactSmtpUrl } from '../../src/activities/notification-delivery';

const SECRET = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'notification-config-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function directory(name: string, content: unknown): string {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(content));
  return file;
}

const people = [
  { name: 'ann', principals: ['ann'], roles: ['ap-approver'], email: 'ann@example.com', webhook: 'https://hooks.example.com/ann' },
  { name: 'bob', principals: ['bob'], roles: ['ap-approver'], email: 'bob@example.com' },
];

test('notification delivery config: no directory is the outbox only; a delivery setting without one is refused', () => {
  expect(notificationDeliveryFromEnv({})).toBeUndefined();
  expect(() => notificationDeliveryFromEnv({ MCP_SMTP_URL: 'smtp://mail:25' })).toThrow(
    'MCP_SMTP_URL is set but MCP_APPROVERS_DIRECTORY is not: name the directory file of the people to reach',
  );
  expect(() => notificationDeliveryFromEnv({ MCP_WEBHOOK_SECRET: SECRET })).toThrow(
    /^MCP_WEBHOOK_SECRET is set but MCP_APPROVERS_DIRECTORY/,
  );
});

test('notification delivery config: reads every setting, with the ledger under .data by default', () => {
  const file = directory('ok.json', { people });
  const config = notificationDeliveryFromEnv({
    MCP_APPROVERS_DIRECTORY: file,
    MCP_SMTP_URL: 'smtp://user:hunter2@mail.example.com:587',
    MCP_NOTIFY_FROM: 'Approvals <approvals@example.com>',
    MCP_WEBHOOK_SECRET: SECRET,
    MCP_TASK_VIEW_URL: 'https://tasks.example.com/{taskId}',
  })!;
  expect(config.directory.source).toBe(file);
  expect(config.mail).toEqual({ smtpUrl: 'smtp://user:hunter2@mail.example.com:587', from: 'Approvals <approvals@example.com>' });
  expect(config.webhookSecret).toBe(SECRET);
  expect(config.taskViewUrl).toBe('https://tasks.example.com/{taskId}');
  expect(config.ledgerDir).toBe(path.resolve('.data', 'notifications-sent'));
  // The start-up line names where things go, never a password or a secret.
  const described = describeNotificationDelivery(config);
  expect(described).toBe(
    `2 people of ${file} (mail to 2 through smtp://mail.example.com:587, webhooks to 1; deliveries recorded in ${config.ledgerDir})`,
  );
  expect(described).not.toContain('hunter2');
  expect(redactSmtpUrl('smtps://u:p@mail.example.com:465?pool=true')).toBe('smtps://mail.example.com:465');
});

test('notification delivery config: each setting that cannot work is refused, saying what to set', () => {
  const file = directory('hooked.json', { people });
  const env = { MCP_APPROVERS_DIRECTORY: file, MCP_WEBHOOK_SECRET: SECRET };
  expect(() => notificationDeliveryFromEnv({ MCP_APPROVERS_DIRECTORY: file })).toThrow(
    `ann in ${file} has a webhook but no secret to sign it with: set MCP_WEBHOOK_SECRET, webhookSecret in the file, or a webhookSecret of the person`,
  );
  expect(() => notificationDeliveryFromEnv({ ...env, MCP_SMTP_URL: 'smtp://mail:25' })).toThrow(/^MCP_SMTP_URL needs MCP_NOTIFY_FROM/);
  expect(() => notificationDeliveryFromEnv({ ...env, MCP_SMTP_URL: 'http://mail:25', MCP_NOTIFY_FROM: 'a@b.c' })).toThrow(
    'MCP_SMTP_URL must start with smtp:// or smtps://, not http://',
  );
  expect(() => notificationDeliveryFromEnv({ ...env, MCP_SMTP_URL: 'mail:25:x', MCP_NOTIFY_FROM: 'a@b.c' })).toThrow(/MCP_SMTP_URL/);
  expect(() => notificationDeliveryFromEnv({ ...env, MCP_NOTIFY_FROM: 'a@b.c' })).toThrow(
    /^MCP_NOTIFY_FROM is set but MCP_SMTP_URL is not/,
  );
  expect(() => notificationDeliveryFromEnv({ ...env, MCP_WEBHOOK_SECRET: 'hunter2' })).toThrow(
    'MCP_WEBHOOK_SECRET: use "whsec_" followed by the base64 of 24 to 64 random bytes',
  );
  expect(() => notificationDeliveryFromEnv({ ...env, MCP_TASK_VIEW_URL: 'https://tasks.example.com/' })).toThrow(
    'MCP_TASK_VIEW_URL must contain {taskId}, where the task id goes',
  );
  const twice = directory('twice.json', { people, webhookSecret: SECRET });
  expect(() => notificationDeliveryFromEnv({ ...env, MCP_APPROVERS_DIRECTORY: twice })).toThrow(
    `the default webhook secret is set twice, by MCP_WEBHOOK_SECRET and by webhookSecret in ${twice}: keep one`,
  );
  // A secret of the file, or of the person, is enough.
  expect(notificationDeliveryFromEnv({ MCP_APPROVERS_DIRECTORY: twice })?.webhookSecret).toBeUndefined();
  const own = directory('own.json', { people: [{ ...people[0], webhookSecret: SECRET }] });
  expect(notificationDeliveryFromEnv({ MCP_APPROVERS_DIRECTORY: own })?.directory.person('ann')?.webhookSecret).toBe(SECRET);
});

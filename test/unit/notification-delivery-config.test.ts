import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  describeNotificationDelivery,
  notificationDeliveryFromEnv,
  redactSmtpUrl,
} from '../../src/activities/notification-delivery-config';
import { ApprovalLinks } from '../../src/records/approval-links';

const SECRET = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
/** The task key links are signed with, given inline so that no test writes a key file. */
const TASK_KEY = 'k'.repeat(40);

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

test('notification delivery config: MCP_PUBLIC_URL makes links to the approvals page, signed with the task key, and the start-up line names the page', () => {
  const file = directory('linked.json', { people });
  const config = notificationDeliveryFromEnv({
    MCP_APPROVERS_DIRECTORY: file,
    MCP_WEBHOOK_SECRET: SECRET,
    MCP_PUBLIC_URL: 'https://approvals.example.com/',
    MCP_TASK_MARKER_KEY: TASK_KEY,
  })!;
  expect(config.publicUrl).toBe('https://approvals.example.com');
  const target = { person: 'bob', taskId: 'invoice-1', key: 'approval' };
  const link = new URL(config.links!.link(config.publicUrl!, target, '2999-01-01T00:00:00.000Z'));
  expect(`${link.origin}${link.pathname}`).toBe('https://approvals.example.com/approvals');
  // The bridge, holding the same task key, reads what the worker signed.
  expect(new ApprovalLinks(Buffer.from(TASK_KEY)).read(link.searchParams.get('q')!)).toEqual(target);
  expect(describeNotificationDelivery(config)).toBe(
    `2 people of ${file} (no mail (MCP_SMTP_URL unset: 2 with an address get none), webhooks to 1, ` +
      `each question linked on the approvals page https://approvals.example.com/approvals; deliveries recorded in ${config.ledgerDir})`,
  );
  // Without a public URL there are no links.
  const unlinked = notificationDeliveryFromEnv({
    MCP_APPROVERS_DIRECTORY: file,
    MCP_WEBHOOK_SECRET: SECRET,
    MCP_TASK_MARKER_KEY: TASK_KEY,
  })!;
  expect(unlinked.publicUrl).toBeUndefined();
  expect(unlinked.links).toBeUndefined();
});

test('notification delivery config: without MCP_PUBLIC_URL the links go to MCP_PASSKEY_ORIGIN, the server approvers already open', () => {
  const file = directory('passkey.json', { people: [people[1]] });
  const env = { MCP_APPROVERS_DIRECTORY: file, MCP_TASK_MARKER_KEY: TASK_KEY, MCP_PASSKEY_ORIGIN: 'https://passkeys.example.com' };
  expect(notificationDeliveryFromEnv(env)?.publicUrl).toBe('https://passkeys.example.com');
  expect(notificationDeliveryFromEnv({ ...env, MCP_PUBLIC_URL: 'https://approvals.example.com' })?.publicUrl).toBe(
    'https://approvals.example.com',
  );
  // The variable named in a refusal is the one read.
  expect(() => notificationDeliveryFromEnv({ ...env, MCP_PASSKEY_ORIGIN: 'http://passkeys.example.com' })).toThrow(
    /^MCP_PASSKEY_ORIGIN must start with https:\/\//,
  );
});

test('notification delivery config: a public URL that is not an https:// address of the server alone is refused, saying what to set', () => {
  const file = directory('refused.json', { people: [people[1]] });
  const env = { MCP_APPROVERS_DIRECTORY: file, MCP_TASK_MARKER_KEY: TASK_KEY };
  const publicUrl = (url: string) => notificationDeliveryFromEnv({ ...env, MCP_PUBLIC_URL: url })?.publicUrl;
  expect(() => publicUrl('approvals.example.com')).toThrow(
    'MCP_PUBLIC_URL is not a URL: use the public address of the bridge serving the approvals page, e.g. https://approvals.example.com',
  );
  expect(() => publicUrl('http://approvals.example.com')).toThrow(
    'MCP_PUBLIC_URL must start with https:// (http:// only for localhost, 127.0.0.1 or [::1]), e.g. https://approvals.example.com; not http://approvals.example.com',
  );
  expect(() => publicUrl('ftp://approvals.example.com')).toThrow(/^MCP_PUBLIC_URL must start with https:\/\//);
  expect(() => publicUrl('https://approvals.example.com/?tenant=a')).toThrow(
    "MCP_PUBLIC_URL must have no query or fragment: use the bridge's address alone, https://approvals.example.com",
  );
  expect(() => publicUrl('https://approvals.example.com#top')).toThrow(/^MCP_PUBLIC_URL must have no query or fragment/);
  expect(() => publicUrl('https://approvals.example.com/bridge')).toThrow(
    'MCP_PUBLIC_URL must have no path: the approvals page is served at /approvals of the host, so use https://approvals.example.com',
  );
  expect(() => publicUrl('https://user:hunter2@approvals.example.com')).toThrow(/^MCP_PUBLIC_URL must not carry a user or password/);
  // http:// on this machine only.
  for (const local of ['http://localhost:3000', 'http://approvals.localhost', 'http://127.0.0.1:3000', 'http://[::1]:3000'])
    expect(publicUrl(local)).toBe(local);
});

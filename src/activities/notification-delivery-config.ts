/**
 * The settings of notification delivery, read from the environment and checked together: the approvers directory, mail
 * over SMTP, the default webhook secret, links to the task view and to the approvals page, the delivery ledger. What
 * the worker says about them at start, with no secrets.
 */
import path from 'node:path';
import { APPROVALS_PAGE_PATH, ApprovalLinks } from '../records/approval-links';
import { ApproversDirectory } from '../records/directory';
import { WebhookSecretSchema } from '../records/directory-file';
import { taskViewLink } from '../records/notification-message';
import { taskKeyFromEnv } from '../shared/task-key';

/** How notifications about addressed questions reach people, beside the outbox. */
export interface NotificationDeliveryConfig {
  /** Who is reached, and how. */
  directory: ApproversDirectory;
  /** The delivery ledger: a directory of one record per delivery made (notification, person, channel). */
  ledgerDir: string;
  /** Mail over SMTP; without it nobody gets mail. */
  mail?: { smtpUrl: string; from: string };
  /** Signs webhook calls of people without a secret of their own when the directory file has none. */
  webhookSecret?: string;
  /** Template of a link to the task view, `{taskId}` standing for the task id. */
  taskViewUrl?: string;
  /**
   * The public base URL of the bridge serving the approvals page (e.g. https://approvals.example.com): set, each message
   * about an open question leads with the recipient's signed link to it there.
   */
  publicUrl?: string;
  /** Signs those links; default, with {@link publicUrl}, links signed with the task key of the environment. */
  links?: ApprovalLinks;
  /** How long one webhook call or one mail may take; default 10 s (the activity has 30). */
  timeoutMs?: number;
}

/** Thrown when the notification settings of the environment do not fit together; the message says what to set. */
export class NotificationConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotificationConfigError';
  }
}

/** `smtp://mail.example.com:587` of an SMTP URL: no user, no password, no query. */
export function redactSmtpUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return 'an SMTP URL';
  }
}

const ADDRESS = /^[^\s@<>]+@[^\s@<>]+$/;
const NAMED_ADDRESS = /^[^<>\r\n]*<([^\s@<>]+@[^\s@<>]+)>$/;

/** The bare address of `carol@example.com` or `Approvals <approvals@example.com>`, or undefined. */
export function addressOf(from: string): string | undefined {
  if (ADDRESS.test(from)) return from;
  return NAMED_ADDRESS.exec(from)?.[1];
}

/** Host names a public URL may name over plain http://: this machine only. */
function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || hostname === '127.0.0.1' || hostname === '[::1]';
}

/**
 * The bridge's public base URL of `env`: MCP_PUBLIC_URL, else MCP_PASSKEY_ORIGIN; undefined when neither is set.
 * Throws {@link NotificationConfigError} naming the variable when it is not an absolute https:// URL (http:// on this
 * machine only) of the server itself: links add the page's path to it, so it has no path, query or fragment.
 */
function publicUrlFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  const name = env.MCP_PUBLIC_URL?.trim() ? 'MCP_PUBLIC_URL' : env.MCP_PASSKEY_ORIGIN?.trim() ? 'MCP_PASSKEY_ORIGIN' : undefined;
  if (name === undefined) return undefined;
  const given = env[name]!.trim();
  const example = 'e.g. https://approvals.example.com';
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new NotificationConfigError(`${name} is not a URL: use the public address of the bridge serving the approvals page, ${example}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new NotificationConfigError(
      `${name} must start with https:// (http:// only for localhost, 127.0.0.1 or [::1]), ${example}; not ${given}`,
    );
  }
  if (url.search !== '' || url.hash !== '' || given.endsWith('?') || given.endsWith('#')) {
    throw new NotificationConfigError(`${name} must have no query or fragment: use the bridge's address alone, ${url.origin}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new NotificationConfigError(`${name} must not carry a user or password, which every link would show: use ${url.origin}`);
  }
  if (url.pathname !== '/') {
    throw new NotificationConfigError(
      `${name} must have no path: the approvals page is served at ${APPROVALS_PAGE_PATH} of the host, so use ${url.origin}`,
    );
  }
  return url.origin;
}

/**
 * Reads {@link NotificationDeliveryConfig} from the environment: MCP_APPROVERS_DIRECTORY (the directory file; unset:
 * undefined, notifications go to the outbox only), MCP_SMTP_URL with MCP_NOTIFY_FROM (mail), MCP_WEBHOOK_SECRET (the
 * default webhook secret), MCP_TASK_VIEW_URL (a link template with `{taskId}`), MCP_PUBLIC_URL (the bridge serving the
 * approvals page, default MCP_PASSKEY_ORIGIN; set, messages link each question there, signed with the task key) and
 * NOTIFICATION_LEDGER (default `.data/notifications-sent`). Throws {@link NotificationConfigError},
 * `ApproversDirectoryError` or `TaskKeyError` naming what to fix: a setting without the directory, an SMTP URL without
 * a sender, a person with a webhook and no secret anywhere, a public URL that is not one, no task key to sign links with.
 */
export function notificationDeliveryFromEnv(env: NodeJS.ProcessEnv = process.env): NotificationDeliveryConfig | undefined {
  const smtpUrl = env.MCP_SMTP_URL?.trim() || undefined;
  const from = env.MCP_NOTIFY_FROM?.trim() || undefined;
  const webhookSecret = env.MCP_WEBHOOK_SECRET?.trim() || undefined;
  const taskViewUrl = env.MCP_TASK_VIEW_URL?.trim() || undefined;
  const directory = ApproversDirectory.fromEnv(env);
  if (!directory) {
    const orphan = smtpUrl ? 'MCP_SMTP_URL' : webhookSecret ? 'MCP_WEBHOOK_SECRET' : undefined;
    if (orphan)
      throw new NotificationConfigError(
        `${orphan} is set but MCP_APPROVERS_DIRECTORY is not: name the directory file of the people to reach`,
      );
    return undefined;
  }
  let mail: NotificationDeliveryConfig['mail'];
  if (smtpUrl) {
    let protocol: string;
    try {
      protocol = new URL(smtpUrl).protocol;
    } catch {
      throw new NotificationConfigError('MCP_SMTP_URL is not a URL: use smtp://host:port, or smtps://user:password@host:465');
    }
    if (protocol !== 'smtp:' && protocol !== 'smtps:') {
      throw new NotificationConfigError(`MCP_SMTP_URL must start with smtp:// or smtps://, not ${protocol}//`);
    }
    if (!from || !addressOf(from)) {
      throw new NotificationConfigError(
        'MCP_SMTP_URL needs MCP_NOTIFY_FROM, the sender: approvals@example.com or "Approvals <approvals@example.com>"',
      );
    }
    mail = { smtpUrl, from };
  } else if (from) {
    throw new NotificationConfigError('MCP_NOTIFY_FROM is set but MCP_SMTP_URL is not: name the SMTP server mail goes through');
  }
  if (webhookSecret) {
    if (!WebhookSecretSchema.safeParse(webhookSecret).success) {
      throw new NotificationConfigError('MCP_WEBHOOK_SECRET: use "whsec_" followed by the base64 of 24 to 64 random bytes');
    }
    if (directory.webhookSecret) {
      throw new NotificationConfigError(
        `the default webhook secret is set twice, by MCP_WEBHOOK_SECRET and by webhookSecret in ${directory.source}: keep one`,
      );
    }
  }
  const unsigned = directory.people.filter(
    (person) => person.webhook && !(person.webhookSecret ?? directory.webhookSecret ?? webhookSecret),
  );
  if (unsigned.length > 0) {
    throw new NotificationConfigError(
      `${unsigned.map((person) => person.name).join(', ')} in ${directory.source} ha${unsigned.length === 1 ? 's' : 've'} a webhook but no ` +
        'secret to sign it with: set MCP_WEBHOOK_SECRET, webhookSecret in the file, or a webhookSecret of the person',
    );
  }
  if (taskViewUrl) {
    if (!taskViewUrl.includes('{taskId}'))
      throw new NotificationConfigError('MCP_TASK_VIEW_URL must contain {taskId}, where the task id goes');
    if (!URL.canParse(taskViewLink(taskViewUrl, 'task')))
      throw new NotificationConfigError('MCP_TASK_VIEW_URL is not a URL once {taskId} is filled in');
  }
  const publicUrl = publicUrlFromEnv(env);
  return {
    directory,
    ledgerDir: path.resolve(env.NOTIFICATION_LEDGER?.trim() || path.join('.data', 'notifications-sent')),
    ...(mail && { mail }),
    ...(webhookSecret && { webhookSecret }),
    ...(taskViewUrl && { taskViewUrl }),
    ...(publicUrl && { publicUrl, links: new ApprovalLinks(taskKeyFromEnv(env)) }),
  };
}

/** Where notifications go besides the outbox, in one phrase for the worker's start-up log (no secrets). */
export function describeNotificationDelivery(config: NotificationDeliveryConfig): string {
  const { people } = config.directory;
  const byMail = people.filter((person) => person.email).length;
  const byWebhook = people.filter((person) => person.webhook).length;
  const mail = config.mail
    ? `mail to ${byMail} through ${redactSmtpUrl(config.mail.smtpUrl)}`
    : `no mail${byMail > 0 ? ` (MCP_SMTP_URL unset: ${byMail} with an address get none)` : ''}`;
  const page = config.publicUrl
    ? `, each question linked on the approvals page ${new URL(APPROVALS_PAGE_PATH, config.publicUrl).href}`
    : '';
  return `${people.length} people of ${config.directory.source} (${mail}, webhooks to ${byWebhook}${page}; deliveries recorded in ${config.ledgerDir})`;
}

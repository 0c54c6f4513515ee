import { createHash } from 'node:crypto';
import path from 'node:path';
import { log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { createTransport } from 'nodemailer';
import { Webhook } from 'standardwebhooks';
import type { DecisionNotification } from '../contract/approvals';
import { APPROVALS_PAGE_PATH, ApprovalLinks } from '../records/approval-links';
import { ApproversDirectory } from '../records/directory';
import { WebhookSecretSchema, type Person } from '../records/directory-file';
import { notificationMessage, taskViewLink, type NotificationMessage } from '../records/notification-message';
import { taskKeyFromEnv } from '../shared/task-key';
import { RecordStore } from './record-store';

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

/** How a notification reaches a person. */
export type DeliveryChannel = 'webhook' | 'mail';

/** One delivery made: a file of the delivery ledger, created once the webhook answered 2xx or the SMTP server took the mail. */
export interface DeliveryRecord {
  /** `<notification id>\n<person>\n<channel>`. */
  key: string;
  notificationId: string;
  recipient: string;
  channel: DeliveryChannel;
  /** The `webhook-id` or `Message-ID` it went with. */
  messageId: string;
  /** ISO 8601. */
  deliveredAt: string;
}

/** Thrown when the notification settings of the environment do not fit together; the message says what to set. */
export class NotificationConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotificationConfigError';
  }
}

/** Thrown (as the cause of a retryable activity failure) when a webhook call or a mail did not go through. */
export class DeliveryFailedError extends Error {
  constructor(
    readonly recipient: string,
    readonly channel: DeliveryChannel,
    message: string,
  ) {
    super(`${channel} to ${recipient}: ${message}`);
    this.name = 'DeliveryFailedError';
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
function addressOf(from: string): string | undefined {
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

/** A stable id per notification and person: the same on every retry, so a receiver can drop a repeat. */
function deliveryId(notification: DecisionNotification, person: Person): string {
  return createHash('sha256').update(`${notification.id}\n${person.name}`, 'utf8').digest('base64url').slice(0, 32);
}

/** The `data` of a webhook call: the message as rendered, for whom, and the notification itself. */
export interface WebhookData {
  recipient: string;
  subject: string;
  text: string;
  /** The task view's address ({@link NotificationDeliveryConfig.taskViewUrl}). */
  link?: string;
  /** The recipient's signed link to the question on the approvals page; none for `decided`, or without a public URL. */
  answerLink?: string;
  notification: DecisionNotification;
}

/**
 * Delivers notifications to the people of the directory by webhook (signed as Standard Webhooks prescribe) and by mail
 * (SMTP), each delivery at most once per notification, person and channel as far as the ledger knows: a delivery is
 * recorded once it went through, and a retried activity skips what is recorded. A crash between a send and its record
 * sends it again, with the same `webhook-id` or `Message-ID`.
 */
export class NotificationDeliverer {
  private readonly ledger: RecordStore<DeliveryRecord>;
  private readonly mailer: ReturnType<typeof createTransport> | undefined;
  private readonly timeoutMs: number;
  private readonly mailDomain: string;
  private readonly links: ApprovalLinks | undefined;

  /** Throws `TaskKeyError` when `config` has a public URL, no links, and the environment no task key to be had. */
  constructor(private readonly config: NotificationDeliveryConfig) {
    this.ledger = new RecordStore<DeliveryRecord>(config.ledgerDir);
    this.links = config.publicUrl ? (config.links ?? new ApprovalLinks(taskKeyFromEnv())) : undefined;
    this.timeoutMs = config.timeoutMs ?? 10_000;
    this.mailer =
      config.mail &&
      createTransport({
        url: config.mail.smtpUrl,
        connectionTimeout: this.timeoutMs,
        greetingTimeout: this.timeoutMs,
        socketTimeout: this.timeoutMs,
      });
    this.mailDomain = (config.mail && addressOf(config.mail.from)?.split('@')[1]) || 'temporal-mcp-tasks.invalid';
  }

  /** The directory people are looked up in. */
  get directory(): ApproversDirectory {
    return this.config.directory;
  }

  /**
   * Sends `notification` to each of its recipients ({@link ApproversDirectory.recipients}) on each channel they have and
   * this worker sends, skipping deliveries the ledger holds. Throws a retryable `ApplicationFailure` naming every
   * delivery that failed, after trying them all (those that went through are recorded and not made again).
   */
  async deliver(notification: DecisionNotification): Promise<void> {
    const { directory } = this.config;
    const recipients = directory.recipients(notification);
    if (recipients.length === 0) {
      log.info('notification has nobody to reach in the approvers directory', { id: notification.id, kind: notification.kind });
      return;
    }
    const submitter = notification.requester !== undefined ? directory.personOf(notification.requester) : undefined;
    const delegatedBy = notification.delegatedBy !== undefined ? directory.personOf(notification.delegatedBy) : undefined;
    const shown = delegatedBy !== undefined ? { ...notification, delegatedBy } : notification;
    const jobs: Promise<void>[] = [];
    for (const person of recipients) {
      const answerLink = this.answerLink(notification, person);
      const message = notificationMessage(shown, {
        recipient: person.name,
        ...(submitter !== undefined && { submitter }),
        ...(this.config.taskViewUrl && { taskViewUrl: this.config.taskViewUrl }),
        ...(answerLink && { answerLink }),
      });
      if (person.webhook)
        jobs.push(this.once(notification, person, 'webhook', (id) => this.callWebhook(notification, person, message, id)));
      if (person.email && this.mailer) jobs.push(this.once(notification, person, 'mail', (id) => this.sendMail(person, message, id)));
    }
    if (jobs.length === 0) {
      log.info('notification has nobody this worker can reach (no webhook, and no mail address or no MCP_SMTP_URL)', {
        id: notification.id,
        kind: notification.kind,
        recipients: recipients.map((person) => person.name),
      });
      return;
    }
    const failures = (await Promise.allSettled(jobs))
      .filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')
      .map((outcome) => (outcome.reason as Error).message);
    if (failures.length > 0) {
      throw ApplicationFailure.retryable(
        `${failures.length} of ${jobs.length} deliveries of notification ${notification.id} failed (retried; those made are not made again): ${failures.join('; ')}`,
        'NotificationDeliveryFailed',
      );
    }
  }

  /** Closes the SMTP transport. */
  close(): void {
    this.mailer?.close();
  }

  /** `person`'s link to the question on the approvals page, valid until it is due; none without a public URL, or when `decided`. */
  private answerLink(notification: DecisionNotification, person: Person): string | undefined {
    if (!this.links || !this.config.publicUrl || notification.kind === 'decided') return undefined;
    return this.links.link(
      this.config.publicUrl,
      { person: person.name, taskId: notification.taskId, key: notification.key },
      notification.dueAt,
    );
  }

  /** Runs `send` unless the ledger holds this delivery; records it once `send` went through. */
  private async once(
    notification: DecisionNotification,
    person: Person,
    channel: DeliveryChannel,
    send: (id: string) => Promise<string>,
  ): Promise<void> {
    const key = `${notification.id}\n${person.name}\n${channel}`;
    if (await this.ledger.get(key)) {
      log.debug('notification delivered already', { id: notification.id, to: person.name, channel });
      return;
    }
    const id = deliveryId(notification, person);
    let messageId: string;
    try {
      messageId = await send(id);
    } catch (error) {
      const failure =
        error instanceof DeliveryFailedError ? error : new DeliveryFailedError(person.name, channel, (error as Error).message);
      log.warn('notification not delivered', { id: notification.id, to: person.name, channel, error: failure.message });
      throw failure;
    }
    await this.ledger.createOnce(key, () => ({
      key,
      notificationId: notification.id,
      recipient: person.name,
      channel,
      messageId,
      deliveredAt: new Date().toISOString(),
    }));
    log.info('notification delivered', { id: notification.id, kind: notification.kind, to: person.name, channel, messageId });
  }

  /** POSTs the signed call; returns its `webhook-id`. Throws unless the receiver answers 2xx. */
  private async callWebhook(notification: DecisionNotification, person: Person, message: NotificationMessage, id: string): Promise<string> {
    const secret = person.webhookSecret ?? this.config.directory.webhookSecret ?? this.config.webhookSecret;
    // The config check makes sure there is one; a directory built by hand may skip it.
    if (!secret) throw new DeliveryFailedError(person.name, 'webhook', 'no secret to sign the call with (MCP_WEBHOOK_SECRET)');
    const webhookId = `msg_${id}`;
    const data: WebhookData = {
      recipient: person.name,
      subject: message.subject,
      text: message.text,
      ...(message.link && { link: message.link }),
      ...(message.answerLink && { answerLink: message.answerLink }),
      notification,
    };
    const body = JSON.stringify({ type: `approval.${notification.kind}`, timestamp: notification.at, data });
    const now = new Date();
    const signature = new Webhook(secret).sign(webhookId, now, body);
    const url = person.webhook!;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': webhookId,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body,
        // A receiver that moved says so by its configuration, not by a redirect the signature was not made for.
        redirect: 'error',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      // The URL may carry a token: name its host only.
      const cause = (error as Error & { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      throw new DeliveryFailedError(person.name, 'webhook', `${new URL(url).host} did not answer (${cause})`);
    }
    await response.body?.cancel().catch(() => undefined);
    if (!response.ok) throw new DeliveryFailedError(person.name, 'webhook', `${new URL(url).host} answered HTTP ${response.status}`);
    return webhookId;
  }

  /** Hands the mail to the SMTP server; returns its `Message-ID`. */
  private async sendMail(person: Person, message: NotificationMessage, id: string): Promise<string> {
    const messageId = `<${id}@${this.mailDomain}>`;
    await this.mailer!.sendMail({
      from: this.config.mail!.from,
      to: person.email,
      subject: message.subject,
      text: message.text,
      messageId,
      // RFC 3834: no vacation replies to a machine.
      headers: { 'Auto-Submitted': 'auto-generated' },
    });
    return messageId;
  }
}

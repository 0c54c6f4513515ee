/**
 * Delivery of notifications about addressed questions to the people of the approvers directory: signed webhook calls
 * and mail, each made at most once per notification, person and channel as far as the delivery ledger knows.
 */
import { createHash } from 'node:crypto';
import { log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { createTransport } from 'nodemailer';
import { Webhook } from 'standardwebhooks';
import type { DecisionNotification } from '../contract/approvals';
import { ApprovalLinks } from '../records/approval-links';
import type { ApproversDirectory } from '../records/directory';
import type { Person } from '../records/directory-file';
import { notificationMessage, type NotificationMessage } from '../records/notification-message';
import { taskKeyFromEnv } from '../shared/task-key';
import { addressOf, type NotificationDeliveryConfig } from './notification-delivery-config';
import { RecordStore } from './record-store';

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

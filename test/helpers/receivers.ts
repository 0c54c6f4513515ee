/** Real receivers of notifications for the tests: an HTTP server taking webhook calls, an SMTP server taking mail. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { Webhook } from 'standardwebhooks';

/** One webhook call as it arrived, and whether its Standard Webhooks signature held for the receiver's secret. */
export interface WebhookCall {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  verified: boolean;
  /** The HTTP status the receiver answered. */
  status: number;
}

/** An HTTP server on loopback that verifies every call with `secret`, answering 204 (or what `answer` says). */
export class WebhookReceiver {
  readonly calls: WebhookCall[] = [];
  /** Decides the status of a verified call (default 204); an unverified one gets 401. */
  answer: (call: Omit<WebhookCall, 'status'>) => number = () => 204;
  private readonly server: Server;
  private readonly verifier: Webhook;
  private port = 0;

  private constructor(secret: string) {
    this.verifier = new Webhook(secret);
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let verified = true;
        try {
          this.verifier.verify(body, request.headers as Record<string, string>);
        } catch {
          verified = false;
        }
        const call = { path: request.url ?? '', headers: request.headers, body, verified };
        const status = verified ? this.answer(call) : 401;
        this.calls.push({ ...call, status });
        response.writeHead(status).end();
      });
    });
  }

  /** Listens on a free loopback port. */
  static async start(secret: string): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(secret);
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    receiver.port = (receiver.server.address() as AddressInfo).port;
    return receiver;
  }

  /** `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The calls answered 2xx to `path`. */
  delivered(path: string): WebhookCall[] {
    return this.calls.filter((call) => call.path === path && call.status >= 200 && call.status < 300);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** One mail as the SMTP server took it: the envelope, the headers (unfolded, names in lower case) and the decoded text. */
export interface ReceivedMail {
  from: string;
  to: string[];
  headers: Record<string, string>;
  text: string;
}

/** Undoes quoted-printable (RFC 2045 §6.7): soft line breaks, then `=XX` bytes, read as UTF-8. */
function decodeQuotedPrintable(body: string): string {
  const joined = body.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let at = 0; at < joined.length; at++) {
    if (joined[at] === '=' && /^[0-9A-F]{2}$/i.test(joined.slice(at + 1, at + 3))) {
      bytes.push(parseInt(joined.slice(at + 1, at + 3), 16));
      at += 2;
    } else bytes.push(...Buffer.from(joined[at], 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Undoes RFC 2047 encoded words (`=?UTF-8?Q?...?=`, `=?UTF-8?B?...?=`) in a header value. */
function decodeEncodedWords(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?utf-8\?([QB])\?([^?]*)\?=/gi, (_word, encoding: string, text: string) =>
      encoding.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : decodeQuotedPrintable(text.replace(/_/g, ' ')),
    );
}

/** A single-part plain-text message: its headers and its text (quoted-printable or base64 undone). */
function parseMail(raw: string): { headers: Record<string, string>; text: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n(?=[ \t])/g, '');
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = decodeEncodedWords(line.slice(colon + 1).trim());
  }
  const body = raw.slice(split + 4);
  const encoding = headers['content-transfer-encoding']?.toLowerCase();
  const text =
    encoding === 'quoted-printable'
      ? decodeQuotedPrintable(body)
      : encoding === 'base64'
        ? Buffer.from(body, 'base64').toString('utf8')
        : body;
  return { headers, text: text.replace(/\r\n/g, '\n') };
}

/** An SMTP server on loopback (no TLS, no auth) that keeps every mail; `refuse` may turn a recipient away with 451. */
export class MailReceiver {
  readonly mail: ReceivedMail[] = [];
  /** Recipients turned away, in order. */
  readonly refused: string[] = [];
  /** Whether to turn this recipient away (a temporary failure, 451) this time. */
  refuse: (address: string) => boolean = () => false;
  private readonly server: SMTPServer;
  private port = 0;

  private constructor() {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onRcptTo: (address, _session, callback) => {
        if (this.refuse(address.address)) {
          this.refused.push(address.address);
          callback(Object.assign(new Error('mailbox busy, try again later'), { responseCode: 451 }));
          return;
        }
        callback();
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const { headers, text } = parseMail(Buffer.concat(chunks).toString('utf8'));
          const from = session.envelope.mailFrom;
          this.mail.push({ from: from ? from.address : '', to: session.envelope.rcptTo.map((to) => to.address), headers, text });
          callback();
        });
      },
    });
  }

  /** Listens on a free loopback port. */
  static async start(): Promise<MailReceiver> {
    const receiver = new MailReceiver();
    const listening = new Promise<void>((resolve) => receiver.server.server.once('listening', () => resolve()));
    receiver.server.listen(0, '127.0.0.1');
    await listening;
    receiver.port = (receiver.server.server.address() as AddressInfo).port;
    return receiver;
  }

  /** `smtp://127.0.0.1:<port>`. */
  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** The mail to `address`. */
  to(address: string): ReceivedMail[] {
    return this.mail.filter((mail) => mail.to.includes(address));
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * The notification delivery settings a worker reads from its environment, for the approvers directory `directory`,
 * mail to `mailbox`, webhooks signed with `secret`, and the delivery ledger `ledger`.
 */
export function deliveryEnv(options: {
  directory: string;
  mailbox: MailReceiver;
  secret: string;
  ledger: string;
  taskViewUrl?: string;
  /** The approvals page's address, which each message links its question on. */
  publicUrl?: string;
}): NodeJS.ProcessEnv {
  return {
    MCP_APPROVERS_DIRECTORY: options.directory,
    MCP_SMTP_URL: options.mailbox.url,
    MCP_NOTIFY_FROM: 'Approvals <approvals@example.com>',
    MCP_WEBHOOK_SECRET: options.secret,
    ...(options.taskViewUrl !== undefined && { MCP_TASK_VIEW_URL: options.taskViewUrl }),
    ...(options.publicUrl !== undefined && { MCP_PUBLIC_URL: options.publicUrl }),
    NOTIFICATION_LEDGER: options.ledger,
  };
}

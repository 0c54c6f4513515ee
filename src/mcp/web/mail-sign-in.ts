/**
 * Sign-in with a one-time link sent by mail, to people whose approvers directory entry allows it (`signInByMail`) and
 * lists a mail address. Asking for a link answers the same whoever it names, at once, and the mail goes out after the
 * answer, so neither the words nor the time tell whether the account exists. The link carries its own expiry, signed;
 * it works once (see {@link OneTimeUses}), and only from a click on the page: the GET a mail scanner makes signs nobody in.
 */
import { randomBytes } from 'node:crypto';
import { createTransport } from 'nodemailer';
import type { ApproversDirectory } from '../../records/directory';
import type { Person } from '../../records/directory-file';
import { SignedTokens, type TokenClaims } from '../../shared/signed-tokens';
import { log } from '../../util/log';
import { APPROVALS_PAGE_PATH } from '../../records/approval-links';
import type { OneTimeUses } from '../../approvals/one-time-uses';

/** The query parameter of the page that carries a sign-in link's token. */
export const SIGN_IN_LINK_PARAM = 'signin';

/** The one answer to every request for a link. */
export const LINK_REQUESTED =
  'If your approvers directory entry allows sign-in by mail, a sign-in link is on its way to the address it lists. It works once.';

/** The one answer to a link that cannot sign in (unknown, altered, expired, used, or no longer allowed). */
export const LINK_REFUSED = 'This sign-in link has expired or was used already. Ask for a new one on the approvals page.';

/** How mail leaves: an SMTP URL and the From address (MCP_SMTP_URL, MCP_NOTIFY_FROM, as the worker sends notices). */
export interface SignInMail {
  smtpUrl: string;
  from: string;
}

/** What sends the mail: an SMTP transport, or a test's own. */
export interface Mailer {
  sendMail(message: { from: string; to: string; subject: string; text: string; headers: Record<string, string> }): Promise<unknown>;
  close(): void;
}

/** The SMTP transport of `mail` (nodemailer), with 10 s timeouts. */
export function smtpMailer(mail: SignInMail): Mailer {
  return createTransport({ url: mail.smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 10_000 });
}

/**
 * How sign-in links leave, from the worker's own mail settings: MCP_SMTP_URL and MCP_NOTIFY_FROM; undefined unless
 * both are set (then no links are offered).
 */
export function signInMailFromEnv(env: NodeJS.ProcessEnv = process.env): SignInMail | undefined {
  const smtpUrl = env.MCP_SMTP_URL?.trim();
  const from = env.MCP_NOTIFY_FROM?.trim();
  return smtpUrl && from ? { smtpUrl, from } : undefined;
}

interface LinkClaims extends TokenClaims {
  /** The person's name. */
  n: string;
  /** The nonce the one use is marked by. */
  j: string;
}

/** The tokens of sign-in links under `taskKey`. */
export function signInLinkTokens(taskKey: Buffer): SignedTokens {
  return new SignedTokens(taskKey, 'sign-in link');
}

/**
 * A one-time sign-in link to the page at `origin` for the person `name`, working until `expiresAt` (milliseconds since
 * the epoch) for a person the directory allows to sign in by mail. What a mail carries; a demo prints it.
 */
export function signInLink(tokens: SignedTokens, origin: string, name: string, expiresAt: number): string {
  const token = tokens.sign<LinkClaims>({ n: name, j: randomBytes(16).toString('base64url'), exp: expiresAt });
  const url = new URL(APPROVALS_PAGE_PATH, origin);
  url.searchParams.set(SIGN_IN_LINK_PARAM, token);
  return url.toString();
}

/** Thrown for a link that does not sign in; its message is {@link LINK_REFUSED}. */
export class SignInLinkError extends Error {
  constructor(message = LINK_REFUSED) {
    super(message);
    this.name = 'SignInLinkError';
  }
}

/** One-time sign-in links (see the module's comment). */
export class MailSignIn {
  private readonly tokens: SignedTokens;

  /** `mail`: the From address and what sends it; without it no link is sent (and none offered). */
  constructor(
    taskKey: Buffer,
    private readonly page: { origin: string; linkMs: number },
    private readonly directory: ApproversDirectory,
    private readonly uses: OneTimeUses,
    private readonly mail: { from: string; mailer: Mailer } | undefined,
  ) {
    this.tokens = signInLinkTokens(taskKey);
  }

  private get mailer(): Mailer | undefined {
    return this.mail?.mailer;
  }

  /** Whether links can be sent at all: mail is configured and someone may sign in by mail. */
  get offered(): boolean {
    return this.mailer !== undefined && this.directory.people.some(allowed);
  }

  /**
   * Sends a link to the person `who` names (their name, or their mail address in any case) when the directory allows
   * it; resolves at once either way, the mail going out after. Failures are logged, never told.
   */
  request(who: string, now = Date.now()): void {
    const wanted = who.trim().toLowerCase();
    const person = this.directory.people.find(
      (candidate) => candidate.name.toLowerCase() === wanted || candidate.email?.toLowerCase() === wanted,
    );
    if (!person || !allowed(person) || !this.mailer) {
      log.info('approvals page: a sign-in link was asked for someone who cannot have one; nothing sent');
      return;
    }
    const url = signInLink(this.tokens, this.page.origin, person.name, now + this.page.linkMs);
    const minutes = Math.round(this.page.linkMs / 60_000);
    const text = [
      `Hello ${person.name},`,
      '',
      'Sign in to the approvals page with this link:',
      url.toString(),
      '',
      `It works once, for ${minutes} minutes, and only after you press "Sign in" on the page it opens.`,
      'If you did not ask for it, ignore this mail: nobody can sign in without it.',
      '',
    ].join('\n');
    void this.mailer
      .sendMail({
        from: this.mail!.from,
        to: person.email!,
        subject: 'Your sign-in link to the approvals page',
        text,
        headers: { 'Auto-Submitted': 'auto-generated' },
      })
      .then(
        () => log.info('approvals page: sign-in link sent', { to: person.name }),
        (error: Error) => log.warn(`approvals page: a sign-in link could not be sent: ${error.message}`, { to: person.name }),
      );
  }

  /** The person `token` signs in, taking its one use; throws {@link SignInLinkError}. */
  async redeem(token: string, now = Date.now()): Promise<Person> {
    const claims = this.tokens.read<LinkClaims>(token, now);
    const person = claims && typeof claims.n === 'string' ? this.directory.person(claims.n) : undefined;
    if (!claims || !person || !allowed(person) || typeof claims.j !== 'string') throw new SignInLinkError();
    if (!(await this.uses.take(`sign-in-link:${claims.j}`, claims.exp, now))) throw new SignInLinkError();
    return person;
  }

  /** Closes the SMTP transport. */
  close(): void {
    this.mailer?.close();
  }
}

/** Whether the directory lets `person` sign in by mail: their entry says so and lists an address. */
function allowed(person: Person): boolean {
  return person.signInByMail === true && person.email !== undefined;
}

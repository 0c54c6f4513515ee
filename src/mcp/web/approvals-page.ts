/**
 * The approvals page (`/approvals`) and its calls, served by `serve --http` for approvers who have no MCP client: the
 * signed-in person's inbox across every task, each question with what it is about, and their decision. Sign-in with a
 * passkey the approvers directory lists, through the deployment's OpenID Connect provider, or with a one-time link by
 * mail; the session is a signed cookie (see `web-session.ts`). An answer takes the same path as `approvals_answer`
 * ({@link Approvals.decide}): roles, four eyes, the seal, the decision record, `mustSign`, notices. A GET never answers
 * and never signs in.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { Approvals, QuestionNotOpenError, inboxItemOf } from '../../approvals/approvals';
import { PasskeySignatureSchema } from '../../approvals/signature-schema';
import { ApprovalLinks, APPROVALS_PAGE_PATH } from '../../records/approval-links';
import type { ApproversDirectory, Person } from '../../records/directory';
import { SignedTokens, type TokenClaims } from '../../shared/signed-tokens';
import { log } from '../../util/log';
import { readBodyText } from '../../util/request-body';
import { approvalsPageHtml, APPROVALS_CONFIG_SLOT } from '../app/approvals-page-html';
import {
  APPROVALS_API,
  type AnswerRecorded,
  type InboxAnswer,
  type LinkAnswer,
  type ProblemAnswer,
  type QuestionAnswer,
  type SessionAnswer,
  type SignInMethods,
} from '../app/approvals-page/wire';
import { AnswerRefusedError, isTemporalUnavailable, type ReplicaSharedState, TaskCoreError, TooManyRequestsError } from '../../core';
import type { HttpRoute } from '../transports/http';
import { MailSignIn, LINK_REQUESTED, smtpMailer, type SignInMail } from './mail-sign-in';
import { OidcSignInError, OidcSignInFailure, type OidcSignIn } from './oidc-sign-in';
import { OneTimeUses, OneTimeUseUnavailableError } from '../../approvals/one-time-uses';
import { clientAddress, type ApprovalsPageConfig } from './page-config';
import { PasskeySignIn, PasskeySignInError } from './passkey-sign-in';
import { questionViewOf, versionOf } from './question-view';
import { PER_ADDRESS, PER_NAME, PER_NAME_AND_ADDRESS, SignInAttempts } from './sign-in-attempts';
import { WebSessions, type SignInVia, type WebSession } from './web-session';
import { cookieOf } from '../../util/cookies';
import { escapeHtml } from '../../util/html';

/** What the page stands on. */
export interface ApprovalsPageOptions {
  config: ApprovalsPageConfig;
  /** The bridge's task key: sessions, links and challenges are signed with keys derived from it. */
  taskKey: Buffer;
  approvals: Approvals;
  /** The approvers directory: who has a passkey, who may sign in by mail, and the people's roles. */
  directory?: ApproversDirectory;
  /** The roles credentials give a principal (a token file's third column), beside the directory's. */
  credentialRoles?: (principal: string) => string[] | undefined;
  /** The passkeys' relying party id (default the page's host name). */
  rpId?: string;
  /** The deployment's OpenID Connect provider, when sign-in through it is offered. */
  oidc?: OidcSignIn;
  /** How sign-in links leave by mail; without it none are sent. */
  mail?: SignInMail;
  /** The replicas' shared state: one-time uses and sign-in attempts count across them. */
  sharedState?: ReplicaSharedState;
}

/** The page and its calls, ready to mount, and what to close when the server stops. */
export interface ApprovalsPage {
  routes: HttpRoute[];
  close(): void;
}

/** How long an OpenID Connect sign-in may take from the page to the provider and back. */
const OIDC_TRANSACTION_MS = 10 * 60_000;
const OIDC_COOKIE = 'approvals-oidc';

/** The most a call's JSON body may weigh. */
const MAX_BODY_BYTES = 64 * 1024;

const AnswerRequestSchema = z.strictObject({
  taskId: z.string().min(1).max(200),
  key: z.string().min(1).max(200),
  version: z.string().min(1).max(100),
  action: z.enum(['accept', 'decline', 'delegate']),
  content: z.record(z.string(), z.union([z.string().max(2_000), z.number(), z.boolean(), z.array(z.string().max(200)).max(50)])).optional(),
  comment: z.string().max(2_000).optional(),
  delegateTo: z.string().min(1).max(200).optional(),
  signature: PasskeySignatureSchema.optional(),
});

interface OidcClaims extends TokenClaims {
  s: string;
  n: string;
  v: string;
  r: string;
}

/** The page (see the module's comment). Throws nothing at start; each call answers its own errors. */
export function approvalsPage(options: ApprovalsPageOptions): ApprovalsPage {
  return new ApprovalsPageRoutes(options).mount();
}

/** One JSON problem: the status and the sentence (and what the page should do). */
class Problem extends Error {
  constructor(
    readonly status: number,
    readonly answer: ProblemAnswer,
    readonly headers: Record<string, string> = {},
  ) {
    super(answer.error);
  }
}

/** The answer to a request of the wrong method. */
function wrongMethod(allowed: 'GET' | 'POST'): Problem {
  return new Problem(405, { error: `Use ${allowed}.` }, { allow: allowed });
}

class ApprovalsPageRoutes {
  private readonly sessions: WebSessions;
  private readonly attempts: SignInAttempts;
  private readonly links: ApprovalLinks;
  private readonly passkeys: PasskeySignIn | undefined;
  private readonly mail: MailSignIn | undefined;
  private readonly oidcTransactions: SignedTokens;
  private readonly rpId: string;

  constructor(private readonly options: ApprovalsPageOptions) {
    const { config, taskKey, directory, sharedState } = options;
    const uses = new OneTimeUses(sharedState);
    this.sessions = new WebSessions(taskKey, config);
    this.attempts = new SignInAttempts(sharedState);
    this.links = new ApprovalLinks(taskKey);
    this.rpId = options.rpId ?? new URL(config.origin).hostname;
    this.passkeys = directory && new PasskeySignIn(taskKey, { rpId: this.rpId, origin: config.origin }, directory, uses);
    const mail = options.mail && { from: options.mail.from, mailer: smtpMailer(options.mail) };
    this.mail = directory && new MailSignIn(taskKey, { origin: config.origin, linkMs: config.signInLinkMs }, directory, uses, mail);
    this.oidcTransactions = new SignedTokens(taskKey, 'oidc sign-in transaction');
    if (!sharedState && (this.mail?.offered || this.passkeys?.offered)) {
      log.info(
        'approvals page: one-time sign-in links and passkey challenges are marked used in this process; behind several replicas, set MCP_SHARED_STATE so that each works once across them',
      );
    }
  }

  mount(): ApprovalsPage {
    const json =
      (handler: (req: IncomingMessage, res: ServerResponse) => Promise<unknown>) => (req: IncomingMessage, res: ServerResponse) =>
        this.answer(req, res, handler);
    const routes: HttpRoute[] = [
      { path: APPROVALS_API.page, handle: (req, res) => this.page(req, res) },
      { path: APPROVALS_API.session, handle: json((req) => this.session(req)) },
      { path: APPROVALS_API.inbox, handle: json((req) => this.inbox(req)) },
      { path: APPROVALS_API.question, handle: json((req) => this.question(req)) },
      { path: APPROVALS_API.link, handle: json((req) => this.link(req)) },
      { path: APPROVALS_API.answer, handle: json((req) => this.answerQuestion(req)) },
      { path: APPROVALS_API.passkeyOptions, handle: json((req) => this.passkeyOptions(req)) },
      { path: APPROVALS_API.passkey, handle: json((req, res) => this.passkeySignIn(req, res)) },
      { path: APPROVALS_API.mailLink, handle: json((req, res) => this.requestLink(req, res)) },
      { path: APPROVALS_API.redeemLink, handle: json((req, res) => this.redeemLink(req, res)) },
      { path: APPROVALS_API.signOut, handle: json((req, res) => this.signOut(req, res)) },
      { path: APPROVALS_API.oidcStart, handle: (req, res) => this.redirecting(res, () => this.oidcStart(req, res)) },
      { path: APPROVALS_API.oidcCallback, handle: (req, res) => this.redirecting(res, () => this.oidcCallback(req, res)) },
    ];
    return { routes, close: () => this.mail?.close() };
  }

  private methods(): SignInMethods {
    return { passkey: this.passkeys?.offered === true, link: this.mail?.offered === true, oidc: this.options.oidc !== undefined };
  }

  /** GET /approvals: the page itself, the same for everyone (what it shows comes from the calls). */
  private async page(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'Use GET.' }, { allow: 'GET, HEAD' });
    const settings = JSON.stringify({ rpId: this.passkeys?.offered ? this.rpId : null, origin: this.options.config.origin }).replace(
      /</g,
      '\\u003c',
    );
    const page = await approvalsPageHtml();
    const html = page.replace(APPROVALS_CONFIG_SLOT, () => settings);
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      // The page's own script alone, by its digest: text that ever made it into the page as markup would not run.
      'content-security-policy': `default-src 'none'; script-src '${scriptDigest(page)}'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      // The page's address may carry a link's token: it is never sent on to another site.
      'referrer-policy': 'no-referrer',
    });
    res.end(req.method === 'HEAD' ? undefined : html);
  }

  /** Runs a JSON call: its answer is what it returns (200, or the status it set), or the {@link Problem} it throws. */
  private async answer(
    req: IncomingMessage,
    res: ServerResponse,
    handler: (req: IncomingMessage, res: ServerResponse) => Promise<unknown>,
  ): Promise<void> {
    try {
      const body = await handler(req, res);
      if (!res.headersSent) sendJson(res, res.statusCode, body);
    } catch (error) {
      const problem = problemOf(error);
      if (problem.status >= 500)
        log.warn(`approvals page: ${req.method} ${new URL(req.url ?? '/', 'http://page').pathname}: ${(error as Error).message}`);
      if (!res.headersSent) sendJson(res, problem.status, problem.answer, problem.headers);
    }
  }

  /** The session of a GET or a POST (its origin and CSRF token checked), as the directory stands now; else a 401 saying to sign in. */
  private signedIn(req: IncomingMessage, method: 'GET' | 'POST'): WebSession {
    if (req.method !== method) throw wrongMethod(method);
    const session = this.current(req);
    if (!session) throw new Problem(401, { error: 'Sign in to see and answer your approvals.', signIn: true });
    if (method === 'POST') this.checkWrite(req, session);
    return session;
  }

  /**
   * The request's session as the approvers directory stands now: the person still listed, their principal still theirs,
   * the way they signed in still allowed for them (a passkey still listed, sign-in by mail still allowed); their roles
   * those the directory lists for them, the token file gives their principal, and (OpenID Connect) the provider's
   * claim gave. Undefined when there is no such session: an edit of the directory takes effect at the next request.
   */
  private current(req: IncomingMessage): WebSession | undefined {
    const session = this.sessions.read(req);
    const { directory } = this.options;
    const person = session && directory?.listing(session.principal);
    if (!session || !person || person.name !== session.person) return undefined;
    if (session.via === 'passkey' && !this.passkeys?.listsPasskeyOf(person)) return undefined;
    if (session.via === 'link' && !(person.signInByMail && person.email)) return undefined;
    const roles = [...person.roles, ...(this.options.credentialRoles?.(session.principal) ?? []), ...session.roles];
    return { ...session, roles: [...new Set(roles)] };
  }

  /** Refuses a write from another origin, or one without the session's CSRF token. */
  private checkWrite(req: IncomingMessage, session?: WebSession): void {
    const refusal = this.sessions.writeRefusal(req, session);
    if (refusal === 'origin')
      throw new Problem(403, { error: `Only the approvals page at ${this.options.config.origin} may do this. Nothing was changed.` });
    if (refusal === 'csrf') throw new Problem(403, { error: 'This page is out of date: reload it and try again. Nothing was changed.' });
  }

  private async session(req: IncomingMessage): Promise<SessionAnswer> {
    if (req.method !== 'GET') throw wrongMethod('GET');
    const session = this.current(req);
    const methods = this.methods();
    if (!session) return { signedIn: false, methods };
    const { person, principal, via, csrf, expiresAt } = session;
    return { signedIn: true, methods, person, principal, via, csrf, expiresAt: new Date(expiresAt).toISOString() };
  }

  private async inbox(req: IncomingMessage): Promise<InboxAnswer> {
    const session = this.signedIn(req, 'GET');
    const cursor = new URL(req.url ?? '/', 'http://page').searchParams.get('cursor') ?? undefined;
    const page = await this.options.approvals.inboxQuestions(session.principal, session.roles, cursor);
    const personOf = (principal: string) => this.options.approvals.personOf(principal);
    return {
      items: page.items.map(({ item, input }) => questionViewOf(item, input, personOf)),
      ...(page.nextCursor && { nextCursor: page.nextCursor }),
    };
  }

  private async question(req: IncomingMessage): Promise<QuestionAnswer> {
    const session = this.signedIn(req, 'GET');
    const query = new URL(req.url ?? '/', 'http://page').searchParams;
    const taskId = query.get('task') ?? '';
    const key = query.get('key') ?? '';
    if (!taskId || !key) throw new Problem(400, { error: 'Give the question as task and key.' });
    const { approvals } = this.options;
    const open = await approvals.question(taskId, key, session);
    const item = inboxItemOf(taskId, undefined, open.input);
    if (approvals.mustSign(session.principal, session.roles)) {
      item.mustSign = true;
      Object.assign(item, await approvals.signing(open.run, key, session.principal));
    }
    return { question: questionViewOf(item, open.input, (principal) => approvals.personOf(principal)) };
  }

  private async link(req: IncomingMessage): Promise<LinkAnswer> {
    if (req.method !== 'GET') throw wrongMethod('GET');
    const token = new URL(req.url ?? '/', 'http://page').searchParams.get('q') ?? '';
    const target = this.links.read(token);
    if (!target) {
      throw new Problem(400, {
        error: 'This link has expired or is not valid (a link lasts until its question is due). Sign in to see what waits for you.',
      });
    }
    return target;
  }

  /** POST /approvals/answer: one decision, taken as approvals_answer takes it. */
  private async answerQuestion(req: IncomingMessage): Promise<AnswerRecorded> {
    const session = this.signedIn(req, 'POST');
    const parsed = AnswerRequestSchema.safeParse(await readJsonObject(req));
    if (!parsed.success)
      throw new Problem(400, {
        error: `The answer is not one this page sends (${parsed.error.issues[0]?.message}). Nothing was recorded.`,
      });
    const { taskId, key, version, action, content, comment, delegateTo, signature } = parsed.data;
    if ((action === 'delegate') !== (delegateTo !== undefined)) {
      throw new Problem(400, { error: 'Say whom to delegate to, and only when delegating. Nothing was recorded.' });
    }
    const { approvals } = this.options;
    const by = { principal: session.principal, roles: session.roles, via: `approvals page (${session.via})`, auth: authOf(session.via) };
    const open = await approvals.question(taskId, key, by);
    if (versionOf(open.input) !== version) {
      throw new Problem(409, {
        error: 'Someone answered or the question changed since your page showed it. Look at it again: nothing was recorded.',
        state: 'changed',
      });
    }
    const record = await approvals.decide(
      open,
      {
        action,
        ...(action === 'delegate' ? { content: { to: delegateTo! } } : content && { content }),
        ...(comment !== undefined && comment.trim() !== '' && { comment }),
        ...(signature && { signature }),
      },
      by,
    );
    const what =
      record.action === 'delegate'
        ? `Your hand-over to ${delegateTo} is recorded`
        : record.action === 'decline'
          ? 'Your refusal to answer is recorded'
          : `Your ${content?.decision === 'reject' ? 'rejection' : content?.decision === 'approve' ? 'approval' : 'answer'} is recorded`;
    log.info('approvals page: decision recorded', { taskId, key, principal: session.principal, via: session.via });
    return { message: `${what}${signature ? ', signed with your passkey' : ''}.` };
  }

  private async passkeyOptions(req: IncomingMessage): Promise<unknown> {
    if (req.method !== 'POST') throw wrongMethod('POST');
    this.checkWrite(req);
    if (!this.passkeys?.offered) throw new Problem(404, { error: 'Sign-in with a passkey is not offered here.' });
    await this.limitAttempts(req);
    return this.passkeys.options();
  }

  private async passkeySignIn(req: IncomingMessage, res: ServerResponse): Promise<{ signedIn: true }> {
    if (req.method !== 'POST') throw wrongMethod('POST');
    this.checkWrite(req);
    if (!this.passkeys?.offered) throw new Problem(404, { error: 'Sign-in with a passkey is not offered here.' });
    await this.limitAttempts(req);
    const body = await readJsonObject(req);
    let person: Person;
    try {
      person = await this.passkeys.verify(body.response);
    } catch (error) {
      if (error instanceof PasskeySignInError) throw new Problem(401, { error: error.message });
      throw error;
    }
    this.startSession(res, person, 'passkey');
    return { signedIn: true };
  }

  private async requestLink(req: IncomingMessage, res: ServerResponse): Promise<{ message: string }> {
    if (req.method !== 'POST') throw wrongMethod('POST');
    this.checkWrite(req);
    const who = (await readJsonObject(req)).who;
    if (typeof who !== 'string' || who.trim() === '' || who.length > 320)
      throw new Problem(400, { error: 'Give your name or your email address.' });
    // The same answer whoever it names, and whether or not the attempt was counted out.
    if (await this.limitAttempts(req, who.trim().toLowerCase(), false)) this.mail?.request(who);
    res.statusCode = 202;
    return { message: LINK_REQUESTED };
  }

  private async redeemLink(req: IncomingMessage, res: ServerResponse): Promise<{ signedIn: true }> {
    if (req.method !== 'POST') throw wrongMethod('POST');
    this.checkWrite(req);
    await this.limitAttempts(req);
    const token = (await readJsonObject(req)).token;
    if (!this.mail || typeof token !== 'string')
      throw new Problem(401, { error: 'This sign-in link has expired or was used already. Ask for a new one on the approvals page.' });
    let person: Person;
    try {
      person = await this.mail.redeem(token);
    } catch (error) {
      if (error instanceof TaskCoreError || error instanceof OneTimeUseUnavailableError) throw error;
      throw new Problem(401, { error: (error as Error).message });
    }
    this.startSession(res, person, 'link');
    return { signedIn: true };
  }

  private async signOut(req: IncomingMessage, res: ServerResponse): Promise<{ signedIn: false }> {
    if (req.method !== 'POST') throw wrongMethod('POST');
    this.checkWrite(req, this.sessions.read(req));
    this.sessions.end(res);
    return { signedIn: false };
  }

  /** GET /approvals/sign-in/oidc: to the provider, with the transaction (state, nonce, PKCE verifier) in a cookie. */
  private async oidcStart(req: IncomingMessage, res: ServerResponse): Promise<string> {
    const { oidc } = this.options;
    if (!oidc) throw new Problem(404, { error: 'Sign-in through an OpenID Connect provider is not offered here.' });
    await this.limitAttempts(req);
    const { url, transaction } = await oidc.start();
    const returnTo = pagePath(new URL(req.url ?? '/', 'http://page').searchParams.get('return'));
    const cookie = this.oidcTransactions.sign<OidcClaims>({
      s: transaction.state,
      n: transaction.nonce,
      v: transaction.codeVerifier,
      r: returnTo,
      exp: Date.now() + OIDC_TRANSACTION_MS,
    });
    // Lax: the provider sends the person back with a cross-site navigation, which a Strict cookie would miss.
    res.setHeader('set-cookie', this.sessions.cookie(this.sessions.nameOf(OIDC_COOKIE), cookie, OIDC_TRANSACTION_MS / 1000, 'Lax'));
    return url;
  }

  /** GET /approvals/sign-in/oidc/callback: the provider's answer checked, a session started, back to the page. */
  private async oidcCallback(req: IncomingMessage, res: ServerResponse): Promise<string> {
    const { oidc } = this.options;
    if (!oidc) throw new Problem(404, { error: 'Sign-in through an OpenID Connect provider is not offered here.' });
    const cookieName = this.sessions.nameOf(OIDC_COOKIE);
    const claims = this.oidcTransactions.read<OidcClaims>(cookieOf(req, cookieName) ?? '');
    res.setHeader('set-cookie', this.sessions.cookie(cookieName, '', 0, 'Lax'));
    if (!claims)
      throw new Problem(400, { error: 'This sign-in took too long or was started elsewhere. Start it again from the approvals page.' });
    const callback = new URL(req.url ?? '/', this.options.config.origin);
    const identity = await oidc.finish(callback, { state: claims.s, nonce: claims.n, codeVerifier: claims.v });
    // Only a principal the directory lists: a provider whose subjects differ between the ID token and the access token
    // (pairwise subjects) must not make one person two, nor anyone who can sign in to the provider an approver.
    const person = this.options.directory?.listing(identity.principal);
    if (!person) {
      log.warn('approvals page: an OpenID Connect sign-in of a principal the approvers directory does not list', {
        principal: identity.principal,
      });
      throw new Problem(403, {
        error: `Your company account (${identity.principal}) is not listed in the approvers directory. Ask its keeper to add it to your entry.`,
      });
    }
    this.sessions.start(res, { principal: identity.principal, person: person.name, roles: identity.roles, via: 'oidc' });
    log.info('approvals page: signed in', { principal: identity.principal, via: 'oidc' });
    return claims.r;
  }

  /** Runs a step that ends in a redirect (to where it returns); its problem is shown as a page with a way back. */
  private async redirecting(res: ServerResponse, step: () => Promise<string>): Promise<void> {
    try {
      const location = await step();
      res.writeHead(303, { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
      res.end();
    } catch (error) {
      const problem = problemOf(error);
      if (problem.status >= 500) log.warn(`approvals page: OpenID Connect sign-in: ${(error as Error).message}`);
      res.writeHead(problem.status, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'content-security-policy': "default-src 'none'",
      });
      res.end(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in</title></head><body><main><h1>Sign-in did not complete</h1>` +
          `<p>${escapeHtml(problem.answer.error)}</p><p><a href="${APPROVALS_PAGE_PATH}">Back to the approvals page</a></p></main></body></html>`,
      );
    }
  }

  /**
   * A person of the directory signed in as their first principal: the one their answers are recorded under (a person
   * with no principals of their own cannot sign in here; list one). Their roles are read at each request (see current).
   */
  private startSession(res: ServerResponse, person: Person, via: SignInVia): void {
    const principal = person.principals[0];
    if (principal === undefined) {
      throw new Problem(403, { error: `${person.name} has no principal in the approvers directory. Ask its keeper to list one.` });
    }
    this.sessions.start(res, { principal, person: person.name, roles: [], via });
    log.info('approvals page: signed in', { principal, via });
  }

  /**
   * Counts a sign-in attempt of the request's address (and of `name`, when given); past the limit, a 429 (or, with
   * `refuse` false, false: the caller answers as if it were let through).
   */
  private async limitAttempts(req: IncomingMessage, name?: string, refuse = true): Promise<boolean> {
    const address = clientAddress(req, this.options.config.proxyHops);
    const keys = [
      { key: `address:${address}`, limit: PER_ADDRESS },
      ...(name !== undefined
        ? [
            { key: `name:${name}:${address}`, limit: PER_NAME_AND_ADDRESS },
            { key: `name:${name}`, limit: PER_NAME },
          ]
        : []),
    ];
    const allowed = await this.attempts.allow(keys);
    if (!allowed && refuse) throw new Problem(429, { error: 'Too many sign-in attempts from here. Wait a minute and try again.' });
    return allowed;
  }
}

/** The CSP source of the page's one executable script: `sha256-` and the digest of its text. */
const scriptDigest = (() => {
  let seen: { html: string; digest: string } | undefined;
  return (html: string): string => {
    if (seen?.html !== html) {
      const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
      seen = { html, digest: `sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}` };
    }
    return seen.digest;
  };
})();

/** How an answer records the way its person signed in. */
function authOf(via: SignInVia): 'passkey' | 'mail-link' | 'oauth' {
  return via === 'passkey' ? 'passkey' : via === 'link' ? 'mail-link' : 'oauth';
}

/** The page path to return to after an OpenID Connect sign-in: a path of the page, or the page itself. */
function pagePath(given: string | null): string {
  if (given === null) return APPROVALS_PAGE_PATH;
  try {
    const url = new URL(given, 'http://page');
    if (url.origin === 'http://page' && url.pathname === APPROVALS_PAGE_PATH) return `${url.pathname}${url.search}`;
  } catch {
    // Anything else returns to the page itself.
  }
  return APPROVALS_PAGE_PATH;
}

/** The problem an error answers with: ours as they are, the core's by kind, anything else as a 503 to retry. */
function problemOf(error: unknown): Problem {
  if (error instanceof Problem) return error;
  if (error instanceof QuestionNotOpenError) {
    return new Problem(409, {
      error: 'This question is not open for you any more: it was answered, handed on, cancelled or closed meanwhile. Nothing was recorded.',
      state: 'closed',
    });
  }
  if (error instanceof AnswerRefusedError)
    return new Problem(422, { error: `${error.message}. ${error.onRecord ?? 'Nothing was recorded.'}` });
  if (error instanceof TooManyRequestsError)
    return new Problem(429, { error: 'Too many requests from you at once. Wait a moment and try again.' });
  if (error instanceof TaskCoreError && error.category === 'request') return new Problem(400, { error: `${error.message}.` });
  if (error instanceof OneTimeUseUnavailableError || isTemporalUnavailable(error) || error instanceof TaskCoreError) {
    return new Problem(503, {
      error: 'The approvals service cannot reach what it needs right now. Try again in a minute: nothing was recorded.',
    });
  }
  if (error instanceof BodyError) return new Problem(error.status, { error: error.message });
  if (error instanceof OidcSignInError)
    return new Problem(error.reason === OidcSignInFailure.providerUnavailable ? 503 : 400, { error: error.message });
  return new Problem(503, { error: 'Something went wrong on the server. Try again in a minute: nothing was recorded.' });
}

/** Thrown for a body that is too large or not a JSON object. */
class BodyError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The request's JSON object body (`application/json`, at most {@link MAX_BODY_BYTES}); throws {@link BodyError}. */
async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) throw new BodyError(415, 'Send JSON.');
  const text = await readBodyText(req, MAX_BODY_BYTES);
  if (text === undefined) throw new BodyError(413, `The request is over ${MAX_BODY_BYTES} bytes.`);
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Answered below.
  }
  throw new BodyError(400, 'The request is not a JSON object.');
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (status === 413) res.setHeader('connection', 'close');
  res.writeHead(status, {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  res.end(JSON.stringify(body));
}

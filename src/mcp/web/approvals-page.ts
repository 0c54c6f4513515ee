/**
 * The approvals page (`/approvals`) and its calls, served by `serve --http` for approvers who have no MCP client: the
 * signed-in person's inbox across every task, each question with what it is about, and their decision. Sign-in with a
 * passkey the approvers directory lists, through the deployment's OpenID Connect provider, or with a one-time link by
 * mail; the session is a signed cookie (see `web-session.ts`). An answer takes the same path as `approvals_answer`
 * ({@link Approvals.decide}): roles, four eyes, the seal, the decision record, `mustSign`, notices. A GET never answers
 * and never signs in.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Approvals } from '../../approvals/approvals';
import { inboxItemOf } from '../../approvals/inbox';
import { ApprovalLinks } from '../../records/approval-links';
import type { ApproversDirectory } from '../../records/directory';
import type { Person } from '../../records/directory-file';
import { log } from '../../util/log';
import {
  APPROVALS_API,
  type AnswerRecorded,
  type InboxAnswer,
  type LinkAnswer,
  type QuestionAnswer,
  type SessionAnswer,
  type SignInMethods,
} from '../app/approvals-page/wire';
import { type ReplicaSharedState, TaskCoreError } from '../../core';
import type { HttpRoute } from '../transports/http';
import { readJsonObject, sendJson } from './json-call';
import { MailSignIn, LINK_REQUESTED, smtpMailer, type SignInMail } from './mail-sign-in';
import type { OidcSignIn } from './oidc-sign-in';
import { OidcSignInRoutes } from './oidc-sign-in-routes';
import { OneTimeUses, OneTimeUseUnavailableError } from '../../approvals/one-time-uses';
import { takePageAnswer } from './page-answer';
import { clientAddress, type ApprovalsPageConfig } from './page-config';
import { sendPageDocument } from './page-document';
import { Problem, problemOf, wrongMethod } from './page-problem';
import { PasskeySignIn, PasskeySignInError } from './passkey-sign-in';
import { questionViewOf } from './question-view';
import { PER_ADDRESS, PER_NAME, PER_NAME_AND_ADDRESS, SignInAttempts } from './sign-in-attempts';
import { WebSessions, type SignInVia, type WebSession } from './web-session';

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

/** The page (see the module's comment). Throws nothing at start; each call answers its own errors. */
export function approvalsPage(options: ApprovalsPageOptions): ApprovalsPage {
  return new ApprovalsPageRoutes(options).mount();
}

class ApprovalsPageRoutes {
  private readonly sessions: WebSessions;
  private readonly attempts: SignInAttempts;
  private readonly links: ApprovalLinks;
  private readonly passkeys: PasskeySignIn | undefined;
  private readonly mail: MailSignIn | undefined;
  private readonly oidc: OidcSignInRoutes;
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
    this.oidc = new OidcSignInRoutes({
      oidc: options.oidc,
      directory,
      origin: config.origin,
      taskKey,
      sessions: this.sessions,
      limitAttempts: (req) => this.limitAttempts(req),
    });
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
      { path: APPROVALS_API.oidcStart, handle: (req, res) => this.oidc.start(req, res) },
      { path: APPROVALS_API.oidcCallback, handle: (req, res) => this.oidc.callback(req, res) },
    ];
    return { routes, close: () => this.mail?.close() };
  }

  private methods(): SignInMethods {
    return { passkey: this.passkeys?.offered === true, link: this.mail?.offered === true, oidc: this.options.oidc !== undefined };
  }

  /** GET /approvals: the page itself, the same for everyone (what it shows comes from the calls). */
  private async page(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'Use GET.' }, { allow: 'GET, HEAD' });
    return sendPageDocument(req, res, { rpId: this.passkeys?.offered ? this.rpId : null, origin: this.options.config.origin });
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
    return takePageAnswer(this.options.approvals, session, await readJsonObject(req));
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

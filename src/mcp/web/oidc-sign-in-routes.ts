/**
 * The approvals page's two steps of a sign-in through the deployment's OpenID Connect provider: to the provider, with
 * the transaction (state, nonce, PKCE verifier) in a short-lived signed cookie, and back from it to a session and the
 * page. Each ends in a redirect; a step that fails shows a page that says why, with a way back.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { APPROVALS_PAGE_PATH } from '../../records/approval-links';
import type { ApproversDirectory } from '../../records/directory';
import { SignedTokens, type TokenClaims } from '../../shared/signed-tokens';
import { cookieOf } from '../../util/cookies';
import { escapeHtml } from '../../util/html';
import { log } from '../../util/log';
import type { OidcSignIn } from './oidc-sign-in';
import { Problem, problemOf } from './page-problem';
import type { WebSessions } from './web-session';

/** What the two steps stand on. */
export interface OidcSignInRoutesOptions {
  /** The deployment's OpenID Connect provider; without it both steps answer 404. */
  oidc?: OidcSignIn;
  /** The approvers directory: only a principal it lists signs in. */
  directory?: ApproversDirectory;
  /** The page's origin, the base of the callback's URL. */
  origin: string;
  /** The bridge's task key: the transaction cookie is signed with a key derived from it. */
  taskKey: Buffer;
  sessions: WebSessions;
  /** Counts a sign-in attempt of the request's address; throws a 429 {@link Problem} past the limit. */
  limitAttempts(req: IncomingMessage): Promise<unknown>;
}

/** How long an OpenID Connect sign-in may take from the page to the provider and back. */
const OIDC_TRANSACTION_MS = 10 * 60_000;
const OIDC_COOKIE = 'approvals-oidc';

interface OidcClaims extends TokenClaims {
  s: string;
  n: string;
  v: string;
  r: string;
}

/** GET /approvals/sign-in/oidc and its callback (see the module's comment). */
export class OidcSignInRoutes {
  private readonly transactions: SignedTokens;

  constructor(private readonly options: OidcSignInRoutesOptions) {
    this.transactions = new SignedTokens(options.taskKey, 'oidc sign-in transaction');
  }

  /** GET /approvals/sign-in/oidc: to the provider. */
  start(req: IncomingMessage, res: ServerResponse): Promise<void> {
    return this.redirecting(res, () => this.toProvider(req, res));
  }

  /** GET /approvals/sign-in/oidc/callback: back from the provider to the page, signed in. */
  callback(req: IncomingMessage, res: ServerResponse): Promise<void> {
    return this.redirecting(res, () => this.fromProvider(req, res));
  }

  /** The provider's authorization URL, with the transaction (state, nonce, PKCE verifier) set in a cookie. */
  private async toProvider(req: IncomingMessage, res: ServerResponse): Promise<string> {
    const { oidc, sessions } = this.options;
    if (!oidc) throw new Problem(404, { error: 'Sign-in through an OpenID Connect provider is not offered here.' });
    await this.options.limitAttempts(req);
    const { url, transaction } = await oidc.start();
    const returnTo = pagePath(new URL(req.url ?? '/', 'http://page').searchParams.get('return'));
    const cookie = this.transactions.sign<OidcClaims>({
      s: transaction.state,
      n: transaction.nonce,
      v: transaction.codeVerifier,
      r: returnTo,
      exp: Date.now() + OIDC_TRANSACTION_MS,
    });
    // Lax: the provider sends the person back with a cross-site navigation, which a Strict cookie would miss.
    res.setHeader('set-cookie', sessions.cookie(sessions.nameOf(OIDC_COOKIE), cookie, OIDC_TRANSACTION_MS / 1000, 'Lax'));
    return url;
  }

  /** The provider's answer checked and a session started; the page path to return to. */
  private async fromProvider(req: IncomingMessage, res: ServerResponse): Promise<string> {
    const { oidc, sessions } = this.options;
    if (!oidc) throw new Problem(404, { error: 'Sign-in through an OpenID Connect provider is not offered here.' });
    const cookieName = sessions.nameOf(OIDC_COOKIE);
    const claims = this.transactions.read<OidcClaims>(cookieOf(req, cookieName) ?? '');
    res.setHeader('set-cookie', sessions.cookie(cookieName, '', 0, 'Lax'));
    if (!claims)
      throw new Problem(400, { error: 'This sign-in took too long or was started elsewhere. Start it again from the approvals page.' });
    const callback = new URL(req.url ?? '/', this.options.origin);
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
    sessions.start(res, { principal: identity.principal, person: person.name, roles: identity.roles, via: 'oidc' });
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

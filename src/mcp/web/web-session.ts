/**
 * The signed-in person of the approvals page: a session cookie that carries who they are (principal, person, roles,
 * how they signed in), a CSRF token and its end, signed with a key derived from the task key, so that every replica
 * reads it and none keeps it. HttpOnly, SameSite=Strict, Secure and `__Host-` everywhere but localhost. A POST
 * counts only from the page's own origin and with the session's CSRF token in `x-csrf-token`.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SignedTokens, type TokenClaims } from '../../shared/signed-tokens';
import { cookieOf } from '../../util/cookies';
import type { ApprovalsPageConfig } from './page-config';

/** How a person signed in. */
export type SignInVia = 'passkey' | 'link' | 'oidc';

/** A signed-in person. */
export interface WebSession {
  principal: string;
  person: string;
  /** In the cookie: the roles the OpenID Connect provider's claim gave (none otherwise); once read, all the person holds. */
  roles: string[];
  via: SignInVia;
  csrf: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

interface SessionClaims extends TokenClaims {
  p: string;
  n: string;
  r: string[];
  v: SignInVia;
  c: string;
}

/** Why a write is refused before it is read: from another origin, or without the session's CSRF token. */
export type WriteRefusal = 'origin' | 'csrf';

/** The path every cookie of the page is scoped to. */
const COOKIE_PATH = '/approvals';

/** Issues, reads and clears sessions (see the module's comment). */
export class WebSessions {
  private readonly tokens: SignedTokens;
  /** The session cookie's name (see {@link cookieName}). */
  readonly cookieName: string;

  constructor(
    taskKey: Buffer,
    private readonly config: ApprovalsPageConfig,
  ) {
    this.tokens = new SignedTokens(taskKey, 'approvals page session');
    this.cookieName = this.nameOf('approvals-session');
  }

  /**
   * The name of the page's cookie `base`: `__Host-` where cookies are Secure, so that no other host of the domain (a
   * sibling subdomain) can set or shadow it; the bare name on http://localhost, where the prefix cannot be had.
   */
  nameOf(base: string): string {
    return this.config.secureCookies ? `__Host-${base}` : base;
  }

  /** Starts a session for `who`: sets its cookie on `res` and returns it. */
  start(res: ServerResponse, who: Pick<WebSession, 'principal' | 'person' | 'roles' | 'via'>, now = Date.now()): WebSession {
    const session: WebSession = { ...who, csrf: randomBytes(18).toString('base64url'), expiresAt: now + this.config.sessionMs };
    const token = this.tokens.sign<SessionClaims>({
      p: session.principal,
      n: session.person,
      r: session.roles,
      v: session.via,
      c: session.csrf,
      exp: session.expiresAt,
    });
    appendCookie(res, this.cookie(this.cookieName, token, Math.floor(this.config.sessionMs / 1000)));
    return session;
  }

  /** The session the request's cookie carries, or undefined (none, altered, or over). */
  read(req: IncomingMessage, now = Date.now()): WebSession | undefined {
    const token = cookieOf(req, this.cookieName);
    const claims = token === undefined ? undefined : this.tokens.read<SessionClaims>(token, now);
    if (!claims || typeof claims.p !== 'string' || typeof claims.n !== 'string' || !Array.isArray(claims.r)) return undefined;
    if (!['passkey', 'link', 'oidc'].includes(claims.v) || typeof claims.c !== 'string') return undefined;
    return {
      principal: claims.p,
      person: claims.n,
      roles: claims.r.filter((role) => typeof role === 'string'),
      via: claims.v,
      csrf: claims.c,
      expiresAt: claims.exp,
    };
  }

  /** Ends the session on this browser: the cookie is cleared. */
  end(res: ServerResponse): void {
    appendCookie(res, this.cookie(this.cookieName, '', 0));
  }

  /**
   * Why a state-changing request may not go on, or undefined when it may: it must come from the page's own origin
   * (`Origin`, and `Sec-Fetch-Site` where the browser sends it) and, when `session` is given, carry its CSRF token.
   */
  writeRefusal(req: IncomingMessage, session?: WebSession): WriteRefusal | undefined {
    if (req.headers.origin !== this.config.origin) return 'origin';
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin') return 'origin';
    if (session === undefined) return undefined;
    const given = Buffer.from(String(req.headers['x-csrf-token'] ?? ''));
    const expected = Buffer.from(session.csrf);
    return given.length === expected.length && timingSafeEqual(given, expected) ? undefined : 'csrf';
  }

  /**
   * A `Set-Cookie` value of the page: HttpOnly, SameSite as asked (Strict for sessions), Secure where cookies are. Its
   * path is the page's on localhost, and `/` elsewhere, as a `__Host-` cookie needs.
   */
  cookie(name: string, value: string, maxAgeSeconds: number, sameSite: 'Strict' | 'Lax' = 'Strict'): string {
    const attributes = this.config.secureCookies ? 'Path=/' : `Path=${COOKIE_PATH}`;
    const secure = this.config.secureCookies ? '; Secure' : '';
    return `${name}=${value}; ${attributes}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=${sameSite}${secure}`;
  }
}

/** Adds a `Set-Cookie` header to those `res` already has. */
export function appendCookie(res: ServerResponse, cookie: string): void {
  const present = res.getHeader('set-cookie');
  const list = present === undefined ? [] : Array.isArray(present) ? present : [String(present)];
  res.setHeader('set-cookie', [...list, cookie]);
}

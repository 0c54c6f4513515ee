/**
 * Where the approvals page lives and how long what it hands out lasts: its origin (MCP_PUBLIC_URL, else the passkey
 * page's MCP_PASSKEY_ORIGIN), whether its cookies are Secure (everywhere but localhost), the length of a session
 * (MCP_WEB_SESSION_MS) and of a one-time sign-in link (MCP_WEB_SIGN_IN_LINK_MS), and the proxies in front of it
 * (MCP_WEB_PROXY_HOPS).
 */
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { countFromEnv, msFromEnv } from '../../shared/temporal-config';

/** The approvals page's settings. */
export interface ApprovalsPageConfig {
  /** The origin people open the page at, e.g. https://approvals.example.com. */
  origin: string;
  /** Cookies carry Secure: true unless the origin is http://localhost (browsers take Secure cookies only over https). */
  secureCookies: boolean;
  /** How long a session lasts from its sign-in. */
  sessionMs: number;
  /** How long a one-time sign-in link sent by mail works. */
  signInLinkMs: number;
  /**
   * How many proxies (a balancer) stand in front of the server and append to `X-Forwarded-For`: a person's address is
   * the one the outermost of them saw. 0: the connection's own address.
   */
  proxyHops: number;
}

/** Thrown for page settings that cannot work; the message names the setting and the fix. */
export class ApprovalsPageConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ApprovalsPageConfigError';
  }
}

/** Default length of a session: a working day. */
export const DEFAULT_SESSION_MS = 8 * 3_600_000;

/** Default life of a one-time sign-in link. */
export const DEFAULT_SIGN_IN_LINK_MS = 15 * 60_000;

/** True for localhost and its subdomains: the names browsers treat as secure without https. */
export function isLocalhostName(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost');
}

/**
 * The page's settings from the environment, or undefined when neither MCP_PUBLIC_URL nor MCP_PASSKEY_ORIGIN is set (no
 * page). Throws {@link ApprovalsPageConfigError} for an address that is not an absolute https URL (http only on
 * localhost) naming a host, or for lengths out of range.
 */
export function approvalsPageConfigFromEnv(env: NodeJS.ProcessEnv = process.env): ApprovalsPageConfig | undefined {
  const publicUrl = env.MCP_PUBLIC_URL?.trim();
  const name = publicUrl ? 'MCP_PUBLIC_URL' : 'MCP_PASSKEY_ORIGIN';
  const given = publicUrl || env.MCP_PASSKEY_ORIGIN?.trim();
  if (!given) return undefined;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new ApprovalsPageConfigError(`${name} is not a URL: use the address approvers open, e.g. https://approvals.example.com`);
  }
  const local = isLocalhostName(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && local)) {
    throw new ApprovalsPageConfigError(`${name} must be https:// (http:// only for localhost): sign-in cookies and passkeys need it`);
  }
  if (isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0) {
    throw new ApprovalsPageConfigError(`${name} must name a host, not an IP address (localhost for a trial): passkeys belong to a domain`);
  }
  if (url.search || url.hash || url.pathname !== '/' || url.username || url.password) {
    throw new ApprovalsPageConfigError(`${name} is the server's address alone, with no path, query or user: ${url.origin}`);
  }
  const sessionMs = msFromEnv(env, 'MCP_WEB_SESSION_MS', DEFAULT_SESSION_MS);
  const signInLinkMs = msFromEnv(env, 'MCP_WEB_SIGN_IN_LINK_MS', DEFAULT_SIGN_IN_LINK_MS);
  if (sessionMs < 60_000 || sessionMs > 7 * 24 * 3_600_000)
    throw new ApprovalsPageConfigError('MCP_WEB_SESSION_MS must be between 60000 (a minute) and 604800000 (a week)');
  if (signInLinkMs < 60_000 || signInLinkMs > 24 * 3_600_000)
    throw new ApprovalsPageConfigError('MCP_WEB_SIGN_IN_LINK_MS must be between 60000 (a minute) and 86400000 (a day)');
  const proxyHops = countFromEnv(env, 'MCP_WEB_PROXY_HOPS', 0, 0);
  return { origin: url.origin, secureCookies: url.protocol === 'https:', sessionMs, signInLinkMs, proxyHops };
}

/**
 * The address a request came from: the connection's, or with `proxyHops` proxies in front, the one the outermost of
 * them saw (the `proxyHops`-th entry of `X-Forwarded-For` from its end; the connection's when the header has fewer).
 */
export function clientAddress(req: IncomingMessage, proxyHops: number): string {
  const own = req.socket.remoteAddress ?? 'unknown';
  if (proxyHops === 0) return own;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((hop) => hop.trim())
    .filter(Boolean);
  return hops.length >= proxyHops ? hops[hops.length - proxyHops] : own;
}

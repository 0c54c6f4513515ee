/**
 * A codec server for Temporal's Web UI and CLI: `POST /encode` and `POST /decode` run payloads through the bridge's
 * payload codec for callers it authorizes, so an operator sees a task's input and result decoded where everyone else
 * sees ciphertext. Callers: a bearer token (the bridge's static tokens, or an OAuth access token of its issuer, as the
 * Web UI passes a signed-in user's) whose principal holds the reader role; or a browser signed in on the server's own
 * page (`GET /`), whose Web UI sends the session cookie (its codec setting "include cross-origin credentials").
 * Browsers are answered only from the Web UI's origins (CORS).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { SignedTokens, type TokenClaims } from '../shared/signed-tokens';
import { log } from '../util/log';
import { cookieOf } from '../util/cookies';
import { FailureReport } from '../util/failure-report';
import { readBodyText } from '../util/request-body';
import { isLoopbackHost } from '../mcp/transports/limits';
import type { Caller, Refusal, RequestAuthenticator } from '../mcp/transports/oauth';
import { bodyOfPayloads, payloadsOfBody, PayloadsBodyError } from './payload-json';
import { signInPage } from './sign-in-page';

/** What {@link startCodecServer} serves with. */
export interface CodecServerOptions {
  host: string;
  port: number;
  /** The codecs, in the order a data converter lists them (encode runs them in order, decode in reverse). */
  codecs: readonly PayloadCodec[];
  /** Authenticates bearer tokens (static ones, OAuth access tokens). */
  authenticator: RequestAuthenticator;
  /** The role a caller's principal must hold. */
  role: string;
  /** Browser origins answered (the Web UI's), e.g. `http://localhost:8233`. */
  uiOrigins: readonly string[];
  /** The bridge's task key: signs the browser sessions, so every replica reads them. */
  taskKey: Buffer;
  /** How long a browser sign-in lasts. */
  sessionMs: number;
  /** Largest request body. */
  maxBodyBytes: number;
}

/** A codec server that listens; see {@link startCodecServer}. */
export interface RunningCodecServer {
  /** Where it listens, e.g. `http://127.0.0.1:8888`. */
  url: string;
  close(): Promise<void>;
}

/** What a browser session says. */
interface SessionClaims extends TokenClaims {
  principal: string;
  roles: string[];
}

/** The session cookie's name. */
export const CODEC_SESSION_COOKIE = 'temporal-mcp-codec-session';

const ALLOWED_HEADERS = 'Content-Type, X-Namespace, Authorization, Authorization-Extras';

/** Serves {@link CodecServerOptions}; resolves once it listens. */
export async function startCodecServer(options: CodecServerOptions): Promise<RunningCodecServer> {
  const handler = new CodecRequests(options);
  const server: Server = createServer((req, res) => {
    handler.handle(req, res).catch((error: Error) => {
      log.error(`codec-server: ${req.method} ${req.url}: ${error.message}`);
      if (!res.headersSent) answer(res, 500, { error: 'the codec server failed; see its log' });
      else res.destroy();
    });
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The server's requests, one method per route. */
class CodecRequests {
  private readonly sessions: SignedTokens;
  private readonly origins: Set<string>;
  private readonly undecoded = new FailureReport(60_000);

  constructor(private readonly options: CodecServerOptions) {
    this.sessions = new SignedTokens(options.taskKey, 'codec server session');
    this.origins = new Set(options.uiOrigins.map((origin) => origin.replace(/\/+$/, '').toLowerCase()));
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://codec.invalid');
    const origin = req.headers.origin;
    const route = `${req.method} ${url.pathname}`;
    if (route === 'GET /healthz') return answer(res, 200, { ok: true });
    if (url.pathname === '/' || url.pathname === '/sign-in' || url.pathname === '/sign-out') return this.page(req, res, url.pathname);
    if (url.pathname !== '/encode' && url.pathname !== '/decode')
      return answer(res, 404, { error: `no ${url.pathname} here: POST /encode or /decode` });
    // A browser page of another origin gets nothing, not even a refusal it could read.
    if (origin !== undefined && !this.origins.has(origin.toLowerCase())) {
      return answer(res, 403, { error: `origin ${origin} is not a Web UI this codec server answers (MCP_CODEC_UI_ORIGINS)` });
    }
    if (origin !== undefined) {
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('access-control-allow-credentials', 'true');
      res.setHeader('vary', 'Origin');
    }
    if (req.method === 'OPTIONS') {
      res.setHeader('access-control-allow-methods', 'POST, OPTIONS');
      res.setHeader('access-control-allow-headers', ALLOWED_HEADERS);
      res.setHeader('access-control-max-age', '600');
      res.writeHead(204).end();
      return;
    }
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST, OPTIONS');
      return answer(res, 405, { error: `${url.pathname} takes POST` });
    }
    const caller = await this.callerOf(req);
    if ('status' in caller) {
      for (const [name, value] of Object.entries(caller.headers)) res.setHeader(name, value);
      return answer(res, caller.status, { error: caller.message });
    }
    if (!caller.roles.includes(this.options.role)) {
      return answer(res, 403, { error: `${caller.principal} may not read payloads: that needs the role ${this.options.role}` });
    }
    // Only JSON: a form a page of another site could post never carries the session.
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
      return answer(res, 415, { error: 'send the payloads as Content-Type: application/json' });
    }
    const text = await readBodyText(req, this.options.maxBodyBytes);
    if (text === undefined) return answer(res, 413, { error: `the body is larger than ${this.options.maxBodyBytes} bytes` });
    let payloads;
    try {
      payloads = payloadsOfBody(text);
    } catch (error) {
      if (error instanceof PayloadsBodyError) return answer(res, 400, { error: error.message });
      throw error;
    }
    const namespace = req.headers['x-namespace'];
    if (url.pathname === '/encode') {
      let encoded = payloads;
      for (const codec of this.options.codecs) encoded = await codec.encode(encoded);
      return answerText(res, 200, bodyOfPayloads(encoded));
    }
    const decoded = await Promise.all(payloads.map((payload) => this.decodeOne(payload)));
    const failed = decoded.filter((result) => result.error !== undefined);
    // A page of the Web UI asks many times: said once a minute, counted.
    const due = failed.length > 0 ? this.undecoded.count() : undefined;
    if (due) {
      log.warn(
        `codec-server: payloads left encoded in ${due.failures} request(s)${due.again ? ' since the last report' : ''}, the last for ${caller.principal} (namespace ${String(namespace ?? '?')}): ${failed[0].error}`,
      );
    }
    return answerText(res, 200, bodyOfPayloads(decoded.map((result) => result.payload)));
  }

  /**
   * One payload decoded; one that does not decode (a key this server does not hold) is passed back as it came, so the
   * Web UI shows the rest of a page decoded.
   */
  private async decodeOne(payload: Payload): Promise<{ payload: Payload; error?: string }> {
    try {
      let decoded = [payload];
      for (const codec of [...this.options.codecs].reverse()) decoded = await codec.decode(decoded);
      return { payload: decoded[0] };
    } catch (error) {
      return { payload, error: (error as Error).message };
    }
  }

  /** The caller of a request: its bearer token, else its browser session. */
  private async callerOf(req: IncomingMessage): Promise<Pick<Caller, 'principal' | 'roles'> | Refusal> {
    if (req.headers.authorization !== undefined) return this.options.authenticator.authenticate(req);
    const session = cookieOf(req, CODEC_SESSION_COOKIE);
    const claims = session === undefined ? undefined : this.sessions.read<SessionClaims>(session);
    if (claims) return { principal: claims.principal, roles: claims.roles };
    return {
      status: 401,
      headers: { 'www-authenticate': 'Bearer realm="temporal-mcp-codec"' },
      message: "Unauthorized: send Authorization: Bearer <token>, or sign in on this codec server's page (GET /) first",
    };
  }

  /** The sign-in page and its form posts. */
  private async page(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void> {
    res.setHeader('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('cache-control', 'no-store');
    const session = cookieOf(req, CODEC_SESSION_COOKIE);
    const signedIn = session === undefined ? undefined : this.sessions.read<SessionClaims>(session);
    if (req.method === 'GET' && pathname === '/') {
      return answerHtml(
        res,
        200,
        signInPage({ ...(signedIn && { principal: signedIn.principal }), role: this.options.role, uiOrigins: [...this.origins] }),
      );
    }
    if (req.method !== 'POST' || pathname === '/') {
      res.setHeader('allow', pathname === '/' ? 'GET' : 'POST');
      return answerHtml(res, 405, signInPage({ role: this.options.role, uiOrigins: [...this.origins], problem: 'Use the form.' }));
    }
    // The form is posted from this page only.
    const site = req.headers['sec-fetch-site'];
    if ((site !== undefined && site !== 'same-origin') || !sameOrigin(req)) {
      return answerHtml(
        res,
        403,
        signInPage({ role: this.options.role, uiOrigins: [...this.origins], problem: 'Sign in from this page.' }),
      );
    }
    const secure = !isLoopbackHost(hostNameOf(req));
    if (pathname === '/sign-out') {
      res.setHeader('set-cookie', cookie('', 0, secure));
      return redirect(res, '/');
    }
    const text = await readBodyText(req, 16_384);
    const token = text === undefined ? undefined : new URLSearchParams(text).get('token')?.trim();
    const refused = (problem: string) =>
      answerHtml(res, 401, signInPage({ role: this.options.role, uiOrigins: [...this.origins], problem }));
    if (!token) return refused('Enter your token.');
    const caller = await this.options.authenticator.authenticate({ headers: { authorization: `Bearer ${token}` } } as IncomingMessage);
    if ('status' in caller) return refused('That token is not valid.');
    if (!caller.roles.includes(this.options.role))
      return refused(`${caller.principal} may not read payloads: that needs the role ${this.options.role}.`);
    const exp = Date.now() + this.options.sessionMs;
    const signed = this.sessions.sign<SessionClaims>({ exp, principal: caller.principal, roles: caller.roles });
    res.setHeader('set-cookie', cookie(signed, Math.floor(this.options.sessionMs / 1000), secure));
    log.info(`codec-server: ${caller.principal} signed in in a browser`);
    return redirect(res, '/');
  }
}

function cookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return `${CODEC_SESSION_COOKIE}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

function hostNameOf(req: IncomingMessage): string {
  try {
    return new URL(`http://${req.headers.host ?? ''}`).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return '';
  }
}

/** Whether the request's Origin is this server as the browser reached it (Host). */
function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  answerText(res, status, JSON.stringify(body));
}

function answerText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(text);
}

function answerHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(html);
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { location }).end();
}

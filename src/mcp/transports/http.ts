import { BodyBudget, BodyBudgetError } from '../../util/request-body';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import { log } from '../../util/log';
import { sleep } from '../../util/wait';
import type { McpEndpoints } from '../endpoints';
import { knownLegacyVersion, Mcp2025HttpLeg } from '../mcp2025/http-leg';
import { Mcp2026HttpLeg } from '../mcp2026/http-leg';
import { headerValue, sendJsonRpcError, type HttpCaller } from '../protocol/http-exchange';
import { isLoopbackHost, OriginPolicy, type HttpLimits } from './limits';
import type { Caller as AuthenticatedCaller, RequestAuthenticator } from './oauth';
import { discardRest, readJsonBody, type BodyRead } from './body';
import { ConnectionGate, PrincipalRequests } from './connections';

/** Options of {@link startHttpServer}. */
export interface HttpServerOptions {
  host: string;
  port: number;
  /** The protocol generations served: a {@link Bridge} (2025-11-25 sessions, 2026-07-28 requests, task subscriptions). */
  endpoints: McpEndpoints;
  /** Bounds on sessions, connections, request times and body size (see {@link HttpLimits}). */
  limits?: Partial<HttpLimits>;
  /** Which browser origins may call; default loopback origins only. */
  origins?: OriginPolicy;
  /** `Host` header values answered (host or host:port); default the loopback names when bound to loopback. */
  allowedHosts?: string[];
  /** When given, every request needs `Authorization: Bearer <token>` and acts for its principal; made for the bound endpoint URL. */
  authenticator?(endpointUrl: string): RequestAuthenticator;
  /** A session with no request for this long is closed (its client re-initializes and finds its tasks again). */
  sessionIdleMs?: number;
  /** Answers `GET /healthz`: whether the server can do its work (Temporal answers). Without it, /healthz is 404. */
  health?(): Promise<{ ok: true } | { ok: false; reason: string }>;
  /**
   * Pages and calls of their own beside MCP (the passkey page): each answers requests for its path, without
   * authentication, once the Host header is allowed; it checks origins and bodies itself.
   */
  routes?: HttpRoute[];
}

/** A path the server answers beside MCP (see {@link HttpServerOptions.routes}). */
export interface HttpRoute {
  /** The exact path, e.g. `/passkeys`. */
  path: string;
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/** A running Streamable HTTP endpoint. */
export interface RunningHttpServer {
  /** The endpoint, e.g. http://127.0.0.1:3000/mcp */
  url: string;
  /**
   * Stops: accepts no more connections, answers 503 to requests on connections still open, ends every session and SSE
   * stream (open tasks/result waits and subscriptions end; their clients go on elsewhere, since tasks live in
   * Temporal), lets responses under way finish for up to `graceMs` (default 10 s), then cuts what is left.
   */
  close(graceMs?: number): Promise<void>;
}

const MCP_PATH = '/mcp';
const HEALTH_PATH = '/healthz';

/** Who sent a request: the principal and roles of its credentials; no principal where the server authenticates none. */
interface Caller {
  principal?: string;
  roles: string[];
  /** The credential the request came with, for a request that stays open to watch ({@link HttpRequests.watchCredential}). */
  credential?: AuthenticatedCaller;
}

/** The longest a timer waits (about 24.8 days); a credential valid longer is watched for revocation only. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What {@link HttpRequests.readBody} returns when it answered the request itself (a body too large or malformed). */
const NOT_READ = Symbol('not read');

/**
 * The requests of one HTTP server, one step at a time (see {@link handle}): the checks every request gets (host, origin,
 * credentials, body), then the one path it takes: a page of its own, the health check, or a generation's leg: a
 * 2026-07-28 request or subscription ({@link Mcp2026HttpLeg}), else a 2025-11-25 session's request or the initialize
 * that opens one ({@link Mcp2025HttpLeg}).
 */
class HttpRequests {
  /** Made once the server is bound, for its endpoint URL. */
  auth: RequestAuthenticator | undefined;
  /** `Host` header values answered; undefined: any. */
  allowedHosts: string[] | undefined;
  /** Set by a shutdown: requests still arriving on open connections get 503. */
  draining = false;
  /** Requests under way with the credential they came with, asked again when credentials may have been revoked. */
  private readonly credentialed = new Map<AbortController, AuthenticatedCaller>();
  /** The generations' legs: 2025-11-25 sessions, 2026-07-28 requests and subscriptions. */
  readonly mcp2025: Mcp2025HttpLeg;
  readonly mcp2026: Mcp2026HttpLeg;
  private readonly requestsOf: PrincipalRequests;
  private readonly maxRequestsPerPrincipal: number;
  private readonly maxBodyBytes: number;
  /** The bytes of bodies still arriving, per principal (or remote address, without credentials) and in all. */
  private readonly bodies: BodyBudget;
  private readonly origins: OriginPolicy;

  constructor(private readonly options: HttpServerOptions) {
    this.maxBodyBytes = options.limits?.maxBodyBytes ?? 2 * 1024 * 1024;
    this.bodies = new BodyBudget(
      options.limits?.maxPendingBodyBytesPerPrincipal ?? 8 * 1024 * 1024,
      options.limits?.maxPendingBodyBytes ?? 64 * 1024 * 1024,
    );
    this.origins = options.origins ?? new OriginPolicy([]);
    this.mcp2025 = new Mcp2025HttpLeg(options.endpoints, {
      maxSessions: options.limits?.maxSessions ?? 1000,
      maxSessionsPerPrincipal: options.limits?.maxSessionsPerPrincipal ?? 32,
      idleMs: options.sessionIdleMs ?? 3_600_000,
    });
    this.mcp2026 = new Mcp2026HttpLeg(options.endpoints);
    this.allowedHosts = options.allowedHosts?.map((host) => host.toLowerCase());
    this.maxRequestsPerPrincipal = options.limits?.maxRequestsPerPrincipal ?? 256;
    this.requestsOf = new PrincipalRequests(this.maxRequestsPerPrincipal);
  }

  /** Answers one request. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const publicAnswer = this.auth?.publicAnswer(req.method, url.pathname);
    if (publicAnswer) {
      res.writeHead(publicAnswer.status, publicAnswer.headers);
      return void res.end(publicAnswer.body);
    }
    const isHealth = url.pathname === HEALTH_PATH && this.options.health !== undefined;
    const route = this.options.routes?.find((candidate) => candidate.path === url.pathname);
    if (url.pathname !== MCP_PATH && !isHealth && !route)
      return sendJsonRpcError(res, 404, -32600, `Not found: the MCP endpoint is ${MCP_PATH}`);
    // DNS rebinding and cross-site calls from browsers: only known host names, only allowed origins.
    if (this.allowedHosts && !hostAllowed(headerValue(req, 'host'), this.allowedHosts)) {
      return sendJsonRpcError(res, 403, -32600, 'Forbidden: unexpected Host header; list the host in MCP_ALLOWED_HOSTS');
    }
    if (route) return this.serveRoute(route, req, res);
    if (!this.origins.allows(headerValue(req, 'origin'))) {
      return sendJsonRpcError(res, 403, -32600, 'Forbidden: this Origin may not call the server; list it in MCP_ALLOWED_ORIGINS');
    }
    if (isHealth) return answerHealth(req, res, this.draining ? undefined : this.options.health!);
    if (this.draining) {
      // Only requests on connections opened before the shutdown get here; the client tries again, elsewhere.
      res.setHeader('connection', 'close');
      res.setHeader('retry-after', '1');
      return sendRefusal(
        req,
        res,
        503,
        'Service unavailable: this server is shutting down; retry (another replica serves the same tasks)',
        1000,
      );
    }
    const caller = await this.authenticate(req, res);
    if (!caller) return;
    const body =
      req.method === 'POST' ? await this.readBody(req, res, caller.principal ?? `address:${req.socket.remoteAddress}`) : undefined;
    if (body === NOT_READ) return;
    const { credential, ...who } = caller;
    const httpCaller: HttpCaller = { ...who, lapse: (open) => this.watchCredential(credential, open) };
    if (!headerValue(req, 'mcp-session-id') && req.method === 'POST' && (await this.mcp2026.serve(req, res, body, httpCaller))) return;
    return this.mcp2025.serve(req, res, body, httpCaller);
  }

  /** A page of its own (the passkey page): no authentication, its own checks of origins and bodies. */
  private serveRoute(route: HttpRoute, req: IncomingMessage, res: ServerResponse): Promise<void> | void {
    if (this.draining) {
      res.setHeader('connection', 'close');
      return sendJsonRpcError(res, 503, -32000, 'Service unavailable: this server is shutting down; retry');
    }
    return route.handle(req, res);
  }

  /**
   * The caller, or undefined once the request was answered: 401 without valid credentials, 429 past the requests of a
   * principal under way at once. Where the server authenticates, the SDK hands the caller to handlers as `authInfo`.
   */
  private async authenticate(req: IncomingMessage, res: ServerResponse): Promise<Caller | undefined> {
    if (!this.auth) return { roles: [] };
    const caller = await this.auth.authenticate(req);
    if ('status' in caller) {
      for (const [name, value] of Object.entries(caller.headers)) res.setHeader(name, value);
      const retryAfter = Number(caller.headers['retry-after']);
      sendRefusal(req, res, caller.status, caller.message, Number.isFinite(retryAfter) ? retryAfter * 1000 : undefined);
      return undefined;
    }
    const { principal, roles } = caller;
    if (!this.requestsOf.take(principal, req, res)) {
      // Its body is not read: the connection closes after the answer.
      res.setHeader('retry-after', '1');
      res.setHeader('connection', 'close');
      sendRefusal(
        req,
        res,
        429,
        `Too many requests: ${this.maxRequestsPerPrincipal} requests of this principal are under way; retry when one has ended`,
        1000,
      );
      return undefined;
    }
    (req as IncomingMessage & { auth?: unknown }).auth = {
      token: caller.token,
      clientId: principal,
      scopes: caller.scopes,
      extra: { roles },
    };
    return { principal, roles, credential: caller };
  }

  /**
   * A signal aborted once `caller`'s credential stops holding while the request lasts: at its expiry, or when the
   * tokens change and it is no longer listed. Asked for by the requests that stay open (a subscription, a 2025-11-25
   * session's streams), which end on it, so a token's life bounds what it opened, not only what it asks.
   */
  private watchCredential(caller: AuthenticatedCaller | undefined, res: ServerResponse): AbortSignal | undefined {
    if (!caller || !this.auth?.stillValid) return undefined;
    const lapse = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    if (caller.expiresAt !== undefined) {
      const left = caller.expiresAt - Date.now();
      if (left <= MAX_TIMER_MS) timer = setTimeout(() => lapse.abort(), Math.max(0, left));
    }
    this.credentialed.set(lapse, caller);
    res.once('close', () => {
      clearTimeout(timer);
      this.credentialed.delete(lapse);
    });
    lapse.signal.addEventListener('abort', () => {
      if (!res.writableEnded) log.info(`http: a credential of ${caller.principal} expired or was revoked: the stream it opened ends`);
    });
    return lapse.signal;
  }

  /** Asks every request under way whether its credential still holds (the tokens changed); ends those it does not. */
  recheckCredentials(): void {
    for (const [lapse, caller] of this.credentialed) if (!this.auth?.stillValid?.(caller)) lapse.abort();
  }

  /** The JSON body of a POST, or {@link NOT_READ} once a body too large or malformed was answered. */
  private async readBody(req: IncomingMessage, res: ServerResponse, key: string): Promise<unknown> {
    let read: BodyRead;
    try {
      read = await readJsonBody(req, this.maxBodyBytes, { of: this.bodies, key });
    } catch (error) {
      if (!(error instanceof BodyBudgetError)) throw error;
      // The rest of the body is not read: the connection closes after the answer.
      res.setHeader('connection', 'close');
      res.setHeader('retry-after', '1');
      res.once('finish', () => req.socket.destroy());
      const status = error.spent === 'key' ? 429 : 503;
      sendRefusal(
        req,
        res,
        status,
        `${status === 429 ? 'Too many requests' : 'Service unavailable'}: ${error.message}; retry when they have arrived`,
        1000,
      );
      return NOT_READ;
    }
    if (read.ok) return read.body;
    if (read.status === 413) discardRest(req);
    sendJsonRpcError(res, read.status, read.code, read.message);
    return NOT_READ;
  }
}

/**
 * Serves MCP over Streamable HTTP on `/mcp`, one MCP server per session. Sessions hold connections only: tasks live
 * in Temporal, so a client whose session is gone re-initializes and finds its tasks again.
 */
export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const requests = new HttpRequests(options);
  const handle = (req: IncomingMessage, res: ServerResponse) => requests.handle(req, res);

  const requestTimeout = options.limits?.requestTimeoutMs ?? 30_000;
  const httpServer = http.createServer(
    {
      requestTimeout,
      headersTimeout: Math.min(options.limits?.headersTimeoutMs ?? 10_000, requestTimeout),
      // How often node looks for requests past those times (its own default is 30 s whatever the timeouts).
      connectionsCheckingInterval: Math.max(Math.min(requestTimeout / 4, 5000), 100),
    },
    (req, res) => {
      handle(req, res).catch((error: Error) => {
        log.error(`http: ${req.method} ${req.url}: ${error.stack ?? error.message}`);
        if (!res.headersSent) sendJsonRpcError(res, 500, -32603, 'Internal error');
        else res.end();
      });
    },
  );
  // Node's own 5 s would close a poller's connection about when it sends its next request (ECONNRESET on its side).
  httpServer.keepAliveTimeout = options.limits?.keepAliveTimeoutMs ?? 65_000;
  // The gate, not node's maxConnections, holds the cap: node refuses new connections, the gate closes silent ones.
  const connections = new ConnectionGate({
    maxConnections: options.limits?.maxConnections ?? 512,
    maxPerAddress: options.limits?.maxConnectionsPerAddress ?? 64,
    firstRequestTimeoutMs: options.limits?.firstRequestTimeoutMs ?? 5000,
  });
  httpServer.on('request', (req: IncomingMessage, res: ServerResponse) => connections.request(req, res));
  httpServer.on('connection', (socket: Socket) => connections.admit(socket));
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port, options.host, () => {
      httpServer.off('error', reject);
      resolve();
    });
  });
  const { port } = httpServer.address() as AddressInfo;
  const hostForUrl = options.host.includes(':') ? `[${options.host}]` : options.host;
  // On loopback, refuse other Host headers (DNS rebinding); elsewhere a proxy in front decides.
  if (!requests.allowedHosts && isLoopbackHost(options.host)) {
    requests.allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  }
  const endpointUrl = `http://${hostForUrl}:${port}${MCP_PATH}`;
  let stopWatching: (() => void) | undefined;
  if (options.authenticator) {
    requests.auth = options.authenticator(endpointUrl);
    stopWatching = requests.auth.onRevocation?.(() => requests.recheckCredentials());
  }
  return {
    url: endpointUrl,
    close: async (graceMs = 10_000) => {
      requests.draining = true;
      stopWatching?.();
      const closed = new Promise<void>((resolve) => httpServer.close(() => resolve()));
      // Ends every session's streams; the SDK aborts the handlers still running on them (blocked tasks/result included).
      await requests.mcp2025.closeAll();
      requests.mcp2026.abortAll();
      const deadline = Date.now() + graceMs;
      while (connections.size > 0 && Date.now() < deadline) {
        httpServer.closeIdleConnections();
        await sleep(25);
      }
      httpServer.closeAllConnections();
      await closed;
    },
  };
}

/**
 * `GET /healthz`: 200 `{"status":"ok"}` when the server can work (Temporal answers), 503 `{"status":"unavailable",
 * "reason"}` when not, 503 `{"status":"shutting down"}` while it stops (no `check`). No authentication: it says nothing
 * about tasks.
 */
async function answerHealth(req: IncomingMessage, res: ServerResponse, check: HttpServerOptions['health'] | undefined): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json' });
    return void res.end(JSON.stringify({ status: 'error', reason: 'use GET' }));
  }
  const health = check ? await check() : ({ ok: false, reason: 'shutting down' } as const);
  const body = health.ok ? { status: 'ok' } : check ? { status: 'unavailable', reason: health.reason } : { status: 'shutting down' };
  res.writeHead(health.ok ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
}

/** True when `host` (a Host header) is listed, with its port or, for an entry without a port, with any. */
function hostAllowed(host: string | undefined, allowed: readonly string[]): boolean {
  if (!host) return false;
  const value = host.toLowerCase();
  const name = value.replace(/:\d+$/, '');
  return allowed.some((entry) => entry === value || (!/:\d+$/.test(entry) && entry === name));
}

/**
 * A request refused before it is read: unauthenticated (401, 403), too many under way (429), the server stopping or its
 * issuer unreachable (503). A 2026-07-28 request (its `MCP-Protocol-Version` header names no 2025 revision) gets the
 * codes its text gives: -32600 for a refused credential, -32603 with `data.retryable` (and `retryAfterMs`) for what
 * passes, since it reserves -32000 … -32019 for the codes earlier servers allocated. A 2025-11-25 request keeps them
 * (-32001 unauthorized, -32000 for the rest), as the SDK's own servers answer.
 */
function sendRefusal(req: IncomingMessage, res: ServerResponse, status: number, message: string, retryAfterMs?: number): void {
  const retryable = status === 429 || status === 503;
  if (!knownLegacyVersion(req)) {
    const data = retryable ? { retryable: true, ...(retryAfterMs !== undefined && { retryAfterMs }) } : undefined;
    return sendJsonRpcError(
      res,
      status,
      retryable ? ProtocolErrorCode.InternalError : ProtocolErrorCode.InvalidRequest,
      message,
      null,
      data,
    );
  }
  sendJsonRpcError(res, status, status === 401 || status === 403 ? -32001 : -32000, message);
}

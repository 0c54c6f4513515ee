import { BodyBudget, BodyBudgetError, readBodyText } from '../../util/request-body';
import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { classifyInboundRequest, isLegacyRequest, PROTOCOL_VERSION_META_KEY, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, SUPPORTED_PROTOCOL_VERSIONS as LEGACY_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { log } from '../../util/log';
import { drained, sleep } from '../../util/wait';
import type { ListenSink, McpEndpoints } from '../endpoints';
import { MCP2026_PROTOCOL_VERSIONS, unsupportedVersion } from '../mcp2026/envelope';
import { paramHeaderMismatch } from '../protocol/param-headers';
import { isLoopbackHost, OriginPolicy, type HttpLimits } from './limits';
import type { Caller as AuthenticatedCaller, RequestAuthenticator } from './oauth';
import { ConnectionGate, PrincipalRequests } from './connections';
import { SessionStore } from './sessions';
import { sendWebResponse, toWebRequest } from './web-bridge';

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
 * The requests of one HTTP server, one step at a time (see {@link handle}): the checks every request gets, then the one
 * path it takes: a page of its own, the health check, a 2026-07-28 request or subscription, a request of a 2025-11-25
 * session, or the initialize that opens one.
 */
class HttpRequests {
  /** Made once the server is bound, for its endpoint URL. */
  auth: RequestAuthenticator | undefined;
  /** `Host` header values answered; undefined: any. */
  allowedHosts: string[] | undefined;
  /** Set by a shutdown: requests still arriving on open connections get 503. */
  draining = false;
  /** Requests that end only when told: 2026-07-28 exchanges and task subscriptions, aborted at shutdown. */
  readonly openExchanges = new Set<AbortController>();
  /** Requests under way with the credential they came with, asked again when credentials may have been revoked. */
  private readonly credentialed = new Map<AbortController, AuthenticatedCaller>();
  readonly sessions: SessionStore;
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
    this.sessions = new SessionStore({
      maxSessions: options.limits?.maxSessions ?? 1000,
      maxSessionsPerPrincipal: options.limits?.maxSessionsPerPrincipal ?? 32,
      idleMs: options.sessionIdleMs ?? 3_600_000,
    });
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
    const sessionId = headerValue(req, 'mcp-session-id');
    if (!sessionId && req.method === 'POST' && (await this.serveStateless(req, res, body, caller))) return;
    if (sessionId) return this.serveSession(sessionId, req, res, body, caller);
    return this.openSession(req, res, body, caller);
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

  /**
   * A POST without a session: served here when it speaks 2026-07-28 (the envelope in its _meta), as a task
   * subscription or through the SDK's handler; false for anything else (an initialize opens a 2025-11-25 session).
   */
  private async serveStateless(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    { principal, roles, credential }: Caller,
  ): Promise<boolean> {
    const { endpoints } = this.options;
    const request = toWebRequest(req, res, body, this.openExchanges);
    if (!claimsModernEnvelope(body) && (await isLegacyRequest(request, body))) return false;
    if (endpoints.taskSubscriptions.accepts(body)) {
      // Served beside the SDK, so it gets the same checks here that every other request gets there.
      const refused = mcp2026RequestProblem(req, body);
      if (refused) sendJsonRpcError(res, refused.httpStatus, refused.code, refused.message, body.id, refused.data);
      else {
        const lapsed = this.watchCredential(credential, res);
        const stop = lapsed ? AbortSignal.any([request.signal, lapsed]) : request.signal;
        await serveListen(res, stop, (sink) => endpoints.taskSubscriptions.serve(body, principal, sink));
      }
      return true;
    }
    // The SDK checks mirrored arguments only for tools it registers itself: ours are checked here (SEP-2243).
    const mismatch = paramHeaderProblem(req, body, endpoints);
    if (mismatch) {
      sendJsonRpcError(res, 400, HEADER_MISMATCH, mismatch.message, mismatch.id, mismatch.data);
      return true;
    }
    const authInfo = principal ? { token: '', clientId: principal, scopes: [], extra: { roles } } : undefined;
    await sendWebResponse(res, await endpoints.mcp2026.fetch(request, { parsedBody: body, ...(authInfo && { authInfo }) }));
    return true;
  }

  /** A request of a 2025-11-25 session, which belongs to the principal that opened it: another token cannot use it. */
  private async serveSession(
    sessionId: string,
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    { principal, credential }: Caller,
  ): Promise<void> {
    const session = this.sessions.use(sessionId, principal);
    if (!session) {
      return sendJsonRpcError(res, 404, -32001, 'Session not found: it expired or the server restarted; initialize a new session');
    }
    // A poll, or a call that only starts a task, is answered with plain JSON, not a stream (MCP 2025-11-25: SHOULD
    // NOT upgrade tasks/get to SSE); anything unusual about it is left to the SDK's transport, which answers it as
    // it should.
    const { endpoints } = this.options;
    if (req.method === 'POST' && endpoints.answerAtOnce && acceptsJson(req) && knownLegacyVersion(req)) {
      const authInfo = (req as IncomingMessage & { auth?: AuthInfo }).auth;
      const answer = await endpoints.answerAtOnce(session.server, body, authInfo, sessionId);
      if (answer) {
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': sessionId });
        return void res.end(JSON.stringify(answer));
      }
    }
    this.endWithCredential(credential, req, res, body, session.transport);
    return session.transport.handleRequest(req, res, body);
  }

  /**
   * Closes what a 2025-11-25 request keeps open once the credential it came with lapses (the client reconnects, and
   * is asked for a valid one): the session's standalone stream, or the stream of a request still waiting (a blocked
   * tasks/result), whose handler is cancelled as if its client had cancelled it and which gets this answer instead.
   */
  private endWithCredential(
    credential: AuthenticatedCaller | undefined,
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    transport: StreamableHTTPServerTransport,
  ): void {
    const requestId = (body as { id?: unknown } | undefined)?.id;
    this.watchCredential(credential, res)?.addEventListener('abort', () => {
      if (req.method === 'GET') return transport.closeStandaloneSSEStream();
      if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
      transport.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'credential lapsed' } });
      const error = {
        code: -32001,
        message: 'Unauthorized: the credential this request came with expired or was revoked; send it again with a valid one',
      };
      transport.send({ jsonrpc: '2.0', id: requestId, error }, { relatedRequestId: requestId }).catch(() => undefined);
    });
  }

  /** An initialize opens a 2025-11-25 session: a server of its own, on the SDK's session transport. */
  private async openSession(req: IncomingMessage, res: ServerResponse, body: unknown, { principal }: Caller): Promise<void> {
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return sendJsonRpcError(res, 400, -32000, 'Bad request: send an initialize request first, then the Mcp-Session-Id header it returns');
    }
    const { sessions } = this;
    sessions.makeRoom(principal);
    const server = this.options.endpoints.createMcp2025Server();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.add(id, { transport, server, ...(principal !== undefined && { principal }) });
      },
      onsessionclosed: (id) => {
        sessions.remove(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.remove(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
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
      await requests.sessions.closeAll();
      for (const exchange of requests.openExchanges) exchange.abort();
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

/** JSON-RPC `HeaderMismatch` of 2026-07-28: a header missing, malformed or disagreeing with the body (HTTP 400). */
const HEADER_MISMATCH = -32020;

/**
 * The JSON-RPC codes of 2026-07-28 that go out with HTTP 400 whoever produces them: a header that disagrees (-32020),
 * a missing client capability (-32021), a version not served (-32022).
 */
const REFUSED_WITH_400 = new Set([
  HEADER_MISMATCH,
  ProtocolErrorCode.MissingRequiredClientCapability,
  ProtocolErrorCode.UnsupportedProtocolVersion,
]);

/** SSE comment sent this often on an open subscription, so proxies and clients see it alive. */
const KEEP_ALIVE_MS = 15_000;

/**
 * Answers a listen request: a refusal before the acknowledgement is a plain JSON response, anything else opens an SSE
 * stream that carries the acknowledgement, the notifications and the final result, and ends with the subscription.
 */
async function serveListen(res: ServerResponse, stop: AbortSignal, serve: (sink: ListenSink) => Promise<void>): Promise<void> {
  const abort = new AbortController();
  let clientGone = false;
  res.on('close', () => {
    clientGone = true;
    abort.abort();
  });
  // A shutdown ends the subscription; its final response still goes out before the stream closes.
  stop.addEventListener('abort', () => abort.abort(), { once: true });
  let streaming = false;
  let keepAlive: NodeJS.Timeout | undefined;
  const sink: ListenSink = {
    signal: abort.signal,
    canReply: () => !clientGone && !res.writableEnded,
    async send(message) {
      if (res.writableEnded) return;
      if (!streaming && 'error' in message) {
        // A refusal before the acknowledgement is a plain JSON answer; -32020, -32021 and -32022 are HTTP 400 (2026-07-28).
        const code = (message as { error: { code?: number } }).error.code;
        res.writeHead(code !== undefined && REFUSED_WITH_400.has(code) ? 400 : 200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify(message));
      }
      if (!streaming) {
        streaming = true;
        res.writeHead(200, {
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache, no-transform',
          connection: 'keep-alive',
          'x-accel-buffering': 'no',
        });
        keepAlive = setInterval(() => res.write(': keepalive\n\n'), KEEP_ALIVE_MS);
      }
      // Back-pressure waits only while the subscription lasts: the final response is written and the stream ended.
      if (!res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`) && !abort.signal.aborted) await drained(res, abort.signal);
    },
  };
  try {
    await serve(sink);
  } finally {
    clearInterval(keepAlive);
    if (!res.writableEnded) res.end();
  }
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

/** True when the request's Accept header takes a JSON response. */
function acceptsJson(req: IncomingMessage): boolean {
  return /application\/json|\*\/\*/.test(headerValue(req, 'accept') ?? '');
}

/** True when the request names no protocol version, or one of the versions of a 2025-11-25 (or older) session. */
function knownLegacyVersion(req: IncomingMessage): boolean {
  const version = headerValue(req, 'mcp-protocol-version');
  return version === undefined || LEGACY_PROTOCOL_VERSIONS.includes(version);
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

type BodyRead = { ok: true; body: unknown } | { ok: false; status: number; code: number; message: string };

/** How much more of an oversized body is read and dropped after its 413; past that the connection is cut. */
const DISCARDED_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Reads the rest of an oversized body and drops it, so that a client still sending it can read the 413 (a connection
 * closed with its bytes unread is reset, and the client sees a broken pipe instead of the answer). Past
 * {@link DISCARDED_BODY_BYTES} the connection is cut; the request timeout bounds a slow one.
 */
function discardRest(req: IncomingMessage): void {
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DISCARDED_BODY_BYTES) req.socket.destroy();
  });
  req.resume();
}

async function readJsonBody(req: IncomingMessage, maxBytes: number, budget: Parameters<typeof readBodyText>[2]): Promise<BodyRead> {
  const tooLarge: BodyRead = { ok: false, status: 413, code: -32600, message: `Request body larger than ${maxBytes} bytes` };
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) return tooLarge;
  const text = await readBodyText(req, maxBytes, budget);
  if (text === undefined) return tooLarge;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, status: 400, code: -32700, message: 'Parse error: the body is not valid JSON' };
  }
  if (nestedDeeperThan(body, MAX_JSON_DEPTH)) {
    return { ok: false, status: 400, code: -32600, message: `Invalid request: JSON nested deeper than ${MAX_JSON_DEPTH} levels` };
  }
  return { ok: true, body };
}

/**
 * True when `body` is a JSON-RPC request or notification (other than `initialize`) whose `_meta` carries the
 * 2026-07-28 envelope's protocol-version claim: the SDK's classifier routes every such message to the modern path
 * (to serve it or to answer its validation error), so it need not be classified twice. Anything else is left to
 * `isLegacyRequest`.
 */
export function claimsModernEnvelope(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const message = body as { method?: unknown; params?: { _meta?: unknown }; result?: unknown; error?: unknown };
  if (typeof message.method !== 'string' || message.method === 'initialize' || 'result' in message || 'error' in message) return false;
  const meta = message.params?._meta;
  return meta !== null && typeof meta === 'object' && !Array.isArray(meta) && PROTOCOL_VERSION_META_KEY in meta;
}

/** No MCP message nests this deep; deeper ones would only exhaust the stack of whatever walks them. */
const MAX_JSON_DEPTH = 64;

/** True when `value` has arrays or objects nested more than `limit` levels (walked without recursion). */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

function sendJsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  id: string | number | null = null,
  data?: unknown,
): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message, ...(data !== undefined && { data }) }, id }));
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
  if (!speaksLegacy(req)) {
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

/** Whether a request speaks a revision before 2026-07-28: an initialize, or its `MCP-Protocol-Version` header names one. */
function speaksLegacy(req: IncomingMessage): boolean {
  const version = headerValue(req, 'mcp-protocol-version');
  return version === undefined || LEGACY_PROTOCOL_VERSIONS.includes(version);
}

/** Why a 2026-07-28 request is refused before it is served: the HTTP status and the JSON-RPC error. */
interface RequestProblem {
  httpStatus: number;
  code: number;
  message: string;
  data?: unknown;
}

/**
 * The checks the SDK makes of a 2026-07-28 request before serving it, in its order, for the requests served beside
 * it: the body's envelope and its agreement with `MCP-Protocol-Version` and `Mcp-Method` (the SDK's classifier judges
 * them: -32602 or -32020), the version served (-32022, HTTP 400: "If the server does not implement the requested
 * protocol version … MUST respond with 400 Bad Request and an UnsupportedProtocolVersionError", Streamable HTTP), and
 * both headers present (-32020). Undefined when the request passes.
 */
function mcp2026RequestProblem(req: IncomingMessage, body: unknown): RequestProblem | undefined {
  const protocolVersionHeader = headerValue(req, 'mcp-protocol-version');
  const mcpMethodHeader = headerValue(req, 'mcp-method');
  const method = (body as { method?: unknown } | null)?.method;
  const missing = (header: string) => ({
    httpStatus: 400,
    code: HEADER_MISMATCH,
    message: `Bad Request: the request headers and body disagree: the body names method ${String(method)} but the required ${header} header is absent`,
    data: { mismatch: { header: '(missing)', body: method } },
  });
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    body,
    ...(protocolVersionHeader !== undefined && { protocolVersionHeader }),
    ...(mcpMethodHeader !== undefined && { mcpMethodHeader }),
  });
  if (outcome.kind === 'reject')
    return { httpStatus: outcome.httpStatus, code: outcome.code, message: outcome.message, data: outcome.data };
  if (outcome.kind !== 'modern') return undefined;
  const revision = outcome.classification.revision;
  if (revision !== undefined && !MCP2026_PROTOCOL_VERSIONS.includes(revision)) return { httpStatus: 400, ...unsupportedVersion(revision) };
  if (protocolVersionHeader === undefined) return missing('MCP-Protocol-Version');
  if (mcpMethodHeader === undefined) return missing('Mcp-Method');
  return undefined;
}

/**
 * For a 2026-07-28 `tools/call` of a tool that mirrors arguments into `Mcp-Param-*` headers (`x-mcp-header`), why its
 * headers do not fit its arguments (SEP-2243: "Servers MUST reject requests with a 400 Bad Request HTTP status and
 * JSON-RPC error code -32020 (HeaderMismatch) if any validation fails"). Undefined for any other request, for one that
 * fits, and for one the SDK refuses for an earlier reason (its envelope, version or standard headers), which the SDK
 * then answers as it always does.
 */
function paramHeaderProblem(
  req: IncomingMessage,
  body: unknown,
  endpoints: McpEndpoints,
): { id: string | number | null; message: string; data: unknown } | undefined {
  const request = body as { id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown } } | null;
  const id = request?.id;
  if (request?.method !== 'tools/call' || !(typeof id === 'string' || typeof id === 'number')) return undefined;
  const name = request.params?.name;
  const declared = typeof name === 'string' ? endpoints.paramHeadersOf?.(name) : undefined;
  if (!declared || declared.length === 0 || !claimsModernEnvelope(body) || mcp2026RequestProblem(req, body)) return undefined;
  const mismatch = paramHeaderMismatch(declared, request.params?.arguments, (header) => headerValue(req, header.toLowerCase()));
  if (!mismatch) return undefined;
  return {
    id,
    message: `Bad Request: the request headers and body disagree: ${mismatch.message}`,
    data: { mismatch: { header: mismatch.header } },
  };
}

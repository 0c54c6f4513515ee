/**
 * The 2025-11-25 leg of the HTTP transport: sessions on the SDK's session transport. An initialize opens one, with an
 * MCP server of its own; a request with `Mcp-Session-Id` goes to its session, answered as plain JSON where it sends
 * nothing on its own stream.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, SUPPORTED_PROTOCOL_VERSIONS as LEGACY_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { McpEndpoints } from '../endpoints';
import { headerValue, sendJsonRpcError, type HttpCaller } from '../protocol/http-exchange';
import { SessionStore, type SessionBounds } from './sessions';

/** What the leg serves: a server for each new session, and the answers sent as plain JSON. */
export type Mcp2025Endpoints = Pick<McpEndpoints, 'createMcp2025Server' | 'answerAtOnce'>;

/** The 2025-11-25 sessions of one HTTP server and their requests. */
export class Mcp2025HttpLeg {
  readonly sessions: SessionStore;

  constructor(
    private readonly endpoints: Mcp2025Endpoints,
    bounds: SessionBounds,
  ) {
    this.sessions = new SessionStore(bounds);
  }

  /** Serves a request of the session it names, or the initialize that opens one. */
  serve(req: IncomingMessage, res: ServerResponse, body: unknown, caller: HttpCaller): Promise<void> {
    const sessionId = headerValue(req, 'mcp-session-id');
    return sessionId ? this.serveSession(sessionId, req, res, body, caller) : this.openSession(req, res, body, caller);
  }

  /** Closes every session (the server is stopping); the SDK aborts the handlers still running on them. */
  closeAll(): Promise<void> {
    return this.sessions.closeAll();
  }

  /** A request of a 2025-11-25 session, which belongs to the principal that opened it: another token cannot use it. */
  private async serveSession(
    sessionId: string,
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    caller: HttpCaller,
  ): Promise<void> {
    const session = this.sessions.use(sessionId, caller.principal);
    if (!session) {
      return sendJsonRpcError(res, 404, -32001, 'Session not found: it expired or the server restarted; initialize a new session');
    }
    // A poll, or a call that only starts a task, is answered with plain JSON, not a stream (MCP 2025-11-25: SHOULD
    // NOT upgrade tasks/get to SSE); anything unusual about it is left to the SDK's transport, which answers it as
    // it should.
    const { endpoints } = this;
    if (req.method === 'POST' && endpoints.answerAtOnce && acceptsJson(req) && knownLegacyVersion(req)) {
      const authInfo = (req as IncomingMessage & { auth?: AuthInfo }).auth;
      const answer = await endpoints.answerAtOnce(session.server, body, authInfo, sessionId);
      if (answer) {
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': sessionId });
        return void res.end(JSON.stringify(answer));
      }
    }
    endWithCredential(caller.lapse(res), req, body, session.transport);
    return session.transport.handleRequest(req, res, body);
  }

  /** An initialize opens a 2025-11-25 session: a server of its own, on the SDK's session transport. */
  private async openSession(req: IncomingMessage, res: ServerResponse, body: unknown, { principal }: HttpCaller): Promise<void> {
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      return sendJsonRpcError(res, 400, -32000, 'Bad request: send an initialize request first, then the Mcp-Session-Id header it returns');
    }
    const { sessions } = this;
    sessions.makeRoom(principal);
    const server = this.endpoints.createMcp2025Server();
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
 * Closes what a 2025-11-25 request keeps open once the credential it came with lapses (the client reconnects, and is
 * asked for a valid one): the session's standalone stream, or the stream of a request still waiting (a blocked
 * tasks/result), whose handler is cancelled as if its client had cancelled it and which gets this answer instead.
 */
function endWithCredential(
  lapsed: AbortSignal | undefined,
  req: IncomingMessage,
  body: unknown,
  transport: StreamableHTTPServerTransport,
): void {
  const requestId = (body as { id?: unknown } | undefined)?.id;
  lapsed?.addEventListener('abort', () => {
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

/** True when the request's Accept header takes a JSON response. */
function acceptsJson(req: IncomingMessage): boolean {
  return /application\/json|\*\/\*/.test(headerValue(req, 'accept') ?? '');
}

/** True when the request names no protocol version, or one of the versions of a 2025-11-25 (or older) session. */
export function knownLegacyVersion(req: IncomingMessage): boolean {
  const version = headerValue(req, 'mcp-protocol-version');
  return version === undefined || LEGACY_PROTOCOL_VERSIONS.includes(version);
}

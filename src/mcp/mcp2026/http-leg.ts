/**
 * The 2026-07-28 leg of the HTTP transport: requests without a session that speak 2026-07-28, served through the SDK's
 * handler, and task subscriptions (`subscriptions/listen`), served beside it on an SSE stream after the same checks.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { classifyInboundRequest, isLegacyRequest, PROTOCOL_VERSION_META_KEY, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { drained } from '../../util/wait';
import type { ListenSink, McpEndpoints } from '../endpoints';
import { headerValue, sendJsonRpcError, type HttpCaller } from '../protocol/http-exchange';
import { paramHeaderMismatch } from '../protocol/param-headers';
import { MCP2026_PROTOCOL_VERSIONS, unsupportedVersion } from './envelope';
import { sendWebResponse, toWebRequest } from './node-adapter';

/** What the leg serves: the SDK's handler, task subscriptions, and the headers each tool mirrors. */
export type Mcp2026Endpoints = Pick<McpEndpoints, 'mcp2026' | 'taskSubscriptions' | 'paramHeadersOf'>;

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

/** The 2026-07-28 requests of one HTTP server. */
export class Mcp2026HttpLeg {
  /** Requests that end only when told: exchanges and task subscriptions, aborted at shutdown. */
  private readonly open = new Set<AbortController>();

  constructor(private readonly endpoints: Mcp2026Endpoints) {}

  /**
   * Serves a POST without a session when it speaks 2026-07-28 (the envelope in its _meta), as a task subscription or
   * through the SDK's handler; false, having answered nothing, for anything else (an initialize opens a 2025-11-25
   * session).
   */
  async serve(req: IncomingMessage, res: ServerResponse, body: unknown, caller: HttpCaller): Promise<boolean> {
    const { endpoints } = this;
    const request = await toWebRequest(req, res, body, this.open);
    if (!claimsModernEnvelope(body) && (await isLegacyRequest(request, body))) return false;
    if (endpoints.taskSubscriptions.accepts(body)) {
      // Served beside the SDK, so it gets the same checks here that every other request gets there.
      const refused = mcp2026RequestProblem(req, body);
      if (refused) sendJsonRpcError(res, refused.httpStatus, refused.code, refused.message, body.id, refused.data);
      else {
        const lapsed = caller.lapse(res);
        const stop = lapsed ? AbortSignal.any([request.signal, lapsed]) : request.signal;
        await serveListen(res, stop, (sink) => endpoints.taskSubscriptions.serve(body, caller.principal, sink));
      }
      return true;
    }
    // The SDK checks mirrored arguments only for tools it registers itself: ours are checked here (SEP-2243).
    const mismatch = paramHeaderProblem(req, body, endpoints);
    if (mismatch) {
      sendJsonRpcError(res, 400, HEADER_MISMATCH, mismatch.message, mismatch.id, mismatch.data);
      return true;
    }
    const { principal, roles } = caller;
    const authInfo = principal ? { token: '', clientId: principal, scopes: [], extra: { roles } } : undefined;
    await sendWebResponse(res, await endpoints.mcp2026.fetch(request, { parsedBody: body, ...(authInfo && { authInfo }) }));
    return true;
  }

  /** Ends every exchange and subscription under way (the server is stopping). */
  abortAll(): void {
    for (const exchange of this.open) exchange.abort();
  }
}

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
  endpoints: Mcp2026Endpoints,
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

/**
 * Between Node's HTTP server and the web-standard Request/Response the 2026-07-28 handler speaks. A request whose body
 * was already read becomes a Request through the SDK's Node adapter (`@modelcontextprotocol/node`), cancelled when the
 * response closes. A Response is written back here, not by the adapter, which streams every body chunked: JSON goes
 * out whole with its length in one write (most answers are polled `tasks/get` results), an SSE stream chunk by chunk.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toWebRequest as nodeToWebRequest } from '@modelcontextprotocol/node';

/** The 2026-07-28 methods whose `Mcp-Name` header carries the task id (SEP-2663). */
const TASK_METHODS = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

/**
 * The web-standard Request the 2026-07-28 handler takes, for a node request whose body was already read, made by the
 * SDK's Node adapter. It is cancelled when the response closes first, like a client that went away; while it is open,
 * its controller is in `open` (when given), so that a server shutting down can cancel it too.
 */
export async function toWebRequest(
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  open?: Set<AbortController>,
): Promise<Request> {
  const abort = new AbortController();
  open?.add(abort);
  // Closing the response stream cancels the request (Streamable HTTP, 2026-07-28).
  res.once('close', () => {
    open?.delete(abort);
    if (!res.writableFinished) abort.abort();
  });
  const request = await nodeToWebRequest(req, body, { signal: abort.signal });
  // SEP-2663 asks clients for `Mcp-Name: <taskId>` on tasks/get, tasks/update and tasks/cancel; fastmcp-tasks 4.1.4 (the
  // newest) leaves it out (docs/protocol.md). A missing one is taken from the body; one that disagrees is still refused.
  const { method, params } = (body ?? {}) as { method?: unknown; params?: { taskId?: unknown } };
  if (
    typeof method === 'string' &&
    TASK_METHODS.has(method) &&
    !request.headers.has('mcp-name') &&
    typeof params?.taskId === 'string' &&
    // Only what a header can carry; anything else is left to the SDK's own checks.
    /^[\x21-\x7e]{1,1000}$/.test(params.taskId)
  ) {
    request.headers.set('mcp-name', params.taskId);
  }
  return request;
}

/**
 * Writes a web-standard Response to the node response: an SSE stream chunk by chunk, anything else (JSON) whole, with
 * its length, in one write.
 */
export async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (response.body && !/^\s*text\/event-stream\s*(;|$)/i.test(headers['content-type'] ?? '')) {
    let body: Buffer;
    try {
      body = Buffer.from(await response.arrayBuffer());
    } catch {
      // The handler gave up on the response (the client went away): nothing to send.
      return void res.destroy();
    }
    headers['content-length'] = String(body.length);
    res.writeHead(response.status, headers);
    return void res.end(body);
  }
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  res.flushHeaders();
  const reader = response.body.getReader();
  res.on('close', () => void reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {
    // The client went away; the handler was told through the request's signal.
  } finally {
    res.end();
  }
}

/**
 * Between Node's HTTP server and the web-standard Request/Response the 2026-07-28 handler speaks: a request whose body
 * was already read becomes a Request (cancelled when the response closes), and a Response is written back: an SSE
 * stream chunk by chunk, JSON whole.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The 2026-07-28 methods whose `Mcp-Name` header carries the task id (SEP-2663). */
const TASK_METHODS = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

/**
 * The web-standard Request the 2026-07-28 handler takes, for a node request whose body was already read. It is
 * cancelled when the response closes first, like a client that went away; while it is open, its controller is in
 * `open` (when given), so that a server shutting down can cancel it too.
 */
export function toWebRequest(req: IncomingMessage, res: ServerResponse, body: unknown, open?: Set<AbortController>): Request {
  const abort = new AbortController();
  open?.add(abort);
  // Closing the response stream cancels the request (Streamable HTTP, 2026-07-28).
  res.once('close', () => {
    open?.delete(abort);
    if (!res.writableFinished) abort.abort();
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  // SEP-2663 asks clients for `Mcp-Name: <taskId>` on tasks/get, tasks/update and tasks/cancel; fastmcp-tasks 4.1.4 (the
  // newest) leaves it out (docs/protocol.md). A missing one is taken from the body; one that disagrees is still refused.
  const { method, params } = (body ?? {}) as { method?: unknown; params?: { taskId?: unknown } };
  if (
    typeof method === 'string' &&
    TASK_METHODS.has(method) &&
    !headers.has('mcp-name') &&
    typeof params?.taskId === 'string' &&
    // Only what a header can carry; anything else is left to the SDK's own checks.
    /^[\x21-\x7e]{1,1000}$/.test(params.taskId)
  ) {
    headers.set('mcp-name', params.taskId);
  }
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    signal: abort.signal,
  });
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

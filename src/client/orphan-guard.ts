/**
 * A `fetch` for the SDK's Streamable HTTP client transport that ends every request whose response stream closes
 * before it carried the answer.
 *
 * The SDK's transport (1.x) reads a POST's SSE response in the background; when that stream breaks or ends without
 * the JSON-RPC response (the server died, a proxy cut it) it reports "SSE stream disconnected" through `onerror`
 * and, unless the server had sent an event id to resume from, leaves the request pending until its own timeout. A
 * client then waits a minute or more for an answer that cannot come. This wrapper watches each POST stream for the
 * responses to the requests the POST carried and, when the stream ends without them, appends a JSON-RPC error for
 * each (code -32000, "Connection closed"), so the pending requests fail at once as a lost connection.
 */
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;
type Id = string | number;

/** Wraps `inner` (the global fetch by default) so that no request outlives its response stream. */
export function orphanGuardFetch(inner: Fetch = fetch): Fetch {
  return async (url, init) => {
    const response = await inner(url, init);
    const ids = init?.method === 'POST' ? requestIds(init.body) : [];
    const sse = response.headers.get('content-type')?.includes('text/event-stream');
    if (ids.length === 0 || !sse || !response.body) return response;
    return new Response(guardStream(response.body, ids), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** The ids of the JSON-RPC requests in a POST body (one message or a batch). */
function requestIds(body: RequestInit['body']): Id[] {
  if (typeof body !== 'string') return [];
  try {
    const parsed = JSON.parse(body) as unknown;
    return (Array.isArray(parsed) ? parsed : [parsed])
      .filter((message): message is { id: Id; method: string } => typeof message?.method === 'string' && message.id !== undefined)
      .map((message) => message.id);
  } catch {
    return [];
  }
}

/** Passes the stream through unchanged, then adds an error event for each request it did not answer. */
function guardStream(body: ReadableStream<Uint8Array>, ids: Id[]): ReadableStream<Uint8Array> {
  const unanswered = new Map(ids.map((id) => [JSON.stringify(id), id]));
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffered = '';

  const noteAnswers = (text: string) => {
    buffered = (buffered + text).replace(/\r\n?/g, '\n');
    for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
        .join('\n');
      if (!data) continue;
      try {
        const message = JSON.parse(data) as { id?: Id; method?: unknown; result?: unknown; error?: unknown };
        if (message.method === undefined && message.id !== undefined) unanswered.delete(JSON.stringify(message.id));
      } catch {
        // not JSON: the SDK reports it; nothing answered
      }
    }
  };

  const endWithErrors = (controller: ReadableStreamDefaultController<Uint8Array>, why: string) => {
    for (const id of unanswered.values()) {
      const error = { code: ErrorCode.ConnectionClosed, message: `Connection closed: ${why} before the server answered` };
      try {
        controller.enqueue(encoder.encode(`\n\nevent: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, error })}\n\n`));
      } catch {
        break;
      }
    }
    unanswered.clear();
    try {
      controller.close();
    } catch {
      // the reader went away first
    }
  };

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        endWithErrors(controller, `the response stream broke (${(error as Error).message ?? error})`);
        return;
      }
      if (chunk.done) {
        endWithErrors(controller, 'the response stream ended');
        return;
      }
      noteAnswers(decoder.decode(chunk.value, { stream: true }));
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

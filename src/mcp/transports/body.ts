/**
 * Bodies of HTTP requests, within bounds: read as JSON up to a size and depth, and the rest of an oversized one
 * dropped so its client can read the refusal.
 */
import type { IncomingMessage } from 'node:http';
import { readBodyText } from '../../util/request-body';

/** A JSON body read, or why it was not: the HTTP status and JSON-RPC error to answer. */
export type BodyRead = { ok: true; body: unknown } | { ok: false; status: number; code: number; message: string };

/** How much more of an oversized body is read and dropped after its 413; past that the connection is cut. */
const DISCARDED_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Reads the rest of an oversized body and drops it, so that a client still sending it can read the 413 (a connection
 * closed with its bytes unread is reset, and the client sees a broken pipe instead of the answer). Past
 * {@link DISCARDED_BODY_BYTES} the connection is cut; the request timeout bounds a slow one.
 */
export function discardRest(req: IncomingMessage): void {
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DISCARDED_BODY_BYTES) req.socket.destroy();
  });
  req.resume();
}

/**
 * Reads a JSON body of at most `maxBytes`, counted against `budget` while it arrives (see {@link readBodyText}): too
 * large (413), not JSON (-32700) or nested too deep (-32600) are refusals to send.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number, budget: Parameters<typeof readBodyText>[2]): Promise<BodyRead> {
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

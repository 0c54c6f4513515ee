/**
 * The JSON of the approvals page's calls: a request's body read as one JSON object, within a bound on its size, and
 * an answer sent as JSON that no cache keeps.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBodyText } from '../../util/request-body';

/** The most a call's JSON body may weigh. */
const MAX_BODY_BYTES = 64 * 1024;

/** Thrown for a body that is too large or not a JSON object. */
export class BodyError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The request's JSON object body (`application/json`, at most {@link MAX_BODY_BYTES}); throws {@link BodyError}. */
export async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) throw new BodyError(415, 'Send JSON.');
  const text = await readBodyText(req, MAX_BODY_BYTES);
  if (text === undefined) throw new BodyError(413, `The request is over ${MAX_BODY_BYTES} bytes.`);
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Answered below.
  }
  throw new BodyError(400, 'The request is not a JSON object.');
}

/** Sends `body` as JSON with `status` (a 413 closes the connection: the rest of the body is not read). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (status === 413) res.setHeader('connection', 'close');
  res.writeHead(status, {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  res.end(JSON.stringify(body));
}

/**
 * The opaque tasks/list cursor: the visibility store's own page token, bound to the principal and the query it was
 * made for, so that a cursor handed to another principal (or made up) is refused instead of read.
 */
import { createHash } from 'node:crypto';
import { InvalidTaskRequestError } from './errors';

/** Longest cursor accepted; the store's tokens are far shorter. */
const MAX_CURSOR_LENGTH = 4096;

/** What a cursor is bound to: a digest of the principal and the visibility query. */
export function listBinding(principal: string, query: string): string {
  return createHash('sha256').update(`${principal}\n${query}`).digest('base64url').slice(0, 22);
}

/** The cursor a client passes back for the page after the one that ended with `token`. */
export function encodeCursor(token: Uint8Array, binding: string): string {
  return Buffer.from(JSON.stringify({ v: 1, b: binding, t: Buffer.from(token).toString('base64url') })).toString('base64url');
}

/** The page token a cursor carries; -32602 for anything {@link encodeCursor} did not make for this `binding`. */
export function decodeCursor(cursor: string, binding: string): Uint8Array {
  if (typeof cursor === 'string' && cursor.length > 0 && cursor.length <= MAX_CURSOR_LENGTH) {
    try {
      const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { v?: unknown; b?: unknown; t?: unknown };
      if (parsed.v === 1 && parsed.b === binding && typeof parsed.t === 'string' && parsed.t.length > 0) {
        return Buffer.from(parsed.t, 'base64url');
      }
    } catch {
      // fall through to the error below
    }
  }
  throw new InvalidTaskRequestError('Invalid cursor: pass back the nextCursor of a previous tasks/list answer unchanged');
}

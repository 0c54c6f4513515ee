/** The opaque tasks/list cursor: the creation time and id of the last task of the previous page. */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/** Where a page ends: a task's start time (ms) and workflow id. */
export interface CursorPosition {
  id: string;
  t: number;
}

/** True when `a` sorts after `b` in newest-first order (older, or as old with a smaller id). */
export function isBefore(a: CursorPosition, b: CursorPosition): boolean {
  return a.t < b.t || (a.t === b.t && a.id < b.id);
}

/** The cursor a client passes back for the page after `position`. */
export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify({ t: position.t, id: position.id })).toString('base64url');
}

/** The position a cursor stands for; throws -32602 for anything {@link encodeCursor} did not make. */
export function decodeCursor(cursor: string): CursorPosition {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<CursorPosition>;
    if (typeof parsed.t === 'number' && Number.isFinite(new Date(parsed.t).getTime()) && typeof parsed.id === 'string') {
      return { t: parsed.t, id: parsed.id };
    }
  } catch {
    // fall through to the error below
  }
  throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor: pass back the nextCursor of a previous tasks/list answer unchanged');
}

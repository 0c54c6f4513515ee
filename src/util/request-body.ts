/** Reading an HTTP request's body with a bound on its size, for every server of the project (MCP, the passkey page). */
import type { IncomingMessage } from 'node:http';

/** Thrown by {@link readBodyText} when the bytes of bodies not yet complete would pass a {@link BodyBudget}. */
export class BodyBudgetError extends Error {
  constructor(
    /** Whose share was spent: the caller's own (`key`), or the process's. */
    readonly spent: 'key' | 'process',
    message: string,
  ) {
    super(message);
    this.name = 'BodyBudgetError';
  }
}

/**
 * The bytes a server holds for request bodies still arriving, bounded per caller and in all: a body whose last bytes
 * are withheld pins what came before it, so without a bound a few token holders could hold the process's memory.
 */
export class BodyBudget {
  private total = 0;
  private readonly held = new Map<string, number>();

  constructor(
    readonly perKeyBytes: number,
    readonly totalBytes: number,
  ) {}

  /** Bytes held now, in all. */
  get heldBytes(): number {
    return this.total;
  }

  /** Takes `bytes` for `key`; throws {@link BodyBudgetError} (taking nothing) past either bound. */
  take(key: string, bytes: number): void {
    const mine = this.held.get(key) ?? 0;
    if (mine + bytes > this.perKeyBytes) {
      throw new BodyBudgetError('key', `this caller's request bodies still arriving would hold more than ${this.perKeyBytes} bytes`);
    }
    if (this.total + bytes > this.totalBytes) {
      throw new BodyBudgetError('process', `request bodies still arriving would hold more than ${this.totalBytes} bytes`);
    }
    this.held.set(key, mine + bytes);
    this.total += bytes;
  }

  /** Gives back `bytes` of `key`'s. */
  give(key: string, bytes: number): void {
    const left = (this.held.get(key) ?? 0) - bytes;
    if (left > 0) this.held.set(key, left);
    else this.held.delete(key);
    this.total = Math.max(0, this.total - bytes);
  }
}

/**
 * The body of `req` as text; undefined once it grows past `maxBytes` (the rest is left unread). Rejects when the
 * request is aborted or fails before it ends, and with {@link BodyBudgetError} when `budget` has no room for the next
 * bytes of `budget.key` (the rest is left unread). The bytes taken from the budget are given back once the body is
 * read, or not.
 */
export function readBodyText(
  req: IncomingMessage,
  maxBytes: number,
  budget?: { of: BodyBudget; key: string },
): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let taken = 0;
    const done = (error?: Error, text?: string) => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      if (budget && taken > 0) budget.of.give(budget.key, taken);
      taken = 0;
      if (error) reject(error);
      else resolve(text);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.pause();
        return done();
      }
      if (budget) {
        try {
          budget.of.take(budget.key, chunk.length);
        } catch (error) {
          req.pause();
          return done(error as Error);
        }
        taken += chunk.length;
      }
      chunks.push(chunk);
    };
    const onEnd = () => done(undefined, chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    const onError = (error: Error) => done(error);
    const onClose = () => {
      if (!req.complete) done(new Error('the request was aborted'));
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

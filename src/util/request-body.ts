/** Reading an HTTP request's body with a bound on its size, for every server of the project (MCP, the passkey page). */
import type { IncomingMessage } from 'node:http';

/**
 * The body of `req` as text; undefined once it grows past `maxBytes` (the rest is left unread). Rejects when the
 * request is aborted or fails before it ends.
 */
export function readBodyText(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (error?: Error, text?: string) => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      if (error) reject(error);
      else resolve(text);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.pause();
        return done();
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

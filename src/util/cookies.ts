/** Reading a request's cookies, for every server of the project that keeps a browser session. */
import type { IncomingMessage } from 'node:http';

/** The value of the cookie `name` the request carries, if any. */
export function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

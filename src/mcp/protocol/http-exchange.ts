/**
 * What both generations' HTTP legs share with the transport that hands them requests: who called, and JSON-RPC errors
 * written as HTTP answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Who sent a request, as the transport authenticated it; no principal where the server authenticates none. */
export interface HttpCaller {
  principal?: string;
  roles: string[];
  /**
   * A signal aborted once the credential the request came with stops holding while `res` is open (expired or
   * revoked); undefined when nothing is watched. Requests that stay open end on it.
   */
  lapse(res: ServerResponse): AbortSignal | undefined;
}

/** A JSON-RPC error response with its HTTP status. */
export function sendJsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  id: string | number | null = null,
  data?: unknown,
): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message, ...(data !== undefined && { data }) }, id }));
}

/** The first value of a request header. */
export function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * What one HTTP endpoint lets its callers hold, and which browsers and host names it answers: each bound has a
 * default and an environment variable, and a caller who hits one gets an error that says which.
 */
import { countFromEnv } from '../../shared/temporal-config';

/** Bounds on the HTTP endpoint. */
export interface HttpLimits {
  /** Open 2025-11-25 sessions in all; a new one evicts the longest idle. */
  maxSessions: number;
  /** Open sessions of one principal; a new one evicts that principal's longest idle. */
  maxSessionsPerPrincipal: number;
  /**
   * Open TCP connections; at the cap a new one closes the oldest that has sent no request, else the one idle longest
   * (never one with a request under way), and is refused only when every connection is busy.
   */
  maxConnections: number;
  /**
   * Open TCP connections from one remote address; more are closed at once, so one stranger cannot take every
   * connection. 0 turns it off (behind a balancer every connection comes from the balancer's address).
   */
  maxConnectionsPerAddress: number;
  /** A connection whose first request has not arrived this long after it opened is closed: silent sockets hold no places. */
  firstRequestTimeoutMs: number;
  /** Time to receive a whole request (headers and body); a request that trickles in longer is cut off. */
  requestTimeoutMs: number;
  /** Time to receive a request's headers. */
  headersTimeoutMs: number;
  /**
   * How long an idle keep-alive connection stays open for the client's next request. Longer than a client's pause
   * between polls, and than a balancer's idle timeout: a connection closed as the client reuses it fails the request.
   */
  keepAliveTimeoutMs: number;
  /** Largest request body; a larger one gets 413. */
  maxBodyBytes: number;
  /**
   * Requests of one authenticated principal under way at once (streams and waits among them); one more gets 429, so
   * that one token holder cannot take every connection. 0 turns it off.
   */
  maxRequestsPerPrincipal: number;
  /**
   * Bytes held for one principal's request bodies still arriving (a body whose last bytes are withheld pins the rest);
   * past it the request gets 429 and its connection closes. Default 8 MiB: four of the largest bodies at once.
   */
  maxPendingBodyBytesPerPrincipal: number;
  /** Bytes held for every request body still arriving, in all; past it 503. Default 64 MiB. */
  maxPendingBodyBytes: number;
}

/** Reads the limits from MCP_HTTP_* variables (see the README's Configuration). */
export function httpLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): HttpLimits {
  return {
    maxSessions: countFromEnv(env, 'MCP_HTTP_MAX_SESSIONS', 1000),
    maxSessionsPerPrincipal: countFromEnv(env, 'MCP_HTTP_MAX_SESSIONS_PER_PRINCIPAL', 32),
    maxConnections: countFromEnv(env, 'MCP_HTTP_MAX_CONNECTIONS', 512),
    maxConnectionsPerAddress: countFromEnv(env, 'MCP_HTTP_MAX_CONNECTIONS_PER_ADDRESS', 64, 0),
    firstRequestTimeoutMs: countFromEnv(env, 'MCP_HTTP_FIRST_REQUEST_TIMEOUT_MS', 5000),
    requestTimeoutMs: countFromEnv(env, 'MCP_HTTP_REQUEST_TIMEOUT_MS', 30_000),
    keepAliveTimeoutMs: countFromEnv(env, 'MCP_HTTP_KEEP_ALIVE_TIMEOUT_MS', 65_000),
    headersTimeoutMs: countFromEnv(env, 'MCP_HTTP_HEADERS_TIMEOUT_MS', 10_000),
    maxBodyBytes: countFromEnv(env, 'MCP_HTTP_MAX_BODY_BYTES', 2 * 1024 * 1024),
    maxRequestsPerPrincipal: countFromEnv(env, 'MCP_HTTP_MAX_REQUESTS_PER_PRINCIPAL', 256, 0),
    maxPendingBodyBytesPerPrincipal: countFromEnv(env, 'MCP_HTTP_MAX_PENDING_BODY_BYTES_PER_PRINCIPAL', 8 * 1024 * 1024),
    maxPendingBodyBytes: countFromEnv(env, 'MCP_HTTP_MAX_PENDING_BODY_BYTES', 64 * 1024 * 1024),
  };
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** True for a host name (without port) that is this machine. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_NAMES.has(host.toLowerCase());
}

/**
 * Which `Origin` headers are accepted: requests without one (not from a browser) always are; a browser page's origin
 * must be on loopback (any port) or listed. `*` in the list accepts every origin.
 */
export class OriginPolicy {
  private readonly listed: Set<string>;

  constructor(allowed: readonly string[]) {
    this.listed = new Set(allowed.map((origin) => origin.trim().replace(/\/+$/, '').toLowerCase()).filter(Boolean));
  }

  /** Reads MCP_ALLOWED_ORIGINS (comma-separated origins, e.g. `https://app.example.com`, or `*`). */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): OriginPolicy {
    return new OriginPolicy((env.MCP_ALLOWED_ORIGINS ?? '').split(','));
  }

  /** True when a request with this `Origin` header (or none) may be served. */
  allows(origin: string | undefined): boolean {
    if (origin === undefined) return true;
    if (this.listed.has('*') || this.listed.has(origin.toLowerCase())) return true;
    try {
      const url = new URL(origin);
      return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.hostname);
    } catch {
      return false;
    }
  }
}

/** MCP_ALLOWED_HOSTS: the `Host` header values (host or host:port) a non-loopback endpoint answers. */
export function allowedHostsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] | undefined {
  const hosts = (env.MCP_ALLOWED_HOSTS ?? '')
    .split(',')
    .map((host) => host.trim().toLowerCase())
    .filter(Boolean);
  return hosts.length > 0 ? hosts : undefined;
}

/**
 * The 2025-11-25 sessions of one Streamable HTTP endpoint: each a transport and its MCP server, owned by the principal
 * that opened it. Bounded in all and per principal (the longest idle goes first) and closed when idle too long.
 * Sessions hold connections only: tasks live in Temporal.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** One open session. */
export interface Session {
  transport: StreamableHTTPServerTransport;
  server: Server;
  principal?: string;
  lastSeen: number;
}

/** Bounds of a {@link SessionStore}. */
export interface SessionBounds {
  maxSessions: number;
  maxSessionsPerPrincipal: number;
  /** A session with no request for this long is closed. */
  idleMs: number;
}

/** The open sessions of an endpoint (see the module comment). */
export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly bounds: SessionBounds) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(bounds.idleMs, 60_000));
    this.sweeper.unref();
  }

  /** The session `id` if `principal` opened it (another principal's is not found); marks it used. */
  use(id: string, principal: string | undefined): Session | undefined {
    const session = this.sessions.get(id);
    if (!session || session.principal !== principal) return undefined;
    session.lastSeen = Date.now();
    return session;
  }

  add(id: string, session: Omit<Session, 'lastSeen'>): void {
    this.sessions.set(id, { ...session, lastSeen: Date.now() });
  }

  remove(id: string): void {
    this.sessions.delete(id);
  }

  /** Makes room for a new session of `principal`: the longest idle of theirs, or of all, is closed. */
  makeRoom(principal: string | undefined): void {
    const own = [...this.sessions].filter(([, session]) => session.principal === principal);
    if (own.length >= this.bounds.maxSessionsPerPrincipal) this.evict(own);
    if (this.sessions.size >= this.bounds.maxSessions) this.evict([...this.sessions]);
  }

  /** Closes every session (the server is stopping); their handlers still running are aborted by the SDK. */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    const open = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(open.map(({ transport }) => transport.close().catch(() => undefined)));
  }

  private evict(candidates: [string, Session][]): void {
    const [id, oldest] = candidates.reduce((a, b) => (b[1].lastSeen < a[1].lastSeen ? b : a));
    this.sessions.delete(id);
    void oldest.transport.close().catch(() => undefined);
  }

  private sweep(): void {
    for (const [id, session] of this.sessions) {
      if (Date.now() - session.lastSeen > this.bounds.idleMs) {
        this.sessions.delete(id);
        void session.transport.close().catch(() => undefined);
      }
    }
  }
}

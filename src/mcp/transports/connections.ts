/**
 * Which TCP connections an HTTP endpoint holds: at most so many in all and from one address, and none that stays
 * silent. When every place is taken, a new connection is admitted by closing one that does nothing: first the oldest
 * of those that have sent no request yet, then the one idle longest between requests. A connection with a request
 * under way (an SSE stream, a wait) is never closed for another: only silent sockets can be pushed out, so idle sockets
 * from many addresses cannot keep a real client away.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { log } from '../../util/log';

/** Options of {@link ConnectionGate}. */
export interface ConnectionGateOptions {
  /** Open connections in all; at the cap a new one closes a silent one, or is refused when none is silent. */
  maxConnections: number;
  /** Open connections from one remote address; more are closed at once. 0 turns it off. */
  maxPerAddress: number;
  /** A connection whose first request has not arrived this long after it opened is closed. */
  firstRequestTimeoutMs: number;
}

/** What the gate knows of one open connection. */
interface Held {
  address: string;
  /** Requests received and not yet answered. */
  inFlight: number;
  /** Whether a request ever came on it. */
  spoke: boolean;
  /** When it last had nothing under way (opened, or its last response ended): the idlest goes first. */
  idleSince: number;
  silentTimer?: NodeJS.Timeout;
}

/** Admits, counts and closes the connections of one HTTP server (see the module's comment). */
export class ConnectionGate {
  /** Open connections, oldest first. */
  private readonly held = new Map<Socket, Held>();
  private readonly perAddress = new Map<string, number>();

  constructor(private readonly options: ConnectionGateOptions) {}

  /** Open connections now. */
  get size(): number {
    return this.held.size;
  }

  /** Takes a new connection in, making room at the cap; destroys it when it may not be held. */
  admit(socket: Socket): void {
    const address = socket.remoteAddress ?? '';
    const { maxConnections, maxPerAddress, firstRequestTimeoutMs } = this.options;
    // Counted before any request is read: one address cannot take the places every other caller needs.
    if (maxPerAddress > 0 && (this.perAddress.get(address) ?? 0) >= maxPerAddress) return void socket.destroy();
    if (this.held.size >= maxConnections && !this.evictOne()) return void socket.destroy();
    const entry: Held = { address, inFlight: 0, spoke: false, idleSince: Date.now() };
    // A connection that sends no request is closed early rather than held until the headers timeout.
    entry.silentTimer = setTimeout(() => socket.destroy(), firstRequestTimeoutMs);
    entry.silentTimer.unref();
    this.held.set(socket, entry);
    this.perAddress.set(address, (this.perAddress.get(address) ?? 0) + 1);
    socket.once('close', () => this.forget(socket));
  }

  /** Notes a request on its connection until its response ends: the connection is busy, not silent. */
  request(req: IncomingMessage, res: ServerResponse): void {
    const entry = this.held.get(req.socket);
    if (!entry) return;
    clearTimeout(entry.silentTimer);
    entry.spoke = true;
    entry.inFlight++;
    res.once('close', () => {
      entry.inFlight = Math.max(0, entry.inFlight - 1);
      if (entry.inFlight === 0) entry.idleSince = Date.now();
    });
  }

  /**
   * Closes one connection with nothing under way: the oldest that never sent a request, else the one idle longest.
   * False when every connection has a request under way.
   */
  private evictOne(): boolean {
    let idlest: [Socket, Held] | undefined;
    for (const [socket, entry] of this.held) {
      if (entry.inFlight > 0) continue;
      // The map keeps opening order: the first silent one is the oldest.
      if (!entry.spoke) return this.evict(socket);
      if (!idlest || entry.idleSince < idlest[1].idleSince) idlest = [socket, entry];
    }
    return idlest ? this.evict(idlest[0]) : false;
  }

  private evict(socket: Socket): true {
    const { address, spoke } = this.held.get(socket)!;
    log.debug(
      `http: at ${this.options.maxConnections} connections: closed ${spoke ? 'an idle' : 'a silent'} one from ${address} for a new one`,
    );
    // Forgotten now, not on 'close': the place is the new connection's at once.
    this.forget(socket);
    socket.destroy();
    return true;
  }

  private forget(socket: Socket): void {
    const entry = this.held.get(socket);
    if (!entry) return;
    clearTimeout(entry.silentTimer);
    this.held.delete(socket);
    const left = (this.perAddress.get(entry.address) ?? 1) - 1;
    if (left > 0) this.perAddress.set(entry.address, left);
    else this.perAddress.delete(entry.address);
  }
}

/**
 * Which TCP connections an HTTP endpoint holds: at most so many in all and from one address, and none that stays
 * silent. When every place is taken, a new connection is admitted by closing one that does nothing: first the oldest
 * of those that have sent no request yet, then the one idle longest between requests, then the one whose request body
 * has been trickling in longest, past {@link SLOW_BODY_MS}. A connection whose request was received and is being
 * answered (an SSE stream, a wait) is never closed for another: idle sockets and bodies sent a byte at a time from
 * many addresses cannot keep a real client away.
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

/** A request body still arriving this long after its headers is slow: at the cap, its connection may be closed. */
export const SLOW_BODY_MS = 1_000;

/** What the gate knows of one open connection. */
interface Held {
  address: string;
  /** Requests received and not yet answered. */
  inFlight: number;
  /** Whether a request ever came on it. */
  spoke: boolean;
  /** When it last had nothing under way (opened, or its last response ended): the idlest goes first. */
  idleSince: number;
  /** The latest request on it and when it came: its body is still arriving while the request is not `complete`. */
  latest?: { req: IncomingMessage; at: number };
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
    entry.latest = { req, at: Date.now() };
    res.once('close', () => {
      entry.inFlight = Math.max(0, entry.inFlight - 1);
      if (entry.inFlight === 0) {
        entry.idleSince = Date.now();
        entry.latest = undefined;
      }
    });
  }

  /**
   * Closes one connection that does nothing: the oldest that never sent a request, else the one idle longest, else the
   * one whose request body has been arriving longest, past {@link SLOW_BODY_MS}. False when every connection has a
   * request received and being answered, or a body still arriving quickly.
   */
  private evictOne(): boolean {
    let idlest: [Socket, Held] | undefined;
    let slowest: [Socket, Held] | undefined;
    const slowSince = Date.now() - SLOW_BODY_MS;
    for (const [socket, entry] of this.held) {
      if (entry.inFlight > 0) {
        const latest = entry.latest;
        const slow = latest !== undefined && !latest.req.complete && latest.at <= slowSince;
        if (slow && (!slowest || latest.at < slowest[1].latest!.at)) slowest = [socket, entry];
        continue;
      }
      // The map keeps opening order: the first silent one is the oldest.
      if (!entry.spoke) return this.evict(socket, 'a silent');
      if (!idlest || entry.idleSince < idlest[1].idleSince) idlest = [socket, entry];
    }
    if (idlest) return this.evict(idlest[0], 'an idle');
    return slowest ? this.evict(slowest[0], 'a slow-body') : false;
  }

  private evict(socket: Socket, kind: string): true {
    const { address } = this.held.get(socket)!;
    log.debug(`http: at ${this.options.maxConnections} connections: closed ${kind} one from ${address} for a new one`);
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

/** Counts each principal's requests under way, up to a bound (0: none). */
export class PrincipalRequests {
  private readonly counts = new Map<string, number>();

  constructor(private readonly max: number) {}

  /**
   * Counts a request of `principal` until it ends (its response closes or finishes, or the request closes, whichever
   * comes first); false, counting nothing, when the principal is at the bound. A request that ended already (its
   * client went away while it was authenticated) is not counted.
   */
  take(principal: string, req: IncomingMessage, res: ServerResponse): boolean {
    const count = this.counts.get(principal) ?? 0;
    if (this.max > 0 && count >= this.max) return false;
    if (req.destroyed || res.closed || res.writableFinished) return true;
    this.counts.set(principal, count + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (this.counts.get(principal) ?? 1) - 1;
      if (left > 0) this.counts.set(principal, left);
      else this.counts.delete(principal);
    };
    res.once('close', release);
    res.once('finish', release);
    req.once('close', release);
    return true;
  }
}

/**
 * A call carried through a client and back, sealed: its principal, tool and arguments, signed with a key the server
 * keeps (every replica the same one) and valid for a while. Used for the `confirm_start` token.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a sealed call names. */
export interface SealedCall {
  principal: string;
  tool: string;
  args: unknown;
}

/** Seals and opens {@link SealedCall}s. */
export class CallSeal {
  constructor(
    private readonly key: string | Uint8Array,
    private readonly ttlMs: number,
  ) {}

  /** A token standing for `call` until the seal's ttl has passed. */
  seal(call: SealedCall): string {
    const body = Buffer.from(JSON.stringify({ v: 1, p: call.principal, t: call.tool, a: call.args, e: Date.now() + this.ttlMs })).toString(
      'base64url',
    );
    return `${body}.${this.mac(body)}`;
  }

  /** The call a token stands for, when it was sealed here, for `principal`, and has not expired; otherwise undefined. */
  open(token: unknown, principal: string): SealedCall | undefined {
    if (typeof token !== 'string' || token.length > 1_000_000) return undefined;
    const dot = token.lastIndexOf('.');
    if (dot <= 0) return undefined;
    const body = token.slice(0, dot);
    const mac = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.mac(body), 'base64url');
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return undefined;
    try {
      const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as {
        v?: unknown;
        p?: unknown;
        t?: unknown;
        a?: unknown;
        e?: unknown;
      };
      if (
        parsed.v !== 1 ||
        parsed.p !== principal ||
        typeof parsed.t !== 'string' ||
        typeof parsed.e !== 'number' ||
        parsed.e < Date.now()
      ) {
        return undefined;
      }
      return { principal, tool: parsed.t, args: parsed.a };
    } catch {
      return undefined;
    }
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(`temporal-mcp-tasks/call\n${body}`).digest('base64url');
  }
}

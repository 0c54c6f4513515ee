/**
 * Short tokens that carry their own facts and expiry, signed with a key derived from the bridge's task key for one
 * purpose: what a web session, a sign-in link or an approval link says, checked by any replica and any worker that
 * holds the task key, with nothing kept on the side. A token of one purpose never passes as one of another.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** What every token carries: when it expires (milliseconds since the epoch). */
export interface TokenClaims {
  exp: number;
}

/** Signs and reads tokens of one purpose (see the module's comment). */
export class SignedTokens {
  private readonly key: Buffer;

  /** `taskKey`: the bridge's secret key (see task-key); `purpose`: a label no other kind of token uses. */
  constructor(taskKey: Buffer, purpose: string) {
    // A label of its own shape: no purpose makes the label of another key derived from the task key (the answer key's).
    this.key = createHmac('sha256', taskKey).update(`temporal-mcp-tasks signed token: ${purpose}; v1`).digest();
  }

  /** The token of `claims`: their JSON and its MAC, both base64url, joined by a dot. */
  sign<T extends TokenClaims>(claims: T): string {
    const body = Buffer.from(JSON.stringify(claims), 'utf8').toString('base64url');
    return `${body}.${this.mac(body)}`;
  }

  /** The claims of `token` when it is one of this purpose, untouched and not expired at `now`; else undefined. Never throws. */
  read<T extends TokenClaims>(token: string, now = Date.now()): T | undefined {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return undefined;
    const dot = token.indexOf('.');
    if (dot <= 0) return undefined;
    const body = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'base64url');
    const expected = Buffer.from(this.mac(body), 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let claims: unknown;
    try {
      claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    if (claims === null || typeof claims !== 'object' || typeof (claims as TokenClaims).exp !== 'number') return undefined;
    return (claims as TokenClaims).exp > now ? (claims as T) : undefined;
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}

/** Longer tokens are refused unread: every token here is a few hundred characters. */
const MAX_TOKEN_LENGTH = 4_096;

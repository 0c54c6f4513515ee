import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import { log } from '../../util/log';
import { assertValidPrincipal, isReservedPrincipal, parseRoles } from '../../core';

/** Thrown when the token configuration cannot be used; the message names the entry to fix. */
export class TokenConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenConfigError';
  }
}

const MIN_TOKEN_LENGTH = 16;

/**
 * Static bearer tokens, each bound to a principal. Tokens are kept only as SHA-256 digests and compared in constant
 * time.
 */
export class BearerTokens {
  private digests: { digest: Buffer; principal: string; roles: string[] }[] = [];
  private readonly listeners = new Set<() => void>();

  /** Takes the tokens of `next` in place of these (the tokens file changed), and tells those listening. */
  replaceWith(next: BearerTokens): void {
    this.digests = [...next.digests];
    for (const listener of this.listeners) listener();
  }

  /** Calls `listener` each time the tokens are replaced; returns what stops it. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Adds `token` for `principal` with `roles`; throws {@link TokenConfigError} for a short token or a bad principal. */
  add(principal: string, token: string, where: string, roles: string[] = []): void {
    try {
      assertValidPrincipal(principal);
    } catch {
      // Not the value itself: a reversed "token=principal" pair would print the token.
      throw new TokenConfigError(
        `${where}: the principal must be 1-200 characters of letters, digits and . _ : @ + - (write principal=token)`,
      );
    }
    if (isReservedPrincipal(principal)) {
      throw new TokenConfigError(
        `${where}: "${principal}" is reserved for local callers and OAuth tokens (local:, oauth:); give the token another principal`,
      );
    }
    if (token.length < MIN_TOKEN_LENGTH)
      throw new TokenConfigError(`${where}: the token of "${principal}" is shorter than ${MIN_TOKEN_LENGTH} characters`);
    const digest = sha256(token);
    if (this.digests.some((entry) => timingSafeEqual(entry.digest, digest)))
      throw new TokenConfigError(`${where}: a token is listed twice`);
    this.digests.push({ digest, principal, roles });
  }

  /** How many tokens are configured. */
  get size(): number {
    return this.digests.length;
  }

  /** The principal a token belongs to, or undefined. */
  principalOf(token: string): string | undefined {
    return this.callerOf(token)?.principal;
  }

  /** The roles the tokens of `principal` carry (all of them), or undefined when no token is that principal's. */
  rolesOf(principal: string): string[] | undefined {
    const entries = this.digests.filter((entry) => entry.principal === principal);
    return entries.length === 0 ? undefined : [...new Set(entries.flatMap((entry) => entry.roles))];
  }

  /** The principal a token belongs to and its roles, or undefined. */
  callerOf(token: string): { principal: string; roles: string[] } | undefined {
    const digest = sha256(token);
    let found: { principal: string; roles: string[] } | undefined;
    for (const entry of this.digests) if (timingSafeEqual(entry.digest, digest)) found = { principal: entry.principal, roles: entry.roles };
    return found;
  }
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * Reads tokens from MCP_AUTH_TOKENS ("principal=token,principal=token") and from the file MCP_AUTH_TOKENS_FILE (one
 * "principal token [roles]" line each, roles comma-separated, e.g. "carol 0123…cdef ap-approver,controller"; a line
 * starting with # is a comment, and # inside a token is part of it). Returns an empty set when neither is set.
 */
export function tokensFromEnv(env: NodeJS.ProcessEnv = process.env): BearerTokens {
  const tokens = new BearerTokens();
  const inline = env.MCP_AUTH_TOKENS?.trim();
  if (inline) {
    inline.split(',').forEach((pair, index) => {
      const at = pair.indexOf('=');
      if (at <= 0) throw new TokenConfigError(`MCP_AUTH_TOKENS entry ${index + 1}: write principal=token`);
      tokens.add(pair.slice(0, at).trim(), pair.slice(at + 1).trim(), `MCP_AUTH_TOKENS entry ${index + 1}`);
    });
  }
  const file = env.MCP_AUTH_TOKENS_FILE?.trim();
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new TokenConfigError(`MCP_AUTH_TOKENS_FILE ${file}: ${(error as Error).message}`);
    }
    text.split('\n').forEach((raw, index) => {
      const line = raw.trim();
      if (!line || line.startsWith('#')) return;
      const parts = line.split(/\s+/);
      const where = `${file} line ${index + 1}`;
      if (parts.length !== 2 && parts.length !== 3) {
        throw new TokenConfigError(`${where}: write "principal token" or "principal token role,role" (a # comment starts a line)`);
      }
      let roles: string[];
      try {
        roles = parseRoles(parts[2], where);
      } catch (error) {
        throw new TokenConfigError((error as Error).message);
      }
      tokens.add(parts[0], parts[1], where, roles);
    });
  }
  return tokens;
}

/** How often the tokens file is looked at for a change (see {@link watchTokensFile}). */
export const TOKENS_FILE_POLL_MS = 1000;

/**
 * Reads the tokens file (MCP_AUTH_TOKENS_FILE) again whenever it changes, checked every `intervalMs`: a token removed
 * from it is refused from then on, and the streams and waits it opened end (within about two intervals). A file that
 * cannot be read or does not parse leaves the tokens as they were, and says why. Returns what stops the watch.
 */
export function watchTokensFile(tokens: BearerTokens, env: NodeJS.ProcessEnv = process.env, intervalMs = TOKENS_FILE_POLL_MS): () => void {
  const file = env.MCP_AUTH_TOKENS_FILE?.trim();
  if (!file) return () => undefined;
  const changed = (current: Stats, previous: Stats) => {
    if (current.mtimeMs === previous.mtimeMs && current.size === previous.size && current.ino === previous.ino) return;
    try {
      const next = tokensFromEnv(env);
      tokens.replaceWith(next);
      log.info(`auth: ${file} changed: ${next.size} token(s) now`);
    } catch (error) {
      log.error(`auth: ${file} changed but cannot be used, the tokens in use stay: ${(error as Error).message}`);
    }
  };
  watchFile(file, { interval: intervalMs, persistent: false }, changed);
  return () => unwatchFile(file, changed);
}

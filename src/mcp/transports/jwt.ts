/**
 * OAuth 2.1 access tokens as JWTs: checked against the issuer's key set (discovered from its RFC 8414 / OIDC metadata,
 * or configured), its issuer, audience (this resource, RFC 8707), lifetime and scopes. The SDK's bearer helpers call
 * {@link JwtVerifier}; the authenticators of `oauth.ts` decide what a request may do with the result.
 */
import { OAuthError, OAuthErrorCode, type AuthInfo, type OAuthTokenVerifier } from '@modelcontextprotocol/server';
import { log } from '../../util/log';
import { assertValidPrincipal, isValidRole, OAUTH_PRINCIPAL_PREFIX } from '../../core';
import type { OAuthConfig } from './oauth-config';

/** Thrown when the issuer's metadata or key set cannot be fetched: no token can be checked until they can. */
export class IssuerUnavailableError extends Error {
  constructor(
    message: string,
    readonly issuer: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'IssuerUnavailableError';
  }
}

const CLOCK_TOLERANCE_S = 30;
const FETCH_TIMEOUT_MS = 5_000;
// Asymmetric algorithms only: a key set holds public keys, and an HMAC "signed" with one would be forgeable.
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

type Jose = typeof import('jose', { with: { 'resolution-mode': 'import' } });
type KeySet = Parameters<Jose['jwtVerify']>[1];

/** jose ships ES modules only; this CommonJS module loads it on first use. */
let jose: Promise<Jose> | undefined;
function loadJose(): Promise<Jose> {
  jose ??= import('jose');
  return jose;
}

/** Validates access tokens as JWTs of one issuer, for one resource; the SDK's bearer helpers call it. */
export class JwtVerifier implements OAuthTokenVerifier {
  private keys?: Promise<KeySet>;

  constructor(
    private readonly config: OAuthConfig,
    private readonly resource: string,
  ) {}

  /** Throws {@link OAuthError} (invalid_token, insufficient_scope) or {@link IssuerUnavailableError}. */
  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const { jwtVerify } = await loadJose();
    let payload: Awaited<ReturnType<Jose['jwtVerify']>>['payload'];
    try {
      ({ payload } = await jwtVerify(token, await this.keySet(), {
        issuer: this.config.issuer,
        audience: this.resource,
        algorithms: ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      throw this.rejection(error);
    }
    const principal = this.principalOf(payload);
    const scopes = scopesOf(payload);
    const missing = this.config.scopes.filter((scope) => !scopes.includes(scope));
    if (missing.length > 0)
      throw new OAuthError(
        OAuthErrorCode.InsufficientScope,
        `the token lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(' ')}`,
      );
    const roles = this.rolesOf(payload);
    return { token, clientId: principal, scopes, expiresAt: payload.exp, resource: new URL(this.resource), extra: { roles } };
  }

  /** The roles the configured claim lists (an array of names, or one space-separated string); names that cannot be queried are left out. */
  private rolesOf(payload: Record<string, unknown>): string[] {
    const claim = this.config.rolesClaim;
    if (!claim) return [];
    const value = payload[claim];
    const listed = Array.isArray(value) ? value : typeof value === 'string' ? value.split(' ') : [];
    return [...new Set(listed.filter(isValidRole))];
  }

  private principalOf(payload: Record<string, unknown>): string {
    const claim = this.config.principalClaim;
    const value = payload[claim];
    const invalid = (why: string) => new OAuthError(OAuthErrorCode.InvalidToken, `the token's ${claim} claim ${why}`);
    if (typeof value !== 'string') throw invalid(value === undefined ? 'is missing' : 'is not a string');
    // Principals of OAuth tokens have a name space of their own, apart from static tokens and local callers.
    const principal = `${OAUTH_PRINCIPAL_PREFIX}${value}`;
    try {
      assertValidPrincipal(principal);
    } catch {
      throw invalid(`is not a usable principal: 1-${200 - OAUTH_PRINCIPAL_PREFIX.length} characters of letters, digits and . _ : @ + -`);
    }
    return principal;
  }

  /** The issuer's key set, fetched (and refreshed) by jose; a failed discovery is tried again on the next token. */
  private keySet(): Promise<KeySet> {
    this.keys ??= (async () => {
      const { createRemoteJWKSet } = await loadJose();
      const url = this.config.jwksUrl ?? (await discoverJwksUri(this.config.issuer));
      if (!this.config.jwksUrl) log.info(`oauth: the signing keys of ${this.config.issuer} are at ${url}`);
      return createRemoteJWKSet(new URL(url), { timeoutDuration: FETCH_TIMEOUT_MS });
    })();
    this.keys.catch(() => (this.keys = undefined));
    return this.keys;
  }

  /** The OAuth error for a token jose refused, with a description that says why (never the token). */
  private rejection(error: unknown): Error {
    const code = (error as { code?: unknown }).code;
    const invalid = (description: string) => new OAuthError(OAuthErrorCode.InvalidToken, description);
    switch (code) {
      case 'ERR_JWT_EXPIRED':
        return invalid('the token has expired');
      case 'ERR_JWT_CLAIM_VALIDATION_FAILED': {
        const { claim, reason } = error as { claim: string; reason: string };
        if (claim === 'iss') return invalid(`the token was not issued by ${this.config.issuer}`);
        if (claim === 'aud') return invalid(`the token is not for this resource: its audience must include ${this.resource}`);
        if (claim === 'nbf') return invalid('the token is not valid yet');
        return invalid(`the token's ${claim} claim ${reason === 'missing' ? 'is missing' : 'is not valid'}`);
      }
      case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
        return invalid(`the token's signature does not verify with the keys of ${this.config.issuer}`);
      case 'ERR_JWKS_NO_MATCHING_KEY':
      case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
        return invalid(`the token is not signed by a key of ${this.config.issuer}`);
      case 'ERR_JOSE_ALG_NOT_ALLOWED':
      case 'ERR_JOSE_NOT_SUPPORTED':
        return invalid(`the token's signing algorithm is not accepted (use one of ${ALGORITHMS.join(' ')})`);
      case 'ERR_JWT_INVALID':
      case 'ERR_JWS_INVALID':
        return invalid('the token is not a well-formed JWT');
      default:
        if (error instanceof IssuerUnavailableError) return error;
        return new IssuerUnavailableError(`the key set of ${this.config.issuer} could not be read`, this.config.issuer, { cause: error });
    }
  }
}

/**
 * The `jwks_uri` of the issuer's metadata, from the locations the MCP authorization specification lists: RFC 8414
 * first, then OpenID Connect Discovery. Throws {@link IssuerUnavailableError} when none answers with one.
 */
async function discoverJwksUri(issuer: string): Promise<string> {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, '');
  const candidates = [
    new URL(`/.well-known/oauth-authorization-server${path}`, url),
    new URL(`/.well-known/openid-configuration${path}`, url),
    ...(path ? [new URL(`${path}/.well-known/openid-configuration`, url)] : []),
  ];
  const problems: string[] = [];
  for (const candidate of candidates) {
    let response: Response;
    try {
      response = await fetch(candidate, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    } catch (error) {
      throw new IssuerUnavailableError(`the metadata of ${issuer} could not be fetched from ${candidate}`, issuer, { cause: error });
    }
    if (!response.ok) {
      await response.body?.cancel();
      problems.push(`${candidate}: HTTP ${response.status}`);
      continue;
    }
    const metadata = (await response.json().catch(() => undefined)) as { issuer?: unknown; jwks_uri?: unknown } | undefined;
    // RFC 8414 §3.3: metadata whose issuer is not the one asked for must not be used.
    if (metadata?.issuer !== issuer) problems.push(`${candidate}: the document is not the metadata of ${issuer}`);
    else if (typeof metadata.jwks_uri !== 'string') problems.push(`${candidate}: no jwks_uri`);
    else return metadata.jwks_uri;
  }
  throw new IssuerUnavailableError(
    `no metadata of ${issuer} names its keys (${problems.join('; ')}); set MCP_OAUTH_JWKS_URL or fix the issuer`,
    issuer,
  );
}

/** Scopes from `scope` (a space-separated string, RFC 9068) or `scp` (an array, or a string, as some issuers write). */
function scopesOf(payload: Record<string, unknown>): string[] {
  const { scope, scp } = payload;
  if (typeof scope === 'string') return scope.split(' ').filter(Boolean);
  if (Array.isArray(scp)) return scp.filter((item): item is string => typeof item === 'string');
  if (typeof scp === 'string') return scp.split(' ').filter(Boolean);
  return [];
}

/**
 * Who is calling the HTTP endpoint: static bearer tokens, and OAuth 2.1 access tokens (JWTs) from an authorization
 * server, validated as the MCP authorization specification asks of a resource server (2025-11-25 and 2026-07-28):
 * JWT access tokens checked against the issuer's key set, audience-bound to this server (RFC 8707), refused per
 * RFC 6750 with a challenge that points at this server's Protected Resource Metadata (RFC 9728).
 */
import type { IncomingMessage } from 'node:http';
import {
  bearerAuthChallengeResponse,
  buildOAuthProtectedResourceMetadata,
  getOAuthProtectedResourceMetadataUrl,
  OAuthError,
  OAuthErrorCode,
  verifyBearerToken,
  type AuthInfo,
  type OAuthTokenVerifier,
} from '@modelcontextprotocol/server';
import { log } from '../../util/log';
import { assertValidPrincipal, isReservedPrincipal } from '../tasks/principal';
import type { BearerTokens } from './auth';

/** Thrown when the OAuth configuration cannot be used; the message names the variable to fix. */
export class OAuthConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OAuthConfigError';
  }
}

/** Thrown when the issuer's metadata or key set cannot be fetched: no token can be checked until they can. */
class IssuerUnavailableError extends Error {
  constructor(
    message: string,
    readonly issuer: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'IssuerUnavailableError';
  }
}

/** OAuth settings of the HTTP endpoint (MCP_OAUTH_* variables). */
export interface OAuthConfig {
  /** The authorization server; tokens must carry exactly this `iss`. */
  issuer: string;
  /** The issuer's JSON Web Key Set; when unset, the `jwks_uri` of the issuer's metadata. */
  jwksUrl?: string;
  /** This server's resource identifier (RFC 8707), which tokens must name in `aud`; default: the endpoint as bound. */
  resource?: string;
  /** Scopes every token must carry. */
  scopes: string[];
  /** The claim that names the principal. */
  principalClaim: string;
}

/** The authenticated caller of a request. */
export interface Caller {
  principal: string;
  token: string;
  scopes: string[];
}

/** A refused request: the HTTP status, its headers (`WWW-Authenticate`), and the message of the JSON-RPC error body. */
export interface Refusal {
  status: number;
  headers: Record<string, string>;
  message: string;
}

/** A complete answer served without authentication (the discovery documents). */
export interface PublicAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What the HTTP transport asks of authentication. */
export interface RequestAuthenticator {
  /** The caller of a request to the MCP endpoint, or the answer that refuses it. Never throws. */
  authenticate(req: IncomingMessage): Promise<Caller | Refusal>;
  /** The answer for a discovery document at `pathname` (RFC 9728), or undefined when it names none. */
  publicAnswer(method: string | undefined, pathname: string): PublicAnswer | undefined;
}

const PRM_PATH = '/.well-known/oauth-protected-resource';
const CLOCK_TOLERANCE_S = 30;
const FETCH_TIMEOUT_MS = 5_000;
// Asymmetric algorithms only: a key set holds public keys, and an HMAC "signed" with one would be forgeable.
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
// RFC 6749 scope-token: printable ASCII but space, `"` and `\`.
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/**
 * Reads MCP_OAUTH_ISSUER (OAuth is on when it is set), MCP_OAUTH_JWKS_URL, MCP_OAUTH_RESOURCE, MCP_OAUTH_SCOPES and
 * MCP_OAUTH_PRINCIPAL_CLAIM. Returns undefined when OAuth is off; throws {@link OAuthConfigError} for unusable values.
 */
export function oauthConfigFromEnv(env: NodeJS.ProcessEnv = process.env): OAuthConfig | undefined {
  const value = (name: string) => env[name]?.trim() || undefined;
  const issuer = value('MCP_OAUTH_ISSUER');
  if (!issuer) {
    const stray = ['MCP_OAUTH_JWKS_URL', 'MCP_OAUTH_RESOURCE', 'MCP_OAUTH_SCOPES', 'MCP_OAUTH_PRINCIPAL_CLAIM'].find(value);
    if (stray) throw new OAuthConfigError(`${stray} is set but MCP_OAUTH_ISSUER is not: set the issuer to turn OAuth on`);
    return undefined;
  }
  try {
    // The SDK's own check: an HTTPS issuer (http only on localhost), no query, no fragment.
    buildOAuthProtectedResourceMetadata({ oauthMetadata: metadataOf(issuer), resourceServerUrl: new URL('http://localhost/') });
  } catch (error) {
    throw new OAuthConfigError(`MCP_OAUTH_ISSUER ${issuer}: ${(error as Error).message}`);
  }
  const jwksUrl = value('MCP_OAUTH_JWKS_URL');
  if (jwksUrl) checkUrl('MCP_OAUTH_JWKS_URL', jwksUrl, true);
  const resource = value('MCP_OAUTH_RESOURCE');
  if (resource) checkUrl('MCP_OAUTH_RESOURCE', resource, false);
  const scopes = (value('MCP_OAUTH_SCOPES') ?? '').split(/[\s,]+/).filter(Boolean);
  const badScope = scopes.find((scope) => !SCOPE_TOKEN.test(scope));
  if (badScope !== undefined) throw new OAuthConfigError(`MCP_OAUTH_SCOPES: "${badScope}" is not a scope token`);
  return { issuer, jwksUrl, resource, scopes, principalClaim: value('MCP_OAUTH_PRINCIPAL_CLAIM') ?? 'sub' };
}

function checkUrl(name: string, value: string, httpsOutsideLoopback: boolean): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OAuthConfigError(`${name}: "${value}" is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new OAuthConfigError(`${name}: ${value} is not an http(s) URL`);
  if (url.hash) throw new OAuthConfigError(`${name}: ${value} must not have a fragment`);
  if (httpsOutsideLoopback && url.protocol !== 'https:' && !['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)) {
    throw new OAuthConfigError(`${name}: ${value} must be https (http only on a loopback address)`);
  }
}

/** Options of {@link createAuthenticator}. */
export interface AuthenticatorOptions {
  /** Static tokens; a token listed here is accepted as its principal without further checks. */
  tokens?: BearerTokens;
  /** OAuth; any other token is validated as a JWT of the issuer. */
  oauth?: OAuthConfig;
  /** The MCP endpoint as bound, e.g. http://127.0.0.1:3000/mcp: the resource when none is configured. */
  endpointUrl: string;
}

/** The authenticator of the HTTP endpoint for static tokens, OAuth, or both. */
export function createAuthenticator(options: AuthenticatorOptions): RequestAuthenticator {
  return options.oauth
    ? new OAuthAuthenticator(options.oauth, options.oauth.resource ?? options.endpointUrl, options.endpointUrl, options.tokens)
    : new StaticTokenAuthenticator(options.tokens);
}

function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  return /^Bearer\s+(\S+)$/i.exec(header ?? '')?.[1];
}

/** Static tokens only: the challenge names no metadata, as there is no authorization server to discover. */
class StaticTokenAuthenticator implements RequestAuthenticator {
  constructor(private readonly tokens?: BearerTokens) {}

  async authenticate(req: IncomingMessage): Promise<Caller | Refusal> {
    const token = bearerToken(req);
    const principal = token ? this.tokens?.principalOf(token) : undefined;
    if (token && principal) return { principal, token, scopes: [] };
    return {
      status: 401,
      headers: { 'www-authenticate': `Bearer realm="temporal-mcp"${token ? ', error="invalid_token"' : ''}` },
      message: token ? 'Unauthorized: the bearer token is not valid' : 'Unauthorized: send Authorization: Bearer <token>',
    };
  }

  publicAnswer(): undefined {
    return undefined;
  }
}

/** Static tokens (if any) first, then JWTs of the issuer; serves the Protected Resource Metadata. */
class OAuthAuthenticator implements RequestAuthenticator {
  private readonly verifier: JwtVerifier;
  private readonly metadataUrl: string;
  private readonly metadata: string;
  private readonly metadataPaths: Set<string>;

  constructor(
    private readonly config: OAuthConfig,
    private readonly resource: string,
    endpointUrl: string,
    private readonly tokens?: BearerTokens,
  ) {
    this.verifier = new JwtVerifier(config, resource);
    const resourceUrl = new URL(resource);
    this.metadataUrl = getOAuthProtectedResourceMetadataUrl(resourceUrl);
    this.metadata = JSON.stringify({
      ...buildOAuthProtectedResourceMetadata({
        oauthMetadata: metadataOf(config.issuer),
        resourceServerUrl: resourceUrl,
        scopesSupported: config.scopes.length > 0 ? config.scopes : undefined,
        resourceName: 'Temporal MCP tasks',
      }),
      // The identifier exactly as configured: it is what tokens carry in `aud`.
      resource,
      bearer_methods_supported: ['header'],
    });
    // RFC 9728 puts the document at the well-known path followed by the resource's path; behind a proxy that path may
    // differ from this server's own, so both are served, and the bare well-known path too.
    this.metadataPaths = new Set([PRM_PATH, new URL(this.metadataUrl).pathname, `${PRM_PATH}${new URL(endpointUrl).pathname}`]);
  }

  async authenticate(req: IncomingMessage): Promise<Caller | Refusal> {
    const token = bearerToken(req);
    if (!token) {
      // No credentials (or another scheme): a challenge without an error code (RFC 6750 §3.1).
      const scope = this.config.scopes.length > 0 ? `, scope="${this.config.scopes.join(' ')}"` : '';
      return {
        status: 401,
        headers: { 'www-authenticate': `Bearer resource_metadata="${this.metadataUrl}"${scope}` },
        message: `Unauthorized: send Authorization: Bearer <access token of ${this.config.issuer}>`,
      };
    }
    const principal = this.tokens?.principalOf(token);
    if (principal) return { principal, token, scopes: [] };
    const challenge = { requiredScopes: this.config.scopes, resourceMetadataUrl: this.metadataUrl };
    try {
      const info = await verifyBearerToken(`Bearer ${token}`, {
        verifier: this.verifier,
        expectedResource: new URL(this.resource),
        ...challenge,
      });
      return { principal: info.clientId, token, scopes: info.scopes };
    } catch (error) {
      if (error instanceof IssuerUnavailableError) {
        log.error(`oauth: ${error.message}${error.cause instanceof Error ? ` (${error.cause.message})` : ''}`);
        return {
          status: 503,
          headers: { 'retry-after': '5' },
          message: `Service unavailable: the signing keys of ${error.issuer} cannot be fetched; try again later`,
        };
      }
      // The SDK builds the challenge (status and WWW-Authenticate); the body stays a JSON-RPC error.
      const response = bearerAuthChallengeResponse(error, challenge);
      const header = response.headers.get('www-authenticate');
      const kind = response.status === 403 ? 'Forbidden' : 'Unauthorized';
      return {
        status: response.status,
        headers: header ? { 'www-authenticate': header } : {},
        message: `${kind}: ${error instanceof OAuthError ? error.message : 'the token could not be checked'}`,
      };
    }
  }

  publicAnswer(method: string | undefined, pathname: string): PublicAnswer | undefined {
    if (!this.metadataPaths.has(pathname)) return undefined;
    if (method !== 'GET') {
      return {
        status: 405,
        headers: { 'content-type': 'application/json', allow: 'GET' },
        body: JSON.stringify({ error: 'method_not_allowed', error_description: `${method} is not allowed here: use GET` }),
      };
    }
    return { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'max-age=300' }, body: this.metadata };
  }
}

type Jose = typeof import('jose', { with: { 'resolution-mode': 'import' } });
type KeySet = Parameters<Jose['jwtVerify']>[1];

/** jose ships ES modules only; this CommonJS module loads it on first use. */
let jose: Promise<Jose> | undefined;
function loadJose(): Promise<Jose> {
  jose ??= import('jose');
  return jose;
}

/** Validates access tokens as JWTs of one issuer, for one resource; the SDK's bearer helpers call it. */
class JwtVerifier implements OAuthTokenVerifier {
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
    return { token, clientId: principal, scopes, expiresAt: payload.exp, resource: new URL(this.resource) };
  }

  private principalOf(payload: Record<string, unknown>): string {
    const claim = this.config.principalClaim;
    const value = payload[claim];
    const invalid = (why: string) => new OAuthError(OAuthErrorCode.InvalidToken, `the token's ${claim} claim ${why}`);
    if (typeof value !== 'string') throw invalid(value === undefined ? 'is missing' : 'is not a string');
    try {
      assertValidPrincipal(value);
    } catch {
      throw invalid('is not a usable principal: 1-200 characters of letters, digits and . _ : @ + -');
    }
    if (isReservedPrincipal(value)) throw invalid('names a principal reserved for unauthenticated use');
    return value;
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

/** The least authorization server metadata the SDK's metadata builder needs: only the issuer is used. */
function metadataOf(issuer: string) {
  return { issuer, authorization_endpoint: issuer, token_endpoint: issuer, response_types_supported: ['code'] };
}

/** Scopes from `scope` (a space-separated string, RFC 9068) or `scp` (an array, or a string, as some issuers write). */
function scopesOf(payload: Record<string, unknown>): string[] {
  const { scope, scp } = payload;
  if (typeof scope === 'string') return scope.split(' ').filter(Boolean);
  if (Array.isArray(scp)) return scp.filter((item): item is string => typeof item === 'string');
  if (typeof scp === 'string') return scp.split(' ').filter(Boolean);
  return [];
}

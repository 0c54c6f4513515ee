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
  verifyBearerToken,
} from '@modelcontextprotocol/server';
import { log } from '../../util/log';
import type { BearerTokens } from './auth';
import { IssuerUnavailableError, JwtVerifier } from './jwt';
import { metadataOf, type OAuthConfig } from './oauth-config';

/** The authenticated caller of a request. */
export interface Caller {
  principal: string;
  token: string;
  scopes: string[];
  /** The principal's roles, from its credentials (a token file's third column, the OAuth roles claim). */
  roles: string[];
  /** When the credential stops being valid (an access token's `exp`, ms since the epoch); none for a static token. */
  expiresAt?: number;
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
  /**
   * Whether the credential `caller` came with still holds: not expired, and (a static token) still listed. Asked of
   * streams and waits while they last; an authenticator without it leaves them to their own end.
   */
  stillValid?(caller: Caller): boolean;
  /** Calls `listener` when credentials may have been revoked (the tokens file changed); returns what stops it. */
  onRevocation?(listener: () => void): () => void;
}

const PRM_PATH = '/.well-known/oauth-protected-resource';

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
    const caller = token ? this.tokens?.callerOf(token) : undefined;
    if (token && caller) return { ...caller, token, scopes: [] };
    return {
      status: 401,
      headers: { 'www-authenticate': `Bearer realm="temporal-mcp"${token ? ', error="invalid_token"' : ''}` },
      message: token ? 'Unauthorized: the bearer token is not valid' : 'Unauthorized: send Authorization: Bearer <token>',
    };
  }

  publicAnswer(): undefined {
    return undefined;
  }

  stillValid(caller: Caller): boolean {
    return this.tokens?.principalOf(caller.token) === caller.principal;
  }

  onRevocation(listener: () => void): () => void {
    return this.tokens?.onChange(listener) ?? (() => undefined);
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
    const caller = this.tokens?.callerOf(token);
    if (caller) return { ...caller, token, scopes: [] };
    const challenge = { requiredScopes: this.config.scopes, resourceMetadataUrl: this.metadataUrl };
    try {
      const info = await verifyBearerToken(`Bearer ${token}`, {
        verifier: this.verifier,
        expectedResource: new URL(this.resource),
        ...challenge,
      });
      const roles = Array.isArray(info.extra?.roles) ? (info.extra.roles as string[]) : [];
      return {
        principal: info.clientId,
        token,
        scopes: info.scopes,
        roles,
        ...(info.expiresAt !== undefined && { expiresAt: info.expiresAt * 1000 }),
      };
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

  stillValid(caller: Caller): boolean {
    // A static token: still listed. An access token: not past its `exp` (its signature and claims were checked).
    if (caller.expiresAt === undefined) return this.tokens?.principalOf(caller.token) === caller.principal;
    return Date.now() < caller.expiresAt;
  }

  onRevocation(listener: () => void): () => void {
    return this.tokens?.onChange(listener) ?? (() => undefined);
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

/**
 * The OAuth settings of the HTTP endpoint: what they are, and how they are read from MCP_OAUTH_* variables and
 * checked before the server starts. The authenticators of `oauth.ts` and the verifier of `jwt.ts` use them.
 */
import { buildOAuthProtectedResourceMetadata } from '@modelcontextprotocol/server';

/** Thrown when the OAuth configuration cannot be used; the message names the variable to fix. */
export class OAuthConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OAuthConfigError';
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
  /** The claim that lists the principal's roles (a string array, or a space-separated string); none: no roles. */
  rolesClaim?: string;
}

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
    // The claims name the principal and roles of a sign-in through the OpenID Connect provider too (MCP_OIDC_ISSUER).
    const claims = value('MCP_OIDC_ISSUER') ? [] : ['MCP_OAUTH_PRINCIPAL_CLAIM', 'MCP_OAUTH_ROLES_CLAIM'];
    const stray = ['MCP_OAUTH_JWKS_URL', 'MCP_OAUTH_RESOURCE', 'MCP_OAUTH_SCOPES', ...claims].find(value);
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
  const rolesClaim = value('MCP_OAUTH_ROLES_CLAIM');
  return {
    issuer,
    jwksUrl,
    resource,
    scopes,
    principalClaim: value('MCP_OAUTH_PRINCIPAL_CLAIM') ?? 'sub',
    ...(rolesClaim && { rolesClaim }),
  };
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

/** The least authorization server metadata the SDK's metadata builder needs: only the issuer is used. */
export function metadataOf(issuer: string) {
  return { issuer, authorization_endpoint: issuer, token_endpoint: issuer, response_types_supported: ['code'] };
}

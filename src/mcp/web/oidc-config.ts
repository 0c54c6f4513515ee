/**
 * The settings of sign-in to the approvals page through the deployment's OpenID Connect provider, read from MCP_OIDC_*
 * and the claims of MCP_OAUTH_PRINCIPAL_CLAIM and MCP_OAUTH_ROLES_CLAIM, each checked with a message that names the
 * variable and the fix.
 */
import { readFileSync } from 'node:fs';

/** Thrown when the OpenID Connect sign-in settings (MCP_OIDC_*) cannot be used; the message names the variable and the fix. */
export class OidcConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OidcConfigError';
  }
}

/** The OpenID Connect sign-in settings (MCP_OIDC_*, and the claims of MCP_OAUTH_PRINCIPAL_CLAIM / MCP_OAUTH_ROLES_CLAIM). */
export interface OidcConfig {
  /** The provider's issuer identifier; its metadata is at `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  /** This deployment's client at the provider. */
  clientId: string;
  /** The client's secret (client_secret_basic); none: a public client, PKCE only. */
  clientSecret?: string;
  /** Scopes asked for; always includes `openid`. */
  scopes: string[];
  /** The claim that names the principal (`oauth:` + its value). */
  principalClaim: string;
  /** The claim that lists the roles (a string array, or a space-separated string); none: no roles. */
  rolesClaim?: string;
}

const DEFAULT_SCOPES = ['openid', 'profile', 'email'];
// RFC 6749 scope-token: printable ASCII but space, `"` and `\`.
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
/** The hosts where an http issuer is accepted: its requests never leave the machine. */
export const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/**
 * Reads MCP_OIDC_ISSUER (sign-in through OpenID Connect is on when it is set), MCP_OIDC_CLIENT_ID,
 * MCP_OIDC_CLIENT_SECRET or MCP_OIDC_CLIENT_SECRET_FILE (neither: a public client), MCP_OIDC_SCOPES (default
 * `openid profile email`), and the claims of MCP_OAUTH_PRINCIPAL_CLAIM (default `sub`) and MCP_OAUTH_ROLES_CLAIM.
 * Returns undefined when it is off; throws {@link OidcConfigError} for unusable values, for an MCP_OIDC_* variable
 * without MCP_OIDC_ISSUER, and for an issuer other than MCP_OAUTH_ISSUER when both are set.
 */
export function oidcConfigFromEnv(env: NodeJS.ProcessEnv = process.env): OidcConfig | undefined {
  const value = (name: string) => env[name]?.trim() || undefined;
  const issuer = value('MCP_OIDC_ISSUER');
  if (!issuer) {
    const stray = ['MCP_OIDC_CLIENT_ID', 'MCP_OIDC_CLIENT_SECRET', 'MCP_OIDC_CLIENT_SECRET_FILE', 'MCP_OIDC_SCOPES'].find(value);
    if (stray)
      throw new OidcConfigError(
        `${stray} is set but MCP_OIDC_ISSUER is not: set the issuer to turn OpenID Connect sign-in on, or unset ${stray}`,
      );
    return undefined;
  }
  checkIssuer(issuer);
  const oauthIssuer = value('MCP_OAUTH_ISSUER');
  // Both map a subject to `oauth:<claim>`: two issuers would share one name space, and one's "alice" act as the other's.
  if (oauthIssuer && comparable(oauthIssuer) !== comparable(issuer)) {
    throw new OidcConfigError(
      `MCP_OIDC_ISSUER ${issuer} is not MCP_OAUTH_ISSUER ${oauthIssuer}: both name principals oauth:<claim>, so they must be the same issuer`,
    );
  }
  const clientId = value('MCP_OIDC_CLIENT_ID');
  if (!clientId) throw new OidcConfigError('MCP_OIDC_CLIENT_ID is not set: set it to the client id this deployment has at MCP_OIDC_ISSUER');
  const clientSecret = secretFromEnv(value('MCP_OIDC_CLIENT_SECRET'), value('MCP_OIDC_CLIENT_SECRET_FILE'));
  const scopes =
    value('MCP_OIDC_SCOPES')
      ?.split(/[\s,]+/)
      .filter(Boolean) ?? DEFAULT_SCOPES;
  const badScope = scopes.find((scope) => !SCOPE_TOKEN.test(scope));
  if (badScope !== undefined) throw new OidcConfigError(`MCP_OIDC_SCOPES: "${badScope}" is not a scope token`);
  if (!scopes.includes('openid')) {
    throw new OidcConfigError(
      `MCP_OIDC_SCOPES "${scopes.join(' ')}" lacks openid: add it, or unset MCP_OIDC_SCOPES for "openid profile email"`,
    );
  }
  const rolesClaim = value('MCP_OAUTH_ROLES_CLAIM');
  return {
    issuer,
    clientId,
    ...(clientSecret !== undefined && { clientSecret }),
    scopes: [...new Set(scopes)],
    principalClaim: value('MCP_OAUTH_PRINCIPAL_CLAIM') ?? 'sub',
    ...(rolesClaim && { rolesClaim }),
  };
}

/** An issuer identifier (OpenID Connect Discovery §2): https (http on loopback), a host, no query, no fragment. */
function checkIssuer(issuer: string): void {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new OidcConfigError(
      `MCP_OIDC_ISSUER: "${issuer}" is not an absolute URL; write the provider's issuer, e.g. https://id.example.com`,
    );
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.includes(url.hostname))) {
    throw new OidcConfigError(`MCP_OIDC_ISSUER ${issuer} must be https (http only on localhost, 127.0.0.1 or [::1])`);
  }
  if (url.search || url.hash || issuer.includes('#')) {
    throw new OidcConfigError(
      `MCP_OIDC_ISSUER ${issuer} must not have a query or a fragment: write the issuer exactly as the provider names it`,
    );
  }
  if (url.username || url.password) throw new OidcConfigError(`MCP_OIDC_ISSUER must not carry a user name or password`);
}

function comparable(issuer: string): string {
  try {
    return new URL(issuer).href;
  } catch {
    return issuer;
  }
}

function secretFromEnv(inline: string | undefined, file: string | undefined): string | undefined {
  if (inline && file) throw new OidcConfigError('MCP_OIDC_CLIENT_SECRET and MCP_OIDC_CLIENT_SECRET_FILE are both set: keep one');
  if (!file) return inline;
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new OidcConfigError(`MCP_OIDC_CLIENT_SECRET_FILE ${file}: ${(error as Error).message}`);
  }
  if (!text)
    throw new OidcConfigError(
      `MCP_OIDC_CLIENT_SECRET_FILE ${file} is empty: write the client secret in it, or unset it for a public client`,
    );
  return text;
}

/**
 * Sign-in to the approvals page through the deployment's OpenID Connect provider: the authorization code flow with
 * PKCE (S256), `state` and `nonce`, by openid-client. A person signed in this way acts for the principal an
 * MCP_OAUTH_* bearer token with the same claims stands for (`oauth:` + the principal claim), with the roles of the
 * same roles claim. The caller keeps the {@link OidcTransaction} between {@link OidcSignIn.start} and
 * {@link OidcSignIn.finish} (in a short-lived signed cookie); this module handles no cookies.
 */
import { assertValidPrincipal, isValidRole, OAUTH_PRINCIPAL_PREFIX } from '../../core';
import { LOOPBACK_HOSTS, type OidcConfig } from './oidc-config';

/** Why a sign-in did not complete, for the caller's decisions and logs (the message says it to a person). */
export const OidcSignInFailure = {
  /** The provider's metadata could not be read, or a request to it failed: trying again later may work. */
  providerUnavailable: 'provider-unavailable',
  /** The answer does not belong to the sign-in of this transaction (its `state`), or the transaction is incomplete. */
  stateMismatch: 'state-mismatch',
  /** The provider answered with an error: the person cancelled, or the provider refused the request. */
  refused: 'refused',
  /** The provider did not exchange the code: expired, used, or not issued for this PKCE verifier or client. */
  codeRejected: 'code-rejected',
  /** The provider's answer (the callback, the token response, its ID token) failed validation: issuer, audience, nonce, lifetime. */
  invalidResponse: 'invalid-response',
  /** The provider did not name a usable principal in the configured claim. */
  noPrincipal: 'no-principal',
} as const;
export type OidcSignInFailure = (typeof OidcSignInFailure)[keyof typeof OidcSignInFailure];

/**
 * Thrown when a sign-in cannot start or does not complete. Its message is meant for the person signing in: it names
 * the provider and the reason, never a token, a code or a secret. `cause` keeps openid-client's error for the log.
 */
export class OidcSignInError extends Error {
  constructor(
    message: string,
    readonly issuer: string,
    readonly reason: OidcSignInFailure,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'OidcSignInError';
  }
}

/** What the caller keeps between {@link OidcSignIn.start} and {@link OidcSignIn.finish}: secret until the sign-in ends. */
export interface OidcTransaction {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** Who signed in. */
export interface OidcIdentity {
  /** `oauth:` + the principal claim, as for an MCP_OAUTH_* bearer token with the same claims. */
  principal: string;
  /** The roles claim's valid role names; empty without a roles claim. */
  roles: string[];
  /** The `name` claim, when it is one printable line. */
  name?: string;
  /** The `email` claim, when it is one printable line (not necessarily verified). */
  email?: string;
}

/** Seconds any request to the provider may take (openid-client's timeout). */
const REQUEST_TIMEOUT_S = 10;
/** Longest `name` or `email` passed on. */
const MAX_SHOWN_CLAIM = 200;
// Control, format (bidirectional overrides, zero-width) and line/paragraph separators: such a claim is not passed on.
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

type OpenIdClient = typeof import('openid-client', { with: { 'resolution-mode': 'import' } });
type Configuration = InstanceType<OpenIdClient['Configuration']>;
type TokenResponse = Awaited<ReturnType<OpenIdClient['authorizationCodeGrant']>>;

/**
 * openid-client ships ES modules only; this CommonJS module loads it on first use, with an `import()` that TypeScript
 * keeps as it is under `"module": "node16"`. Importing this module loads nothing.
 */
let openIdClient: Promise<OpenIdClient> | undefined;
function loadOpenIdClient(): Promise<OpenIdClient> {
  openIdClient ??= import('openid-client');
  return openIdClient;
}

/**
 * The sign-in of one client at one provider, for one redirect URI. The provider's metadata is discovered on first use
 * and kept (a failed discovery is tried again by the next sign-in).
 */
export class OidcSignIn {
  private configuration?: Promise<Configuration>;

  /** `redirectUri` is the page's callback, registered at the provider, exactly as the authorization request sends it. */
  constructor(
    private readonly config: OidcConfig,
    private readonly redirectUri: string,
  ) {}

  /**
   * A new sign-in: the provider's authorization URL to send the person to, and the transaction to keep until they come
   * back. Throws {@link OidcSignInError} (`provider-unavailable`) when the provider's metadata cannot be read.
   */
  async start(): Promise<{ url: string; transaction: OidcTransaction }> {
    const client = await loadOpenIdClient();
    const configuration = await this.discovered();
    const transaction: OidcTransaction = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      codeVerifier: client.randomPKCECodeVerifier(),
    };
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: this.redirectUri,
      scope: this.config.scopes.join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(transaction.codeVerifier),
      code_challenge_method: 'S256',
      state: transaction.state,
      nonce: transaction.nonce,
    });
    return { url: url.href, transaction };
  }

  /**
   * Completes the sign-in the person came back from: `callbackUrl` is the URL the browser was sent to (only its query
   * is read; the redirect URI sent is the constructor's). Checks the state before anything else, exchanges the code
   * with the transaction's PKCE verifier, and has openid-client validate the ID token (issuer, audience, nonce,
   * lifetime). Claims come from the ID token; the userinfo endpoint is asked when it lacks the principal or roles claim.
   * Throws {@link OidcSignInError}; its reason says which step failed.
   */
  async finish(callbackUrl: URL, transaction: OidcTransaction): Promise<OidcIdentity> {
    const { state, nonce, codeVerifier } = transaction;
    // A callback of another sign-in (another tab, a forged link) must not reach the token endpoint at all.
    if (!isFilled(state) || !isFilled(nonce) || !isFilled(codeVerifier) || callbackUrl.searchParams.get('state') !== state) {
      throw this.failure(OidcSignInFailure.stateMismatch, 'the answer does not belong to this sign-in; start the sign-in again');
    }
    const client = await loadOpenIdClient();
    const configuration = await this.discovered();
    const answer = new URL(this.redirectUri);
    answer.search = callbackUrl.search;
    let tokens: TokenResponse;
    try {
      tokens = await client.authorizationCodeGrant(configuration, answer, {
        expectedState: state,
        expectedNonce: nonce,
        pkceCodeVerifier: codeVerifier,
        idTokenExpected: true,
      });
    } catch (error) {
      throw this.rejection(client, error);
    }
    let claims: Record<string, unknown> = { ...tokens.claims() };
    const { principalClaim, rolesClaim } = this.config;
    if (claims[principalClaim] === undefined || (rolesClaim !== undefined && claims[rolesClaim] === undefined)) {
      claims = { ...(await this.userInfo(client, configuration, tokens)), ...claims };
    }
    return {
      principal: this.principalOf(claims),
      roles: rolesOf(claims, rolesClaim),
      ...shownClaim(claims, 'name'),
      ...shownClaim(claims, 'email'),
    };
  }

  /** The provider's metadata, discovered once; a failure is not kept. */
  private discovered(): Promise<Configuration> {
    this.configuration ??= (async () => {
      const client = await loadOpenIdClient();
      const { issuer, clientId, clientSecret } = this.config;
      const url = new URL(issuer);
      const loopbackHttp = url.protocol === 'http:' && LOOPBACK_HOSTS.includes(url.hostname);
      try {
        return await client.discovery(
          url,
          clientId,
          undefined,
          clientSecret === undefined ? client.None() : client.ClientSecretBasic(clientSecret),
          // oauth4webapi refuses http outright; the config check lets http through for loopback issuers only.
          { timeout: REQUEST_TIMEOUT_S, ...(loopbackHttp && { execute: [client.allowInsecureRequests] }) },
        );
      } catch (error) {
        throw this.failure(
          OidcSignInFailure.providerUnavailable,
          `the provider's metadata could not be read (${describeUnavailable(client, error)}); try again later`,
          error,
        );
      }
    })();
    this.configuration.catch(() => (this.configuration = undefined));
    return this.configuration;
  }

  /** The userinfo endpoint's claims (whose `sub` must be the ID token's), or none when the provider has no endpoint. */
  private async userInfo(client: OpenIdClient, configuration: Configuration, tokens: TokenResponse): Promise<Record<string, unknown>> {
    if (!configuration.serverMetadata().userinfo_endpoint) return {};
    try {
      // The userinfo response must be about the ID token's subject (OpenID Connect Core §5.3.2).
      return await client.fetchUserInfo(configuration, tokens.access_token, tokens.claims()?.sub ?? client.skipSubjectCheck);
    } catch (error) {
      throw this.rejection(client, error);
    }
  }

  private principalOf(claims: Record<string, unknown>): string {
    const claim = this.config.principalClaim;
    const value = claims[claim];
    if (typeof value !== 'string') {
      throw this.failure(OidcSignInFailure.noPrincipal, `the provider did not name you: its answer has no text in the ${claim} claim`);
    }
    // The name space of OAuth bearer tokens: a person signed in here is the principal their access token stands for.
    const principal = `${OAUTH_PRINCIPAL_PREFIX}${value}`;
    try {
      assertValidPrincipal(principal);
    } catch {
      throw this.failure(
        OidcSignInFailure.noPrincipal,
        `the ${claim} claim is not a usable name: 1-${200 - OAUTH_PRINCIPAL_PREFIX.length} characters of letters, digits and . _ : @ + -`,
      );
    }
    return principal;
  }

  /** The error for what openid-client threw while exchanging the code or reading userinfo; decided by class and code. */
  private rejection(client: OpenIdClient, error: unknown): OidcSignInError {
    if (error instanceof client.AuthorizationResponseError) {
      return this.failure(
        OidcSignInFailure.refused,
        `the provider refused it (${providerWords(error.error, error.error_description)})`,
        error,
      );
    }
    if (
      error instanceof client.WWWAuthenticateChallengeError ||
      (error instanceof client.ResponseBodyError && error.error === 'invalid_client')
    ) {
      return this.failure(OidcSignInFailure.refused, "the provider did not accept this server's client id or secret", error);
    }
    if (error instanceof client.ResponseBodyError) {
      // invalid_grant is the token endpoint's word for a code that is expired, used, or not this verifier's (RFC 7636 §4.6).
      return error.error === 'invalid_grant'
        ? this.failure(
            OidcSignInFailure.codeRejected,
            `the provider did not accept the sign-in's code (${providerWords(error.error, error.error_description)}); start the sign-in again`,
            error,
          )
        : this.failure(
            OidcSignInFailure.refused,
            `the provider refused it (${providerWords(error.error, error.error_description)})`,
            error,
          );
    }
    if (error instanceof client.ClientError) {
      switch (error.code) {
        case 'OAUTH_JWT_CLAIM_COMPARISON_FAILED':
        case 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED':
        case 'OAUTH_INVALID_RESPONSE':
        case 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED':
        case 'OAUTH_PARSE_ERROR':
          return this.failure(
            OidcSignInFailure.invalidResponse,
            error.code === 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED'
              ? "the provider's ID token is expired or not yet valid (check this server's clock)"
              : "the provider's answer is not valid for this sign-in",
            error,
          );
      }
    }
    return this.failure(
      OidcSignInFailure.providerUnavailable,
      `the provider could not be asked (${describeUnavailable(client, error)}); try again later`,
      error,
    );
  }

  private failure(reason: OidcSignInFailure, why: string, cause?: unknown): OidcSignInError {
    return new OidcSignInError(`The sign-in with ${this.config.issuer} did not complete: ${why}`, this.config.issuer, reason, { cause });
  }
}

/** Why the provider could not be asked, in words that hold no response body: by openid-client's code. */
function describeUnavailable(client: OpenIdClient, error: unknown): string {
  if (error instanceof client.ClientError) {
    switch (error.code) {
      case 'OAUTH_TIMEOUT':
        return `no answer within ${REQUEST_TIMEOUT_S} s`;
      case 'OAUTH_RESPONSE_IS_NOT_CONFORM':
        return 'unexpected HTTP status';
      case 'OAUTH_RESPONSE_IS_NOT_JSON':
        return 'the answer is not JSON';
      case 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED':
        return 'the metadata names another issuer';
      case 'OAUTH_HTTP_REQUEST_FORBIDDEN':
        return 'an endpoint is not https';
    }
  }
  if (error instanceof client.ResponseBodyError) return `HTTP ${error.status}`;
  if (error instanceof TypeError) return 'the connection failed';
  return 'an unexpected answer';
}

/** An OAuth error code and description as the provider wrote them, when they are short printable ASCII (RFC 6749 §5.2). */
function providerWords(code: string, description: string | undefined): string {
  const printable = (text: string | undefined) => text !== undefined && text.length <= MAX_SHOWN_CLAIM && /^[\x20-\x7E]+$/.test(text);
  const shownCode = printable(code) ? code : 'an error';
  return printable(description) ? `${shownCode}: ${description}` : shownCode;
}

/** The roles the claim lists (an array of names, or one space-separated string); names that cannot be queried are left out. */
function rolesOf(claims: Record<string, unknown>, claim: string | undefined): string[] {
  if (!claim) return [];
  const value = claims[claim];
  const listed = Array.isArray(value) ? value : typeof value === 'string' ? value.split(' ') : [];
  return [...new Set(listed.filter(isValidRole))];
}

/** `{ [claim]: value }` when the claim is one line of printable text a page can show, else nothing. */
function shownClaim(claims: Record<string, unknown>, claim: 'name' | 'email'): Partial<Record<'name' | 'email', string>> {
  const value = claims[claim];
  if (typeof value !== 'string') return {};
  const text = value.trim();
  return text && text.length <= MAX_SHOWN_CLAIM && !UNPRINTABLE.test(text) ? { [claim]: text } : {};
}

function isFilled(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

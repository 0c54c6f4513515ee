/**
 * OidcSignIn against a real OpenID Connect provider (oidc-provider, test/helpers/oidc-provider.mjs), driven through the
 * provider's login and consent pages without a browser (fetch, a cookie jar, redirects followed by hand).
 *
 * The sign-in runs in a child process (`node --import tsx`, test/helpers/oidc-sign-in-host.ts): jest runs the tests as
 * CommonJS, where ts-jest turns the product module's `import('openid-client')` into a `require` of an ES-only package
 * that jest.config.js does not transform, and jest's own require(esm) needs `--experimental-vm-modules` for the whole
 * suite. In the child the `import()` is Node's own, as in the server. This file imports the product module only for
 * its error class: importing it loads nothing (openid-client is loaded on first use).
 */
import { freePort } from '../helpers/dev-server';
import { signInWithoutBrowser, startOidcProvider, startOidcSignInHost, type OidcSignInHost, type TestOidcProvider } from '../helpers/oidc';
import type { OidcConfig } from '../../src/mcp/web/oidc-config';
import { OidcSignInError } from '../../src/mcp/web/oidc-sign-in';

/** The page's callback: never fetched, the sign-in stops at the provider's redirect to it. */
const REDIRECT_URI = 'http://127.0.0.1:9/approvals/oidc/callback';
const SECRET = 'a-client-secret-of-this-test';
const DORA = { sub: 'dora', name: 'Dora Approver', email: 'dora@example.com', roles: ['ap-approver', 'not a role!'] };

let provider: TestOidcProvider;
const hosts: OidcSignInHost[] = [];

beforeAll(async () => {
  provider = await startOidcProvider({
    clients: [
      { client_id: 'approvals', client_secret: SECRET, redirect_uris: [REDIRECT_URI] },
      { client_id: 'approvals-public', token_endpoint_auth_method: 'none', redirect_uris: [REDIRECT_URI] },
    ],
    accounts: { dora: DORA },
  });
});

afterAll(async () => {
  await Promise.all(hosts.map((host) => host.stop()));
  await provider?.stop();
});

/** An OidcSignIn (in its host process) for `issuer` with the settings oidcConfigFromEnv gives by default, roles from `roles`. */
function signIn(issuer: string, config: Partial<OidcConfig> = {}): OidcSignInHost {
  const host = startOidcSignInHost(
    {
      issuer,
      clientId: 'approvals',
      clientSecret: SECRET,
      scopes: ['openid', 'profile', 'email'],
      principalClaim: 'sub',
      rolesClaim: 'roles',
      ...config,
    },
    REDIRECT_URI,
  );
  hosts.push(host);
  return host;
}

/** The reason of the {@link OidcSignInError} `attempt` rejects with; fails the test for any other outcome. */
async function refusal(attempt: Promise<unknown>): Promise<OidcSignInError> {
  const error = await attempt.then(
    (value) => {
      throw new Error(`the sign-in completed: ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(OidcSignInError);
  return error as OidcSignInError;
}

test('oidc sign-in: the code flow with PKCE ends in the principal and roles an OAuth token with the same claims has', async () => {
  const host = signIn(provider.issuer);
  const { url, transaction } = await host.start();
  const asked = new URL(url).searchParams;
  expect(Object.fromEntries(asked)).toMatchObject({
    client_id: 'approvals',
    response_type: 'code',
    redirect_uri: REDIRECT_URI,
    scope: 'openid profile email',
    code_challenge_method: 'S256',
    state: transaction.state,
    nonce: transaction.nonce,
  });
  expect(asked.get('code_challenge')).toMatch(/^[\w-]{43}$/);
  expect(url).not.toContain(transaction.codeVerifier);
  expect(url).not.toContain(SECRET);

  const callback = await signInWithoutBrowser(url, { login: 'dora', redirectUri: REDIRECT_URI });
  expect(callback.searchParams.get('state')).toBe(transaction.state);
  expect(callback.searchParams.get('code')).toBeTruthy();

  // The invalid role name is left out, as the bearer-token verifier leaves it out.
  expect(await host.finish(callback, transaction)).toEqual({
    principal: 'oauth:dora',
    roles: ['ap-approver'],
    name: 'Dora Approver',
    email: 'dora@example.com',
  });
});

test('oidc sign-in: a public client signs in with PKCE alone', async () => {
  const host = signIn(provider.issuer, { clientId: 'approvals-public', clientSecret: undefined });
  const { url, transaction } = await host.start();
  const callback = await signInWithoutBrowser(url, { login: 'dora', redirectUri: REDIRECT_URI });
  expect(await host.finish(callback, transaction)).toMatchObject({ principal: 'oauth:dora', roles: ['ap-approver'] });
});

test('oidc sign-in: a callback with another state is refused before its code is used', async () => {
  const host = signIn(provider.issuer);
  const { url, transaction } = await host.start();
  const callback = await signInWithoutBrowser(url, { login: 'dora', redirectUri: REDIRECT_URI });
  const forged = new URL(callback);
  forged.searchParams.set('state', `${transaction.state}x`);

  const error = await refusal(host.finish(forged, transaction));
  expect(error.reason).toBe('state-mismatch');
  expect(error.message).toBe(
    `The sign-in with ${provider.issuer} did not complete: the answer does not belong to this sign-in; start the sign-in again`,
  );
  expect(error.message).not.toContain(callback.searchParams.get('code'));
  // The code was not spent on the refused callback: the genuine one still completes.
  expect((await host.finish(callback, transaction)).principal).toBe('oauth:dora');
});

test('oidc sign-in: a transaction with another code verifier is refused by the provider (PKCE)', async () => {
  const host = signIn(provider.issuer);
  const first = await host.start();
  const second = await host.start();
  const callback = await signInWithoutBrowser(first.url, { login: 'dora', redirectUri: REDIRECT_URI });

  const error = await refusal(host.finish(callback, { ...first.transaction, codeVerifier: second.transaction.codeVerifier }));
  expect(error.reason).toBe('code-rejected');
  expect(error.message).toMatch(
    new RegExp(`^The sign-in with ${provider.issuer} did not complete: the provider did not accept the sign-in's code`),
  );
  expect(error.message).not.toContain(second.transaction.codeVerifier);
});

test("oidc sign-in: a transaction with another nonce is refused (the ID token is not this sign-in's)", async () => {
  const host = signIn(provider.issuer);
  const first = await host.start();
  const second = await host.start();
  const callback = await signInWithoutBrowser(first.url, { login: 'dora', redirectUri: REDIRECT_URI });

  const error = await refusal(host.finish(callback, { ...first.transaction, nonce: second.transaction.nonce }));
  expect(error.reason).toBe('invalid-response');
});

test('oidc sign-in: a person who cancels at the provider is refused with its error code', async () => {
  const host = signIn(provider.issuer);
  const { url, transaction } = await host.start();
  const cancelled = await signInWithoutBrowser(url, { login: 'dora', redirectUri: REDIRECT_URI, cancel: true });
  expect(cancelled.searchParams.get('error')).toBe('access_denied');

  const error = await refusal(host.finish(cancelled, transaction));
  expect(error.reason).toBe('refused');
  expect(error.message).toBe(
    `The sign-in with ${provider.issuer} did not complete: the provider refused it (access_denied: End-User aborted interaction)`,
  );
});

test('oidc sign-in: claims missing from the ID token are read from the userinfo endpoint', async () => {
  // oidc-provider's default: claims granted by a scope go to the userinfo endpoint only.
  const conforming = await startOidcProvider({
    clients: [{ client_id: 'approvals', client_secret: SECRET, redirect_uris: [REDIRECT_URI] }],
    accounts: { dora: DORA },
    conformIdTokenClaims: true,
  });
  try {
    const host = signIn(conforming.issuer, { principalClaim: 'email' });
    const { url, transaction } = await host.start();
    const callback = await signInWithoutBrowser(url, { login: 'dora', redirectUri: REDIRECT_URI });
    expect(await host.finish(callback, transaction)).toEqual({
      principal: 'oauth:dora@example.com',
      roles: ['ap-approver'],
      name: 'Dora Approver',
      email: 'dora@example.com',
    });
  } finally {
    await conforming.stop();
  }
});

test('oidc sign-in: a provider that cannot be reached is retried by the next sign-in (a failed discovery is not kept)', async () => {
  const port = await freePort();
  const issuer = `http://localhost:${port}`;
  const host = signIn(issuer);
  const error = await refusal(host.start());
  expect(error.reason).toBe('provider-unavailable');
  expect(error.message).toBe(
    `The sign-in with ${issuer} did not complete: the provider's metadata could not be read (the connection failed); try again later`,
  );

  const late = await startOidcProvider({
    clients: [{ client_id: 'approvals', client_secret: SECRET, redirect_uris: [REDIRECT_URI] }],
    accounts: { dora: DORA },
    port,
  });
  try {
    const { url } = await host.start();
    expect(url.startsWith(`${issuer}/auth?`)).toBe(true);
  } finally {
    await late.stop();
  }
});

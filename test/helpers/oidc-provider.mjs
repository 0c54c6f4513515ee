/**
 * A local OpenID Connect provider for tests (`oidc-provider`), run as a child process:
 *
 *   node test/helpers/oidc-provider.mjs [--port N] --clients '<json>' --accounts '<json>' [--conform-id-token-claims]
 *
 * (or OIDC_PROVIDER_PORT, OIDC_PROVIDER_CLIENTS, OIDC_PROVIDER_ACCOUNTS). It listens on 127.0.0.1 (a free port unless
 * given) as the issuer `http://localhost:<port>`, prints one line `{"issuer":"http://localhost:PORT"}` on stdout when it
 * listens (everything else goes to stderr), and exits on SIGTERM or SIGINT.
 *
 * - clients: one client or an array, e.g. `{"client_id":"bridge","client_secret":"s3cret","redirect_uris":["http://…/cb"]}`,
 *   or a public one with `"token_endpoint_auth_method":"none"` and no secret. PKCE (S256) is required of every client.
 * - accounts: login name → claims, e.g. `{"dora":{"sub":"dora","email":"dora@example.com","roles":["ap-approver"]}}`;
 *   `sub` defaults to the login name. Every claim of the account goes into the ID token (`conformIdTokenClaims: false`)
 *   when its scope was granted: `sub` with `openid`, `email` and `email_verified` with `email`, every other claim (name,
 *   roles, …) with `profile`. `--conform-id-token-claims` leaves the scope-granted claims to the userinfo endpoint only.
 *
 * The provider's built-in development interactions let a real browser (or a test's fetch) sign in, in two pages:
 * 1. Login page, heading "Sign-in": a form (POST to /interaction/<uid>) with a hidden `prompt=login`, a text input
 *    `name="login"` (placeholder "Enter any login"), a password input `name="password"` (placeholder "and password";
 *    any non-empty password is accepted), and a submit button "Sign-in". The login must be a key of the accounts.
 * 2. Consent page, heading "Authorize": a form (POST to /interaction/<uid>) with a hidden `prompt=consent` and a submit
 *    button "Continue". Both pages also have a "[ Cancel ]" link (the client then gets `error=access_denied`).
 * After the consent the browser is redirected to the client's redirect URI with `code`, `state` and `iss`.
 *
 * Nothing here reaches the internet: the pages' web-font `@import` is cut out, and the provider's own outgoing fetch
 * (client key sets, request objects, sector identifiers: none configured) refuses every request.
 */
/* global console, process -- Node's, in this ES module (the lint config gives Node globals to CommonJS .js files only) */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import http from 'node:http';
import { parseArgs } from 'node:util';
import Provider from 'oidc-provider';

// oidc-provider writes its notices with console.info: stdout carries the one ready line only.
// eslint-disable-next-line no-console -- this redirects the console, it does not write to it
console.info = console.log = (...args) => console.error(...args);

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.OIDC_PROVIDER_PORT },
    clients: { type: 'string', default: process.env.OIDC_PROVIDER_CLIENTS },
    accounts: { type: 'string', default: process.env.OIDC_PROVIDER_ACCOUNTS },
    'conform-id-token-claims': { type: 'boolean', default: false },
  },
});

function json(name, text) {
  if (!text) throw new Error(`--${name} (or OIDC_PROVIDER_${name.toUpperCase()}) is required`);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`--${name} is not JSON: ${error.message}`, { cause: error });
  }
}

const clients = [json('clients', values.clients)].flat();
/** @type {Record<string, Record<string, unknown>>} */
const accounts = json('accounts', values.accounts);

const STANDARD_PROFILE = ['name', 'family_name', 'given_name', 'middle_name', 'nickname', 'preferred_username', 'profile'];
const OWN_SCOPES = new Set(['sub', 'email', 'email_verified']);
const extraClaims = [...new Set(Object.values(accounts).flatMap((claims) => Object.keys(claims)))].filter(
  (claim) => !OWN_SCOPES.has(claim) && !STANDARD_PROFILE.includes(claim),
);

const server = http.createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(Number(values.port ?? 0), '127.0.0.1', resolve);
});
const issuer = `http://localhost:${server.address().port}`;

const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });

const provider = new Provider(issuer, {
  clients: clients.map((client) => ({
    grant_types: ['authorization_code'],
    response_types: ['code'],
    ...client,
  })),
  async findAccount(_ctx, id) {
    const claims = Object.hasOwn(accounts, id) ? accounts[id] : undefined;
    if (!claims) return undefined;
    return { accountId: id, claims: async () => ({ sub: id, ...claims }) };
  },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: [...STANDARD_PROFILE, ...extraClaims],
  },
  conformIdTokenClaims: values['conform-id-token-claims'],
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => true },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  jwks: { keys: [{ ...signingKey, kid: 'test-key', alg: 'RS256', use: 'sig' }] },
  async fetch(url) {
    throw new Error(`this test provider makes no outgoing requests (asked for ${url})`);
  },
});

// The built-in pages import a web font from Google; a test browser must not reach out for it.
provider.use(async (ctx, next) => {
  await next();
  if (typeof ctx.body === 'string' && ctx.response.is('html')) {
    ctx.body = ctx.body.replace(/@import url\(https?:[^)]*\);?/g, '');
  }
});

server.on('request', provider.callback());
process.stdout.write(`${JSON.stringify({ issuer })}\n`);

function stop() {
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

/** oidcConfigFromEnv: the MCP_OIDC_* variables, and the claims shared with MCP_OAUTH_* bearer tokens. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OidcConfigError, oidcConfigFromEnv } from '../../src/mcp/web/oidc-config';

const ISSUER = 'https://id.example.com';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'oidc-config-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The error `read` throws, which the test expects to be an {@link OidcConfigError}. */
function refusal(read: () => unknown): OidcConfigError {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(OidcConfigError);
    return error as OidcConfigError;
  }
  throw new Error('oidcConfigFromEnv accepted the configuration');
}

test('oidc config: off without MCP_OIDC_ISSUER', () => {
  expect(oidcConfigFromEnv({})).toBeUndefined();
  expect(oidcConfigFromEnv({ MCP_OIDC_ISSUER: '  ', MCP_OAUTH_PRINCIPAL_CLAIM: 'email' })).toBeUndefined();
});

test('oidc config: a confidential client with the default scopes and the OAuth claims', () => {
  expect(
    oidcConfigFromEnv({
      MCP_OIDC_ISSUER: ISSUER,
      MCP_OIDC_CLIENT_ID: 'approvals',
      MCP_OIDC_CLIENT_SECRET: 's3cret',
      MCP_OAUTH_PRINCIPAL_CLAIM: 'preferred_username',
      MCP_OAUTH_ROLES_CLAIM: 'roles',
    }),
  ).toEqual({
    issuer: ISSUER,
    clientId: 'approvals',
    clientSecret: 's3cret',
    scopes: ['openid', 'profile', 'email'],
    principalClaim: 'preferred_username',
    rolesClaim: 'roles',
  });
});

test('oidc config: a public client (no secret) on a loopback http issuer, principal claim sub by default', () => {
  for (const issuer of ['http://localhost:8080', 'http://127.0.0.1:8080/realms/dev', 'http://[::1]:8080']) {
    expect(oidcConfigFromEnv({ MCP_OIDC_ISSUER: issuer, MCP_OIDC_CLIENT_ID: 'approvals', MCP_OIDC_SCOPES: 'openid,roles email' })).toEqual({
      issuer,
      clientId: 'approvals',
      scopes: ['openid', 'roles', 'email'],
      principalClaim: 'sub',
    });
  }
});

test('oidc config: the secret may come from MCP_OIDC_CLIENT_SECRET_FILE, not from both', () => {
  const file = path.join(dir, 'secret');
  writeFileSync(file, 's3cret\n');
  const env = { MCP_OIDC_ISSUER: ISSUER, MCP_OIDC_CLIENT_ID: 'approvals', MCP_OIDC_CLIENT_SECRET_FILE: file };
  expect(oidcConfigFromEnv(env)?.clientSecret).toBe('s3cret');
  expect(refusal(() => oidcConfigFromEnv({ ...env, MCP_OIDC_CLIENT_SECRET: 'other' })).message).toBe(
    'MCP_OIDC_CLIENT_SECRET and MCP_OIDC_CLIENT_SECRET_FILE are both set: keep one',
  );
  expect(refusal(() => oidcConfigFromEnv({ ...env, MCP_OIDC_CLIENT_SECRET_FILE: path.join(dir, 'missing') })).message).toMatch(
    /^MCP_OIDC_CLIENT_SECRET_FILE .*missing: ENOENT/,
  );
});

test('oidc config: refuses an issuer without MCP_OIDC_CLIENT_ID, naming the variable', () => {
  expect(refusal(() => oidcConfigFromEnv({ MCP_OIDC_ISSUER: ISSUER })).message).toBe(
    'MCP_OIDC_CLIENT_ID is not set: set it to the client id this deployment has at MCP_OIDC_ISSUER',
  );
});

test('oidc config: refuses an http issuer that is not loopback, and issuers that are not plain URLs', () => {
  const client = { MCP_OIDC_CLIENT_ID: 'approvals' };
  expect(refusal(() => oidcConfigFromEnv({ ...client, MCP_OIDC_ISSUER: 'http://id.example.com' })).message).toBe(
    'MCP_OIDC_ISSUER http://id.example.com must be https (http only on localhost, 127.0.0.1 or [::1])',
  );
  expect(refusal(() => oidcConfigFromEnv({ ...client, MCP_OIDC_ISSUER: 'http://localhost.example.com' })).message).toMatch(/must be https/);
  expect(refusal(() => oidcConfigFromEnv({ ...client, MCP_OIDC_ISSUER: 'id.example.com' })).message).toMatch(/is not an absolute URL/);
  expect(refusal(() => oidcConfigFromEnv({ ...client, MCP_OIDC_ISSUER: `${ISSUER}?tenant=a` })).message).toMatch(/must not have a query/);
});

test('oidc config: refuses a stray MCP_OIDC_* variable without MCP_OIDC_ISSUER', () => {
  expect(refusal(() => oidcConfigFromEnv({ MCP_OIDC_CLIENT_ID: 'approvals' })).message).toBe(
    'MCP_OIDC_CLIENT_ID is set but MCP_OIDC_ISSUER is not: set the issuer to turn OpenID Connect sign-in on, or unset MCP_OIDC_CLIENT_ID',
  );
  expect(refusal(() => oidcConfigFromEnv({ MCP_OIDC_SCOPES: 'openid' })).message).toMatch(
    /^MCP_OIDC_SCOPES is set but MCP_OIDC_ISSUER is not/,
  );
});

test('oidc config: refuses scopes without openid, and scopes that are not scope tokens', () => {
  const env = { MCP_OIDC_ISSUER: ISSUER, MCP_OIDC_CLIENT_ID: 'approvals' };
  expect(refusal(() => oidcConfigFromEnv({ ...env, MCP_OIDC_SCOPES: 'profile email' })).message).toBe(
    'MCP_OIDC_SCOPES "profile email" lacks openid: add it, or unset MCP_OIDC_SCOPES for "openid profile email"',
  );
  expect(refusal(() => oidcConfigFromEnv({ ...env, MCP_OIDC_SCOPES: 'openid "roles"' })).message).toBe(
    'MCP_OIDC_SCOPES: ""roles"" is not a scope token',
  );
});

test('oidc config: refuses an issuer other than MCP_OAUTH_ISSUER (one oauth: name space, one issuer)', () => {
  const env = { MCP_OIDC_ISSUER: ISSUER, MCP_OIDC_CLIENT_ID: 'approvals' };
  expect(oidcConfigFromEnv({ ...env, MCP_OAUTH_ISSUER: `${ISSUER}/` })?.issuer).toBe(ISSUER);
  expect(refusal(() => oidcConfigFromEnv({ ...env, MCP_OAUTH_ISSUER: 'https://other.example.com' })).message).toBe(
    'MCP_OIDC_ISSUER https://id.example.com is not MCP_OAUTH_ISSUER https://other.example.com: both name principals oauth:<claim>, so they must be the same issuer',
  );
});

/**
 * The approvals page's server-side pieces that need no Temporal: its settings, the session cookie and its write checks,
 * one-time uses, sign-in attempts, one-time sign-in links, passkey keys as COSE, and the question's version.
 */
import { generateKeyPairSync } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApproversDirectory } from '../../src/records/directory';
import type { AddressedInput } from '../../src/contract/approvals';
import { MailSignIn, SIGN_IN_LINK_PARAM, type Mailer } from '../../src/mcp/web/mail-sign-in';
import { OneTimeUses } from '../../src/approvals/one-time-uses';
import { approvalsPageConfigFromEnv, clientAddress, type ApprovalsPageConfig } from '../../src/mcp/web/page-config';
import { coseOf } from '../../src/mcp/web/passkey-sign-in';
import { versionOf } from '../../src/mcp/web/question-view';
import { SignInAttempts } from '../../src/mcp/web/sign-in-attempts';
import { WebSessions } from '../../src/mcp/web/web-session';
import { decodeCredentialPublicKey } from '@simplewebauthn/server/helpers';

const KEY = Buffer.from('k'.repeat(40));
const CONFIG: ApprovalsPageConfig = {
  origin: 'https://approvals.example.com',
  secureCookies: true,
  sessionMs: 3_600_000,
  signInLinkMs: 900_000,
  proxyHops: 0,
};

/** A response that keeps the headers set on it. */
function response(): ServerResponse & { headers: Record<string, unknown> } {
  const headers: Record<string, unknown> = {};
  return {
    headers,
    getHeader: (name: string) => headers[name],
    setHeader: (name: string, value: unknown) => {
      headers[name] = value;
    },
  } as unknown as ServerResponse & { headers: Record<string, unknown> };
}

function request(headers: Record<string, string>): IncomingMessage {
  return { headers } as unknown as IncomingMessage;
}

describe('approvalsPageConfigFromEnv', () => {
  test('takes MCP_PUBLIC_URL, else the passkey origin; none: no page', () => {
    expect(approvalsPageConfigFromEnv({})).toBeUndefined();
    expect(approvalsPageConfigFromEnv({ MCP_PUBLIC_URL: 'https://approvals.example.com' })).toMatchObject({
      origin: 'https://approvals.example.com',
      secureCookies: true,
    });
    expect(approvalsPageConfigFromEnv({ MCP_PASSKEY_ORIGIN: 'http://localhost:3000' })).toMatchObject({
      origin: 'http://localhost:3000',
      secureCookies: false,
    });
  });

  test('refuses plain http off localhost, an IP address, a path, and lengths out of range, naming the variable', () => {
    expect(() => approvalsPageConfigFromEnv({ MCP_PUBLIC_URL: 'http://approvals.example.com' })).toThrow(/MCP_PUBLIC_URL must be https/);
    expect(() => approvalsPageConfigFromEnv({ MCP_PUBLIC_URL: 'https://10.0.0.1' })).toThrow(/not an IP address/);
    expect(() => approvalsPageConfigFromEnv({ MCP_PUBLIC_URL: 'https://example.com/approvals' })).toThrow(/no path/);
    expect(() => approvalsPageConfigFromEnv({ MCP_PUBLIC_URL: 'https://example.com', MCP_WEB_SESSION_MS: '1000' })).toThrow(
      /MCP_WEB_SESSION_MS must be between/,
    );
  });
});

test('clientAddress: the connection, or with proxies in front, the address the outermost of them saw', () => {
  const req = (forwarded?: string) =>
    ({ socket: { remoteAddress: '10.0.0.9' }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } }) as never;
  expect(clientAddress(req('203.0.113.7'), 0)).toBe('10.0.0.9');
  expect(clientAddress(req('198.51.100.1, 203.0.113.7'), 1)).toBe('203.0.113.7');
  expect(clientAddress(req('198.51.100.1, 203.0.113.7, 10.0.0.2'), 2)).toBe('203.0.113.7');
  // A header with fewer entries than proxies was not written by them: the connection's address counts.
  expect(clientAddress(req(), 1)).toBe('10.0.0.9');
});

describe('WebSessions', () => {
  const sessions = new WebSessions(KEY, CONFIG);

  test('a session cookie is __Host-, HttpOnly, SameSite=Strict and Secure, and reads back as the person it was made for', () => {
    const res = response();
    const made = sessions.start(res, { principal: 'carol-1', person: 'carol', roles: ['ap-approver'], via: 'passkey' });
    const [cookie] = res.headers['set-cookie'] as string[];
    expect(cookie).toMatch(/^__Host-approvals-session=[^;]+; Path=\/; Max-Age=3600; HttpOnly; SameSite=Strict; Secure$/);
    const read = sessions.read(request({ cookie: cookie.split(';')[0] }));
    expect(read).toEqual(made);
  });

  test('an altered, foreign-keyed or expired cookie is no session', () => {
    const res = response();
    const made = sessions.start(res, { principal: 'carol-1', person: 'carol', roles: [], via: 'link' }, Date.now());
    const value = (res.headers['set-cookie'] as string[])[0].split(';')[0];
    const [name, token] = value.split('=');
    expect(sessions.read(request({ cookie: `${name}=${token.slice(0, -3)}abc` }))).toBeUndefined();
    expect(new WebSessions(Buffer.from('x'.repeat(40)), CONFIG).read(request({ cookie: value }))).toBeUndefined();
    expect(sessions.read(request({ cookie: value }), made.expiresAt + 1)).toBeUndefined();
  });

  test('a write counts only from the page origin, same-origin fetch metadata, and the session CSRF token', () => {
    const made = sessions.start(response(), { principal: 'dave-1', person: 'dave', roles: [], via: 'link' });
    const ok = { origin: CONFIG.origin, 'x-csrf-token': made.csrf };
    expect(sessions.writeRefusal(request(ok), made)).toBeUndefined();
    expect(sessions.writeRefusal(request({ ...ok, origin: 'https://evil.example' }), made)).toBe('origin');
    expect(sessions.writeRefusal(request({ ...ok, 'sec-fetch-site': 'cross-site' }), made)).toBe('origin');
    expect(sessions.writeRefusal(request({ origin: CONFIG.origin }), made)).toBe('csrf');
    expect(sessions.writeRefusal(request({ ...ok, 'x-csrf-token': 'wrong' }), made)).toBe('csrf');
  });

  test('on localhost over http the cookie is not Secure', () => {
    const local = new WebSessions(KEY, { ...CONFIG, origin: 'http://localhost:3000', secureCookies: false });
    const res = response();
    local.start(res, { principal: 'p', person: 'p', roles: [], via: 'oidc' });
    expect((res.headers['set-cookie'] as string[])[0]).toMatch(/^approvals-session=[^;]+; Path=\/approvals; .*SameSite=Strict$/);
  });
});

test('OneTimeUses: the first use is taken, a repeat refused while it is marked, and taken again once the mark is over', async () => {
  const uses = new OneTimeUses();
  const now = Date.now();
  expect(await uses.take('a', now + 1_000, now)).toBe(true);
  expect(await uses.take('a', now + 1_000, now)).toBe(false);
  expect(await uses.take('b', now + 1_000, now)).toBe(true);
  expect(await uses.take('a', now + 5_000, now + 2_000)).toBe(true);
});

test('OneTimeUses: a shared state that cannot answer refuses the use instead of counting locally', async () => {
  const uses = new OneTimeUses({ useOnce: () => Promise.reject(new Error('down')) } as never);
  await expect(uses.take('a', Date.now() + 1_000)).rejects.toThrow(/cannot be reached/);
});

test('SignInAttempts: a key may try its burst, then waits; another key is not held up', async () => {
  const attempts = new SignInAttempts();
  const now = Date.now();
  const limit = { burst: 3, perMinute: 1 };
  const tries = [];
  for (let i = 0; i < 4; i++) tries.push(await attempts.allow([{ key: 'address:1', limit }], now));
  expect(tries).toEqual([true, true, true, false]);
  expect(await attempts.allow([{ key: 'address:2', limit }], now)).toBe(true);
  expect(await attempts.allow([{ key: 'address:1', limit }], now + 61_000)).toBe(true);
});

describe('MailSignIn', () => {
  const directory = ApproversDirectory.of({
    people: [
      { name: 'dave', email: 'dave@example.com', signInByMail: true },
      { name: 'erin', email: 'erin@example.com' },
    ],
  });

  /** A sign-in by mail whose mail is kept in `sent`. */
  function mailSignIn(sent: { to: string; text: string }[]): MailSignIn {
    const mailer: Mailer = { sendMail: async (mail) => void sent.push(mail), close: () => undefined };
    return new MailSignIn(KEY, { origin: CONFIG.origin, linkMs: 60_000 }, directory, new OneTimeUses(), { from: 'a@example.com', mailer });
  }

  test('a link works once, and not past its life', async () => {
    const sent: { to: string; text: string }[] = [];
    const signIn = mailSignIn(sent);
    const now = Date.now();
    signIn.request('DAVE@example.com', now);
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent.map((mail) => mail.to)).toEqual(['dave@example.com']);
    const token = new URL(/(https:\S+)/.exec(sent[0].text)![1]).searchParams.get(SIGN_IN_LINK_PARAM)!;
    await expect(signIn.redeem(token, now + 61_000)).rejects.toThrow(/expired or was used/);
    expect((await signIn.redeem(token, now + 1_000)).name).toBe('dave');
    await expect(signIn.redeem(token, now + 2_000)).rejects.toThrow(/expired or was used/);
  });

  test('nobody is sent a link the directory does not allow, and asking tells nothing', async () => {
    const sent: { to: string; text: string }[] = [];
    const signIn = mailSignIn(sent);
    expect(signIn.request('erin')).toBeUndefined();
    expect(signIn.request('nobody')).toBeUndefined();
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual([]);
  });
});

test('coseOf: a directory passkey key becomes the COSE key WebAuthn verification reads, ES256 and Ed25519 alike', () => {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64url');
  const ed = generateKeyPairSync('ed25519').publicKey.export({ format: 'der', type: 'spki' }).toString('base64url');
  const ecKey = decodeCredentialPublicKey(coseOf(ec)) as unknown as Map<number, unknown>;
  expect([ecKey.get(1), ecKey.get(3), ecKey.get(-1)]).toEqual([2, -7, 1]);
  const edKey = decodeCredentialPublicKey(coseOf(ed)) as unknown as Map<number, unknown>;
  expect([edKey.get(1), edKey.get(3), edKey.get(-1)]).toEqual([1, -8, 6]);
});

test('versionOf: changes when someone answers, hands the question on or it escalates; stays while nothing happens', () => {
  const input: AddressedInput = {
    key: 'approval',
    request: { mode: 'form', message: 'Approve?', requestedSchema: { type: 'object', properties: {} } },
    audience: { roles: ['ap-approver'], required: 2 },
    requester: 'sam',
    answers: [],
    askedAt: '2026-12-01T10:00:00.000Z',
  };
  const answered = { ...input, answers: [{ principal: 'carol', roles: [], action: 'accept' as const, at: '2026-12-01T11:00:00.000Z' }] };
  expect(versionOf({ ...input })).toBe(versionOf(input));
  expect(versionOf(answered)).not.toBe(versionOf(input));
  expect(versionOf({ ...input, escalated: true, dueAt: '2026-12-03T10:00:00.000Z' })).not.toBe(versionOf(input));
  expect(versionOf({ ...input, audience: { ...input.audience, principals: ['dave'] } })).not.toBe(versionOf(input));
});

/**
 * The passkey page (`GET /passkeys`) and its two calls, served beside MCP when MCP_PASSKEY_ORIGIN is set: an approver
 * registers a passkey (the page prints the approvers-directory entry that lists it: a registration grants nothing
 * until the directory's keeper adds that entry), and signs a decision with it (in the page: the statement names the
 * challenge the bridge issued, and the digest of what the page shows). The page is one self-contained HTML document: prebuilt in the package, built from
 * `passkey-page/` in a checkout.
 */
import { createHmac, createPublicKey, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import path from 'node:path';
import { generateRegistrationOptions, verifyRegistrationResponse, type RegistrationResponseJSON } from '@simplewebauthn/server';
import { decodeCredentialPublicKey } from '@simplewebauthn/server/helpers';
import { readBodyText } from '../../util/request-body';
import { bundleBrowserScript, inline, prebuiltOrBuilt } from './page-bundle';

/** Where passkeys are made and used: the page's origin, the relying party id (its host name or a parent), a name. */
export interface PasskeyConfig {
  origin: string;
  rpId: string;
  rpName: string;
}

/** Thrown for passkey settings that cannot work; the message names the setting and the fix. */
export class PasskeyConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PasskeyConfigError';
  }
}

/**
 * The passkey settings: MCP_PASSKEY_ORIGIN (the origin approvers open the page at, e.g. https://approvals.example.com;
 * unset: no passkey page), MCP_PASSKEY_RP_ID (default its host name), MCP_PASSKEY_RP_NAME (default "Approvals").
 * Throws {@link PasskeyConfigError}.
 */
export function passkeyConfigFromEnv(env: NodeJS.ProcessEnv = process.env): PasskeyConfig | undefined {
  const given = env.MCP_PASSKEY_ORIGIN?.trim();
  if (!given) return undefined;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new PasskeyConfigError(`MCP_PASSKEY_ORIGIN is not a URL: use the origin approvers open, e.g. https://approvals.example.com`);
  }
  if (url.origin !== given.replace(/\/$/, '')) {
    throw new PasskeyConfigError(`MCP_PASSKEY_ORIGIN is an origin only (scheme, host, port), e.g. ${url.origin}; not ${given}`);
  }
  const local = url.hostname === 'localhost' || url.hostname.endsWith('.localhost');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && local)) {
    throw new PasskeyConfigError(
      'MCP_PASSKEY_ORIGIN must be https:// (browsers offer passkeys to secure pages; http:// only for localhost)',
    );
  }
  if (isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0) {
    throw new PasskeyConfigError(
      'MCP_PASSKEY_ORIGIN must name a host, not an IP address: passkeys belong to a domain (localhost for a trial)',
    );
  }
  const rpId = env.MCP_PASSKEY_RP_ID?.trim() || url.hostname;
  if (rpId !== url.hostname && !url.hostname.endsWith(`.${rpId}`)) {
    throw new PasskeyConfigError(
      `MCP_PASSKEY_RP_ID "${rpId}" must be the host name of MCP_PASSKEY_ORIGIN (${url.hostname}) or a domain above it`,
    );
  }
  return { origin: url.origin, rpId, rpName: env.MCP_PASSKEY_RP_NAME?.trim() || 'Approvals' };
}

/** The page and its calls, by path (see the module's comment). */
export function passkeyRoutes(
  config: PasskeyConfig,
  challenges: RegistrationChallenges,
): { path: string; handle(req: IncomingMessage, res: ServerResponse): Promise<void> }[] {
  return [
    { path: PAGE_PATH, handle: (req, res) => servePage(config, req, res) },
    { path: `${PAGE_PATH}/registration-options`, handle: (req, res) => registrationOptions(config, challenges, req, res) },
    { path: `${PAGE_PATH}/registration`, handle: (req, res) => registration(config, challenges, req, res) },
  ];
}

/**
 * How the page's registration challenges are the server's: a key their MAC is made with (the same on every replica),
 * and the mark of a challenge answered (`useOnce`: true the first time; it may throw when it cannot say).
 */
export interface RegistrationChallenges {
  key: Buffer;
  useOnce(id: string, expiresAt: number): Promise<boolean>;
}

/** The page's path. */
export const PAGE_PATH = '/passkeys';

async function servePage(config: PasskeyConfig, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'use GET' }, { allow: 'GET, HEAD' });
  const settings = JSON.stringify({ rpId: config.rpId, origin: config.origin }).replace(/</g, '\\u003c');
  const html = (await passkeyPageHtml()).replace(PAGE_CONFIG_SLOT, () => settings);
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    // The page runs its own script only, talks to its own origin only, and is framed by nobody.
    'content-security-policy':
      "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  });
  res.end(req.method === 'HEAD' ? undefined : html);
}

/** How long a registration may take from its options to its answer. */
const REGISTRATION_MS = 10 * 60_000;

/** A challenge: 16 random bytes, the deadline (8 bytes, milliseconds), and the first 16 bytes of their MAC. */
const CHALLENGE_BYTES = 40;

function challengeMac(key: Buffer, nonceAndDeadline: Buffer): Buffer {
  return createHmac('sha256', key).update('passkey registration challenge v1\n').update(nonceAndDeadline).digest().subarray(0, 16);
}

/** The deadline of a challenge this server issued, or undefined for any other (or one past its deadline). */
function challengeDeadline(key: Buffer, challenge: string, now = Date.now()): number | undefined {
  const bytes = Buffer.from(challenge, 'base64url');
  if (bytes.length !== CHALLENGE_BYTES) return undefined;
  const mac = challengeMac(key, bytes.subarray(0, 24));
  if (!timingSafeEqual(mac, bytes.subarray(24))) return undefined;
  const deadline = Number(bytes.readBigUInt64BE(16));
  return deadline > now ? deadline : undefined;
}

/**
 * Options of a registration. The challenge carries its own expiry and the server's MAC (see {@link CHALLENGE_BYTES}):
 * any replica checks it without state, and it is answered once.
 */
async function registrationOptions(
  config: PasskeyConfig,
  challenges: RegistrationChallenges,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const body = await callBody(config, req, res);
  if (body === undefined) return;
  const name = (body as { name?: unknown }).name;
  if (typeof name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}$/.test(name)) {
    return sendJson(res, 400, { error: 'give your name as the approvers directory lists it (letters, digits, ".", "_", "@", "+", "-")' });
  }
  const deadline = Buffer.alloc(8);
  deadline.writeBigUInt64BE(BigInt(Date.now() + REGISTRATION_MS));
  const nonceAndDeadline = Buffer.concat([randomBytes(16), deadline]);
  const options = await generateRegistrationOptions({
    rpName: config.rpName,
    rpID: config.rpId,
    userName: name,
    challenge: new Uint8Array(Buffer.concat([nonceAndDeadline, challengeMac(challenges.key, nonceAndDeadline)])),
    attestationType: 'none',
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    // ES256 and Ed25519: the keys the checks verify.
    supportedAlgorithmIDs: [-7, -8],
  });
  sendJson(res, 200, options);
}

async function registration(
  config: PasskeyConfig,
  challenges: RegistrationChallenges,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const body = await callBody(config, req, res);
  if (body === undefined) return;
  const response = (body as { response?: unknown }).response as RegistrationResponseJSON | undefined;
  if (response === null || typeof response !== 'object') return sendJson(res, 400, { error: 'give the response of the authenticator' });
  let verified;
  let answered: { challenge: string; deadline: number } | undefined;
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: (challenge) => {
        const deadline = challengeDeadline(challenges.key, challenge);
        if (deadline !== undefined) answered = { challenge, deadline };
        return deadline !== undefined;
      },
      expectedOrigin: config.origin,
      expectedRPID: config.rpId,
      requireUserVerification: true,
    });
  } catch (error) {
    return sendJson(res, 400, { error: `the registration does not check out: ${(error as Error).message}` });
  }
  if (!verified.verified || !answered) return sendJson(res, 400, { error: 'the registration does not check out' });
  let first: boolean;
  try {
    first = await challenges.useOnce(`passkey-registration:${answered.challenge}`, answered.deadline);
  } catch (error) {
    return sendJson(res, 503, { error: `the registration cannot be checked now (${(error as Error).message}); try again shortly` });
  }
  if (!first) return sendJson(res, 400, { error: 'this registration was answered before: register again from the page' });
  let publicKey: string;
  try {
    publicKey = spkiOf(verified.registrationInfo.credential.publicKey);
  } catch (error) {
    return sendJson(res, 400, { error: (error as Error).message });
  }
  const passkey = { id: verified.registrationInfo.credential.id, publicKey, rpId: config.rpId, origin: config.origin };
  sendJson(res, 200, { entry: { passkey } });
}

/** A COSE public key (ES256 on P-256, or Ed25519) as SPKI DER in base64url. Throws naming a key of another kind. */
export function spkiOf(cose: Uint8Array<ArrayBuffer>): string {
  const key = decodeCredentialPublicKey(cose) as unknown as Map<number, unknown>;
  const kty = key.get(1);
  const crv = key.get(-1);
  const x = key.get(-2) as Uint8Array | undefined;
  const y = key.get(-3) as Uint8Array | undefined;
  const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
  let jwk: Record<string, string>;
  if (kty === 2 && crv === 1 && x && y) jwk = { kty: 'EC', crv: 'P-256', x: b64(x), y: b64(y) };
  else if (kty === 1 && crv === 6 && x) jwk = { kty: 'OKP', crv: 'Ed25519', x: b64(x) };
  else throw new Error('this passkey uses a key other than ES256 (P-256) or Ed25519; use another authenticator');
  return createPublicKey({ key: jwk, format: 'jwk' }).export({ format: 'der', type: 'spki' }).toString('base64url');
}

/** The JSON body of a call from the page itself (same origin, POST, JSON, small), or undefined once answered. */
async function callBody(config: PasskeyConfig, req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  if (req.method !== 'POST') return void sendJson(res, 405, { error: 'use POST' }, { allow: 'POST' });
  if (req.headers.origin !== config.origin) return void sendJson(res, 403, { error: `only the passkey page at ${config.origin} may call` });
  if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) return void sendJson(res, 415, { error: 'send JSON' });
  const text = await readBodyText(req, MAX_CALL_BYTES);
  if (text === undefined) {
    // The rest is not read: the connection closes after the answer.
    res.setHeader('connection', 'close');
    return void sendJson(res, 413, { error: `the body is over ${MAX_CALL_BYTES} bytes` });
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    return parsed;
  } catch {
    return void sendJson(res, 400, { error: 'the body is not a JSON object' });
  }
}

const MAX_CALL_BYTES = 64 * 1024;

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

/** Where the page's settings go into its HTML. */
const PAGE_CONFIG_SLOT = '__PASSKEY_CONFIG__';

const PAGE_DIR = path.join(__dirname, 'passkey-page');
/** The prebuilt page of the package; absent in a checkout, where `passkey-page/` holds the sources. */
const PREBUILT_PAGE = path.join(__dirname, 'passkey-page.html');

/** The page as one HTML document (its settings still a slot): the prebuilt file, else built once from the sources. */
export const passkeyPageHtml: () => Promise<string> = prebuiltOrBuilt(PREBUILT_PAGE, () => buildPasskeyPageHtml());

/** Builds the page from `passkey-page/` (see `page-bundle.ts`). */
export async function buildPasskeyPageHtml(): Promise<string> {
  const script = await bundleBrowserScript(PAGE_DIR);
  return PAGE_TEMPLATE.replace('__SCRIPT__', () => inline(script, 'script'));
}

const PAGE_TEMPLATE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Passkeys for approvals</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 44rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
pre { background: #f3f3f5; padding: .75rem; white-space: pre-wrap; word-break: break-all; }
button { font: inherit; padding: .4rem 1rem; } input { font: inherit; padding: .3rem; }
.error { color: #b00020; }
</style>
<script type="application/json" id="passkey-config">${PAGE_CONFIG_SLOT}</script>
</head>
<body>
<h1>Passkeys for approvals</h1>
<section id="sign-section" hidden>
<h2>Sign your decision</h2>
<pre id="statement"></pre>
<button id="sign" type="button">Sign with my passkey</button>
<p id="sign-error" class="error" role="alert" hidden></p>
<pre id="signature" aria-label="Signature" hidden></pre>
<p id="signature-help" hidden>Give this signature with your answer (approvals_answer, argument <code>signature</code>).</p>
</section>
<section>
<h2>Register a passkey</h2>
<p>Once per person. The approvers directory's keeper adds the entry this prints to your entry's <code>keys</code>; until then the passkey counts for nothing.</p>
<label>Your name in the directory <input id="name" autocomplete="username"></label>
<button id="register" type="button">Register a passkey</button>
<p id="register-error" class="error" role="alert" hidden></p>
<pre id="entry" aria-label="Directory entry" hidden></pre>
<p id="entry-help" hidden>Send this entry to the keeper of the approvers directory.</p>
</section>
<script>__SCRIPT__</script>
</body>
</html>
`;

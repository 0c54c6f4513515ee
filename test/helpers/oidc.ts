/**
 * OpenID Connect for tests: a local provider (oidc-provider.mjs in a child process), an {@link OidcSignIn} run outside
 * jest (oidc-sign-in-host.ts), and a sign-in through the provider's pages without a browser (fetch, a cookie jar,
 * redirects followed by hand).
 *
 * Why the sign-in runs in a child: jest's runtime is CommonJS (ts-jest compiles `import('openid-client')` to a
 * `require`, and jest.config.js transforms only jose of the ES-only packages), so openid-client cannot load inside a
 * test. Under `node --import tsx` the product module's `import()` is Node's own and loads it as any user's server does.
 * The test process still imports the product module, which loads nothing at import time, for its error class.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { OidcConfig } from '../../src/mcp/web/oidc-config';
import { OidcSignInError, type OidcIdentity, type OidcSignInFailure, type OidcTransaction } from '../../src/mcp/web/oidc-sign-in';
import { ROOT } from './dev-server';

/** A client of the test provider, as oidc-provider registers it. */
export interface TestOidcClient {
  client_id: string;
  /** None: a public client (`token_endpoint_auth_method: 'none'`). */
  client_secret?: string;
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post' | 'none';
  redirect_uris: string[];
}

/** Options of {@link startOidcProvider}. */
export interface TestOidcProviderOptions {
  clients: TestOidcClient[];
  /** Login name → claims (`sub` defaults to the login name). */
  accounts: Record<string, object>;
  /** The port to listen on; default a free one. */
  port?: number;
  /** Scope-granted claims only at the userinfo endpoint, not in the ID token (oidc-provider's default). */
  conformIdTokenClaims?: boolean;
}

/** A running test provider. */
export interface TestOidcProvider {
  /** `http://localhost:<port>`. */
  issuer: string;
  /** Stops the provider and waits until it has exited. */
  stop(): Promise<void>;
}

const STARTUP_MS = 30_000;
const REQUEST_MS = 30_000;
const STOP_MS = 5_000;

/** A child process in its own process group, read a line at a time on stdout. */
class LineChild {
  private stderrText = '';
  private readonly exited: Promise<void>;
  private readonly readers = new Set<(line: string) => void>();

  constructor(
    private readonly what: string,
    private readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    child.stderr!.on('data', (chunk) => (this.stderrText += chunk));
    let pending = '';
    child.stdout!.on('data', (chunk) => {
      pending += chunk;
      for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 1);
        for (const reader of this.readers) reader(line);
      }
    });
  }

  static spawn(what: string, args: string[], stdin: 'pipe' | 'ignore'): LineChild {
    return new LineChild(what, spawn(process.execPath, args, { cwd: ROOT, stdio: [stdin, 'pipe', 'pipe'], detached: true }));
  }

  get stdin(): NodeJS.WritableStream {
    return this.child.stdin!;
  }

  /** The first line `accept` maps to a value; rejects when the child exits first or `timeoutMs` passes. */
  nextLine<T>(accept: (line: string) => T | undefined, timeoutMs: number, doing: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.readers.delete(read);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${this.what} did not ${doing} within ${timeoutMs} ms:\n${this.stderrText}`));
      }, timeoutMs);
      const read = (line: string) => {
        const value = accept(line);
        if (value === undefined) return;
        done();
        resolve(value);
      };
      this.readers.add(read);
      void this.exited.then(() => {
        done();
        reject(new Error(`${this.what} exited before it could ${doing}:\n${this.stderrText}`));
      });
    });
  }

  /** SIGTERM to the whole group, SIGKILL if it is still there after a while; resolves once it has exited. */
  async stop(): Promise<void> {
    const signal = (name: NodeJS.Signals) => {
      if (this.child.exitCode !== null || this.child.signalCode !== null) return;
      try {
        process.kill(-this.child.pid!, name);
      } catch {
        // already gone
      }
    };
    signal('SIGTERM');
    const timer = setTimeout(() => signal('SIGKILL'), STOP_MS);
    await this.exited;
    clearTimeout(timer);
  }
}

/** `line` as JSON, or undefined when it is not JSON (a stray line is skipped, not a crash of the reader). */
function parsed<T>(line: string): T | undefined {
  try {
    return JSON.parse(line) as T;
  } catch {
    return undefined;
  }
}

/**
 * Starts oidc-provider (test/helpers/oidc-provider.mjs) with these clients and accounts, and resolves once it listens.
 * Stop it in a `finally` (or `afterAll`).
 */
export async function startOidcProvider(options: TestOidcProviderOptions): Promise<TestOidcProvider> {
  const args = [
    path.join('test', 'helpers', 'oidc-provider.mjs'),
    '--clients',
    JSON.stringify(options.clients),
    '--accounts',
    JSON.stringify(options.accounts),
    ...(options.port !== undefined ? ['--port', String(options.port)] : []),
    ...(options.conformIdTokenClaims ? ['--conform-id-token-claims'] : []),
  ];
  const child = LineChild.spawn('the OpenID Connect provider', args, 'ignore');
  try {
    const issuer = await child.nextLine((line) => parsed<{ issuer?: string }>(line)?.issuer, STARTUP_MS, 'listen');
    return { issuer, stop: () => child.stop() };
  } catch (error) {
    await child.stop();
    throw error;
  }
}

/** An {@link OidcSignIn} in a child process (see the module's comment), with the same methods. */
export interface OidcSignInHost {
  start(): Promise<{ url: string; transaction: OidcTransaction }>;
  /** Rejects with an {@link OidcSignInError} as the host's threw it (message, issuer, reason). */
  finish(callbackUrl: URL, transaction: OidcTransaction): Promise<OidcIdentity>;
  /** Ends the host and waits until it has exited. */
  stop(): Promise<void>;
}

type HostAnswer =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: { name: string; message: string; reason?: OidcSignInFailure; issuer?: string } };

/** Spawns `node --import tsx test/helpers/oidc-sign-in-host.ts` for `new OidcSignIn(config, redirectUri)`. */
export function startOidcSignInHost(config: OidcConfig, redirectUri: string): OidcSignInHost {
  const child = LineChild.spawn(
    'the OpenID Connect sign-in host',
    ['--import', 'tsx', path.join('test', 'helpers', 'oidc-sign-in-host.ts'), JSON.stringify({ config, redirectUri })],
    'pipe',
  );
  let lastId = 0;
  const call = async (request: Record<string, unknown>): Promise<unknown> => {
    const id = ++lastId;
    const answered = child.nextLine(
      (line) => {
        const answer = parsed<HostAnswer>(line);
        return answer?.id === id ? answer : undefined;
      },
      REQUEST_MS,
      `answer ${String(request.op)}`,
    );
    child.stdin.write(`${JSON.stringify({ id, ...request })}\n`);
    const answer = await answered;
    if (answer.ok) return answer.value;
    const { name, message, reason, issuer } = answer.error;
    if (name === 'OidcSignInError' && reason && issuer) throw new OidcSignInError(message, issuer, reason);
    throw new Error(`${name}: ${message}`);
  };
  return {
    start: () => call({ op: 'start' }) as ReturnType<OidcSignInHost['start']>,
    finish: (callbackUrl, transaction) => call({ op: 'finish', callbackUrl: callbackUrl.href, transaction }) as Promise<OidcIdentity>,
    stop: () => child.stop(),
  };
}

/** A cookie as a browser keeps it for one host: by name and path. */
interface StoredCookie {
  name: string;
  value: string;
  path: string;
}

/** The cookies of one host, enough for the provider's interaction and session cookies (no domain, no Secure). */
export class CookieJar {
  private readonly cookies = new Map<string, StoredCookie>();

  /** Stores the `Set-Cookie` headers of `response` (a past expiry or `Max-Age=0` deletes). */
  store(response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      const [pair, ...attributes] = header.split(';').map((part) => part.trim());
      const at = pair.indexOf('=');
      const cookie: StoredCookie = { name: pair.slice(0, at), value: pair.slice(at + 1), path: '/' };
      let expired = false;
      for (const attribute of attributes) {
        const [key, value = ''] = attribute.split('=');
        if (key.toLowerCase() === 'path') cookie.path = value || '/';
        if (key.toLowerCase() === 'max-age' && Number(value) <= 0) expired = true;
        if (key.toLowerCase() === 'expires' && Date.parse(value) <= Date.now()) expired = true;
      }
      const key = `${cookie.name};${cookie.path}`;
      if (expired) this.cookies.delete(key);
      else this.cookies.set(key, cookie);
    }
  }

  /** The `Cookie` header for `url` (RFC 6265 §5.1.4 path match), or undefined. */
  header(url: URL): string | undefined {
    const matching = [...this.cookies.values()].filter(
      ({ path: cookiePath }) =>
        url.pathname === cookiePath ||
        (url.pathname.startsWith(cookiePath) && (cookiePath.endsWith('/') || url.pathname[cookiePath.length] === '/')),
    );
    return matching.length > 0 ? matching.map(({ name, value }) => `${name}=${value}`).join('; ') : undefined;
  }
}

/** Options of {@link signInWithoutBrowser}. */
export interface BrowserlessSignIn {
  /** The login name typed into the provider's login page. */
  login: string;
  /** Typed into the password field; the dev interactions take any. */
  password?: string;
  /** Where the provider sends the browser back: the first redirect there ends the sign-in. */
  redirectUri: string;
  /** Follows the login page's "[ Cancel ]" link instead of signing in (the provider answers `error=access_denied`). */
  cancel?: boolean;
}

/**
 * Signs in at the test provider as a browser would, from the authorization URL to the redirect back: follows redirects
 * by hand with a cookie jar, fills the login page (`login`, `password`) and confirms the consent page, or cancels.
 * Resolves to the URL the provider sent the browser back to (with `code` and `state`, or `error`).
 */
export async function signInWithoutBrowser(
  authorizationUrl: string,
  { login, password = 'any password', redirectUri, cancel = false }: BrowserlessSignIn,
): Promise<URL> {
  const jar = new CookieJar();
  let request: { url: URL; form?: URLSearchParams } = { url: new URL(authorizationUrl) };
  for (let step = 0; step < 20; step++) {
    const { url, form } = request;
    const cookie = jar.header(url);
    const response = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { ...(cookie && { cookie }), ...(form && { 'content-type': 'application/x-www-form-urlencoded' }) },
      body: form,
      signal: AbortSignal.timeout(REQUEST_MS),
    });
    jar.store(response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      const next = new URL(location, url);
      if (next.href.startsWith(redirectUri)) return next;
      request = { url: next };
      continue;
    }
    const page = await response.text();
    if (!response.ok) throw new Error(`the provider answered ${url} with HTTP ${response.status}: ${page.slice(0, 500)}`);
    request = cancel
      ? { url: new URL(cancelLink(page, url), url) }
      : { url: new URL(formAction(page, url), url), form: formFields(page, login, password) };
  }
  throw new Error(`the sign-in at ${authorizationUrl} did not come back to ${redirectUri} within 20 requests`);
}

/** The action of the page's form (see oidc-provider.mjs for the pages). */
function formAction(page: string, url: URL): string {
  const action = /<form[^>]*\baction="([^"]+)"/.exec(page)?.[1];
  if (!action) throw new Error(`the page at ${url} has no form:\n${page.slice(0, 500)}`);
  return action.replaceAll('&amp;', '&');
}

/** The page's "[ Cancel ]" link. */
function cancelLink(page: string, url: URL): string {
  const href = /<a href="([^"]+)">\[ Cancel \]<\/a>/.exec(page)?.[1];
  if (!href) throw new Error(`the page at ${url} has no cancel link:\n${page.slice(0, 500)}`);
  return href.replaceAll('&amp;', '&');
}

/** What a person enters on the login page (`prompt=login`) or the consent page (`prompt=consent`). */
function formFields(page: string, login: string, password: string): URLSearchParams {
  const prompt = /<input type="hidden" name="prompt" value="([^"]+)"/.exec(page)?.[1];
  if (prompt === 'login') return new URLSearchParams({ prompt, login, password });
  if (prompt === 'consent') return new URLSearchParams({ prompt });
  throw new Error(`the provider's page is neither its login nor its consent page:\n${page.slice(0, 500)}`);
}

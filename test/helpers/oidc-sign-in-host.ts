/**
 * Runs an {@link OidcSignIn} in a process of its own for the jest tests, whose CommonJS runtime cannot load
 * openid-client (ES modules only). Spawned by `startOidcSignInHost` (oidc.ts) as
 * `node --import tsx test/helpers/oidc-sign-in-host.ts '<{"config":…,"redirectUri":…}>'`: here the product module's
 * `import('openid-client')` is Node's own. Reads one JSON request a line on stdin (`{"id":1,"op":"start"}`,
 * `{"id":2,"op":"finish","callbackUrl":"…","transaction":{…}}`) and answers each with one line on stdout
 * (`{"id":1,"ok":true,"value":…}` or `{"id":2,"ok":false,"error":{"name","message","reason","issuer"}}`).
 */
import { createInterface } from 'node:readline';
import type { OidcConfig } from '../../src/mcp/web/oidc-config';
import { OidcSignIn, OidcSignInError, type OidcTransaction } from '../../src/mcp/web/oidc-sign-in';

/** One request of the host's protocol. */
type HostRequest = { id: number; op: 'start' } | { id: number; op: 'finish'; callbackUrl: string; transaction: OidcTransaction };

const { config, redirectUri } = JSON.parse(process.argv[2]) as { config: OidcConfig; redirectUri: string };
const signIn = new OidcSignIn(config, redirectUri);

async function answer(request: HostRequest): Promise<unknown> {
  return request.op === 'start' ? signIn.start() : signIn.finish(new URL(request.callbackUrl), request.transaction);
}

// The parent ends the host by closing stdin (or with SIGTERM); answers still due are written first.
createInterface({ input: process.stdin }).on('line', (line) => {
  const request = JSON.parse(line) as HostRequest;
  void answer(request).then(
    (value) => process.stdout.write(`${JSON.stringify({ id: request.id, ok: true, value })}\n`),
    (error: Error) => {
      const { name, message } = error;
      const own = error instanceof OidcSignInError ? { reason: error.reason, issuer: error.issuer } : {};
      process.stdout.write(`${JSON.stringify({ id: request.id, ok: false, error: { name, message, ...own } })}\n`);
      // For the test's failure message: what openid-client said, which the error's message does not repeat.
      const detail = error instanceof OidcSignInError ? error.cause : error;
      if (detail) process.stderr.write(`${request.op}: ${detail instanceof Error ? detail.stack : String(detail)}\n`);
    },
  );
});

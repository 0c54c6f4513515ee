/**
 * `temporal-mcp-tasks codec-server --http HOST:PORT`: the codec server of Temporal's Web UI and CLI for payloads the
 * bridge and its workers encrypt (see codec-server.ts). Reads the same keys file, MCP_PAYLOAD_KEYS.
 */
import { encryptingDataConverter } from '../shared/payload-codec';
import { PayloadKeysError, payloadKeysFromEnv } from '../shared/payload-keys';
import { TaskKeyError, taskKeyFromEnv } from '../shared/task-key';
import { msFromEnv, countFromEnv, webUiUrlFromEnv, temporalConfigFromEnv } from '../shared/temporal-config';
import { parseHostPort } from '../util/host-port';
import { log, LogConfigError, logOptionsFromEnv } from '../util/log';
import { PACKAGE_VERSION } from '../version';
import { TokenConfigError, tokensFromEnv } from '../mcp/transports/auth';
import { createAuthenticator } from '../mcp/transports/oauth';
import { OAuthConfigError, oauthConfigFromEnv } from '../mcp/transports/oauth-config';
import { startCodecServer } from './codec-server';

const HELP = `Usage: temporal-mcp-tasks codec-server --http HOST:PORT [--help] [--version]

Serves Temporal's codec endpoints, POST /encode and POST /decode, for the payloads the bridge and its workers encrypt
with MCP_PAYLOAD_KEYS: point the Web UI at it (the dev server's --ui-codec-endpoint, which ./temporal-dev.sh passes
when MCP_PAYLOAD_KEYS is set; the UI server's codec.endpoint) or the CLI (temporal --codec-endpoint URL
--codec-auth "Bearer TOKEN"), and the people it authorizes see tasks' inputs and results decoded; everyone else
sees ciphertext.

A caller is authorized by:
  - Authorization: Bearer TOKEN, a static token (MCP_AUTH_TOKENS, MCP_AUTH_TOKENS_FILE) or an OAuth access token of
    MCP_OAUTH_ISSUER (a Web UI that signs people in passes theirs with codec.passAccessToken), whose principal holds
    the role MCP_CODEC_ROLE; or
  - a browser session: sign in with such a token on this server's page (GET /); the Web UI then sends the session
    cookie when its codec server setting "Include cross-origin credentials" is on (UI and codec server on one host
    name: the cookie is SameSite=Strict).
Browsers are answered only from MCP_CODEC_UI_ORIGINS. A payload this server holds no key for is answered encoded.

Options:
  --http HOST:PORT   where to listen, e.g. 127.0.0.1:8888 (behind TLS when not on loopback)
  -v, --version      print the version
  -h, --help         show this help

Environment:
  MCP_PAYLOAD_KEYS            the keys file of the bridge and the workers (required)
  MCP_AUTH_TOKENS, MCP_AUTH_TOKENS_FILE
                              static tokens, as serve reads them ("principal token role,role" lines)
  MCP_OAUTH_ISSUER, MCP_OAUTH_JWKS_URL, MCP_OAUTH_RESOURCE, MCP_OAUTH_SCOPES, MCP_OAUTH_PRINCIPAL_CLAIM,
  MCP_OAUTH_ROLES_CLAIM       OAuth access tokens, as serve checks them (the audience: MCP_OAUTH_RESOURCE, else
                              this server's http://HOST:PORT)
  MCP_CODEC_ROLE              the role a caller needs (default payload-reader)
  MCP_CODEC_UI_ORIGINS        the Web UI origins answered, comma-separated (default the origin of TEMPORAL_WEB_UI_URL,
                              else of the dev server's UI, http://127.0.0.1:<Temporal port + 1000>, and the same with
                              localhost)
  MCP_CODEC_SESSION_MS        how long a browser sign-in lasts (default 28800000, 8 hours)
  MCP_CODEC_MAX_BODY_BYTES    largest request (default 8388608)
  MCP_TASK_MARKER_KEY         the bridge's secret key, which signs the browser sessions (as serve reads it)
  MCP_LOG_FORMAT, MCP_LOG_LEVEL
`;

/** Thrown for a command line or a setting that does not allow the server to start; exit 2. */
class CodecUsageError extends Error {}

/** The Web UI origins of the environment; see the help. */
export function uiOriginsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const listed = (env.MCP_CODEC_UI_ORIGINS ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
  for (const origin of listed) {
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      throw new CodecUsageError(`MCP_CODEC_UI_ORIGINS: "${origin}" is not an origin such as https://temporal.example.com`);
    }
    if (url.origin !== origin.replace(/\/+$/, '')) {
      throw new CodecUsageError(`MCP_CODEC_UI_ORIGINS: "${origin}" is not an origin (scheme, host and port only): ${url.origin}`);
    }
  }
  if (listed.length > 0) return listed;
  const ui = webUiUrlFromEnv(temporalConfigFromEnv(env).address, env);
  if (!ui) return [];
  const url = new URL(ui);
  const aliases = [url.origin];
  if (url.hostname === '127.0.0.1') aliases.push(`${url.protocol}//localhost${url.port ? `:${url.port}` : ''}`);
  if (url.hostname === 'localhost') aliases.push(`${url.protocol}//127.0.0.1${url.port ? `:${url.port}` : ''}`);
  return aliases;
}

async function main(argv: string[]): Promise<void> {
  let http: { host: string; port: number } | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(HELP);
      return;
    }
    if (arg === '--version' || arg === '-v') {
      process.stdout.write(`${PACKAGE_VERSION}\n`);
      return;
    }
    if (arg === '--http' || arg.startsWith('--http=')) {
      const value = arg === '--http' ? argv[++i] : arg.slice('--http='.length);
      http = parseHostPort(value);
      if (!http) throw new CodecUsageError(`--http needs HOST:PORT, e.g. --http 127.0.0.1:8888 (got "${value ?? ''}")`);
    } else throw new CodecUsageError(`unknown argument "${arg}"; see temporal-mcp-tasks codec-server --help`);
  }
  if (!http) throw new CodecUsageError('give --http HOST:PORT, e.g. --http 127.0.0.1:8888; see --help');
  log.configure(logOptionsFromEnv());
  const keys = payloadKeysFromEnv();
  if (!keys) throw new CodecUsageError('MCP_PAYLOAD_KEYS is not set: name the keys file the bridge and the workers encrypt with');
  const tokens = tokensFromEnv();
  const oauth = oauthConfigFromEnv();
  if (tokens.size === 0 && !oauth) {
    throw new CodecUsageError(
      'no way to authorize callers: set MCP_AUTH_TOKENS_FILE (tokens whose principals hold MCP_CODEC_ROLE) or MCP_OAUTH_ISSUER',
    );
  }
  const role = process.env.MCP_CODEC_ROLE?.trim() || 'payload-reader';
  const uiOrigins = uiOriginsFromEnv();
  const endpointUrl = `http://${http.host.includes(':') ? `[${http.host}]` : http.host}:${http.port}`;
  const server = await startCodecServer({
    ...http,
    codecs: encryptingDataConverter(keys).payloadCodecs ?? [],
    authenticator: createAuthenticator({ tokens, ...(oauth && { oauth }), endpointUrl }),
    role,
    uiOrigins,
    taskKey: taskKeyFromEnv(),
    sessionMs: msFromEnv(process.env, 'MCP_CODEC_SESSION_MS', 8 * 3_600_000),
    maxBodyBytes: countFromEnv(process.env, 'MCP_CODEC_MAX_BODY_BYTES', 8 * 1024 * 1024),
  });
  log.info(
    `codec-server: codec endpoint on ${server.url} (key ${keys.encryptingKeyId} encrypts, ${keys.keyIds.length} key(s) decrypt); callers need the role ${role}; Web UI origins ${uiOrigins.join(', ') || 'none'}`,
  );
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log.info(`codec-server: ${signal}: stopping`);
      void server.close().then(() => process.exit(0));
    });
  }
}

/** Runs the command with `argv` (see --help); exits 2 for a usage error or a bad setting, 1 when it fails otherwise. */
export function runCodecServerCommand(argv: string[]): void {
  main(argv).catch((error: Error) => {
    log.error(`codec-server: ${error.message}`);
    const usage = [CodecUsageError, PayloadKeysError, TokenConfigError, OAuthConfigError, TaskKeyError, LogConfigError].some(
      (kind) => error instanceof kind,
    );
    process.exit(usage ? 2 : 1);
  });
}

if (require.main === module) runCodecServerCommand(process.argv.slice(2));

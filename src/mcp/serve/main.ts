/**
 * The MCP server: `temporal-mcp-tasks serve` (stdio) or `temporal-mcp-tasks serve --http 127.0.0.1:3000` (Streamable
 * HTTP on /mcp); in a checkout, `npm run serve`, which serves the example's sample tools too. `--check` checks Temporal for a
 * process manager and exits.
 */
import { bridgeOptionsFromEnv, createBridge } from '../bridge';
import { Connection, type ConnectionOptions } from '@temporalio/client';
import { checkTemporal, describeCheck, TemporalCheckError } from '../../shared/temporal-check';
import { msFromEnv, temporalConfigFromEnv, TASK_QUEUE_ENV } from '../../shared/temporal-config';
import { startTelemetry, TelemetryConfigError } from '../../shared/telemetry';
import { log, LogConfigError, logOptionsFromEnv } from '../../util/log';
import { TokenConfigError, tokensFromEnv, watchTokensFile } from '../transports/auth';
import { loadToolsFile, ToolsFileError } from '../tools/config-file';
import { parseServeArgs, samplesByDefault, UsageError } from './args';
import { localRolesFor } from './local-roles';
import { loadSampleTools, servedTools } from './served-tools';
import { startHttpServer } from '../transports/http';
import { PAGE_PATH, PasskeyConfigError, passkeyConfigFromEnv, passkeyRoutes } from '../app/passkey-pages';
import { MarkerKeyError, SharedStateConfigError } from '../../core';
import { allowedHostsFromEnv, httpLimitsFromEnv, isLoopbackHost, OriginPolicy } from '../transports/limits';
import { createAuthenticator } from '../transports/oauth';
import { OAuthConfigError, oauthConfigFromEnv } from '../transports/oauth-config';
import { serveStdioForAllGenerations } from '../transports/stdio';
import { PACKAGE_VERSION } from '../../version';
import { ApproversDirectory } from '../../records/directory';
import { taskKeyFromEnv } from '../../shared/task-key';
import { approvalsPage, type ApprovalsPage } from '../web/approvals-page';
import { signInMailFromEnv } from '../web/mail-sign-in';
import { OidcConfigError, oidcConfigFromEnv } from '../web/oidc-config';
import { OidcSignIn } from '../web/oidc-sign-in';
import { ApprovalsPageConfigError, approvalsPageConfigFromEnv } from '../web/page-config';
import { APPROVALS_API } from '../app/approvals-page/wire';
import { describePayloadKeys, PayloadKeysError, payloadKeysFromEnv } from '../../shared/payload-keys';
import { createHmac } from 'node:crypto';
import { OneTimeUses } from '../../approvals/one-time-uses';

/** Whether the sample tools are served when the command line does not say (see --help). */
const SAMPLES_BY_DEFAULT = samplesByDefault(__filename);

const HELP = `Usage: temporal-mcp-tasks serve [--http HOST:PORT [--no-auth] [--local-roles-over-http]] [--tools FILE]
                                [--samples | --no-samples] [--check] [--help] [--version]

Serves Temporal workflows as MCP tasks. Without --http it speaks MCP on stdin/stdout (for an MCP host to spawn);
with --http it serves Streamable HTTP on http://HOST:PORT/mcp, and GET /healthz answers 200 {"status":"ok"} while
Temporal answers (503 with the reason otherwise; no authentication, an allowed Host). Logs go to stderr. SIGTERM or
SIGINT stops it gracefully: no new connections, sessions and streams end (clients go on with another replica), exit 0
within MCP_SHUTDOWN_TIMEOUT_MS.

Options:
  --http HOST:PORT   serve Streamable HTTP instead of stdio, e.g. --http 127.0.0.1:3000
  --no-auth          serve HTTP without authentication on a non-loopback address (every caller is one principal, so
                     tasks/list is not offered: it would show every caller everyone's tasks)
  --local-roles-over-http
                     also give MCP_LOCAL_ROLES to HTTP callers without credentials: on loopback every user and process
                     of the machine, with --no-auth anyone who reaches the address (the server warns at start).
                     Without it MCP_LOCAL_ROLES apply to stdio only, and HTTP callers without credentials hold no roles
  --tools FILE       also serve the workflow tools declared in FILE (JSON or YAML; see examples/invoice-approval/tools.yaml)
  --samples          also serve the sample tools of the invoice-approval example (process_invoice,
                     release_scheduled_payment, submit_expense_report, request_spend_approval), whose workflows run on
                     its worker (npm run worker); only a checkout holds the example (examples/invoice-approval)
  --no-samples       serve without them. Without either flag (of both, the last counts) the samples are served
                     when the server runs from its TypeScript sources, as a checkout's npm run serve does (tsx), and
                     not when it runs compiled from dist/, as the installed package's command does. This copy: ${SAMPLES_BY_DEFAULT ? 'served' : 'not served'}
  --check            check that Temporal answers, the namespace exists and the search attributes McpPrincipal
                     and McpAwaiting are registered; print one line and exit 0 (ok) or 1 (not)
  -v, --version      print the version
  -h, --help         show this help

Tasks belong to the principal that created them. Without credentials (stdio; HTTP on loopback or with --no-auth)
that is the local principal: MCP_LOCAL_PRINCIPAL, or local:<os user>@<host>. On HTTP, when tokens or OAuth are
configured, every request needs "Authorization: Bearer <token>" and acts for the token's principal. Only tasks this
bridge started (marked with an HMAC, MCP_TASK_MARKER_KEY) are served. A non-loopback address needs MCP_ALLOWED_HOSTS.

With MCP_OAUTH_ISSUER the server is an OAuth resource server: hosts get access tokens from that authorization server,
and any token that is not a static token is checked as a JWT of the issuer (signature from its key set, iss, aud =
the resource, exp/nbf, the required scopes); the principal is the token's principal claim. The Protected Resource
Metadata (RFC 9728) is served at /.well-known/oauth-protected-resource/mcp. Behind a proxy, set MCP_OAUTH_RESOURCE
to the public URL of the endpoint: tokens must be issued for it.

Environment:
  TEMPORAL_ADDRESS                Temporal frontend (default 127.0.0.1:7233)
  TEMPORAL_NAMESPACE              namespace (default "default")
  ${TASK_QUEUE_ENV}             task queue of the workflows (default "temporal-mcp")
  MCP_TASK_MAX_TTL_MS             longest task ttl granted (default: the namespace's retention)
  MCP_TASK_DEFAULT_TTL_MS         ttl when the client asks for none (default 24 h, capped by the maximum)
  MCP_TASK_POLL_INTERVAL_MS       poll interval suggested to clients (default 1000)
  MCP_TASK_PAGE_SIZE              tasks per tasks/list page (default 20)
  MCP_ELICITATION_TIMEOUT_MS      how long a question waits for the user (default 600000)
  MCP_INPUT_PUSH_GRACE_MS         delay before a question goes to a client that only polls (default 1500)
  MCP_INPUT_DISMISS_COOLDOWN_MS   pause before a dismissed question is pushed or asked on the same tasks/result again (default 60000)
  MCP_INLINE_BUDGET_MS            how long a plain call of a task tool waits before it answers with the task id (default 50000)
  MCP_HTTP_SESSION_IDLE_MS        an HTTP session with no request for this long is closed (default 3600000)
  MCP_AUTH_TOKENS                 bearer tokens for HTTP: "principal=token,principal=token"
  MCP_AUTH_TOKENS_FILE            a file of bearer tokens, one "principal token [role,role]" line each (# comments);
                                  the roles decide which addressed questions (approvals_inbox) the principal may answer
  MCP_LOCAL_PRINCIPAL             principal of requests without credentials (default local:<os user>@<host>)
  MCP_LOCAL_ROLES                 roles of requests without credentials, comma-separated (default none); stdio only,
                                  unless --local-roles-over-http
  MCP_TASK_MARKER_KEY             HMAC key (32+ characters) marking the tasks this bridge starts and sealing the answers
                                  it hands to workflows; the same on every replica and every worker (default: a key
                                  generated once in ~/.config/temporal-mcp-tasks; MCP_TASK_MARKER_KEY_FILE: a file)
  MCP_DECISION_SIGNING_KEY        Ed25519 private key (PKCS#8 PEM file) that signs each decision record; the same on
                                  every replica (default: a pair generated once in ~/.config/temporal-mcp-tasks)
  MCP_DECISION_STORE              the append-only decision store, shared with the workers: a directory or a
                                  postgres:// URL (default .data/decisions)
  MCP_CLOSE_KEEPER_MS             how often the bridge signs the closes of questions that expired, were cancelled, or
                                  whose closing answer's close was never written (default 15000 with --http, off
                                  over stdio; 0 turns it off)
  MCP_CLOSE_LOOKBACK_MS           how far back it looks at start, for a bridge that was down (default 86400000, a day)
  MCP_PAYLOAD_KEYS                a file of "keyId base64key" lines (32-byte AES-256 keys, mode 600): every payload the
                                  bridge writes to Temporal and every decision record is encrypted under the first key;
                                  each line's key decrypts. The workers need the same file (default none: in the clear)
  MCP_APPROVERS_DIRECTORY         JSON file of the people who approve: their principals (four eyes count people),
                                  roles (a question is handed on only to someone eligible), own keys and who must sign
  MCP_PASSKEY_ORIGIN              with --http, serve the passkey page at ORIGIN/passkeys, where approvers register
                                  passkeys and sign decisions (e.g. https://approvals.example.com; default none)
  MCP_PUBLIC_URL                  with --http, serve the approvals page at URL/approvals for approvers without an MCP
                                  client (inbox, questions, decisions; sign-in with a passkey, MCP_OIDC_*, or a link by
                                  mail), e.g. https://approvals.example.com (default MCP_PASSKEY_ORIGIN; neither: no page)
  MCP_WEB_SESSION_MS              how long a sign-in on the approvals page lasts (default 28800000, 8 hours)
  MCP_WEB_PROXY_HOPS              proxies (a balancer) in front that append to X-Forwarded-For: the approvals page counts
                                  sign-in attempts per the address the outermost saw (default 0: the connection's)
  MCP_WEB_SIGN_IN_LINK_MS         how long a one-time sign-in link sent by mail works (default 900000, 15 minutes);
                                  links go to people whose directory entry says signInByMail, through MCP_SMTP_URL
                                  and MCP_NOTIFY_FROM
  MCP_OIDC_ISSUER, MCP_OIDC_CLIENT_ID, MCP_OIDC_CLIENT_SECRET, MCP_OIDC_SCOPES
                                  sign-in on the approvals page through an OpenID Connect provider (authorization code
                                  with PKCE; redirect URI URL/approvals/sign-in/oidc/callback); the principal is
                                  oauth:<MCP_OAUTH_PRINCIPAL_CLAIM>, as for access tokens
  MCP_PASSKEY_RP_ID, MCP_PASSKEY_RP_NAME
                                  the passkeys' relying party (default the origin's host name) and its name (Approvals)
  MCP_SHARED_STATE                postgres:// URL the replicas of one deployment share: one rate limit, one set of
                                  waits and one open-task quota per principal across them, and a task created through
                                  one listed through the others at once
                                  (default none: each process keeps its own)
  MCP_CHANGE_FEED_MS              follow polled tasks by one visibility query per this many ms for all of them (the
                                  McpChangedAt their workflows stamp) instead of a history long poll each (default 0: off)
  MCP_TEMPORAL_RPC_TIMEOUT_MS     deadline of each request to Temporal (default 5000)
  MCP_MAX_OPEN_TASKS_PER_PRINCIPAL  open tasks one principal may have (default 1000)
  MCP_MAX_WAITS_PER_PRINCIPAL     concurrent waits (tasks/result, inline calls, subscriptions) of one principal (default 64)
  MCP_TASK_OPS_PER_SECOND         task requests (tools/call, tasks/*) one principal may make per second, bursts of
                                  twice as many (default 50; 0 turns it off)
  MCP_REQUEST_STATE_TTL_MS        how long the requestState of a 2026-07-28 input_required round is honoured (default 900000)
  MCP_ALLOWED_HOSTS               Host header values answered, comma-separated (needed for a non-loopback address)
  MCP_ALLOWED_ORIGINS             browser origins allowed besides loopback ones, comma-separated, or *
  MCP_HTTP_MAX_SESSIONS, MCP_HTTP_MAX_SESSIONS_PER_PRINCIPAL   open sessions (default 1000, 32; the longest idle goes)
  MCP_HTTP_MAX_CONNECTIONS        open connections (default 512)
  MCP_HTTP_MAX_CONNECTIONS_PER_ADDRESS  open connections from one remote address (default 64; 0 turns it off,
                                  as behind a balancer)
  MCP_HTTP_FIRST_REQUEST_TIMEOUT_MS  a connection with no request this long after it opened is closed (default 5000)
  MCP_HTTP_REQUEST_TIMEOUT_MS, MCP_HTTP_HEADERS_TIMEOUT_MS     time to receive a request, its headers (30000, 10000)
  MCP_HTTP_MAX_BODY_BYTES         largest request body (default 2097152)
  MCP_HTTP_MAX_REQUESTS_PER_PRINCIPAL  requests of one authenticated principal under way at once (default 256; 0 turns
                                  it off); one more gets 429
  MCP_HTTP_KEEP_ALIVE_TIMEOUT_MS  how long an idle keep-alive connection stays open (default 65000)
  MCP_OAUTH_ISSUER                the authorization server whose JWT access tokens are accepted (turns OAuth on)
  MCP_OAUTH_JWKS_URL              its JSON Web Key Set (default: jwks_uri of the issuer's metadata, RFC 8414 or OIDC)
  MCP_OAUTH_RESOURCE              this server's resource URL, the audience tokens must name (default http://HOST:PORT/mcp)
  MCP_OAUTH_SCOPES                scopes every token must carry, space-separated (default none)
  MCP_OAUTH_PRINCIPAL_CLAIM       the claim that names the principal (default sub)
  MCP_OAUTH_ROLES_CLAIM           the claim that lists the principal's roles, e.g. roles or groups (default: no roles)
  MCP_SHUTDOWN_TIMEOUT_MS         on SIGTERM/SIGINT, how long responses under way may take before they are cut (default 10000)
  MCP_LOG_FORMAT                  text (default) or json: one JSON object a line (time, level, msg, taskId, principal, method, ...)
  MCP_LOG_LEVEL                   debug, info (default), warn or error
  TEMPORAL_WEB_UI_URL             the Temporal Web UI, linked from every task in _meta["temporal-mcp-tasks/web-ui"]
                                  (default http://<Temporal host>:<Temporal port + 1000>, the dev server's; off: no links)
  OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
                                  turn OpenTelemetry traces on, exported over OTLP/HTTP (OTEL_EXPORTER_OTLP_PROTOCOL
                                  http/protobuf, the default, or http/json; OTEL_SERVICE_NAME, default temporal-mcp-serve)
Other TEMPORAL_* variables and the Temporal config file are read as the Temporal CLI reads them.
`;

/** The endpoint URL of `--http HOST:PORT`, as the HTTP server names it. */
function endpointUrlOf(http: { host: string; port: number }): string {
  return `http://${http.host.includes(':') ? `[${http.host}]` : http.host}:${http.port}/mcp`;
}

/** How long `--check` and /healthz wait for Temporal. */
const CHECK_DEADLINE_MS = 5_000;
const HEALTH_DEADLINE_MS = 2_000;

// eslint-disable-next-line max-lines-per-function -- longer than a function should be; split next
async function main(argv: string[]): Promise<void> {
  const args = parseServeArgs(argv, { samples: SAMPLES_BY_DEFAULT });
  if (args.help) {
    process.stdout.write(HELP);
    return;
  }
  log.configure(logOptionsFromEnv());
  if (args.check) return check();
  const tokens = args.http ? tokensFromEnv() : undefined;
  // A token removed from the file is refused from then on, and what it opened ends.
  if (tokens) watchTokensFile(tokens);
  const oauth = args.http ? oauthConfigFromEnv() : undefined;
  if (args.http && tokens) {
    if (tokens.size > 0 && args.noAuth) throw new UsageError('--no-auth contradicts the configured MCP_AUTH_TOKENS / MCP_AUTH_TOKENS_FILE');
    if (oauth && args.noAuth) throw new UsageError('--no-auth contradicts the configured MCP_OAUTH_ISSUER');
    if (tokens.size === 0 && !oauth && !args.noAuth && !isLoopbackHost(args.http.host)) {
      throw new UsageError(
        `refusing to serve ${args.http.host} without authentication: set MCP_AUTH_TOKENS or MCP_AUTH_TOKENS_FILE, or MCP_OAUTH_ISSUER, or pass --no-auth`,
      );
    }
  }
  const allowedHosts = allowedHostsFromEnv();
  if (args.http && !isLoopbackHost(args.http.host) && !allowedHosts) {
    throw new UsageError(
      `serving ${args.http.host} needs MCP_ALLOWED_HOSTS: the host names clients reach this server by (DNS rebinding protection)`,
    );
  }
  const limits = args.http ? httpLimitsFromEnv() : undefined;
  const passkeys = passkeyConfigFromEnv();
  if (passkeys && !args.http) log.warn('serve: MCP_PASSKEY_ORIGIN is set, but the passkey page is served over HTTP only (--http)');
  const pageConfig = args.http ? approvalsPageConfigFromEnv() : undefined;
  const oidc = oidcConfigFromEnv();
  if (oidc && !pageConfig) log.warn('serve: MCP_OIDC_ISSUER is set, but the approvals page is not served (--http and MCP_PUBLIC_URL)');
  const origins = OriginPolicy.fromEnv();
  const declared = args.tools ? loadToolsFile(args.tools) : [];
  const samples = args.samples ? loadSampleTools() : undefined;
  const tools = servedTools({ ...(samples && { samples }), declared, ...(args.tools !== undefined && { file: args.tools }) });
  const fromEnv = bridgeOptionsFromEnv(process.env, (principal) => tokens?.rolesOf(principal));
  const { temporal, answerSeal, localPrincipal: principal } = fromEnv;
  const shutdownTimeoutMs = msFromEnv(process.env, 'MCP_SHUTDOWN_TIMEOUT_MS', 10_000);
  const telemetry = startTelemetry({ serviceName: 'temporal-mcp-serve' });
  const authenticated = !!tokens && (tokens.size > 0 || !!oauth);
  const local = localRolesFor({
    env: process.env.MCP_LOCAL_ROLES,
    overHttp: args.localRolesOverHttp === true,
    principal,
    ...(args.http && { http: { url: endpointUrlOf(args.http), noAuth: args.noAuth, authenticated } }),
  });
  const bridge = await createBridge({
    ...fromEnv,
    tools,
    localRoles: local.roles,
    taskListing: !args.noAuth,
    // A stdio server is one person's: the deployment's HTTP replicas keep closes, unless MCP_CLOSE_KEEPER_MS says.
    ...(!args.http && process.env.MCP_CLOSE_KEEPER_MS === undefined && { closeKeeper: false }),
    approvals: { ...fromEnv.approvals, ...(passkeys && args.http && { passkeyPage: `${passkeys.origin}${PAGE_PATH}` }) },
    ...(telemetry.clientInterceptors && { clientInterceptors: telemetry.clientInterceptors }),
  });
  for (const warning of local.warnings) log.warn(warning);
  if (samples) log.info(`serve: sample tools ${samples.map((tool) => tool.name).join(', ')} (--no-samples leaves them out)`);
  if (declared.length > 0)
    log.info(`serve: ${declared.length} tool(s) from ${args.tools}: ${declared.map((tool) => tool.name).join(', ')}`);
  if (telemetry.enabled) log.info(`serve: traces to ${telemetry.description}`);
  // Workers log the same id: answers sealed with another key are refused by the workflows.
  const target = `Temporal ${temporal.address} (namespace ${temporal.namespace}, task queue ${temporal.taskQueue}; answer key ${answerSeal.keyId}; ${describePayloadKeys(payloadKeysFromEnv())})`;
  let stopping = false;
  /** Ends the process once `drain` is done, or after the bound whatever it is doing; a second signal changes nothing. */
  const stopOn = (signal: NodeJS.Signals | 'end of input', drain: () => Promise<void>) => {
    if (stopping) return;
    stopping = true;
    if (signal !== 'end of input') log.info(`serve: ${signal}: stopping (at most ${shutdownTimeoutMs} ms)`);
    setTimeout(() => {
      log.error(`serve: still stopping after ${shutdownTimeoutMs + 2000} ms; exiting`);
      process.exit(1);
    }, shutdownTimeoutMs + 2000).unref();
    void drain()
      .then(() => bridge.close())
      .then(() => telemetry.shutdown())
      .then(
        () => {
          if (signal !== 'end of input') log.info('serve: stopped');
          process.exit(0);
        },
        (error: Error) => {
          log.error(`serve: stopping failed: ${error.message}`);
          process.exit(1);
        },
      );
  };
  let page: ApprovalsPage | undefined;
  if (args.http && tokens && pageConfig) {
    page = approvalsPage({
      config: pageConfig,
      taskKey: taskKeyFromEnv(),
      approvals: bridge.approvals,
      directory: ApproversDirectory.fromEnv(),
      credentialRoles: (principal) => tokens.rolesOf(principal),
      ...(passkeys && { rpId: passkeys.rpId }),
      ...(oidc && { oidc: new OidcSignIn(oidc, `${pageConfig.origin}${APPROVALS_API.oidcCallback}`) }),
      ...(signInMailFromEnv() && { mail: signInMailFromEnv() }),
      ...(fromEnv.sharedState && { sharedState: fromEnv.sharedState }),
    });
  }
  if (args.http && tokens) {
    const registrations = new OneTimeUses(fromEnv.sharedState);
    const registrationChallenges = {
      // Derived from the task key: every replica checks the challenges the others issued.
      key: createHmac('sha256', taskKeyFromEnv()).update('temporal-mcp-tasks passkey registration challenges v1').digest(),
      useOnce: (id: string, expiresAt: number) => registrations.take(id, expiresAt),
    };
    const routes = [...(passkeys ? passkeyRoutes(passkeys, registrationChallenges) : []), ...(page?.routes ?? [])];
    const running = await startHttpServer({
      ...args.http,
      endpoints: bridge,
      ...((tokens.size > 0 || oauth) && { authenticator: (endpointUrl: string) => createAuthenticator({ tokens, oauth, endpointUrl }) }),
      sessionIdleMs: msFromEnv(process.env, 'MCP_HTTP_SESSION_IDLE_MS', 3_600_000),
      ...(limits && { limits }),
      origins,
      ...(allowedHosts && { allowedHosts }),
      health: () => bridge.health(HEALTH_DEADLINE_MS),
      ...(routes.length > 0 && { routes }),
    });
    if (passkeys) log.info(`serve: the passkey page is at ${passkeys.origin}/passkeys (relying party ${passkeys.rpId})`);
    if (pageConfig) {
      const ways = ['a passkey', ...(oidc ? [`OpenID Connect (${oidc.issuer})`] : []), ...(signInMailFromEnv() ? ['a link by mail'] : [])];
      log.info(`serve: the approvals page is at ${pageConfig.origin}${APPROVALS_API.page} (sign-in with ${ways.join(', ')})`);
    }
    const schemes = [
      ...(tokens.size > 0 ? [`bearer tokens for ${tokens.size} principal(s)`] : []),
      ...(oauth ? [`OAuth access tokens of ${oauth.issuer} for ${oauth.resource ?? running.url}`] : []),
    ];
    const auth = schemes.length > 0 ? schemes.join(' and ') : `no authentication (principal ${bridge.localPrincipal})`;
    if (oauth && !oauth.resource && !isLoopbackHost(args.http.host)) {
      log.warn(`serve: MCP_OAUTH_RESOURCE is not set: tokens must name ${running.url}; behind a proxy, set it to the public URL`);
    }
    log.info(`serve: MCP Streamable HTTP on ${running.url}, ${auth}, backed by ${target}`);
    for (const signal of ['SIGTERM', 'SIGINT'] as const)
      process.on(signal, () => stopOn(signal, () => running.close(shutdownTimeoutMs).finally(() => page?.close())));
    return;
  }
  const closeStdio = serveStdioForAllGenerations(bridge, () => stopOn('end of input', async () => undefined));
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stopOn(signal, closeStdio));
  log.info(`serve: MCP on stdio for ${bridge.localPrincipal}, backed by ${target}`);
}

/** `--check`: Temporal answers, the namespace exists, the search attribute is registered; one line, exit 0 or 1. */
async function check(): Promise<void> {
  const temporal = temporalConfigFromEnv();
  const connection = await Connection.connect({
    ...(temporal.connectionOptions as ConnectionOptions),
    connectTimeout: CHECK_DEADLINE_MS,
  }).catch((error: Error) => {
    throw new TemporalCheckError(`cannot reach Temporal at ${temporal.address}: ${error.message}`);
  });
  try {
    const found = await checkTemporal(connection, temporal.namespace, CHECK_DEADLINE_MS);
    process.stdout.write(`serve: ok: ${describeCheck(temporal.address, found)}\n`);
  } finally {
    await connection.close();
  }
}

/** Runs the server's command line (`temporal-mcp-tasks serve`); exits the process on errors (2 for usage errors). */
export function runServeCommand(argv: string[]): void {
  if (argv.includes('--version') || argv.includes('-v')) {
    process.stdout.write(`${PACKAGE_VERSION}\n`);
    return;
  }
  main(argv).catch((error: Error) => {
    log.error(`serve: ${error.message}`);
    const usage = [
      UsageError,
      TokenConfigError,
      OAuthConfigError,
      PasskeyConfigError,
      ApprovalsPageConfigError,
      OidcConfigError,
      SharedStateConfigError,
      ToolsFileError,
      MarkerKeyError,
      PayloadKeysError,
      LogConfigError,
      TelemetryConfigError,
    ].some((kind) => error instanceof kind);
    process.exit(usage ? 2 : 1);
  });
}

if (require.main === module) runServeCommand(process.argv.slice(2));

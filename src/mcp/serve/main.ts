/**
 * The MCP server: `temporal-mcp-tasks serve` (stdio) or `temporal-mcp-tasks serve --http 127.0.0.1:3000` (Streamable
 * HTTP on /mcp); in a checkout, `npm run serve`, which serves the example's sample tools too. `--check` checks Temporal for a
 * process manager and exits.
 */
import { createBridge } from '../bridge';
import { bridgeOptionsFromEnv } from '../bridge/bridge-options';
import { Connection, type ConnectionOptions } from '@temporalio/client';
import { checkTemporal, describeCheck, TemporalCheckError } from '../../shared/temporal-check';
import { msFromEnv, temporalConfigFromEnv } from '../../shared/temporal-config';
import { startTelemetry, TelemetryConfigError } from '../../shared/telemetry';
import { log, LogConfigError, logOptionsFromEnv } from '../../util/log';
import { TokenConfigError, tokensFromEnv, watchTokensFile } from '../transports/auth';
import { loadToolsFile, ToolsFileError } from '../tools/config-file';
import { parseServeArgs, samplesByDefault, UsageError, type ServeArgs } from './args';
import { gracefulStop } from './graceful-stop';
import { localRolesFor } from './local-roles';
import { serveHelp } from './serve-help';
import { serveHttp } from './serve-http';
import { loadSampleTools, servedTools } from './served-tools';
import { PAGE_PATH, PasskeyConfigError, passkeyConfigFromEnv } from '../app/passkey-pages';
import { MarkerKeyError, SharedStateConfigError } from '../../core';
import { allowedHostsFromEnv, httpLimitsFromEnv, isLoopbackHost, OriginPolicy } from '../transports/limits';
import { OAuthConfigError, oauthConfigFromEnv } from '../transports/oauth-config';
import { serveStdioForAllGenerations } from '../transports/stdio';
import { PACKAGE_VERSION } from '../../version';
import { OidcConfigError, oidcConfigFromEnv } from '../web/oidc-config';
import { ApprovalsPageConfigError, approvalsPageConfigFromEnv } from '../web/page-config';
import { describePayloadKeys, PayloadKeysError, payloadKeysFromEnv } from '../../shared/payload-keys';

/** Whether the sample tools are served when the command line does not say (see --help). */
const SAMPLES_BY_DEFAULT = samplesByDefault(__filename);

/** The endpoint URL of `--http HOST:PORT`, as the HTTP server names it. */
function endpointUrlOf(http: { host: string; port: number }): string {
  return `http://${http.host.includes(':') ? `[${http.host}]` : http.host}:${http.port}/mcp`;
}

/** How long `--check` waits for Temporal. */
const CHECK_DEADLINE_MS = 5_000;

/** Runs `serve` with `argv` (see --help): the check, or the bridge on stdio or over HTTP until it is stopped. */
async function main(argv: string[]): Promise<void> {
  const args = parseServeArgs(argv, { samples: SAMPLES_BY_DEFAULT });
  if (args.help) {
    process.stdout.write(serveHelp(SAMPLES_BY_DEFAULT));
    return;
  }
  log.configure(logOptionsFromEnv());
  if (args.check) return check();
  const { tokens, oauth } = authenticationFromEnv(args);
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
  const { tools, declared, samples } = toolsOf(args);
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
  const stopOn = gracefulStop(bridge, telemetry, shutdownTimeoutMs);
  if (args.http && tokens) {
    const pages = { passkeys, pageConfig, oidc, sharedState: fromEnv.sharedState };
    return serveHttp({
      http: args.http,
      bridge,
      tokens,
      oauth,
      limits,
      origins,
      allowedHosts,
      ...pages,
      shutdownTimeoutMs,
      target,
      stopOn,
    });
  }
  const closeStdio = serveStdioForAllGenerations(bridge, () => stopOn('end of input', async () => undefined));
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stopOn(signal, closeStdio));
  log.info(`serve: MCP on stdio for ${bridge.localPrincipal}, backed by ${target}`);
}

/**
 * The bearer tokens and the OAuth settings of `serve --http` (none over stdio); watches the tokens file. Throws
 * {@link UsageError} for --no-auth beside configured credentials, and for a non-loopback address without any.
 */
function authenticationFromEnv(args: ServeArgs) {
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
  return { tokens, oauth };
}

/** The tools served: the declared ones of --tools, the samples with --samples, and the generic ones. */
function toolsOf(args: ServeArgs) {
  const declared = args.tools ? loadToolsFile(args.tools) : [];
  const samples = args.samples ? loadSampleTools() : undefined;
  const tools = servedTools({ ...(samples && { samples }), declared, ...(args.tools !== undefined && { file: args.tools }) });
  return { tools, declared, samples };
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

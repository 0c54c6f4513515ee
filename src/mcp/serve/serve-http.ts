/**
 * `serve --http`: the bridge's endpoints over Streamable HTTP, with the passkey page and the approvals page beside them
 * when they are configured, what the server says about them at start, and its stop on SIGTERM or SIGINT.
 */
import { createHmac } from 'node:crypto';
import { OneTimeUses } from '../../approvals/one-time-uses';
import type { ReplicaSharedState } from '../../core';
import { ApproversDirectory } from '../../records/directory';
import { taskKeyFromEnv } from '../../shared/task-key';
import { log } from '../../util/log';
import { APPROVALS_API } from '../app/approvals-page/wire';
import { passkeyRoutes, type PasskeyConfig } from '../app/passkey-pages';
import type { Bridge } from '../bridge';
import type { BearerTokens } from '../transports/auth';
import { startHttpServer } from '../transports/http';
import { isLoopbackHost, type HttpLimits, type OriginPolicy } from '../transports/limits';
import { createAuthenticator } from '../transports/oauth';
import type { OAuthConfig } from '../transports/oauth-config';
import { approvalsPage, type ApprovalsPage } from '../web/approvals-page';
import { signInMailFromEnv } from '../web/mail-sign-in';
import type { OidcConfig } from '../web/oidc-config';
import { OidcSignIn } from '../web/oidc-sign-in';
import type { ApprovalsPageConfig } from '../web/page-config';
import { msFromEnv } from '../../shared/temporal-config';
import type { StopOn } from './graceful-stop';

/** How long /healthz waits for Temporal. */
const HEALTH_DEADLINE_MS = 2_000;

/** What `serve --http` serves, and with which settings (read from the environment by `serve` before the bridge started). */
export interface HttpServing {
  http: { host: string; port: number };
  bridge: Bridge;
  /** The static bearer tokens (none configured: an empty set). */
  tokens: BearerTokens;
  oauth: OAuthConfig | undefined;
  limits: HttpLimits | undefined;
  origins: OriginPolicy;
  allowedHosts: string[] | undefined;
  /** The passkey page's settings; none: no passkey page. */
  passkeys: PasskeyConfig | undefined;
  /** The approvals page's settings; none: no approvals page. */
  pageConfig: ApprovalsPageConfig | undefined;
  oidc: OidcConfig | undefined;
  sharedState: ReplicaSharedState | undefined;
  shutdownTimeoutMs: number;
  /** The Temporal the bridge is backed by, for the start-up line. */
  target: string;
  stopOn: StopOn;
}

/** Serves `serving.bridge` over Streamable HTTP with the pages configured, and stops on SIGTERM or SIGINT. */
export async function serveHttp(serving: HttpServing): Promise<void> {
  const { http, bridge, tokens, oauth, passkeys, pageConfig, oidc, shutdownTimeoutMs, stopOn } = serving;
  let page: ApprovalsPage | undefined;
  if (pageConfig) {
    page = approvalsPage({
      config: pageConfig,
      taskKey: taskKeyFromEnv(),
      approvals: bridge.approvals,
      directory: ApproversDirectory.fromEnv(),
      credentialRoles: (principal) => tokens.rolesOf(principal),
      ...(passkeys && { rpId: passkeys.rpId }),
      ...(oidc && { oidc: new OidcSignIn(oidc, `${pageConfig.origin}${APPROVALS_API.oidcCallback}`) }),
      ...(signInMailFromEnv() && { mail: signInMailFromEnv() }),
      ...(serving.sharedState && { sharedState: serving.sharedState }),
    });
  }
  const registrations = new OneTimeUses(serving.sharedState);
  const registrationChallenges = {
    // Derived from the task key: every replica checks the challenges the others issued.
    key: createHmac('sha256', taskKeyFromEnv()).update('temporal-mcp-tasks passkey registration challenges v1').digest(),
    useOnce: (id: string, expiresAt: number) => registrations.take(id, expiresAt),
  };
  const routes = [...(passkeys ? passkeyRoutes(passkeys, registrationChallenges) : []), ...(page?.routes ?? [])];
  const running = await startHttpServer({
    ...http,
    endpoints: bridge,
    ...((tokens.size > 0 || oauth) && { authenticator: (endpointUrl: string) => createAuthenticator({ tokens, oauth, endpointUrl }) }),
    sessionIdleMs: msFromEnv(process.env, 'MCP_HTTP_SESSION_IDLE_MS', 3_600_000),
    ...(serving.limits && { limits: serving.limits }),
    origins: serving.origins,
    ...(serving.allowedHosts && { allowedHosts: serving.allowedHosts }),
    health: () => bridge.health(HEALTH_DEADLINE_MS),
    ...(routes.length > 0 && { routes }),
  });
  logServing(serving, running.url);
  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    process.on(signal, () => stopOn(signal, () => running.close(shutdownTimeoutMs).finally(() => page?.close())));
}

/** Says in the log where the pages are and how callers of the endpoint at `url` are authenticated. */
function logServing({ http, bridge, tokens, oauth, passkeys, pageConfig, oidc, target }: HttpServing, url: string): void {
  if (passkeys) log.info(`serve: the passkey page is at ${passkeys.origin}/passkeys (relying party ${passkeys.rpId})`);
  if (pageConfig) {
    const ways = ['a passkey', ...(oidc ? [`OpenID Connect (${oidc.issuer})`] : []), ...(signInMailFromEnv() ? ['a link by mail'] : [])];
    log.info(`serve: the approvals page is at ${pageConfig.origin}${APPROVALS_API.page} (sign-in with ${ways.join(', ')})`);
  }
  const schemes = [
    ...(tokens.size > 0 ? [`bearer tokens for ${tokens.size} principal(s)`] : []),
    ...(oauth ? [`OAuth access tokens of ${oauth.issuer} for ${oauth.resource ?? url}`] : []),
  ];
  const auth = schemes.length > 0 ? schemes.join(' and ') : `no authentication (principal ${bridge.localPrincipal})`;
  if (oauth && !oauth.resource && !isLoopbackHost(http.host)) {
    log.warn(`serve: MCP_OAUTH_RESOURCE is not set: tokens must name ${url}; behind a proxy, set it to the public URL`);
  }
  log.info(`serve: MCP Streamable HTTP on ${url}, ${auth}, backed by ${target}`);
}

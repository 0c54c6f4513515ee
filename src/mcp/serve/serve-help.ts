/**
 * The --help text of `temporal-mcp-tasks serve`: its options, how it authenticates callers, and the environment it
 * reads.
 */
import { TASK_QUEUE_ENV } from '../../shared/temporal-config';

/** The --help text; `samplesServed` says whether this copy serves the sample tools when the command line does not say. */
export function serveHelp(samplesServed: boolean): string {
  return `Usage: temporal-mcp-tasks serve [--http HOST:PORT [--no-auth] [--local-roles-over-http]] [--tools FILE]
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
                     not when it runs compiled from dist/, as the installed package's command does. This copy: ${samplesServed ? 'served' : 'not served'}
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

${ENVIRONMENT_HELP}`;
}

/** The Environment section of --help: the variables `serve` reads. */
const ENVIRONMENT_HELP = `Environment:
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

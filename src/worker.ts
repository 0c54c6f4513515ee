/**
 * The worker command: a Temporal worker of bridge-served workflows, with the bridge's activities, its start-up checks,
 * logs, traces and graceful stop. `temporal-mcp-tasks worker --workflows MODULE [--activities MODULE]` runs a team's
 * own workflows; {@link runWorkerCommand} is the same command for a worker's own `main`.
 * Usage: temporal-mcp-tasks worker [--workflows MODULE] [--activities MODULE] [--check] [--help] [--version]
 */
import path from 'node:path';
import type { Logger as TemporalLogger, LogLevel as TemporalLogLevel, LogMetadata } from '@temporalio/common';
import { NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { answerSealFromEnv, type AnswerSeal } from './shared/answer-proof';
import { encryptingDataConverter } from './shared/payload-codec';
import { describePayloadKeys, PayloadKeysError, payloadKeysFromEnv, type PayloadKeys } from './shared/payload-keys';
import { decisionPublicKeysFromEnv, describeDecisionPublicKeys, type DecisionPublicKeys } from './records/keys';
import { decisionStoreLocation } from './records/store';
import {
  describeNotificationDelivery,
  notificationDeliveryFromEnv,
  type NotificationDeliveryConfig,
} from './activities/notification-delivery-config';
import { notificationOutboxFromEnv } from './activities/notifications';
import { createTaskWorker } from './task-worker';
import { checkTemporal, describeCheck, TemporalCheckError } from './shared/temporal-check';
import { msFromEnv, temporalConfigFromEnv, TASK_QUEUE_ENV, type TemporalConfig } from './shared/temporal-config';
import { startTelemetry, TelemetryConfigError } from './shared/telemetry';
import { log, LogConfigError, logOptionsFromEnv, type LogLevel } from './util/log';
import { PACKAGE_VERSION } from './version';

/** A worker's activities, by the names its workflows call them. */
export type ActivityFunctions = Record<string, (...args: never[]) => unknown>;

/** What {@link runWorkerCommand} runs beside the bridge's activities, and how its help reads. */
export interface WorkerCommandOptions {
  /** The command's name in its usage line; default `temporal-mcp-tasks worker`. */
  command?: string;
  /** What the worker runs, the first paragraph of --help. */
  summary?: string;
  /** The workflows module (`require.resolve('./workflows')`); `--workflows` overrides it. None: activities only. */
  workflowsPath?: string;
  /**
   * Makes the worker's own activities once the bridge's settings have been read and before it polls; it may prepare
   * what they need (directories, imports) and throw naming a bad setting. `--activities` overrides it.
   */
  activities?: () => ActivityFunctions | Promise<ActivityFunctions>;
  /** Lines added to --help's Environment section: the settings the activities read. */
  environmentHelp?: string;
  /** Says in the start-up log what the activities were set up with. */
  startupNote?: () => string;
}

/** Thrown for a command line that cannot be run; the message says what to change. */
class UsageError extends Error {}

/** The command line: the flags, and the modules of `--workflows` and `--activities`. */
interface WorkerArgs {
  help: boolean;
  version: boolean;
  check: boolean;
  workflows?: string;
  activities?: string;
}

function parseWorkerArgs(argv: readonly string[]): WorkerArgs {
  const args: WorkerArgs = { help: false, version: false, check: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') args.help = true;
    else if (arg === '--version' || arg === '-v') args.version = true;
    else if (arg === '--check') args.check = true;
    else if (/^--(workflows|activities)(=|$)/.test(arg)) {
      const name = arg.slice(2).split('=')[0] as 'workflows' | 'activities';
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      if (!value || value.startsWith('--')) throw new UsageError(`--${name} needs a module, e.g. --${name} ./dist/${name}.js`);
      args[name] = value;
    } else throw new UsageError(`unknown argument "${arg}"; see --help`);
  }
  return args;
}

/** The file a module argument names, resolved from the current folder as Node resolves it; throws naming it when absent. */
function resolveModule(flag: string, module: string): string {
  try {
    return require.resolve(path.resolve(module));
  } catch {
    throw new UsageError(`${flag} ${module}: no such module (a file, or a folder with an index, relative to ${process.cwd()})`);
  }
}

/**
 * The activities of an `--activities` module: its `createActivities` function (called with no arguments, its result
 * awaited), else its `activities` object, else its default export, either of those.
 */
async function activitiesOfModule(file: string): Promise<ActivityFunctions> {
  const loaded = require(file) as Record<string, unknown>;
  const found = loaded.createActivities ?? loaded.activities ?? loaded.default;
  const activities = typeof found === 'function' ? await (found as () => unknown)() : found;
  if (typeof activities !== 'object' || activities === null) {
    throw new UsageError(`--activities ${file}: export createActivities(), or activities, an object of activity functions`);
  }
  return activities as ActivityFunctions;
}

function helpText(options: WorkerCommandOptions): string {
  const command = options.command ?? 'temporal-mcp-tasks worker';
  const summary =
    options.summary ??
    `Runs a Temporal worker of your workflows (--workflows) and activities (--activities) with the bridge's own
activities (answer checks, decision records, notifications) until SIGINT or SIGTERM. Without --workflows it runs the
activities alone, for workflows of another SDK language that call them.`;
  return `Usage: ${command} [--workflows MODULE] [--activities MODULE] [--check] [--help] [--version]

${summary}
On SIGINT or SIGTERM it stops polling, lets the activities under way finish for WORKER_SHUTDOWN_GRACE_MS (then they
are cancelled and Temporal retries them on another worker), and exits 0.

Options:
  --workflows MODULE   the module exporting your workflow functions, bundled for Temporal's sandbox
                       (e.g. ./dist/workflows.js); its imports of temporal-mcp-tasks/workflow get this worker's copy
  --activities MODULE  the module of your activities: an exported createActivities() (may be async), or an object
                       exported as activities; registered beside the bridge's (yours win on a shared name)
  --check              check that Temporal answers, the namespace exists and the search attributes McpPrincipal and
                       McpAwaiting are registered; print one line and exit 0 (ok) or 1 (not)
  -v, --version        print the version
  -h, --help           show this help

${ENVIRONMENT_HELP}${options.environmentHelp ?? ''}Other TEMPORAL_* variables and the Temporal config file are read as the Temporal CLI reads them.
`;
}

const ENVIRONMENT_HELP = `Environment:
  TEMPORAL_ADDRESS        Temporal frontend (default 127.0.0.1:7233)
  TEMPORAL_NAMESPACE      namespace (default "default")
  ${TASK_QUEUE_ENV}     task queue (default "temporal-mcp")
  MCP_DECISION_STORE      where the bridge keeps signed decision records, which workflows check before the effect
                          of an approval: a directory or a postgres:// URL, the bridge's own (default .data/decisions)
  MCP_DECISION_PUBLIC_KEY the bridge's decision public key(s), SPKI PEM files, comma-separated (default: the public
                          half of the local default key, ~/.config/temporal-mcp-tasks/decision-signing-key.pub.pem)
  NOTIFICATION_OUTBOX     JSON-lines file of approval notifications (asked, reminder, escalated, delegated,
                          decided), every one whether delivered or not (default .data/notifications.jsonl)
  MCP_APPROVERS_DIRECTORY JSON file of the people to reach: names, principals, roles, email, webhook (default none:
                          the outbox only; see docs/configuration.md)
  MCP_SMTP_URL            mail approvers through this SMTP server: smtp://host:port, smtps://user:pass@host:465
                          (default none: no mail)
  MCP_NOTIFY_FROM         the sender of that mail, e.g. "Approvals <approvals@example.com>" (required with
                          MCP_SMTP_URL)
  MCP_WEBHOOK_SECRET      signs webhook calls (Standard Webhooks, whsec_...) of people without a secret of their own
  MCP_TASK_VIEW_URL       link to a task in messages, {taskId} standing for its id (default none)
  NOTIFICATION_LEDGER     directory recording each delivery made, so a retry makes none twice
                          (default .data/notifications-sent)
  MCP_TASK_MARKER_KEY     the bridge's secret key (32+ characters), which workflows need to check that an answer
                          came from a bridge; the same as the bridge's (MCP_TASK_MARKER_KEY_FILE names a file
                          instead; default: the key file every local process shares, see the bridge's --help)
  MCP_PAYLOAD_KEYS        the bridge's payload keys file ("keyId base64key" lines, mode 600): payloads are
                          encrypted under the first key and decrypted with any; the same file as the bridge's
                          (default none: payloads in the clear)
  WORKER_SHUTDOWN_GRACE_MS  on SIGTERM/SIGINT, how long activities under way may finish (default 10000)
  MCP_LOG_FORMAT          text (default) or json: one JSON object a line (time, level, msg, taskId, ...)
  MCP_LOG_LEVEL           debug, info (default), warn or error
  OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
                          turn OpenTelemetry traces of workflows and activities on, over OTLP/HTTP
                          (OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf or http/json; OTEL_SERVICE_NAME,
                          default temporal-mcp-worker)
`;

/** The SDK's log (worker, workflows, activities) in this process's log; a workflow id is the task id. */
class RuntimeLog implements TemporalLogger {
  log(level: TemporalLogLevel, message: string, meta: LogMetadata = {}): void {
    const context: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(meta)) if (value !== undefined) context[key] = value;
    if (typeof meta.workflowId === 'string') context.taskId = meta.workflowId;
    log.write(LEVELS[level], message, context);
  }
  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

const LEVELS: Record<TemporalLogLevel, LogLevel> = { TRACE: 'debug', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' };

/** Runs the worker command with `argv` (see --help): the check, or the worker until a signal stops it. */
async function main(argv: string[], options: WorkerCommandOptions): Promise<void> {
  const args = parseWorkerArgs(argv);
  if (args.help) {
    process.stdout.write(helpText(options));
    return;
  }
  if (args.version) {
    process.stdout.write(`${PACKAGE_VERSION}\n`);
    return;
  }
  log.configure(logOptionsFromEnv());
  // Signals are handled below, so that a second one (npm passes each on to its child) changes nothing.
  Runtime.install({ logger: new RuntimeLog(), shutdownSignals: [], telemetryOptions: { logging: { forward: {} } } });
  const config: TemporalConfig = temporalConfigFromEnv();
  const connect = () =>
    NativeConnection.connect(config.connectionOptions).catch((error: Error) => {
      throw new Error(`cannot reach Temporal at ${config.address}: ${error.message}. Start it with ./temporal-dev.sh start`);
    });
  if (args.check) return check(config, connect);
  const workflowsPath = args.workflows !== undefined ? resolveModule('--workflows', args.workflows) : options.workflowsPath;
  const activitiesFile = args.activities !== undefined ? resolveModule('--activities', args.activities) : undefined;
  const settings = bridgeSettingsFromEnv();
  const activities = activitiesFile ? await activitiesOfModule(activitiesFile) : await options.activities?.();
  const shutdownGraceMs = msFromEnv(process.env, 'WORKER_SHUTDOWN_GRACE_MS', 10_000);
  // Signals may come before the worker exists; they find it here once it does.
  const running: { worker?: Worker } = {};
  stopOnSignals(running, shutdownGraceMs);
  const telemetry = startTelemetry({ serviceName: 'temporal-mcp-worker' });
  const connection = await connect();
  const { answerSeal, decisionKeys, decisionStore, notificationOutbox, notificationDelivery, payloadKeys } = settings;
  const worker = await createTaskWorker({
    connection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    ...(payloadKeys && { dataConverter: encryptingDataConverter(payloadKeys) }),
    taskActivities: {
      answerSeal,
      decisionKeys,
      decisionStore,
      notificationOutbox,
      notificationDelivery: notificationDelivery ?? null,
      payloadKeys: payloadKeys ?? null,
    },
    ...(activities && { activities }),
    ...(workflowsPath !== undefined && { workflowsPath }),
    ...(telemetry.worker && { interceptors: telemetry.worker.interceptors, sinks: telemetry.worker.sinks }),
    shutdownGraceTime: shutdownGraceMs,
    // An activity that ignores its cancellation does not hold the process for ever.
    shutdownForceTime: shutdownGraceMs + 10_000,
  });
  running.worker = worker;
  if (telemetry.enabled) log.info(`worker: traces to ${telemetry.description}`);
  const described = options.startupNote && !activitiesFile ? `${options.startupNote()}; ` : '';
  logStart(config, settings, described, workflowsPath);
  try {
    await worker.run();
  } finally {
    await connection.close();
    await telemetry.shutdown();
  }
  log.info('worker: stopped');
}

/** `--check`: Temporal answers, the namespace exists, the search attributes are registered; one line on stdout. */
async function check(config: TemporalConfig, connect: () => Promise<NativeConnection>): Promise<void> {
  const connection = await connect().catch((error: Error) => {
    throw new TemporalCheckError(error.message);
  });
  try {
    process.stdout.write(`worker: ok: ${describeCheck(config.address, await checkTemporal(connection, config.namespace, 5_000))}\n`);
  } finally {
    await connection.close();
  }
}

/** The bridge's settings the worker's activities need, read from the environment before the worker polls. */
function bridgeSettingsFromEnv(): BridgeSettings {
  // Read before polling: a worker without the bridge's key would refuse every answer.
  const answerSeal = answerSealFromEnv();
  // And the payload keys: a worker without them fails every workflow task of an encrypted task.
  const payloadKeys = payloadKeysFromEnv();
  // Named keys are read before polling; the machine's default public key may come later, when the server first starts.
  const decisionKeys = decisionPublicKeysFromEnv();
  const decisionStore = decisionStoreLocation();
  const notificationOutbox = notificationOutboxFromEnv();
  const notificationDelivery = notificationDeliveryFromEnv();
  return { answerSeal, decisionKeys, decisionStore, notificationOutbox, notificationDelivery, payloadKeys };
}

/** The bridge's settings of {@link bridgeSettingsFromEnv}. */
interface BridgeSettings {
  answerSeal: AnswerSeal;
  decisionKeys: DecisionPublicKeys;
  /** The decision store's location: a directory or a postgres:// URL. */
  decisionStore: string;
  /** The outbox file. */
  notificationOutbox: string;
  notificationDelivery: NotificationDeliveryConfig | undefined;
  payloadKeys: PayloadKeys | undefined;
}

/**
 * On SIGTERM or SIGINT, stops the worker once `running` holds it: it stops polling and the activities under way have
 * `shutdownGraceMs` to finish. Before it polls, exits at once. A second signal changes nothing.
 */
function stopOnSignals(running: { worker?: Worker }, shutdownGraceMs: number): void {
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      const { worker } = running;
      if (worker?.getState() !== 'RUNNING') {
        // Before the worker polls nothing is under way: just go.
        log.info(`worker: ${signal}: stopped before polling`);
        process.exit(0);
      }
      log.info(
        `worker: ${signal}: stopping; activities under way have ${shutdownGraceMs} ms to finish, then Temporal retries them elsewhere`,
      );
      worker.shutdown();
    });
  }
}

/** Says in the log where notifications go and what the worker polls for, with which keys and decision store. */
function logStart(config: TemporalConfig, settings: BridgeSettings, described: string, workflowsPath: string | undefined): void {
  const { answerSeal, decisionStore, notificationOutbox, notificationDelivery, payloadKeys } = settings;
  const reached = notificationDelivery
    ? ` and to ${describeNotificationDelivery(notificationDelivery)}`
    : ' only (MCP_APPROVERS_DIRECTORY unset)';
  log.info(`worker: ${described}notifications to ${notificationOutbox}${reached}`);
  const runs = workflowsPath !== undefined ? `workflows of ${workflowsPath}` : 'activities only (no --workflows)';
  log.info(
    `worker: polling task queue "${config.taskQueue}" on ${config.address} (namespace ${config.namespace}): ${runs}; answer key ${answerSeal.keyId}; ${describePayloadKeys(payloadKeys)}; decisions in ${redactUrl(decisionStore)}, checked with ${describeDecisionPublicKeys()}`,
  );
}

/**
 * Runs the worker command with `argv` (see --help) and exits the process when it ends: 0 when stopped by a signal, 1
 * when it failed, 2 for a usage error or a bad setting of the logs or traces. A worker's own `main` passes its workflows
 * and activities: `runWorkerCommand(process.argv.slice(2), { workflowsPath: require.resolve('./workflows'), activities })`.
 */
export function runWorkerCommand(argv: string[], options: WorkerCommandOptions = {}): void {
  main(argv, options).then(
    () => process.exit(0),
    (error: Error) => {
      log.error(`worker: ${error.message}`);
      process.exit([UsageError, LogConfigError, TelemetryConfigError, PayloadKeysError].some((kind) => error instanceof kind) ? 2 : 1);
    },
  );
}

if (require.main === module) runWorkerCommand(process.argv.slice(2));

/** A store location fit for a log line: a database URL without its password. */
function redactUrl(location: string): string {
  return location.replace(/^(postgres(?:ql)?:\/\/[^:/@]*):[^@]*@/, '$1:***@');
}

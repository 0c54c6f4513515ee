/**
 * The sample worker: runs the sample workflows (the invoice flow and the others the sample tools start) and their
 * activities.
 * Usage: temporal-mcp-tasks worker [--check] [--help] (in a checkout, npm run worker [-- --help])
 */
import type { Logger as TemporalLogger, LogLevel as TemporalLogLevel, LogMetadata } from '@temporalio/common';
import { NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { answerSealFromEnv, type AnswerSeal } from './shared/answer-proof';
import { activityConfigFromEnv, createActivities, importJsonLinesFiles, type ActivityConfig } from './activities';
import { createTaskActivities } from './activities/task-activities';
import { decisionPublicKeysFromEnv, describeDecisionPublicKeys, type DecisionPublicKeys } from './approvals/records/keys';
import { describeNotificationDelivery } from './activities/notification-delivery';
import { checkTemporal, describeCheck, TemporalCheckError } from './shared/temporal-check';
import { msFromEnv, temporalConfigFromEnv, TASK_QUEUE_ENV, type TemporalConfig } from './shared/temporal-config';
import { startTelemetry, TelemetryConfigError, type Telemetry } from './shared/telemetry';
import { log, LogConfigError, logOptionsFromEnv, type LogLevel } from './util/log';
import { PACKAGE_VERSION } from './version';

/** What the sample worker needs beyond its connection. */
export interface SampleWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: ActivityConfig;
  /** A prebuilt workflow bundle (tests build one and share it); otherwise the workflows are bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /**
   * Tracing: workflow and activity interceptors and the sink that exports workflow spans. A prebuilt bundle must
   * include the workflow interceptor module itself (`WORKFLOW_INTERCEPTOR_MODULE`).
   */
  telemetry?: Telemetry['worker'];
  /** After `shutdown()`, how long activities under way may run before they are cancelled (Temporal retries them). */
  shutdownGraceMs?: number;
  /** Checks the seals of answers (the bridge's key); default {@link answerSealFromEnv}. */
  answerSeal?: AnswerSeal;
  /** The public keys decision records are checked with; default {@link decisionPublicKeysFromEnv}. */
  decisionKeys?: DecisionPublicKeys;
}

/**
 * Creates (does not run) the sample worker: the workflows of `src/workflows` (those of the sample tools and of
 * `examples/tools.yaml`) with the fixture ERP, the payments ledger, the notifications (outbox, webhooks, mail) and the answer checks.
 */
export function createSampleWorker(options: SampleWorkerOptions): Promise<Worker> {
  const graceMs = options.shutdownGraceMs ?? 10_000;
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: {
      ...createTaskActivities({
        ...(options.answerSeal && { answerSeal: options.answerSeal }),
        ...(options.decisionKeys && { decisionKeys: options.decisionKeys }),
        decisionStore: options.activities.decisionStore,
        notificationOutbox: options.activities.notificationOutbox,
        notificationDelivery: options.activities.notificationDelivery ?? null,
      }),
      ...createActivities(options.activities),
    },
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: require.resolve('./workflows') }),
    ...(options.telemetry && { interceptors: options.telemetry.interceptors, sinks: options.telemetry.sinks }),
    shutdownGraceTime: graceMs,
    // An activity that ignores its cancellation does not hold the process for ever.
    shutdownForceTime: graceMs + 10_000,
  });
}

const HELP = `Usage: temporal-mcp-tasks worker [--check] [--help] [--version]

Runs the Temporal worker for the sample workflows (the invoice flow and others) and their activities until SIGINT or
SIGTERM. On either it stops polling, lets the activities under way finish for WORKER_SHUTDOWN_GRACE_MS (then they are
cancelled and Temporal retries them on another worker), and exits 0.

Options:
  --check        check that Temporal answers, the namespace exists and the search attributes McpPrincipal and
                 McpAwaiting are registered; print one line and exit 0 (ok) or 1 (not)
  -v, --version  print the version
  -h, --help     show this help

Environment:
  TEMPORAL_ADDRESS        Temporal frontend (default 127.0.0.1:7233)
  TEMPORAL_NAMESPACE      namespace (default "default")
  ${TASK_QUEUE_ENV}     task queue (default "temporal-mcp")
  PAYMENTS_LEDGER         payments ledger directory, one file per payment (default .data/payments)
  ERP_REGISTRY            fixture ERP invoice registry directory (default .data/erp-invoices)
  ERP_DELAY_MS            simulated ERP latency in ms (default 0)
  PAYMENT_DELAY_MS        simulated payment latency in ms (default 0)
  PAYMENT_FAIL_ATTEMPTS   fail the first N attempts of each payment (default 0)
  INVOICE_APPROVER_ROLE   who approves invoices: holders of this role (from their credentials), never the
                          submitter (default ap-approver); "requester": the submitter approves their own
  INVOICE_SECOND_APPROVER_ABOVE  above this total two distinct approvers must approve (default 10000)
  INVOICE_APPROVAL_REMIND_AFTER_MS    remind the approvers after this long (default 86400000, a day; "never")
  INVOICE_APPROVAL_ESCALATE_AFTER_MS  then ask INVOICE_ESCALATION_ROLE too (default 259200000, three days; "never")
  INVOICE_ESCALATION_ROLE the role an unanswered approval escalates to (default ap-manager; "none")
  INVOICE_APPROVAL_EXPIRE_AFTER_MS    end the invoice unpaid after this long without approval (default never)
  MCP_DECISION_STORE      where the bridge keeps signed decision records, checked before each payment of an invoice
                          approved by role: a directory or a postgres:// URL, the bridge's own (default .data/decisions)
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
  WORKER_SHUTDOWN_GRACE_MS  on SIGTERM/SIGINT, how long activities under way may finish (default 10000)
  MCP_LOG_FORMAT          text (default) or json: one JSON object a line (time, level, msg, taskId, ...)
  MCP_LOG_LEVEL           debug, info (default), warn or error
  OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
                          turn OpenTelemetry traces of workflows and activities on, over OTLP/HTTP
                          (OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf or http/json; OTEL_SERVICE_NAME,
                          default temporal-mcp-worker)
Other TEMPORAL_* variables and the Temporal config file are read as the Temporal CLI reads them.
At start, a JSON-lines ledger or registry of an earlier version (<directory>.jsonl, e.g. .data/payments.jsonl) is
copied into its directory and renamed to <directory>.jsonl.imported, so that payments made before the upgrade are
never made again. Stop the workers of the earlier version first.
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

/** The invoice approval policy in one phrase, for the start-up log. */
function describePolicy(policy: ActivityConfig['invoiceApproval']): string {
  if (policy.approvers === 'requester') return 'their submitter (INVOICE_APPROVER_ROLE=requester)';
  const escalation = policy.escalateTo ? `, escalated to ${policy.escalateTo} after ${policy.escalateAfterMs} ms` : '';
  return `role ${policy.role}, never the submitter, two above ${policy.secondApproverAbove}${escalation}`;
}

const LEVELS: Record<TemporalLogLevel, LogLevel> = { TRACE: 'debug', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' };

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return;
  }
  if (argv.includes('--version') || argv.includes('-v')) {
    process.stdout.write(`${PACKAGE_VERSION}\n`);
    return;
  }
  const unknown = argv.find((arg) => arg !== '--check');
  if (unknown !== undefined) throw new UsageError(`unknown argument "${unknown}"; see --help`);
  log.configure(logOptionsFromEnv());
  // Signals are handled below, so that a second one (npm passes each on to its child) changes nothing.
  Runtime.install({ logger: new RuntimeLog(), shutdownSignals: [], telemetryOptions: { logging: { forward: {} } } });
  const config: TemporalConfig = temporalConfigFromEnv();
  const connect = () =>
    NativeConnection.connect(config.connectionOptions).catch((error: Error) => {
      throw new Error(`cannot reach Temporal at ${config.address}: ${error.message}. Start it with ./temporal-dev.sh start`);
    });
  if (argv.includes('--check')) {
    const connection = await connect().catch((error: Error) => {
      throw new TemporalCheckError(error.message);
    });
    try {
      process.stdout.write(`worker: ok: ${describeCheck(config.address, await checkTemporal(connection, config.namespace, 5_000))}\n`);
    } finally {
      await connection.close();
    }
    return;
  }
  const activities = activityConfigFromEnv();
  // Read before polling: a worker without the bridge's key would refuse every answer.
  const answerSeal = answerSealFromEnv();
  // Named keys are read before polling; the machine's default public key may come later, when the server first starts.
  const decisionKeys = decisionPublicKeysFromEnv();
  const imported = await importJsonLinesFiles(activities);
  if (imported.payments !== undefined) log.info(`worker: ${imported.payments} payment(s) imported from ${activities.ledgerDir}.jsonl`);
  if (imported.registrations !== undefined) {
    log.info(`worker: ${imported.registrations} registration(s) imported from ${activities.erpRegistryDir}.jsonl`);
  }
  const shutdownGraceMs = msFromEnv(process.env, 'WORKER_SHUTDOWN_GRACE_MS', 10_000);
  // Signals may come before the worker exists; they find it here once it does.
  const running: { worker?: Worker } = {};
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
  const telemetry = startTelemetry({ serviceName: 'temporal-mcp-worker' });
  const connection = await connect();
  const worker = await createSampleWorker({
    connection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    activities,
    answerSeal,
    decisionKeys,
    shutdownGraceMs,
    ...(telemetry.worker && { telemetry: telemetry.worker }),
  });
  running.worker = worker;
  if (telemetry.enabled) log.info(`worker: traces to ${telemetry.description}`);
  const reached = activities.notificationDelivery
    ? ` and to ${describeNotificationDelivery(activities.notificationDelivery)}`
    : ' only (MCP_APPROVERS_DIRECTORY unset)';
  log.info(
    `worker: invoices approved by ${describePolicy(activities.invoiceApproval)}; notifications to ${activities.notificationOutbox}${reached}`,
  );
  log.info(
    `worker: polling task queue "${config.taskQueue}" on ${config.address} (namespace ${config.namespace}); ledger ${activities.ledgerDir}; answer key ${answerSeal.keyId}; decisions in ${redactUrl(activities.decisionStore)}, checked with ${describeDecisionPublicKeys()}`,
  );
  try {
    await worker.run();
  } finally {
    await connection.close();
    await telemetry.shutdown();
  }
  log.info('worker: stopped');
}

class UsageError extends Error {}

/** Runs the worker's command line (`temporal-mcp-tasks worker`); exits the process when it ends (2 for usage errors). */
export function runWorkerCommand(argv: string[]): void {
  main(argv).then(
    () => process.exit(0),
    (error: Error) => {
      log.error(`worker: ${error.message}`);
      process.exit(error instanceof UsageError || error instanceof LogConfigError || error instanceof TelemetryConfigError ? 2 : 1);
    },
  );
}

if (require.main === module) runWorkerCommand(process.argv.slice(2));

/** A store location fit for a log line: a database URL without its password. */
function redactUrl(location: string): string {
  return location.replace(/^(postgres(?:ql)?:\/\/[^:/@]*):[^@]*@/, '$1:***@');
}

/**
 * The example's worker: the invoice flow and the other sample workflows, with their activities (the fixture ERP, the
 * payments ledger) beside the bridge's, run by the package's worker command.
 * Usage: npm run worker [-- --help] (from the checkout's root or this folder)
 */
import type { NativeConnection, Worker, WorkerOptions } from '@temporalio/worker';
import { createTaskWorker, runWorkerCommand, type AnswerSeal, type DecisionPublicKeys } from 'temporal-mcp-tasks';
import { activityConfigFromEnv, createActivities, importJsonLinesFiles, type ActivityConfig } from './activities';
import type { InvoiceApprovalPolicy } from './invoice';

/** What the sample worker needs beyond its connection. */
export interface SampleWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: ActivityConfig;
  /** A prebuilt workflow bundle (tests build one and share it); otherwise the workflows are bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Workflow and activity interceptors and sinks, e.g. for tracing (a prebuilt bundle must hold its interceptor modules). */
  telemetry?: Pick<WorkerOptions, 'interceptors' | 'sinks'>;
  /** After `shutdown()`, how long activities under way may run before they are cancelled (Temporal retries them). */
  shutdownGraceMs?: number;
  /** Checks the seals of answers (the bridge's key); default from the environment. */
  answerSeal?: AnswerSeal;
  /** The public keys decision records are checked with; default from the environment. */
  decisionKeys?: DecisionPublicKeys;
}

/** The workflows module of this example. */
export const WORKFLOWS_PATH = require.resolve('./workflows');

/**
 * Creates (does not run) the sample worker: the workflows of `./workflows` (those of the sample tools and of
 * `tools.yaml` beside this folder) with the fixture ERP, the payments ledger and the bridge's activities.
 */
export function createSampleWorker(options: SampleWorkerOptions): Promise<Worker> {
  const graceMs = options.shutdownGraceMs ?? 10_000;
  return createTaskWorker({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    taskActivities: {
      ...(options.answerSeal && { answerSeal: options.answerSeal }),
      ...(options.decisionKeys && { decisionKeys: options.decisionKeys }),
      decisionStore: options.activities.decisionStore,
      notificationOutbox: options.activities.notificationOutbox,
      notificationDelivery: options.activities.notificationDelivery ?? null,
    },
    activities: createActivities(options.activities),
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
    ...options.telemetry,
    shutdownGraceTime: graceMs,
    // An activity that ignores its cancellation does not hold the process for ever.
    shutdownForceTime: graceMs + 10_000,
  });
}

/** The invoice approval policy in one phrase, for the start-up log. */
function describePolicy(policy: InvoiceApprovalPolicy): string {
  if (policy.approvers === 'requester') return 'their submitter (INVOICE_APPROVER_ROLE=requester)';
  const escalation = policy.escalateTo ? `, escalated to ${policy.escalateTo} after ${policy.escalateAfterMs} ms` : '';
  return `role ${policy.role}, never the submitter, two above ${policy.secondApproverAbove}${escalation}`;
}

const ENVIRONMENT_HELP = `  PAYMENTS_LEDGER         payments ledger directory, one file per payment (default .data/payments)
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
At start, a JSON-lines ledger or registry of an earlier version (<directory>.jsonl, e.g. .data/payments.jsonl) is
copied into its directory and renamed to <directory>.jsonl.imported, so that payments made before the upgrade are
never made again. Stop the workers of the earlier version first.
`;

/** What the worker prepared at start, for its start-up log line. */
function describeStart(config: ActivityConfig, imported: { payments?: number; registrations?: number }): string {
  const imports = [
    ...(imported.payments !== undefined ? [`${imported.payments} payment(s) imported from ${config.ledgerDir}.jsonl`] : []),
    ...(imported.registrations !== undefined
      ? [`${imported.registrations} registration(s) imported from ${config.erpRegistryDir}.jsonl`]
      : []),
  ];
  return [`invoices approved by ${describePolicy(config.invoiceApproval)}`, `ledger ${config.ledgerDir}`, ...imports].join('; ');
}

if (require.main === module) {
  let started = '';
  runWorkerCommand(process.argv.slice(2), {
    command: 'npm run worker --',
    summary: `Runs the Temporal worker of the invoice-approval example: the invoice flow and the other sample workflows,
their activities and the bridge's, until SIGINT or SIGTERM.`,
    workflowsPath: WORKFLOWS_PATH,
    environmentHelp: ENVIRONMENT_HELP,
    async activities() {
      const config = activityConfigFromEnv();
      started = describeStart(config, await importJsonLinesFiles(config));
      return createActivities(config);
    },
    startupNote: () => started,
  });
}

/**
 * The Temporal worker: runs the invoice workflow and its activities.
 * Usage: temporal-mcp-tasks worker [--help] (in a checkout, npm run worker [-- --help])
 */
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { activityConfigFromEnv, createActivities, importJsonLinesFiles, type ActivityConfig } from './activities';
import { temporalConfigFromEnv, TASK_QUEUE_ENV, type TemporalConfig } from './shared/temporal-config';
import { PACKAGE_VERSION } from './version';

/** What a worker needs beyond its connection. */
export interface InvoiceWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: ActivityConfig;
  /** A prebuilt workflow bundle (tests build one and share it); otherwise the workflows are bundled at start. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

/** Creates (does not run) a worker for the invoice workflow. */
export function createInvoiceWorker(options: InvoiceWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: createActivities(options.activities),
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath: require.resolve('./workflows') }),
  });
}

const HELP = `Usage: temporal-mcp-tasks worker [--help] [--version]

Runs the Temporal worker for the sample workflows (the invoice flow and others) and their activities until SIGINT or SIGTERM.

Environment:
  TEMPORAL_ADDRESS        Temporal frontend (default 127.0.0.1:7233)
  TEMPORAL_NAMESPACE      namespace (default "default")
  ${TASK_QUEUE_ENV}     task queue (default "temporal-mcp")
  PAYMENTS_LEDGER         payments ledger directory, one file per payment (default .data/payments)
  ERP_REGISTRY            fixture ERP invoice registry directory (default .data/erp-invoices)
  ERP_DELAY_MS            simulated ERP latency in ms (default 0)
  PAYMENT_DELAY_MS        simulated payment latency in ms (default 0)
  PAYMENT_FAIL_ATTEMPTS   fail the first N attempts of each payment (default 0)
Other TEMPORAL_* variables and the Temporal config file are read as the Temporal CLI reads them.
At start, a JSON-lines ledger or registry of an earlier version (<directory>.jsonl, e.g. .data/payments.jsonl) is
copied into its directory and renamed to <directory>.jsonl.imported, so that payments made before the upgrade are
never made again. Stop the workers of the earlier version first.
`;

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return;
  }
  if (argv.includes('--version') || argv.includes('-v')) {
    process.stdout.write(`${PACKAGE_VERSION}\n`);
    return;
  }
  if (argv.length > 0) throw new UsageError(`unknown argument "${argv[0]}"; see --help`);
  const config: TemporalConfig = temporalConfigFromEnv();
  const activities = activityConfigFromEnv();
  const imported = await importJsonLinesFiles(activities);
  if (imported.payments !== undefined) console.error(`worker: ${imported.payments} payment(s) imported from ${activities.ledgerDir}.jsonl`);
  if (imported.registrations !== undefined) {
    console.error(`worker: ${imported.registrations} registration(s) imported from ${activities.erpRegistryDir}.jsonl`);
  }
  const connection = await NativeConnection.connect(config.connectionOptions).catch((error: Error) => {
    throw new Error(`cannot reach Temporal at ${config.address}: ${error.message}. Start it with ./temporal-dev.sh start`);
  });
  const worker = await createInvoiceWorker({ connection, namespace: config.namespace, taskQueue: config.taskQueue, activities });
  console.error(
    `worker: polling task queue "${config.taskQueue}" on ${config.address} (namespace ${config.namespace}); ledger ${activities.ledgerDir}`,
  );
  try {
    await worker.run();
  } finally {
    await connection.close();
  }
  console.error('worker: stopped');
}

class UsageError extends Error {}

/** Runs the worker's command line (`temporal-mcp-tasks worker`); exits the process on errors (2 for usage errors). */
export function runWorkerCommand(argv: string[]): void {
  main(argv).catch((error: Error) => {
    console.error(`worker: ${error.message}`);
    process.exit(error instanceof UsageError ? 2 : 1);
  });
}

if (require.main === module) runWorkerCommand(process.argv.slice(2));

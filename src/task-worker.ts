/**
 * The worker of a team's own bridge-served workflows: a plain Temporal worker with the bridge's activities
 * ({@link createTaskActivities}) registered beside the team's own.
 */
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createTaskActivities, type TaskActivitiesOptions } from './activities/task-activities';
import { dataConverterFromEnv } from './shared/payload-codec';
import { temporalConfigFromEnv } from './shared/temporal-config';
import { log } from './util/log';

/**
 * What {@link createTaskWorker} takes: Temporal's worker options, with the bridge's activities added to `activities`
 * and the workflows' `temporal-mcp-tasks/workflow` bundled from this copy of the package.
 */
export interface TaskWorkerOptions extends Omit<WorkerOptions, 'namespace'> {
  /** Default the namespace of the environment (`TEMPORAL_NAMESPACE`, as the Temporal CLI reads it). */
  namespace?: string;
  /** How the bridge's activities are made; default each from the environment. */
  taskActivities?: TaskActivitiesOptions;
  /**
   * Default the data converter of the environment ({@link dataConverterFromEnv}: payloads encrypted under the keys
   * MCP_PAYLOAD_KEYS names, or Temporal's default). The bridge must be given the same codec.
   */
  dataConverter?: WorkerOptions['dataConverter'];
}

/**
 * Creates (does not run) a worker of `options.workflowsPath` (or `workflowBundle`) on `options.taskQueue` with the
 * bridge's activities (answer checks, decision records, notifications) and `options.activities`, which win on a
 * name both have. Throws what `Worker.create` throws, and a setting of the bridge's activities or of MCP_PAYLOAD_KEYS
 * that does not hold.
 */
export async function createTaskWorker(options: TaskWorkerOptions): Promise<Worker> {
  const { taskActivities, activities, namespace, bundlerOptions, dataConverter, ...rest } = options;
  const converter = dataConverter ?? dataConverterFromEnv();
  return Worker.create({
    ...rest,
    ...(converter && { dataConverter: converter }),
    namespace: namespace ?? temporalConfigFromEnv().namespace,
    activities: { ...createTaskActivities(taskActivities), ...activities },
    bundlerOptions: withOwnWorkflowEntry(bundlerOptions),
  });
}

/** This module's copy of the package's workflow entry, `temporal-mcp-tasks/workflow`. */
const WORKFLOW_ENTRY = require.resolve('./workflow');

/**
 * Temporal's bundler options with `temporal-mcp-tasks/workflow` resolved to the copy of the package this worker runs,
 * so that the workflows speak the same contract as the worker's activities, in a checkout (where the entry is a source
 * file) as in an installed package. A `webpackConfigHook` of the caller's runs after.
 */
function withOwnWorkflowEntry(options: WorkerOptions['bundlerOptions']): NonNullable<WorkerOptions['bundlerOptions']> {
  return {
    ...options,
    webpackConfigHook: (config) => {
      const resolve = config.resolve ?? {};
      const alias = Array.isArray(resolve.alias) ? resolve.alias : { ...resolve.alias, 'temporal-mcp-tasks/workflow$': WORKFLOW_ENTRY };
      const aliased = { ...config, resolve: { ...resolve, alias } };
      return options?.webpackConfigHook ? options.webpackConfigHook(aliased) : aliased;
    },
  };
}

/**
 * Connects to the Temporal of the environment (`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, … as the Temporal CLI reads
 * them), runs {@link createTaskWorker} until SIGINT or SIGTERM (Temporal's runtime stops it, letting activities under
 * way finish), then closes the connection. For a worker's `main`:
 * `runTaskWorker({ taskQueue: 'orders', workflowsPath: require.resolve('./workflows'), activities })`.
 */
export async function runTaskWorker(options: Omit<TaskWorkerOptions, 'connection'>): Promise<void> {
  const config = temporalConfigFromEnv();
  const connection = await NativeConnection.connect(config.connectionOptions).catch((error: Error) => {
    throw new Error(`cannot reach Temporal at ${config.address}: ${error.message}`);
  });
  try {
    const worker = await createTaskWorker({ namespace: config.namespace, ...options, connection });
    log.info(`worker: polling task queue "${options.taskQueue}" on ${config.address} (namespace ${options.namespace ?? config.namespace})`);
    await worker.run();
  } finally {
    await connection.close();
  }
}

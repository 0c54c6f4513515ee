import { loadClientConnectConfig, type ClientConnectConfig } from '@temporalio/envconfig';

/** Environment variable naming the task queue of the bridge's workflows. */
export const TASK_QUEUE_ENV = 'TEMPORAL_TASK_QUEUE';

/** Default task queue of the bridge's workflows. */
export const DEFAULT_TASK_QUEUE = 'temporal-mcp';

/** Default Temporal frontend address. */
export const DEFAULT_ADDRESS = '127.0.0.1:7233';

/** How to reach Temporal, and where the bridge's workflows run. */
export interface TemporalConfig {
  address: string;
  namespace: string;
  taskQueue: string;
  /** Options for `NativeConnection.connect` (worker) and, cast, `Connection.connect` (client). */
  connectionOptions: ClientConnectConfig['connectionOptions'] & { address: string };
}

/**
 * Reads the Temporal connection the way the Temporal CLI does (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
 * TEMPORAL_TLS_*, TEMPORAL_PROFILE and the config file), defaulting to a local dev server.
 */
export function temporalConfigFromEnv(env: NodeJS.ProcessEnv = process.env): TemporalConfig {
  const { connectionOptions, namespace } = loadClientConnectConfig({ overrideEnvVars: env as Record<string, string> });
  const address = connectionOptions.address ?? DEFAULT_ADDRESS;
  return {
    address,
    namespace: namespace ?? 'default',
    taskQueue: env[TASK_QUEUE_ENV] || DEFAULT_TASK_QUEUE,
    connectionOptions: { ...connectionOptions, address },
  };
}

/** Reads a positive whole number of milliseconds from the environment, or returns `fallback`. */
export function msFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a whole number of milliseconds above 0, not "${raw}"`);
  return value;
}

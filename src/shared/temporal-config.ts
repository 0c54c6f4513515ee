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
  /** The Temporal Web UI's base URL, for links to a task's workflow; none when turned off. */
  webUiUrl?: string;
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
    webUiUrl: webUiUrlFromEnv(address, env),
  };
}

/** Environment variable naming the Temporal Web UI's base URL (`off` for no links). */
const WEB_UI_ENV = 'TEMPORAL_WEB_UI_URL';

/**
 * The Web UI's base URL: TEMPORAL_WEB_UI_URL (`off` turns links off), else the UI of the frontend at `address` as the
 * dev server runs it (`./temporal-dev.sh`: the gRPC port + 1000, e.g. 127.0.0.1:7233 → http://127.0.0.1:8233), or
 * Temporal Cloud's UI for a `*.tmprl.cloud` address. Throws for a value that is not an http(s) URL.
 */
export function webUiUrlFromEnv(address: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const configured = env[WEB_UI_ENV]?.trim();
  if (configured?.toLowerCase() === 'off') return undefined;
  if (configured) {
    let url: URL | undefined;
    try {
      url = new URL(configured);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new Error(`${WEB_UI_ENV} must be an http(s) URL or "off", not "${configured}"`);
    }
    return configured.replace(/\/+$/, '');
  }
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(address);
  if (!match) return undefined;
  const [, host, port] = match;
  if (/\.tmprl\.cloud$/i.test(host)) return 'https://cloud.temporal.io';
  return `http://${host}:${Number(port ?? 7233) + 1000}`;
}

/** The workflow's page in the Web UI at `base`. */
export function webUiWorkflowUrl(base: string, namespace: string, workflowId: string): string {
  return `${base}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

/** Reads a positive whole number of milliseconds from the environment, or returns `fallback`. */
export function msFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a whole number of milliseconds above 0, not "${raw}"`);
  return value;
}

/**
 * A whole number from `env[name]`, at least `min` (0 or 1), or `fallback` when unset; throws naming the variable
 * otherwise.
 */
export function countFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number, min: 0 | 1 = 1): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min) {
    throw new Error(`${name} must be a whole number${min === 0 ? ', 0 or more' : ' above 0'}, not "${raw}"`);
  }
  return value;
}

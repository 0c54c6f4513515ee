import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { BundleOptions } from '@temporalio/worker';

/** Root of the repository. */
export const ROOT = path.resolve(__dirname, '..', '..');

/** Environment variables global-setup leaves for the tests. */
export const TEST_ENV = {
  address: 'TEST_TEMPORAL_ADDRESS',
  bundle: 'TEST_WORKFLOW_BUNDLE',
  fixtureBundle: 'TEST_FIXTURE_WORKFLOW_BUNDLE',
  stateDir: 'TEST_STATE_DIR',
  port: 'TEST_TEMPORAL_PORT',
} as const;

/** Runs ./temporal-dev.sh with `command` for the server on `port`, kept in `stateDir`. */
export async function temporalDev(
  command: 'start' | 'stop',
  port: number,
  stateDir: string,
  env: Record<string, string> = {},
): Promise<void> {
  await promisify(execFile)(path.join(ROOT, 'temporal-dev.sh'), [command], {
    env: {
      ...process.env,
      TEMPORAL_PORT: String(port),
      TEMPORAL_HEADLESS: '1',
      TEMPORAL_STATE_DIR: stateDir,
      TEMPORAL_DB_FILE: '',
      ...env,
    },
    maxBuffer: 16 * 1024 * 1024,
    timeout: 20 * 60_000,
  }).catch((error: Error & { stderr?: string }) => {
    throw new Error(`./temporal-dev.sh ${command} failed: ${error.stderr ?? error.message}`);
  });
}

/** A TCP port nobody listens on right now. */
export { freePort } from '../../scripts/lib/processes';

type WebpackConfiguration = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

/**
 * How a test bundles the workflows of `workflowsPath`: `temporal-mcp-tasks/workflow` from the checkout's sources, as
 * the worker helper's bundler resolves it.
 */
function workflowsToBundle(workflowsPath: string) {
  return {
    workflowsPath,
    webpackConfigHook: (config: WebpackConfiguration) => ({
      ...config,
      resolve: {
        ...config.resolve,
        alias: { ...config.resolve?.alias, 'temporal-mcp-tasks/workflow$': path.join(ROOT, 'src', 'workflow.ts') },
      },
    }),
  };
}

/** The example's workflows, as a test bundles them. */
export const SAMPLE_WORKFLOWS = workflowsToBundle(path.join(ROOT, 'examples', 'invoice-approval', 'src', 'workflows'));

/** The library's test fixtures' workflows (test/fixtures/workflows), as a test bundles them. */
export const FIXTURE_WORKFLOWS = workflowsToBundle(path.join(ROOT, 'test', 'fixtures', 'workflows'));

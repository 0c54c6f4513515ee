import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { FIXTURE_WORKFLOWS, freePort, SAMPLE_WORKFLOWS, temporalDev, TEST_ENV } from './dev-server';

/**
 * Starts a dev server for this run (building the CLI if needed) and bundles once the workflows of the test fixtures and
 * those of the example package, for its own tests (examples/invoice-approval/test/harness.ts reads the bundle).
 */
export default async function globalSetup(): Promise<void> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-test-'));
  const port = await freePort();
  process.stderr.write(`\n[test] starting a Temporal dev server on 127.0.0.1:${port} (state in ${stateDir})\n`);
  const started = Date.now();
  await temporalDev('start', port, stateDir);
  process.stderr.write(`[test] dev server ready in ${Date.now() - started} ms; bundling workflows\n`);
  const logger = { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error };
  const bundle = path.join(stateDir, 'workflow-bundle.js');
  writeFileSync(bundle, (await bundleWorkflowCode({ ...SAMPLE_WORKFLOWS, logger })).code);
  const fixtureBundle = path.join(stateDir, 'fixture-workflow-bundle.js');
  writeFileSync(fixtureBundle, (await bundleWorkflowCode({ ...FIXTURE_WORKFLOWS, logger })).code);
  process.env[TEST_ENV.address] = `127.0.0.1:${port}`;
  process.env[TEST_ENV.port] = String(port);
  process.env[TEST_ENV.bundle] = bundle;
  process.env[TEST_ENV.fixtureBundle] = fixtureBundle;
  process.env[TEST_ENV.stateDir] = stateDir;
  // Decision records of bridges and workers a test starts without a store of their own: never in the checkout.
  process.env.MCP_DECISION_STORE ??= path.join(stateDir, 'decisions');
}

import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger, type Worker } from '@temporalio/worker';
import type { ActivityConfig } from '../../examples/invoice-approval/src/activities';
import { answerSealFromEnv } from '../../src/shared/answer-proof';
import { respondSignal, type InputContent } from '../../src/contract/task-contract';
import { webUiUrlFromEnv, type TemporalConfig } from '../../src/shared/temporal-config';
import { createSampleWorker, type SampleWorkerOptions } from '../../examples/invoice-approval/src/worker';
import { RELEASE_SCHEDULED_PAYMENT_UPDATE, type Invoice, type ReleasePaymentRequest } from '../../examples/invoice-approval/src/invoice';
import { pollUntil } from '../../src/util/wait';
import { TEST_ENV } from './dev-server';

let runtimeInstalled = false;

/** The address of the run's dev server. */
export function testAddress(): string {
  const address = process.env[TEST_ENV.address];
  if (!address) throw new Error('the test dev server is not running: run the tests with npm test');
  return address;
}

/** A Temporal config for the run's dev server and a task queue of the caller's own. */
export function testTemporalConfig(taskQueue: string): TemporalConfig {
  const address = testAddress();
  return { address, namespace: 'default', taskQueue, connectionOptions: { address }, webUiUrl: webUiUrlFromEnv(address, {}) };
}

/** A fresh task queue name, so that test files never share workers. */
export function uniqueTaskQueue(name: string): string {
  return `test-${name}-${randomUUID().slice(0, 8)}`;
}

/**
 * Files of the activities, in a fresh temporary directory. Invoices are approved by their submitter (the setting
 * `INVOICE_APPROVER_ROLE=requester`), as the tests of the question mechanics on every client generation need; the
 * approval tests pass a role policy.
 */
export function tempActivityConfig(overrides: Partial<ActivityConfig> = {}): ActivityConfig {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-data-'));
  return {
    ledgerDir: path.join(dir, 'payments'),
    erpRegistryDir: path.join(dir, 'erp-invoices'),
    erpDelayMs: 0,
    paymentDelayMs: 0,
    paymentFailAttempts: 0,
    invoiceApproval: { approvers: 'requester' },
    notificationOutbox: path.join(dir, 'notifications.jsonl'),
    decisionStore: path.join(dir, 'decisions'),
    ...overrides,
  };
}

/** A Temporal client on the run's dev server. */
export async function connectClient(): Promise<{ client: Client; close(): Promise<void> }> {
  const connection = await Connection.connect({ address: testAddress() });
  return { client: new Client({ connection }), close: () => connection.close() };
}

/** A worker running in this process until {@link RunningWorker.stop}. */
export interface RunningWorker {
  worker: Worker;
  stop(): Promise<void>;
}

/** The run's prebuilt workflow bundle. */
export function testWorkflowBundle(): { codePath: string } {
  return { codePath: process.env[TEST_ENV.bundle]! };
}

/** Keeps the SDK's logs to errors (retried activity failures are expected in tests). Call before anything else. */
export function quietTemporalLogs(): void {
  if (runtimeInstalled) return;
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // Installed already, e.g. by a test environment.
  }
  runtimeInstalled = true;
}

/** What a test may change about a worker of {@link startWorker}: another workflow bundle, tracing. */
export type TestWorkerOptions = Pick<SampleWorkerOptions, 'workflowBundle' | 'telemetry'>;

/**
 * Starts a worker for `taskQueue` with the run's prebuilt workflow bundle (or `options.workflowBundle`, e.g. one built
 * with the tracing interceptors), on `shared` or a connection of its own.
 */
export async function startWorker(
  taskQueue: string,
  activities: ActivityConfig,
  shared?: NativeConnection,
  options: TestWorkerOptions = {},
): Promise<RunningWorker> {
  quietTemporalLogs();
  const connection = shared ?? (await NativeConnection.connect({ address: testAddress() }));
  const worker = await createSampleWorker({
    connection,
    namespace: 'default',
    taskQueue,
    activities,
    workflowBundle: options.workflowBundle ?? testWorkflowBundle(),
    ...(options.telemetry && { telemetry: options.telemetry }),
  });
  const running = worker.run();
  return {
    worker,
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      if (!shared) await connection.close();
    },
  };
}

/** An invoice for vendor V-100 with a fresh invoice number. */
export function sampleInvoice(overrides: Partial<Invoice> = {}): Invoice {
  return {
    vendorId: 'V-100',
    invoiceNumber: `INV-${randomUUID().slice(0, 8)}`,
    currency: 'EUR',
    lineItems: [
      { lineItemId: 'LI-1', description: 'Printer paper, 20 boxes', amount: 120.5 },
      { lineItemId: 'LI-2', description: 'Toner cartridges', amount: 80.25 },
    ],
    ...overrides,
  };
}

/** A date `days` from today (UTC), as YYYY-MM-DD. */
export function daysFromToday(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * Polls `check` until it returns something other than undefined, or fails after `timeoutMs`. A check that throws counts
 * as "not yet"; the last such error is named in the timeout message.
 */
export function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  let last: unknown;
  const attempt = async () => {
    try {
      return await check();
    } catch (error) {
      last = error;
      return undefined;
    }
  };
  return pollUntil(attempt, {
    timeoutMs,
    intervalMs: 50,
    maxIntervalMs: 500,
    what: () => `${what} (${timeoutMs} ms)${last ? ` (last error: ${(last as Error).message})` : ''}`,
  });
}

/** The Web UI link a server of this run gives a task: the dev server's UI, on the gRPC port + 1000. */
export function expectedWebUiLink(taskId: string): string {
  const [host, port] = testAddress().split(':');
  return `http://${host}:${Number(port) + 1000}/namespaces/default/workflows/${taskId}`;
}

const testSeal = answerSealFromEnv();

/**
 * Answers past the bridge, as a bridge would: the answer sealed with the bridge's key (the one every local process
 * shares) for the run that is running now (see {@link originalRunIdOf}). `cancel` answers are sent as they are (a workflow ignores them anyway).
 */
export async function sendAnswer(
  handle: WorkflowHandle,
  response: { key: string; action: 'accept' | 'decline' | 'cancel'; content?: InputContent },
  principal = 'test:approver',
): Promise<void> {
  if (response.action === 'cancel') return handle.signal(respondSignal, response);
  const { action } = response;
  const run = { workflowId: handle.workflowId, originalRunId: await originalRunIdOf(handle) };
  await handle.signal(respondSignal, testSeal.seal(run, { ...response, action }, { principal }));
}

/**
 * A release of the invoice's scheduled line item as the bridge sends it: sealed with the bridge's key (the one every
 * local process shares) for the run that is running now, as asked by `principal`.
 */
export async function sealedRelease(
  handle: WorkflowHandle,
  lineItemId: string,
  principal = 'test:releaser',
): Promise<ReleasePaymentRequest> {
  const run = { workflowId: handle.workflowId, originalRunId: await originalRunIdOf(handle) };
  return { lineItemId, ...testSeal.sealAction(run, RELEASE_SCHEDULED_PAYMENT_UPDATE, { lineItemId }, { principal }) };
}

/** The current run's original run id (kept across resets), from its start event: what answers are sealed for. */
export async function originalRunIdOf(handle: WorkflowHandle): Promise<string> {
  const { events } = await handle.fetchHistory();
  return events![0].workflowExecutionStartedEventAttributes!.originalExecutionRunId!;
}

/**
 * What the example's workflow tests run on: the Temporal dev server the checkout's test run starts (its address in
 * TEST_TEMPORAL_ADDRESS, the example's workflows bundled once in TEST_WORKFLOW_BUNDLE), a sample worker in this
 * process with activity files in a fresh folder, and answers and releases sealed as a bridge seals them.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { DefaultLogger, Runtime, type NativeConnection } from '@temporalio/worker';
import { AnswerSeal } from 'temporal-mcp-tasks';
import { respondSignal, type InputContent } from 'temporal-mcp-tasks/workflow';
import type { ActivityConfig } from '../src/activities';
import { PaymentsLedger } from '../src/activities/payments';
import { RELEASE_SCHEDULED_PAYMENT_UPDATE, type ReleasePaymentRequest } from '../src/invoice';
import { createSampleWorker } from '../src/worker';

/** The address of the test run's dev server. */
export function testAddress(): string {
  const address = process.env.TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('no test dev server: run the example tests with npm test from the checkout');
  return address;
}

/** The example's workflows, bundled once for the test run. */
export function workflowBundle(): { codePath: string } {
  const codePath = process.env.TEST_WORKFLOW_BUNDLE;
  if (!codePath) throw new Error('no prebuilt workflow bundle: run the example tests with npm test from the checkout');
  return { codePath };
}

/** Keeps the SDK's logs to errors (payments that fail on purpose are retried). */
export function quietTemporalLogs(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // Installed already in this process.
  }
}

/**
 * The activities' files in a fresh temporary folder, approvals by the submitter (`INVOICE_APPROVER_ROLE=requester`),
 * and no delays unless `overrides` say otherwise.
 */
export function tempActivityConfig(overrides: Partial<ActivityConfig> = {}): ActivityConfig {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'invoice-example-'));
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

/** The seal the tests' answers and releases carry, as a bridge with this key makes it; the workers check it. */
export const bridgeSeal = new AnswerSeal(randomBytes(32));

/** A sample worker running in this process on `connection` until `stop()`. */
export async function startSampleWorker(
  connection: NativeConnection,
  taskQueue: string,
  activities: ActivityConfig,
): Promise<{ stop(): Promise<void> }> {
  const worker = await createSampleWorker({
    connection,
    namespace: 'default',
    taskQueue,
    activities,
    workflowBundle: workflowBundle(),
    answerSeal: bridgeSeal,
  });
  const running = worker.run();
  return {
    stop: async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    },
  };
}

/** The current run's original run id (kept across resets), from its start event: what answers are sealed for. */
export async function originalRunIdOf(handle: WorkflowHandle): Promise<string> {
  const { events } = await handle.fetchHistory();
  return events![0].workflowExecutionStartedEventAttributes!.originalExecutionRunId!;
}

/**
 * Answers as a bridge does: sealed with {@link bridgeSeal} for the run that is running now, from `principal`. `cancel`
 * answers are sent as they are (the workflow ignores them).
 */
export async function sendAnswer(
  handle: WorkflowHandle,
  response: { key: string; action: 'accept' | 'decline' | 'cancel'; content?: InputContent },
  principal = 'test:approver',
): Promise<void> {
  if (response.action === 'cancel') return handle.signal(respondSignal, response);
  const run = { workflowId: handle.workflowId, originalRunId: await originalRunIdOf(handle) };
  await handle.signal(respondSignal, bridgeSeal.seal(run, { ...response, action: response.action }, { principal }));
}

/** A release of a scheduled line item as the bridge sends it: sealed for the run running now, asked by `principal`. */
export async function sealedRelease(
  handle: WorkflowHandle,
  lineItemId: string,
  principal = 'test:releaser',
): Promise<ReleasePaymentRequest> {
  const run = { workflowId: handle.workflowId, originalRunId: await originalRunIdOf(handle) };
  return { lineItemId, ...bridgeSeal.sealAction(run, RELEASE_SCHEDULED_PAYMENT_UPDATE, { lineItemId }, { principal }) };
}

/** The line items of `taskId` the payments ledger in `ledgerDir` holds, sorted. */
export async function paidLineItems(ledgerDir: string, taskId: string): Promise<string[]> {
  const entries = await new PaymentsLedger(ledgerDir).entries();
  return entries
    .filter((entry) => entry.taskId === taskId)
    .map((entry) => entry.lineItemId)
    .sort();
}

/** A date `days` from today (UTC), as YYYY-MM-DD. */
export function daysFromToday(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * Asks `check` every 100 ms until it returns something other than undefined, and fails after `timeoutMs` naming `what`
 * and the last error `check` threw (a throw counts as "not yet").
 */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what} (${timeoutMs} ms)${last ? `: ${(last as Error).message}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The invoice example as a test stack runs it, and the helpers of the test files that still test the library through
 * it. Files moved to the library's own fixtures (test/fixtures) import nothing of this module; once none is left it
 * goes, with the example's branch of test-stack.ts.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema, type Task } from '@modelcontextprotocol/sdk/types.js';
import type { WorkflowHandle } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { ActivityConfig } from '../../examples/invoice-approval/src/activities';
import {
  RELEASE_SCHEDULED_PAYMENT_UPDATE,
  type Invoice,
  type InvoiceResult,
  type ReleasePaymentRequest,
} from '../../examples/invoice-approval/src/invoice';
import { SAMPLE_TOOLS } from '../../examples/invoice-approval/src/tools';
import { createSampleWorker } from '../../examples/invoice-approval/src/worker';
import { answerSealFromEnv } from '../../src/shared/answer-proof';
import { DEFAULT_TOOLS } from '../../src/mcp/tools';
import type { ToolDefinition } from '../../src/mcp/tools/types';
import type { Bridge } from '../../src/mcp/bridge';
import { pollUntil } from '../../src/util/wait';
import { startTask, taskResult } from './mcp';
import type { StackApp } from './stack-app';
import { originalRunIdOf, runWorker, testWorkflowBundle, type RunningWorker, type TestWorkerOptions } from './temporal';

/** The example's activity configuration, as a stack of the example holds it. */
export type ExampleConfig = ActivityConfig;

/** The tools `npm run serve` offers in a checkout, in its order: the sample tools, then the default tools. */
export const TOOLS_WITH_SAMPLES: readonly ToolDefinition[] = [...SAMPLE_TOOLS, ...DEFAULT_TOOLS];

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

/**
 * Starts the example's worker for `taskQueue` with the run's prebuilt bundle of its workflows (or
 * `options.workflowBundle`, e.g. one built with the tracing interceptors), on `shared` or a connection of its own.
 */
export function startWorker(
  taskQueue: string,
  activities: ActivityConfig,
  shared?: NativeConnection,
  options: TestWorkerOptions = {},
): Promise<RunningWorker> {
  return runWorker(
    (connection) =>
      createSampleWorker({
        connection,
        namespace: 'default',
        taskQueue,
        activities,
        workflowBundle: options.workflowBundle ?? testWorkflowBundle(),
        ...(options.telemetry && { telemetry: options.telemetry }),
      }),
    shared,
  );
}

/** The example as a stack runs it: its worker, the sample tools, `serve --samples`. */
export const EXAMPLE: StackApp<ActivityConfig> = {
  tools: TOOLS_WITH_SAMPLES,
  serveArgs: () => ['--samples'],
  config: tempActivityConfig,
  startWorker: (taskQueue, config, shared, options) => startWorker(taskQueue, config, shared, options),
  // The example's worker process (`npm run worker`) on the stack's payments, ERP, decision store and outbox.
  workerEnv: (config) => ({
    PAYMENTS_LEDGER: config.ledgerDir,
    ERP_REGISTRY: config.erpRegistryDir,
    MCP_DECISION_STORE: config.decisionStore,
    NOTIFICATION_OUTBOX: config.notificationOutbox,
  }),
};

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

/** Starts `process_invoice` as a task and returns the created task. */
export function startInvoiceTask(client: McpClient, args: unknown, ttl?: number): Promise<Task> {
  return startTask(client, 'process_invoice', args, ttl);
}

const testSeal = answerSealFromEnv();

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

/**
 * Starts `process_invoice` for `invoice` as a task of `client`, and waits until `approver` may open its question
 * "approval" on `bridge` (the worker has asked it); returns the task id.
 */
export async function invoiceAwaitingApproval(
  client: McpClient,
  invoice: Invoice,
  bridge: Bridge,
  approver: { principal: string; roles: string[] },
): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name: 'process_invoice', arguments: invoice as never, task: {} } },
    CreateTaskResultSchema,
  );
  const { taskId } = created.task;
  await pollUntil(
    () =>
      bridge.approvals.question(taskId, 'approval', approver).then(
        () => true,
        () => undefined,
      ),
    { timeoutMs: 60_000, intervalMs: 100, what: `the question of ${taskId} to open` },
  );
  return taskId;
}

/**
 * The invoice result of `taskId` once the run a reset made has ended: results of the run it replaced, which ended
 * rejected, are read past.
 */
export function resultAfterReset(client: McpClient, taskId: string): Promise<InvoiceResult> {
  return pollUntil(
    async () => {
      const now = (await taskResult(client, taskId)).structuredContent as InvoiceResult;
      return now.outcome === 'rejected' ? undefined : now;
    },
    { timeoutMs: 60_000, intervalMs: 500, what: 'the reset run to end' },
  );
}

/** Starts `process_invoice` for `invoice` as a task of `client`; returns the task id. */
export async function submitInvoice(client: McpClient, invoice: Invoice): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name: 'process_invoice', arguments: invoice as unknown as Record<string, unknown>, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

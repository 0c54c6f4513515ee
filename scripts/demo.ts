/**
 * The invoice flow end to end: npm run demo [-- --help]
 *
 * Starts what is not running (Temporal dev server, worker), spawns the MCP server on stdio, submits an invoice as a
 * task through a real MCP client, answers the approval, releases the scheduled line item, and prints every status change.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type CallToolResult,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { activityConfigFromEnv } from '../src/activities';
import { PaymentsLedger } from '../src/activities/payments';
import { DEFAULT_ADDRESS, temporalConfigFromEnv, type TemporalConfig } from '../src/shared/temporal-config';
import type { InvoiceResult } from '../src/shared/invoice';
import { pollUntil, sleep } from '../src/util/wait';

const ROOT = path.resolve(__dirname, '..');
const HELP = `Usage: npm run demo [-- --help]

Runs the invoice flow through a real MCP client:
  1. starts the Temporal dev server (./temporal-dev.sh start) unless one answers at TEMPORAL_ADDRESS,
  2. starts a worker (npm run worker) unless one polls the task queue,
  3. spawns the MCP server on stdio (npm run -s serve) and submits an invoice with process_invoice as a task,
  4. answers the approval elicitation, pays one line item now and releases the one scheduled for later,
  5. prints each status change, the result, and the payments ledger entries of the task.
It stops the worker it started; the dev server keeps running (./temporal-dev.sh stop stops it).
Environment: the same TEMPORAL_* variables as npm run serve and npm run worker.
`;

const started: ChildProcess[] = [];

function say(message: string): void {
  process.stdout.write(`${new Date().toISOString().slice(11, 19)}  ${message}\n`);
}

async function connectTemporal(config: TemporalConfig): Promise<Connection | undefined> {
  try {
    return await Connection.connect({ ...(config.connectionOptions as ConnectionOptions), connectTimeout: '3s' });
  } catch {
    return undefined;
  }
}

async function ensureTemporal(config: TemporalConfig): Promise<Connection> {
  const existing = await connectTemporal(config);
  if (existing) {
    say(`Temporal is running at ${config.address}`);
    return existing;
  }
  const port = /^(?:127\.0\.0\.1|localhost):(\d+)$/.exec(config.address)?.[1];
  if (!port)
    throw new Error(`Temporal does not answer at ${config.address}; start it, or unset TEMPORAL_ADDRESS to use a local dev server`);
  say(`Temporal does not answer at ${config.address}: starting the dev server (./temporal-dev.sh start)`);
  const run = spawnSync(path.join(ROOT, 'temporal-dev.sh'), ['start'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, TEMPORAL_PORT: port },
  });
  if (run.status !== 0) throw new Error('./temporal-dev.sh start failed (see above)');
  const connection = await connectTemporal(config);
  if (!connection) throw new Error(`the dev server started but ${config.address} does not answer`);
  return connection;
}

async function ensureWorker(client: Client, config: TemporalConfig): Promise<void> {
  const { pollers } = await client.workflowService.describeTaskQueue({
    namespace: config.namespace,
    taskQueue: { name: config.taskQueue },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  // A worker that died recently is still listed for a while: only a recent poll counts.
  const recent = pollers.filter((poller) => Date.now() - Number(poller.lastAccessTime?.seconds ?? 0) * 1000 < 20_000);
  if (recent.length > 0) {
    say(`a worker polls task queue "${config.taskQueue}"`);
    return;
  }
  await startWorker(config);
}

async function startWorker(config: TemporalConfig): Promise<void> {
  say(`no worker polls task queue "${config.taskQueue}": starting one (npm run worker)`);
  const worker = spawn('npm', ['run', '-s', 'worker'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  started.push(worker);
  let log = '';
  worker.stderr!.on('data', (chunk) => (log += chunk));
  await pollUntil(
    () => {
      if (log.includes('worker: polling')) return true;
      if (worker.exitCode !== null) throw new Error(`the worker exited during start-up:\n${log}`);
      return undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: () => `the worker to start (60 s):\n${log}` },
  );
  say('worker started');
}

function describe(task: Task): string {
  return `task ${task.status}${task.statusMessage ? ` — ${task.statusMessage}` : ''}`;
}

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return;
  }
  if (argv.length > 0) throw new Error(`unknown argument "${argv[0]}"; see --help`);
  const config = temporalConfigFromEnv();
  if (!process.env.TEMPORAL_ADDRESS) config.address = DEFAULT_ADDRESS;
  const connection = await ensureTemporal(config);
  const client = new Client({ connection, namespace: config.namespace });
  await ensureWorker(client, config);

  const mcp = new McpClient({ name: 'invoice-demo', version: '1.0.0' }, { capabilities: { elicitation: { form: {} }, tasks: {} } });
  mcp.setRequestHandler(ElicitRequestSchema, async (request) => {
    say(`elicitation received: "${request.params.message}"`);
    const answer = { decision: 'approve', comment: 'Approved by the demo' };
    say(`answering accept ${JSON.stringify(answer)}`);
    return { action: 'accept', content: answer };
  });
  say('spawning the MCP server on stdio (npm run -s serve)');
  await mcp.connect(new StdioClientTransport({ command: 'npm', args: ['run', '-s', 'serve'], cwd: ROOT, stderr: 'ignore' }));

  const payOn = new Date(Date.now() + 90 * 86_400_000).toISOString().slice(0, 10);
  const invoice = {
    vendorId: 'V-100',
    invoiceNumber: `INV-DEMO-${Date.now().toString(36).toUpperCase()}`,
    currency: 'EUR',
    lineItems: [
      { lineItemId: 'LI-1', description: 'Printer paper, 20 boxes', amount: 120.5 },
      { lineItemId: 'LI-2', description: 'Annual maintenance, due in three months', amount: 980, payOn },
    ],
  };
  say(`calling process_invoice as a task for ${invoice.invoiceNumber} (LI-2 scheduled for ${payOn})`);
  const { task: created } = await mcp.request(
    { method: 'tools/call', params: { name: 'process_invoice', arguments: invoice, task: { ttl: 3_600_000 } } },
    CreateTaskResultSchema,
  );
  say(`task created: ${created.taskId}`);

  // Poll tasks/get; open tasks/result once input is required, so the elicitation arrives on its stream.
  let last = '';
  let result: Promise<CallToolResult> | undefined;
  let released = false;
  let stalledSince = Date.now();
  for (;;) {
    const task = await mcp.experimental.tasks.getTask(created.taskId);
    if (task.lastUpdatedAt !== created.lastUpdatedAt) stalledSince = Infinity;
    if (Date.now() - stalledSince > 10_000 && started.length === 0) {
      say('nothing has picked the task up for 10 s');
      await startWorker(config);
      stalledSince = Infinity;
    }
    if (describe(task) !== last) say((last = describe(task)));
    if (task.status === 'input_required' && !result) {
      say('calling tasks/result: it blocks until the task ends, and carries the approval question');
      result = mcp.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema, { timeout: 600_000 });
    }
    if (task.status === 'working' && /scheduled:/.test(task.statusMessage ?? '') && !released) {
      released = true;
      say('LI-2 waits on a durable timer; releasing it early with release_scheduled_payment');
      const release = await mcp.callTool({ name: 'release_scheduled_payment', arguments: { taskId: created.taskId, lineItemId: 'LI-2' } });
      say(`release_scheduled_payment: ${(release.content as { text: string }[])[0].text}`);
    }
    if (task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled') break;
    await sleep(task.pollInterval ?? 1000);
  }
  const final = await (result ?? mcp.experimental.tasks.getTaskResult(created.taskId, CallToolResultSchema));
  const outcome = final.structuredContent as InvoiceResult;
  say(`result: ${(final.content as { text: string }[])[0].text}`);
  for (const payment of outcome.payments)
    say(`  paid ${payment.lineItemId}: ${payment.amount.toFixed(2)} ${outcome.currency} as ${payment.paymentId}`);
  const ledger = new PaymentsLedger(activityConfigFromEnv().ledgerDir);
  const paid = (await ledger.entries()).filter((entry) => entry.taskId === created.taskId);
  say(`payments ledger ${ledger.dir}: ${paid.length} payment(s) for this task, keys ${paid.map((entry) => entry.key).join(', ')}`);
  await mcp.close();
  await connection.close();
}

function stopStarted(): void {
  for (const child of started) {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}

main(process.argv.slice(2))
  .then(() => {
    stopStarted();
    say('done. The dev server keeps running: ./temporal-dev.sh stop stops it; its Web UI shows the workflow history.');
  })
  .catch((error: Error) => {
    stopStarted();
    console.error(`demo: ${error.message}`);
    process.exit(1);
  });

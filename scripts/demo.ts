/**
 * The invoice flow end to end: npm run demo [-- --help]
 *
 * Starts what is not running (Temporal dev server, worker), then plays three people, each with a real MCP client of
 * their own and an MCP server on stdio acting as them: a submitter who submits an invoice as a task, and two approvers
 * of the ap-approver role who find it in their inbox and approve it (four eyes: the submitter may not). Releases the
 * scheduled line item and prints every status change.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { activityConfigFromEnv } from '../examples/invoice-approval/src/activities';
import { readNotifications } from '../src/activities/notifications';
import { PaymentsLedger } from '../examples/invoice-approval/src/activities/payments';
import { defaultPublicKeyFile } from '../src/records/keys';
import { DEFAULT_ADDRESS, temporalConfigFromEnv, type TemporalConfig } from '../src/shared/temporal-config';
import { formatAmount, type InvoiceResult } from '../examples/invoice-approval/src/invoice';
import { pollUntil, sleep } from '../src/util/wait';
import { taskKeyFromEnv } from '../src/shared/task-key';
import { signInLink, signInLinkTokens } from '../src/mcp/web/mail-sign-in';

const ROOT = path.resolve(__dirname, '..');

const SUBMITTER = 'demo-submitter';
const APPROVERS = ['demo-approver-ann', 'demo-approver-bob'] as const;

const started: ChildProcess[] = [];

const HELP = `Usage: npm run demo [-- --web] [-- --help]

Runs the invoice flow with three people, each through a real MCP client of their own and an MCP server on stdio
(npm run -s serve) acting as them (MCP_LOCAL_PRINCIPAL, MCP_LOCAL_ROLES):
  - ${SUBMITTER}, who submits the invoice (of the ap-approver role too, yet never for their own invoices),
  - ${APPROVERS[0]} and ${APPROVERS[1]}, both of the ap-approver role.
  1. starts the Temporal dev server (./temporal-dev.sh start) unless one answers at TEMPORAL_ADDRESS,
  2. starts a worker (npm run worker) unless one polls the task queue,
  3. the submitter calls process_invoice as a task: EUR 11,380.00, above the 10,000 threshold, so two approvers,
  4. the submitter's own approval is refused (four eyes); the first approver finds the invoice in approvals_inbox and
     approves it with approvals_answer; the second is shown the form on their own call (elicitation) and approves,
  5. pays one line item now and releases the one scheduled for later,
  6. prints each status change, who approved, and the payments ledger entries of the task,
  7. exports the approvals as a receipt (npm run -s approvals -- verify TASK --export FILE; temporal-mcp-tasks approvals
     verify where the package is installed) and verifies it with the public key alone, as an auditor without access to
     Temporal would.
A worker started with INVOICE_APPROVER_ROLE=requester asks the submitter instead; the demo then answers as them.
It stops the worker it started; the dev server keeps running (./temporal-dev.sh stop stops it).

With --web, the approvers answer on the approvals page instead, in a browser: the demo starts the HTTP server
(npm run -s serve -- --http 127.0.0.1:PORT) with the page at http://localhost:PORT/approvals and an approvers
directory of its own, submits the invoice, prints a one-time sign-in link per approver (each works once, for an
hour), prints each status change of the task, releases the scheduled line item once both approved, and keeps the
server running until Ctrl-C.
Environment: the same TEMPORAL_* variables as npm run serve and npm run worker.
`;

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
  await startUntilReady('the worker', ['run', '-s', 'worker'], process.env, 'worker: polling');
  say('worker started');
}

/**
 * Starts `npm <args>` in a process group of its own (stopped with the demo) and waits up to a minute until its stderr
 * says `ready`; throws with what it wrote when it exits first. Returns the process and what it has written so far.
 */
async function startUntilReady(
  what: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: string,
): Promise<{ child: ChildProcess; log(): string }> {
  const child = spawn('npm', args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], detached: true, env });
  started.push(child);
  let log = '';
  child.stderr!.on('data', (chunk) => (log += chunk));
  await pollUntil(
    () => {
      if (log.includes(ready)) return true;
      if (child.exitCode !== null) throw new Error(`${what} exited during start-up:\n${log}`);
      return undefined;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: () => `${what} to start (60 s):\n${log}` },
  );
  return { child, log: () => log };
}

/** A client of `principal` holding `roles`, through an MCP server on stdio of its own; `forms` answers elicitations. */
async function connectAs(principal: string, roles: string, forms?: (request: ElicitRequest) => Promise<ElicitResult>): Promise<McpClient> {
  const capabilities = { tasks: {}, ...(forms && { elicitation: { form: {} } }) };
  const client = new McpClient({ name: `invoice-demo-${principal}`, version: '1.0.0' }, { capabilities });
  if (forms) client.setRequestHandler(ElicitRequestSchema, forms);
  say(`spawning the MCP server on stdio for ${principal}${roles ? ` (role ${roles})` : ''}`);
  const env = { ...(process.env as Record<string, string>), MCP_LOCAL_PRINCIPAL: principal, MCP_LOCAL_ROLES: roles };
  await client.connect(
    new StdioClientTransport({ command: 'npm', args: ['run', '-s', 'serve', '--', '--samples'], cwd: ROOT, env, stderr: 'ignore' }),
  );
  return client;
}

/** Four eyes: the submitter's own approval is refused; then each approver approves, one from the inbox, one by form. */
async function approve(submitter: McpClient, ann: McpClient, bob: McpClient, taskId: string): Promise<void> {
  const own = (await submitter.callTool({
    name: 'approvals_answer',
    arguments: { taskId, key: 'approval', action: 'accept', content: { decision: 'approve' } },
  })) as CallToolResult;
  say(`${SUBMITTER} tries to approve their own invoice: ${textOf(own)}`);
  const item = await pollUntil(
    async () => {
      const inbox = (await ann.callTool({ name: 'approvals_inbox', arguments: {} })) as CallToolResult;
      return (inbox.structuredContent as { items: { taskId: string; message: string }[] }).items.find((entry) => entry.taskId === taskId);
    },
    { timeoutMs: 30_000, intervalMs: 500, what: () => `the invoice in ${APPROVERS[0]}'s inbox` },
  );
  say(`${APPROVERS[0]} finds it in approvals_inbox:\n${indent(item.message)}`);
  const first = (await ann.callTool({
    name: 'approvals_answer',
    arguments: { taskId, key: 'approval', action: 'accept', content: { decision: 'approve', comment: 'Prices match the contract' } },
  })) as CallToolResult;
  say(`${APPROVERS[0]} approves with approvals_answer: ${textOf(first)}`);
  const second = (await bob.callTool({ name: 'approvals_answer', arguments: { taskId, key: 'approval' } })) as CallToolResult;
  say(`${APPROVERS[1]} calls approvals_answer with the question only: ${textOf(second)}`);
}

function textOf(result: CallToolResult): string {
  return (result.content as { text: string }[])[0].text;
}

function firstLine(text: string): string {
  return text.split('\n')[0];
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `            ${line}`)
    .join('\n');
}

function describe(task: Task): string {
  return `task ${task.status}${task.statusMessage ? ` — ${task.statusMessage}` : ''}`;
}

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return;
  }
  const web = argv.includes('--web');
  const unknown = argv.find((arg) => arg !== '--web');
  if (unknown !== undefined) throw new Error(`unknown argument "${unknown}"; see --help`);
  const config = temporalConfigFromEnv();
  if (!process.env.TEMPORAL_ADDRESS) config.address = DEFAULT_ADDRESS;
  const connection = await ensureTemporal(config);
  const client = new Client({ connection, namespace: config.namespace });
  await ensureWorker(client, config);
  if (web) return approveOnThePage(connection);

  // Each person runs their own client and MCP server; the server knows them from its environment, not from arguments.
  const submitter = await connectAs(SUBMITTER, 'ap-approver', async (request) => {
    say(`${SUBMITTER} is asked: "${firstLine(request.params.message)}" (this worker lets the submitter approve)`);
    return { action: 'accept', content: { decision: 'approve', comment: 'Approved by the demo' } };
  });
  const [ann, bob] = await Promise.all([
    connectAs(APPROVERS[0], 'ap-approver'),
    connectAs(APPROVERS[1], 'ap-approver', async (request) => {
      say(`${APPROVERS[1]} is shown the form on their own call:\n${indent(request.params.message)}`);
      const answer = { decision: 'approve', comment: 'Checked against the purchase order' };
      say(`${APPROVERS[1]} answers accept ${JSON.stringify(answer)}`);
      return { action: 'accept', content: answer };
    }),
  ]);

  const invoice = demoInvoice();
  say(
    `${SUBMITTER} calls process_invoice as a task for ${invoice.invoiceNumber}: EUR 11,380.00, LI-2 scheduled for ${invoice.lineItems[1].payOn}`,
  );
  const { task: created } = await submitter.request(
    { method: 'tools/call', params: { name: 'process_invoice', arguments: invoice, task: { ttl: 3_600_000 } } },
    CreateTaskResultSchema,
  );
  const taskId = created.taskId;
  say(`task created: ${taskId}`);

  // The submitter polls tasks/get; the approvers act once their question is open.
  let last = '';
  let result: Promise<CallToolResult> | undefined;
  let released = false;
  let approving: Promise<void> | undefined;
  let stalledSince = Date.now();
  for (;;) {
    const task = await submitter.experimental.tasks.getTask(taskId);
    if (task.lastUpdatedAt !== created.lastUpdatedAt) stalledSince = Infinity;
    if (Date.now() - stalledSince > 10_000 && started.length === 0) {
      say('nothing has picked the task up for 10 s');
      await startWorker(config);
      stalledSince = Infinity;
    }
    if (describe(task) !== last) say(`${SUBMITTER} sees ${(last = describe(task))}`);
    if (task.status === 'input_required' && !result) {
      say(`${SUBMITTER} calls tasks/result: it blocks until the task ends, and carries the approval question`);
      result = submitter.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, { timeout: 600_000 });
    }
    if (task.status === 'working' && task.statusMessage?.startsWith('Waiting for') && !approving) {
      approving = approve(submitter, ann, bob, taskId);
    }
    if (task.status === 'working' && /scheduled:/.test(task.statusMessage ?? '') && !released) {
      released = true;
      say('LI-2 waits on a durable timer; releasing it early with release_scheduled_payment');
      const release = await submitter.callTool({ name: 'release_scheduled_payment', arguments: { taskId, lineItemId: 'LI-2' } });
      say(`release_scheduled_payment: ${textOf(release as CallToolResult)}`);
    }
    if (task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled') break;
    await sleep(task.pollInterval ?? 1000);
  }
  await approving;
  const final = await (result ?? submitter.experimental.tasks.getTaskResult(taskId, CallToolResultSchema));
  const outcome = final.structuredContent as InvoiceResult;
  say(`result: ${textOf(final)}`);
  for (const approver of outcome.approval?.approvers ?? [])
    say(`  ${approver.decision} by ${approver.principal} (roles ${approver.roles.join(', ')}) at ${approver.at} via ${approver.via}`);
  for (const payment of outcome.payments)
    say(`  paid ${payment.lineItemId}: ${formatAmount(payment.amount, outcome.currency)} as ${payment.paymentId}`);
  const ledger = new PaymentsLedger(activityConfigFromEnv().ledgerDir);
  const paid = (await ledger.entries()).filter((entry) => entry.taskId === taskId);
  say(`payments ledger ${ledger.dir}: ${paid.length} payment(s) for this task, keys ${paid.map((entry) => entry.key).join(', ')}`);
  const outbox = activityConfigFromEnv().notificationOutbox;
  const notifications = (await readNotifications(outbox)).filter((notification) => notification.taskId === taskId);
  say(
    `notification outbox ${outbox} (for mail or chat): ${notifications.map((n) => `${n.kind} ${n.audience.roles?.join(', ')}`).join('; ') || 'nothing'}`,
  );
  printReceipt(taskId, outcome);
  await Promise.all([submitter, ann, bob].map((client) => client.close()));
  await connection.close();
}

/** The demo's invoice: EUR 11,380.00 in two lines, the second scheduled three months ahead. */
function demoInvoice() {
  const payOn = new Date(Date.now() + 90 * 86_400_000).toISOString().slice(0, 10);
  return {
    vendorId: 'V-100',
    invoiceNumber: `INV-DEMO-${Date.now().toString(36).toUpperCase()}`,
    currency: 'EUR',
    lineItems: [
      { lineItemId: 'LI-1', description: 'Laptops, 6 units', amount: 8_400 },
      { lineItemId: 'LI-2', description: 'Annual maintenance, due in three months', amount: 2_980, payOn },
    ],
  };
}

/** A free TCP port on loopback. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * `--web`: the HTTP server with the approvals page and a directory of its own, the invoice submitted through MCP, a
 * sign-in link per approver printed, the task followed until Ctrl-C (see --help).
 */
async function approveOnThePage(connection: Connection): Promise<void> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const directory = path.join(mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-demo-web-')), 'approvers.json');
  const person = (name: string, roles: string[]) => ({
    name,
    principals: [name],
    roles,
    email: `${name}@example.com`,
    signInByMail: true,
  });
  writeFileSync(
    directory,
    JSON.stringify({ people: [person(SUBMITTER, []), ...APPROVERS.map((name) => person(name, ['ap-approver']))] }, null, 2),
  );
  say(`starting the HTTP server with the approvals page at ${origin}/approvals (npm run -s serve -- --http 127.0.0.1:${port})`);
  const server = await startUntilReady(
    'the HTTP server',
    ['run', '-s', 'serve', '--', '--http', `127.0.0.1:${port}`, '--samples'],
    { ...process.env, MCP_PUBLIC_URL: origin, MCP_APPROVERS_DIRECTORY: directory },
    'the approvals page is at',
  );
  const submitter = await connectAs(SUBMITTER, '');
  const invoice = demoInvoice();
  say(`${SUBMITTER} calls process_invoice as a task for ${invoice.invoiceNumber}: EUR 11,380.00, two approvals needed`);
  const { task: created } = await submitter.request(
    { method: 'tools/call', params: { name: 'process_invoice', arguments: invoice, task: { ttl: 24 * 3_600_000 } } },
    CreateTaskResultSchema,
  );
  const taskId = created.taskId;
  say(`task created: ${taskId}`);
  const tokens = signInLinkTokens(taskKeyFromEnv());
  say('Open the approvals page as each approver (each link signs in once, within the hour; use two browser profiles):');
  for (const name of APPROVERS) say(`  ${name}: ${signInLink(tokens, origin, name, Date.now() + 3_600_000)}`);
  say(`${SUBMITTER} may not approve the invoice; the page at ${origin}/approvals shows it to both approvers. Ctrl-C stops the server.`);
  let stop = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => (stop = true));
  let last = '';
  let released = false;
  while (!stop) {
    const task = await submitter.experimental.tasks.getTask(taskId).catch(() => undefined);
    if (task && describe(task) !== last) say(`${SUBMITTER} sees ${(last = describe(task))}`);
    if (task?.status === 'working' && /scheduled:/.test(task.statusMessage ?? '') && !released) {
      released = true;
      say('approved on the page; LI-2 waits on a durable timer: releasing it early with release_scheduled_payment');
      const release = await submitter.callTool({ name: 'release_scheduled_payment', arguments: { taskId, lineItemId: 'LI-2' } });
      say(`release_scheduled_payment: ${textOf(release as CallToolResult)}`);
    }
    if (server.child.exitCode !== null) throw new Error(`the server exited:\n${server.log().slice(-2_000)}`);
    await sleep(1_000);
  }
  say('stopping the server; the task goes on in Temporal');
  await submitter.close();
  await connection.close();
}

/**
 * What an auditor does: `approvals verify TASK --export FILE` reads the decision store (no Temporal) and writes the
 * receipt; `approvals verify --receipt FILE --public-key FILE` checks the receipt with the public key alone. Prints both
 * commands as a checkout runs them, their output, and the receipt's records; throws when either fails.
 */
function printReceipt(taskId: string, outcome: InvoiceResult): void {
  if (!outcome.approval?.approvers?.some((approver) => approver.record)) {
    say('no decision records: this worker let the submitter approve (INVOICE_APPROVER_ROLE=requester)');
    return;
  }
  const receipt = path.join(mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-demo-')), `${taskId}.receipt.json`);
  // In a checkout `npm run -s approvals --` is the installed package's `temporal-mcp-tasks approvals`.
  const cli = (args: string[]) => spawnSync('npm', ['run', '-s', 'approvals', '--', 'verify', ...args], { cwd: ROOT, encoding: 'utf8' });
  say(`the auditor: npm run -s approvals -- verify ${taskId} --export ${receipt}`);
  const exported = cli([taskId, '--export', receipt]);
  process.stdout.write(indent(`${exported.stdout}${exported.stderr}`.trimEnd()) + '\n');
  if (exported.status !== 0) throw new Error(`approvals verify --export exited with ${exported.status} (see above)`);
  const publicKey = process.env.MCP_DECISION_PUBLIC_KEY ?? defaultPublicKeyFile();
  say(
    `the auditor, with the receipt and the public key alone: npm run -s approvals -- verify --receipt ${receipt} --public-key ${publicKey}`,
  );
  const offline = cli(['--receipt', receipt, '--public-key', publicKey]);
  process.stdout.write(indent(`${offline.stdout}${offline.stderr}`.trimEnd()) + '\n');
  if (offline.status !== 0) throw new Error(`approvals verify --receipt exited with ${offline.status} (see above)`);
  const records = (
    JSON.parse(readFileSync(receipt, 'utf8')) as {
      records: { body: { seq: number; decision: string; by: { person: string } }; digest: string }[];
    }
  ).records;
  say(
    `receipt ${receipt}: ${records.map((record) => `#${record.body.seq} ${record.body.decision} by ${record.body.by.person} (${record.digest.slice(0, 19)}…)`).join('; ')}`,
  );
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

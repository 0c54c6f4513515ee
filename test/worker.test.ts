/**
 * The worker process: a graceful stop on SIGTERM, its log, and `--check`; the library's worker command running the
 * example's workflows and activities given as modules.
 */
import { spawn } from 'node:child_process';
import { PaymentsLedger } from '../examples/invoice-approval/src/activities/payments';
import { ROOT } from './helpers/dev-server';
import { startStack, type TestStack } from './helpers/test-stack';
import { APPROVE, newMcpClient, ScriptedUser, taskResult, waitForTask } from './helpers/mcp';
import { sampleInvoice, startInvoiceTask } from './helpers/example';
import { serverEnv, spawnWorker, type SpawnedProcess } from './helpers/processes';
import { eventually } from './helpers/temporal';

let stack: TestStack;
const stops: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  // No worker of the stack's own until the test starts one: the spawned worker is the first.
  stack = await startStack({ name: 'worker', worker: false, bridge: true });
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await stack?.stop();
});

/** `npm run -s worker -- …args` to its end. */
function runWorker(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('npm', ['run', '-s', 'worker', '--', ...args], { cwd: ROOT, env: serverEnv(stack.taskQueue, env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The JSON lines a worker wrote on stderr so far (a line still being written is left out). */
function logEntries(worker: SpawnedProcess): Record<string, unknown>[] {
  return worker
    .stderr()
    .split('\n')
    .slice(0, -1)
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

test('SIGTERM during a payment: the payment finishes, the worker exits 0, another worker finishes the task, each line item paid once', async () => {
  const { activities } = stack;
  const worker: SpawnedProcess = await spawnWorker(stack.taskQueue, {
    PAYMENTS_LEDGER: activities.ledgerDir,
    ERP_REGISTRY: activities.erpRegistryDir,
    PAYMENT_DELAY_MS: '2000',
    MCP_LOG_FORMAT: 'json',
    MCP_LOG_LEVEL: 'debug',
  });
  stops.push(() => worker.kill('SIGKILL'));
  const client = newMcpClient('worker-test');
  new ScriptedUser(() => APPROVE).attach(client);
  await stack.connect(client);
  const task = await startInvoiceTask(client, sampleInvoice());
  const finished = taskResult(client, task.taskId, 120_000);
  await waitForTask(client, task.taskId, (t) => /paying line item/.test(t.statusMessage ?? ''), 30_000);
  // The status says the workflow scheduled the payment; the signal must come once this worker has started it.
  await eventually(
    async () => logEntries(worker).some((entry) => entry.msg === 'Activity started' && entry.activityType === 'payLineItem') || undefined,
    'the worker to start a payment',
  );

  await worker.kill('SIGTERM');
  expect(await worker.exited).toEqual({ code: 0, signal: null });
  const entries = logEntries(worker);
  const messages = entries.map((entry) => entry.msg);
  expect(messages).toEqual(expect.arrayContaining([expect.stringMatching(/^worker: SIGTERM: stopping/), 'worker: stopped']));
  // The SDK's own lines about the task's workflow and activities name it.
  const aboutTask = entries.filter((entry) => entry.workflowId === task.taskId);
  expect(aboutTask.length).toBeGreaterThan(0);
  for (const entry of aboutTask) expect(entry.taskId).toBe(task.taskId);
  // The payment under way when the signal came was finished, not dropped.
  expect((await new PaymentsLedger(activities.ledgerDir).entries()).filter((entry) => entry.taskId === task.taskId).length).toBeGreaterThan(
    0,
  );

  await stack.startWorker();
  expect((await finished).structuredContent).toMatchObject({ outcome: 'paid' });
  const paid = (await new PaymentsLedger(activities.ledgerDir).entries()).filter((entry) => entry.taskId === task.taskId);
  expect(paid.map((entry) => entry.lineItemId).sort()).toEqual(['LI-1', 'LI-2']);
}, 120_000);

test('worker --check: one line and exit 0 when Temporal, the namespace and the search attribute are there; exit 1 otherwise', async () => {
  const ok = await runWorker(['--check'], {});
  expect(ok.code).toBe(0);
  expect(ok.stdout).toMatch(
    /^worker: ok: Temporal 127\.0\.0\.1:\d+, namespace default \(retention [\d.]+ h\), search attributes McpPrincipal, McpAwaiting, McpChangedAt\n$/,
  );
  const missing = await runWorker(['--check'], { TEMPORAL_NAMESPACE: 'no-such-namespace' });
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/namespace "no-such-namespace" does not exist/);
});

/** The library's own worker command, as the bin runs it, from the checkout's sources. */
const LIBRARY_WORKER = ['--import', 'tsx', 'src/cli.ts', 'worker'];

test('temporal-mcp-tasks worker --workflows --activities runs the example from its modules: an invoice is paid, SIGTERM exits 0', async () => {
  const { activities } = stack;
  const worker = await spawnWorker(stack.taskQueue, { PAYMENTS_LEDGER: activities.ledgerDir, ERP_REGISTRY: activities.erpRegistryDir }, [
    ...LIBRARY_WORKER,
    '--workflows',
    'examples/invoice-approval/src/workflows',
    '--activities',
    'examples/invoice-approval/src/activities',
  ]);
  stops.push(() => worker.kill('SIGKILL'));
  expect(worker.stderr()).toMatch(/workflows of \S+examples\/invoice-approval\/src\/workflows\/index\.ts/);
  const client = newMcpClient('library-worker-test');
  new ScriptedUser(() => APPROVE).attach(client);
  await stack.connect(client);
  const task = await startInvoiceTask(client, sampleInvoice());
  expect((await taskResult(client, task.taskId, 120_000)).structuredContent).toMatchObject({ outcome: 'paid' });
  const paid = (await new PaymentsLedger(activities.ledgerDir).entries()).filter((entry) => entry.taskId === task.taskId);
  expect(paid.map((entry) => entry.lineItemId).sort()).toEqual(['LI-1', 'LI-2']);
  await worker.kill('SIGTERM');
  expect(await worker.exited).toEqual({ code: 0, signal: null });
}, 120_000);

test('temporal-mcp-tasks worker: a module that is not there, or exports no activities, is a usage error (exit 2) naming it', async () => {
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [...LIBRARY_WORKER, ...args], { cwd: ROOT, env: serverEnv(stack.taskQueue, {}) });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.once('exit', (code) => resolve({ code, stderr }));
    });
  const missing = await run(['--workflows', 'no/such/workflows']);
  expect(missing).toEqual({ code: 2, stderr: expect.stringMatching(/--workflows no\/such\/workflows: no such module/) });
  const empty = await run(['--activities', 'examples/invoice-approval/src/invoice']);
  expect(empty).toEqual({
    code: 2,
    stderr: expect.stringMatching(/--activities \S+invoice\.ts: export createActivities\(\), or activities/),
  });
  const noValue = await run(['--activities']);
  expect(noValue).toEqual({ code: 2, stderr: expect.stringMatching(/--activities needs a module/) });
});

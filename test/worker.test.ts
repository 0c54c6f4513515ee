/**
 * The worker process: a graceful stop on SIGTERM, its log, and `--check`; the library's worker command running a
 * team's workflows and activities given as modules (the fixtures').
 */
import { spawn } from 'node:child_process';
import { ROOT } from './helpers/dev-server';
import { FIXTURES, activityCompletions, askInput, startAskTask, type FixtureStack } from './fixtures/stack';
import { startStack } from './helpers/test-stack';
import { APPROVE, newMcpClient, ScriptedUser, taskResult } from './helpers/mcp';
import { serverEnv, spawnWorker, type SpawnedProcess } from './helpers/processes';
import { eventually } from './helpers/temporal';

let stack: FixtureStack;
const stops: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  // No worker of the stack's own until the test starts one: the spawned worker is the first.
  stack = await startStack({ name: 'worker', app: FIXTURES, worker: false, bridge: true });
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await stack?.stop();
});

/** The library's own worker command, as the bin runs it, from the checkout's sources. */
const LIBRARY_WORKER = ['--import', 'tsx', 'src/cli.ts', 'worker'];

/** `temporal-mcp-tasks worker …args` to its end. */
function runWorker(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [...LIBRARY_WORKER, ...args], { cwd: ROOT, env: serverEnv(stack.taskQueue, env) });
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

test('SIGTERM during an activity: the activity finishes, the worker exits 0, another worker finishes the task, each step run once', async () => {
  const worker: SpawnedProcess = await stack.spawnWorker({ MCP_LOG_FORMAT: 'json', MCP_LOG_LEVEL: 'debug' });
  stops.push(() => worker.kill('SIGKILL'));
  const client = newMcpClient('worker-test');
  new ScriptedUser(() => APPROVE).attach(client);
  await stack.connect(client);
  // A step of 2 s before the question and another after the answer: the signal comes while the first one runs.
  const task = await startAskTask(client, askInput({ noteSteps: true, stepMs: 2000 }));
  const finished = taskResult(client, task.taskId, 120_000);
  await eventually(
    async () => logEntries(worker).some((entry) => entry.msg === 'Activity started' && entry.activityType === 'noteStep') || undefined,
    'the worker to start a step',
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
  // The step under way when the signal came was finished, not dropped.
  expect(await activityCompletions(stack.temporal, task.taskId, 'noteStep')).toBe(1);

  await stack.startWorker();
  const result = await finished;
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toMatchObject({ outcome: 'approved' });
  expect(await activityCompletions(stack.temporal, task.taskId, 'noteStep')).toBe(2);
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

test('temporal-mcp-tasks worker --workflows --activities runs workflows and activities from their modules: a task ends approved, SIGTERM exits 0', async () => {
  const worker = await spawnWorker(stack.taskQueue, FIXTURES.workerEnv!(stack.activities), [
    ...LIBRARY_WORKER,
    '--workflows',
    'test/fixtures/workflows',
    '--activities',
    'test/fixtures/activities',
  ]);
  stops.push(() => worker.kill('SIGKILL'));
  expect(worker.stderr()).toMatch(/workflows of \S+test\/fixtures\/workflows\/index\.ts/);
  const client = newMcpClient('library-worker-test');
  new ScriptedUser(() => APPROVE).attach(client);
  await stack.connect(client);
  const task = await startAskTask(client, askInput({ noteSteps: true }));
  const result = await taskResult(client, task.taskId, 120_000);
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toMatchObject({ outcome: 'approved' });
  // The activities of the module ran beside the bridge's.
  expect(await activityCompletions(stack.temporal, task.taskId, 'noteStep')).toBe(2);
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
  const empty = await run(['--activities', 'test/fixtures/definitions']);
  expect(empty).toEqual({
    code: 2,
    stderr: expect.stringMatching(/--activities \S+definitions\.ts: export createActivities\(\), or activities/),
  });
  const noValue = await run(['--activities']);
  expect(noValue).toEqual({ code: 2, stderr: expect.stringMatching(/--activities needs a module/) });
});

import { randomUUID } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger, type Worker, type WorkerOptions } from '@temporalio/worker';
import { answerSealFromEnv } from '../../src/shared/answer-proof';
import { respondSignal, type InputContent } from '../../src/contract/task-contract';
import { webUiUrlFromEnv, type TemporalConfig } from '../../src/shared/temporal-config';
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

/** What a test may change about a worker it starts: another workflow bundle, tracing. */
export interface TestWorkerOptions {
  /** A bundle other than the run's prebuilt one, e.g. one built with the tracing interceptors. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Workflow and activity interceptors and sinks (a prebuilt bundle must hold its interceptor modules). */
  telemetry?: Pick<WorkerOptions, 'interceptors' | 'sinks'>;
}

/** The run's prebuilt bundle of the fixtures' workflows (test/fixtures/workflows). */
export function fixtureWorkflowBundle(): { codePath: string } {
  return { codePath: process.env[TEST_ENV.fixtureBundle]! };
}

/**
 * Runs a worker that `create` makes on `shared`, or on a connection of its own to the run's dev server (closed when it
 * stops), until {@link RunningWorker.stop}.
 */
export async function runWorker(
  create: (connection: NativeConnection) => Promise<Worker>,
  shared?: NativeConnection,
): Promise<RunningWorker> {
  quietTemporalLogs();
  const connection = shared ?? (await NativeConnection.connect({ address: testAddress() }));
  let worker: Worker;
  try {
    worker = await create(connection);
  } catch (error) {
    if (!shared) await connection.close();
    throw error;
  }
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

/** The current run's original run id (kept across resets), from its start event: what answers are sealed for. */
export async function originalRunIdOf(handle: WorkflowHandle): Promise<string> {
  const { events } = await handle.fetchHistory();
  return events![0].workflowExecutionStartedEventAttributes!.originalExecutionRunId!;
}

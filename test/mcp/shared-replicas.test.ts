/**
 * Two server replicas that share their state in PostgreSQL (`MCP_SHARED_STATE`), spawned as a user runs them, with a
 * PostgreSQL server this file starts: a task created through one replica is in the very next `tasks/list` through the
 * other, and one principal gets one rate of task operations, one set of waits and one open-task quota across both,
 * not one each.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  ListTasksResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import { LocalPostgres } from '../../scripts/lib/postgres';
import { sharedStateFromEnv } from '../../src/core/shared-state';
import { sleep } from '../../src/util/wait';
import { ApprovalClients, makePeople, writeTokensFile } from '../helpers/approvals';
import { freePort } from '../helpers/dev-server';
import { startStack } from '../helpers/test-stack';
import { askInput, FIXTURES, type FixtureStack } from '../fixtures/stack';
import { eventually } from '../helpers/temporal';

/** Operations a second per principal, on each replica: a burst of twice as many. */
const RATE = 2;

/** Open tasks per principal. */
const MAX_OPEN = 3;

const people = makePeople({ lister: '', poller: '', waiter: '', opener: '', canceller: '' });
let dir: string;
let postgres: LocalPostgres;
let stack: FixtureStack;
const clients = new ApprovalClients();

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'shared-replicas-'));
  postgres = new LocalPostgres({ dataDir: path.join(dir, 'postgres'), port: await freePort() });
  postgres.start();
  postgres.psql('CREATE DATABASE replicas');
  const env = {
    MCP_AUTH_TOKENS_FILE: writeTokensFile(people),
    MCP_SHARED_STATE: postgres.url('replicas'),
    MCP_TASK_OPS_PER_SECOND: String(RATE),
    MCP_MAX_WAITS_PER_PRINCIPAL: '1',
    MCP_MAX_OPEN_TASKS_PER_PRINCIPAL: String(MAX_OPEN),
  };
  stack = await startStack({ name: 'shared-replicas', app: FIXTURES, servers: [{ env }, { env }] });
}, 120_000);

afterAll(async () => {
  await clients.closeAll();
  await stack?.stop();
  try {
    postgres?.stop('fast');
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
});

test('a task created through one replica is noted in the shared state before the create answers, and is in the next tasks/list through the other', async () => {
  const [one, other] = await Promise.all([
    clients.connect(stack.servers[0].url, people.lister),
    clients.connect(stack.servers[1].url, people.lister),
  ]);
  // Two rounds: four task operations, the burst the rate allows.
  for (let round = 0; round < 2; round++) {
    const created = await one.request(
      { method: 'tools/call', params: { name: 'ask_requester', arguments: askInput(), task: {} } },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    // Whatever visibility shows yet, the other replicas can know of it from the moment the create answered.
    expect(postgres.psql(`SELECT principal FROM mcp_recent_tasks WHERE task_id = '${taskId}'`, 'replicas').trim()).toBe(
      people.lister.principal,
    );
    const listed = await other.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema);
    expect(listed.tasks.map((task) => task.taskId)).toContain(taskId);
  }
});

test('one principal gets one rate of task operations across the replicas', async () => {
  const replicas = await Promise.all(stack.servers.map((server) => clients.connect(server.url, people.poller)));
  const burst = RATE * 2;
  let served = 0;
  let refused = 0;
  const started = Date.now();
  for (let call = 0; call < 4 * burst; call++) {
    try {
      await replicas[call % 2].request({ method: 'tasks/list', params: {} }, ListTasksResultSchema);
      served++;
    } catch (error) {
      expect((error as Error).message).toMatch(/Too many task requests: this caller may make 2 per second/);
      refused++;
    }
  }
  const seconds = (Date.now() - started) / 1000;
  expect(served + refused).toBe(4 * burst);
  // One bucket: the burst, and what the rate added while the calls ran. Each replica's own would serve twice the burst.
  expect(served).toBeLessThanOrEqual(burst + Math.ceil(RATE * seconds));
  expect(refused).toBeGreaterThan(0);
});

test('one principal holds its waits across the replicas: a wait held on one is counted on the other, and freed when it ends', async () => {
  const [one, other] = await Promise.all(stack.servers.map((server) => clients.connect(server.url, people.waiter)));
  const waiting = () => Number(postgres.psql(`SELECT count(*) FROM mcp_waits WHERE principal = '${people.waiter.principal}'`, 'replicas'));
  const created = await one.request(
    { method: 'tools/call', params: { name: 'ask_requester', arguments: askInput(), task: {} } },
    CreateTaskResultSchema,
  );
  const { taskId } = created.task;
  // This client cannot answer the question the task asks: its tasks/result waits until the task ends.
  const result = one.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema).catch((error: Error) => error);
  await eventually(async () => (waiting() === 1 ? true : undefined), 'the wait to be held in the shared state');
  await expect(other.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema)).rejects.toThrow(
    /Too many waits: 1 requests of this caller are already waiting on tasks \(at most 1\)/,
  );
  await other.request({ method: 'tasks/cancel', params: { taskId } }, CancelTaskResultSchema);
  // The blocked tasks/result ends with the call's answer: the cancellation, as a JSON-RPC error naming the task.
  expect(await result).toMatchObject({ code: -32603, data: { taskId, status: 'cancelled' } });
  await eventually(async () => (waiting() === 0 ? true : undefined), 'the wait to be freed in the shared state');
});

test('one principal has one open-task quota across the replicas', async () => {
  const [one, other] = await Promise.all(stack.servers.map((server) => clients.connect(server.url, people.opener)));
  const create = (client: typeof one) =>
    client
      .request({ method: 'tools/call', params: { name: 'ask_requester', arguments: askInput(), task: {} } }, CreateTaskResultSchema)
      .then(
        () => 'created',
        (error: Error) => error.message,
      );
  // Two through one replica, one through the other: the quota is full. Each replica's count of its own (the first
  // keeps its count a few seconds) would let the fourth through.
  expect(await create(one)).toBe('created');
  expect(await create(one)).toBe('created');
  expect(await create(other)).toBe('created');
  expect(await create(one)).toMatch(/Too many open tasks: this caller has 3 running \(at most 3\)/);
});

test('the open-task quota in the shared state: a count slower than its freshness still reserves a place; only the quota refuses', async () => {
  const state = sharedStateFromEnv({ MCP_SHARED_STATE: postgres.url('replicas') })!;
  try {
    const principal = `slow-count-${randomUUID().slice(0, 8)}`;
    // Temporal counts slowly (a slow link): the count is older than its freshness by the time it is stored.
    const slowly = (open: number) => async () => {
      await sleep(1_500);
      return open;
    };
    const first = await state.reserveTask(principal, 3, slowly(2), 1_000);
    expect('release' in first).toBe(true);
    // Full: refused, naming the quota it hit.
    expect(await state.reserveTask(principal, 3, slowly(3), 1_000)).toEqual({ open: 3 });
  } finally {
    await state.close();
  }
});

test('with the change feed, a cancel through one replica is what the very next read through the other answers, the worker down', async () => {
  // Two more replicas, following what they read with the change feed; no rate limit, so that nothing is refused.
  const env = {
    MCP_AUTH_TOKENS_FILE: writeTokensFile(people),
    MCP_SHARED_STATE: postgres.url('replicas'),
    MCP_CHANGE_FEED_MS: '100',
    MCP_TASK_OPS_PER_SECOND: '0',
  };
  const [one, other] = await Promise.all([stack.spawnServer({ env }), stack.spawnServer({ env })]);
  const [viaOne, viaOther] = await Promise.all([clients.connect(one.url, people.canceller), clients.connect(other.url, people.canceller)]);
  const created = await viaOne.request(
    { method: 'tools/call', params: { name: 'ask_requester', arguments: askInput(), task: {} } },
    CreateTaskResultSchema,
  );
  const { taskId } = created.task;
  const read = async () => (await viaOther.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema)).status;
  // Waiting for its answer, the change it stamped reported: the other replica keeps its read for the feed.
  await eventually(async () => ((await read()) === 'input_required' ? true : undefined), 'the task to wait for its answer');
  expect(await read()).toBe('input_required');
  // Nothing runs the workflow now: the cancel stamps no change for the feed to report.
  await stack.stopWorker();
  try {
    const cancelled = await viaOne.request({ method: 'tasks/cancel', params: { taskId } }, CancelTaskResultSchema);
    expect(cancelled.status).toBe('cancelled');
    expect(await read()).toBe('cancelled');
    expect(postgres.psql(`SELECT count(*) FROM mcp_task_writes WHERE task_id = '${taskId}'`, 'replicas').trim()).toBe('1');
  } finally {
    await stack.startWorker();
  }
});

/**
 * Two server replicas that share their state in PostgreSQL (`MCP_SHARED_STATE`), spawned as a user runs them, with a
 * PostgreSQL server this file starts: a task created through one replica is in the very next `tasks/list` through the
 * other, and one principal gets one rate of task operations across both, not one each.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateTaskResultSchema, ListTasksResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { LocalPostgres } from '../../scripts/lib/postgres';
import { ApprovalClients, makePeople, writeTokensFile } from '../helpers/approvals';
import { freePort } from '../helpers/dev-server';
import { startStack, type TestStack } from '../helpers/test-stack';
import { sampleInvoice } from '../helpers/temporal';

/** Operations a second per principal, on each replica: a burst of twice as many. */
const RATE = 2;

const people = makePeople({ lister: '', poller: '' });
let dir: string;
let postgres: LocalPostgres;
let stack: TestStack;
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
  };
  stack = await startStack({ name: 'shared-replicas', servers: [{ env }, { env }] });
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
      { method: 'tools/call', params: { name: 'process_invoice', arguments: sampleInvoice() as never, task: {} } },
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

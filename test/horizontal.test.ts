import { PaymentsLedger } from '../examples/invoice-approval/src/activities/payments';
import { APPROVE, connectOverHttp, getTask, taskResult, waitForTask } from './helpers/mcp';
import { sampleInvoice, tempActivityConfig, startInvoiceTask } from './helpers/example';
import { spawnHttpServerOnFreePort, spawnWorker, type HttpServerProcess, type SpawnedProcess } from './helpers/processes';
import { eventually, uniqueTaskQueue } from './helpers/temporal';

const taskQueue = uniqueTaskQueue('horizontal');
const activities = tempActivityConfig();
const workerEnv = { PAYMENTS_LEDGER: activities.ledgerDir, ERP_REGISTRY: activities.erpRegistryDir, PAYMENT_DELAY_MS: '1500' };
const processes: { kill(signal?: NodeJS.Signals): Promise<void> }[] = [];
const clients: { close(): Promise<void> }[] = [];

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await Promise.all(processes.map((process) => process.kill()));
});

async function connect(url: string) {
  const connected = await connectOverHttp(url, 'horizontal', { answer: () => APPROVE });
  clients.push(connected.client);
  return connected;
}

test('two servers and two workers: a task created through one server is listed, answered and finished through the other while one of each is killed', async () => {
  const [serverA, serverB, worker1, worker2]: [HttpServerProcess, HttpServerProcess, SpawnedProcess, SpawnedProcess] = await Promise.all([
    // The first server never offers a question on its own (its grace outlasts it): its client only creates and polls.
    spawnHttpServerOnFreePort(taskQueue, { MCP_INPUT_PUSH_GRACE_MS: '600000' }),
    spawnHttpServerOnFreePort(taskQueue),
    spawnWorker(taskQueue, workerEnv),
    spawnWorker(taskQueue, workerEnv),
  ]);
  processes.push(serverA, serverB, worker1, worker2);

  const a = await connect(serverA.url);
  const tasks = [await startInvoiceTask(a.client, sampleInvoice()), await startInvoiceTask(a.client, sampleInvoice())];
  for (const task of tasks) await waitForTask(a.client, task.taskId, (t) => t.status === 'input_required');
  await serverA.kill('SIGKILL');

  const b = await connect(serverB.url);
  await eventually(async () => {
    const { tasks: listed } = await b.client.experimental.tasks.listTasks();
    return tasks.every((task) => listed.some((t) => t.taskId === task.taskId)) ? true : undefined;
  }, 'both tasks in tasks/list on the second server');

  // Answer both; kill one worker while payments run (each takes 1.5 s).
  const results = tasks.map((task) => taskResult(b.client, task.taskId, 120_000));
  await waitForTask(b.client, tasks[0].taskId, (t) => /paying line item/.test(t.statusMessage ?? ''));
  await worker1.kill('SIGKILL');
  for (const result of await Promise.all(results)) expect(result.structuredContent).toMatchObject({ outcome: 'paid' });

  expect(b.user.asked).toHaveLength(2);
  expect(a.user.asked).toHaveLength(0);
  const ledger = await new PaymentsLedger(activities.ledgerDir).entries();
  for (const task of tasks) {
    expect(
      ledger
        .filter((entry) => entry.taskId === task.taskId)
        .map((entry) => entry.lineItemId)
        .sort(),
    ).toEqual(['LI-1', 'LI-2']);
    expect((await getTask(b.client, task.taskId)).status).toBe('completed');
  }
}, 180_000);

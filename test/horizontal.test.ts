/**
 * Horizontal scale: two servers and two worker processes on one task queue, as a deployment runs them. A task created
 * through one server is listed, answered and finished through the other while one server and one worker are killed.
 */
import { FIXTURES, activityCompletions, askInput, startAskTask, type FixtureStack } from './fixtures/stack';
import { APPROVE, connectOverHttp, getTask, taskResult, waitForTask } from './helpers/mcp';
import { eventually } from './helpers/temporal';
import { startStack } from './helpers/test-stack';

let stack: FixtureStack;
const clients: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  stack = await startStack({ name: 'horizontal', app: FIXTURES, worker: false });
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await stack?.stop();
});

async function connect(url: string) {
  const connected = await connectOverHttp(url, 'horizontal', { answer: () => APPROVE });
  clients.push(connected.client);
  return connected;
}

test('two servers and two workers: a task created through one server is listed, answered and finished through the other while one of each is killed', async () => {
  const [serverA, serverB, worker1] = await Promise.all([
    // The first server never offers a question on its own (its grace outlasts it): its client only creates and polls.
    stack.spawnServer({ env: { MCP_INPUT_PUSH_GRACE_MS: '600000' } }),
    stack.spawnServer(),
    stack.spawnWorker(),
    stack.spawnWorker(),
  ]);

  const a = await connect(serverA.url);
  // Each task notes a step of 1.5 s after its answer: the work under way when a worker is killed.
  const tasks = [
    await startAskTask(a.client, askInput({ noteSteps: true, stepMs: 1500 })),
    await startAskTask(a.client, askInput({ noteSteps: true, stepMs: 1500 })),
  ];
  for (const task of tasks) await waitForTask(a.client, task.taskId, (t) => t.status === 'input_required');
  await serverA.kill('SIGKILL');

  const b = await connect(serverB.url);
  await eventually(async () => {
    const { tasks: listed } = await b.client.experimental.tasks.listTasks();
    return tasks.every((task) => listed.some((t) => t.taskId === task.taskId)) ? true : undefined;
  }, 'both tasks in tasks/list on the second server');

  // Answer both; kill one worker once the first answer was taken, while the steps after the answers run.
  const results = tasks.map((task) => taskResult(b.client, task.taskId, 120_000));
  await waitForTask(b.client, tasks[0].taskId, (t) => t.status === 'working' || t.status === 'completed');
  await worker1.kill('SIGKILL');
  for (const result of await Promise.all(results)) {
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ outcome: 'approved' });
  }

  expect(b.user.asked).toHaveLength(2);
  expect(a.user.asked).toHaveLength(0);
  for (const task of tasks) {
    // Each step was noted once (before the question, after the answer), whichever worker ran it.
    expect(await activityCompletions(stack.temporal, task.taskId, 'noteStep')).toBe(2);
    expect((await getTask(b.client, task.taskId)).status).toBe('completed');
  }
}, 180_000);

/**
 * Task reads served from the history watches: polls of a watched task cost Temporal nothing, and a client's poll right
 * after its own write never shows the state before it, through one replica or through a balancer that routes as the
 * cluster's does. Replicas in this process, each with its own Temporal connection (whose requests are counted) and its
 * own Streamable HTTP endpoint; 2025-11-25 clients of the MCP SDK and 2026-07-28 requests over HTTP.
 */
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TaskNotFoundError } from '../../src/core/errors';
import type { BridgeTuning } from '../../src/mcp/bridge/bridge-options';
import { countedReplica, stateReads, type CountedReplica } from '../helpers/counted-replica';
import { startStack } from '../helpers/test-stack';
import { QUESTION_KEY } from '../fixtures/definitions';
import { FIXTURES, startAskTask, type FixtureStack } from '../fixtures/stack';
import { FAST_TUNING, getTask, newMcpClient, waitForTask } from '../helpers/mcp';
import { mcp2026Request } from '../helpers/mcp2026';
import { pollUntil } from '../../src/util/wait';
import { testAddress } from '../helpers/temporal';

const principal = `reader-${randomUUID().slice(0, 8)}`;
let stack: FixtureStack;

type Replica = CountedReplica;

const clients: McpClient[] = [];
const proxies: net.Server[] = [];
const routers: http.Server[] = [];

/**
 * A TCP relay to Temporal that hands on what Temporal sends `delayMs` late (in order), and what is sent to it at once:
 * a replica whose answers from Temporal, its watch's included, reach it later than another's.
 */
async function laggingRelay(delayMs: number): Promise<string> {
  const target = testAddress();
  const colon = target.lastIndexOf(':');
  const relay = net.createServer((near) => {
    const far = net.connect(Number(target.slice(colon + 1)), target.slice(0, colon));
    const later = (act: () => void) => setTimeout(act, delayMs);
    near.pipe(far);
    far.on('data', (chunk) => later(() => near.writable && near.write(chunk)));
    far.on('close', () => later(() => near.destroy()));
    near.on('close', () => far.destroy());
    far.on('error', () => undefined);
    near.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  proxies.push(relay);
  return `127.0.0.1:${(relay.address() as net.AddressInfo).port}`;
}

/** A balancer in front of replicas, routing as the cluster stack's HAProxy does (docs/operations.md). */
interface TaskRouter {
  url: string;
  replicas: Replica[];
  /** The replica a task's `tasks/*` requests and task-tool calls go to. */
  replicaOf(taskId: string): Replica;
}

/**
 * Routes 2026-07-28 `tasks/*` requests by their `Mcp-Name` and task-tool calls by their `Mcp-Param-TaskId` to a replica
 * chosen by a hash of the task id, keeps a 2025-11-25 session on the replica that opened it, and balances everything
 * else round robin.
 */
async function taskRouter(to: Replica[]): Promise<TaskRouter> {
  const replicaOf = (taskId: string) => to[createHash('sha256').update(taskId).digest().readUInt32BE(0) % to.length];
  const sessions = new Map<string, Replica>();
  let next = 0;
  const server = http.createServer((request, response) => {
    const session = request.headers['mcp-session-id'];
    const byTask = String(request.headers['mcp-method'] ?? '').startsWith('tasks/')
      ? request.headers['mcp-name']
      : request.headers['mcp-param-taskid'];
    const target =
      (typeof session === 'string' ? sessions.get(session) : undefined) ??
      (typeof byTask === 'string' ? replicaOf(byTask) : to[next++ % to.length]);
    const upstream = new URL(target.http.url);
    const forwarded = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: upstream.pathname,
        method: request.method,
        headers: { ...request.headers, host: upstream.host },
      },
      (answer) => {
        const opened = answer.headers['mcp-session-id'];
        if (typeof opened === 'string') sessions.set(opened, target);
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => response.destroy());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  routers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/mcp`, replicas: to, replicaOf };
}

function replica(tuning: BridgeTuning = FAST_TUNING, address = testAddress(), taskQueue?: string): Promise<Replica> {
  return countedReplica(stack, { principal, tuning, address, ...(taskQueue && { taskQueue }) });
}

async function client2025(url: string): Promise<McpClient> {
  const client = newMcpClient('watched-reads', false);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  return client;
}

/** tasks/get in 2026-07-28, as a client of that generation polls. */
async function get2026(url: string, taskId: string): Promise<Record<string, any>> {
  const answer = await mcp2026Request(url, 'tasks/get', { taskId });
  if (answer.body.error) throw new Error(`tasks/get: ${answer.body.error.message}`);
  return answer.body.result!;
}

const reads = stateReads;

beforeAll(async () => {
  stack = await startStack({ name: 'watched-reads', app: FIXTURES });
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await stack?.stop();
  for (const relay of proxies) relay.close();
  for (const router of routers) {
    router.close();
    router.closeAllConnections();
  }
});

describe('polls served from the watch', () => {
  test('fifty polls of a task waiting for input make no Temporal read after the first, and read what Temporal reads', async () => {
    const a = await replica();
    const client = await client2025(a.http.url);
    const task = await startAskTask(client);
    const waiting = await waitForTask(client, task.taskId, (t) => t.status === 'input_required');
    // The watch has caught up with the task once one poll was answered from it.
    await waitForTask(client, task.taskId, () => a.bridge.core.readStats().watched > 0);
    const before = { ...reads(a), polls: a.requests.get('GetWorkflowExecutionHistory') ?? 0 };
    const polls2025: unknown[] = [];
    const polls2026: unknown[] = [];
    for (let poll = 0; poll < 25; poll++) {
      polls2025.push(await getTask(client, task.taskId));
      polls2026.push(await get2026(a.http.url, task.taskId));
    }
    const after = reads(a);
    expect(after.describes - before.describes).toBe(0);
    // The only history request is the watch's own long poll, re-armed when Temporal answers it empty (every 20 s).
    expect(after.history - before.history).toBeLessThanOrEqual(1);
    // What a replica that serves nothing from watches reads, straight from Temporal, is the same.
    const b = await replica({ ...FAST_TUNING, core: { ...FAST_TUNING.core, reads: { limit: 0 } } });
    const fresh = await get2026(b.http.url, task.taskId);
    for (const read of polls2026) expect(read).toEqual(fresh);
    for (const read of polls2025) expect(read).toEqual(waiting);
    expect(fresh.status).toBe('input_required');
    expect(reads(b).describes).toBeGreaterThan(0);
    await client.experimental.tasks.cancelTask(task.taskId);
  });

  test('a poll right after the create is answered from what the create knew, without a Temporal read, and reads what Temporal reads', async () => {
    // No worker polls this queue: the run stays as the create left it (started, bound, its first workflow task waiting).
    const queue = `unpolled-${randomUUID()}`;
    const a = await replica(FAST_TUNING, testAddress(), queue);
    const client = await client2025(a.http.url);
    const before = reads(a).describes;
    const created = await startAskTask(client);
    const first2025 = await getTask(client, created.taskId);
    const first2026 = await get2026(a.http.url, created.taskId);
    expect(reads(a).describes).toBe(before);
    expect(a.bridge.core.readStats().watched).toBe(2);
    // The same as a replica that serves nothing from watches reads from Temporal.
    const b = await replica({ ...FAST_TUNING, core: { ...FAST_TUNING.core, reads: { limit: 0 } } }, testAddress(), queue);
    expect(first2026).toEqual(await get2026(b.http.url, created.taskId));
    expect(first2025).toEqual(await getTask(await client2025(b.http.url), created.taskId));
    expect(first2025).toMatchObject({ status: 'working', createdAt: created.createdAt, lastUpdatedAt: created.lastUpdatedAt });
    expect(reads(b).describes).toBeGreaterThan(0);
    await client.experimental.tasks.cancelTask(created.taskId);
  });

  test('another principal reading a watched task gets "not found" from Temporal, as for an id nobody holds: its time tells nothing', async () => {
    const a = await replica();
    const client = await client2025(a.http.url);
    const task = await startAskTask(client);
    await waitForTask(client, task.taskId, (t) => t.status === 'input_required');
    await waitForTask(client, task.taskId, () => a.bridge.core.readStats().watched > 0);
    const describes = reads(a).describes;
    await expect(a.bridge.core.get(task.taskId, 'someone-else')).rejects.toBeInstanceOf(TaskNotFoundError);
    expect(reads(a).describes).toBe(describes + 1);
    // The owner's next read is still served from the watch.
    const watched = a.bridge.core.readStats().watched;
    await a.bridge.core.get(task.taskId, principal);
    expect(a.bridge.core.readStats().watched).toBe(watched + 1);
    await client.experimental.tasks.cancelTask(task.taskId);
  });

  test('watches kept for reads stay within their limit; the least recently read go first', async () => {
    const a = await replica({ ...FAST_TUNING, core: { ...FAST_TUNING.core, reads: { limit: 3 } } });
    const client = await client2025(a.http.url);
    const tasks = [];
    for (let index = 0; index < 6; index++) tasks.push(await startAskTask(client));
    for (const task of tasks) await waitForTask(client, task.taskId, (t) => t.status === 'input_required');
    for (const task of tasks) await getTask(client, task.taskId);
    const { watching, evicted } = a.bridge.core.watchStats();
    expect(watching).toBeLessThanOrEqual(3);
    expect(evicted).toBeGreaterThanOrEqual(3);
    expect(a.bridge.core.readStats().kept).toBeLessThanOrEqual(3);
    // A task whose watch went is read from Temporal again, correctly.
    expect((await getTask(client, tasks[0].taskId)).status).toBe('input_required');
    for (const task of tasks) await client.experimental.tasks.cancelTask(task.taskId);
  });
});

describe("a client's poll right after its own write never shows the state before it", () => {
  /** A task waiting for input, polled on `reader` until its reads come from the watch. */
  async function watchedWaitingTask(reader: Replica, client: McpClient): Promise<string> {
    const task = await startAskTask(client);
    await waitForTask(client, task.taskId, (t) => t.status === 'input_required');
    const served = reader.bridge.core.readStats().watched;
    await waitForTask(client, task.taskId, () => reader.bridge.core.readStats().watched > served);
    return task.taskId;
  }

  const ANSWER = { [QUESTION_KEY]: { action: 'accept', content: { decision: 'approve' } } };

  test('through the same replica: tasks/update, task_respond and tasks/cancel', async () => {
    const a = await replica();
    const client = await client2025(a.http.url);
    for (let round = 0; round < 3; round++) {
      const answered = await watchedWaitingTask(a, client);
      const update = await mcp2026Request(a.http.url, 'tasks/update', { taskId: answered, inputResponses: ANSWER });
      expect(update.body.error).toBeUndefined();
      expect((await get2026(a.http.url, answered)).status).not.toBe('input_required');

      const responded = await watchedWaitingTask(a, client);
      const result = await client.callTool({
        name: 'task_respond',
        arguments: { taskId: responded, action: 'accept', content: { decision: 'approve' } },
      });
      expect(result.isError).toBeFalsy();
      expect((await getTask(client, responded)).status).not.toBe('input_required');

      const cancelled = await watchedWaitingTask(a, client);
      await mcp2026Request(a.http.url, 'tasks/cancel', { taskId: cancelled });
      expect((await getTask(client, cancelled)).status).toBe('cancelled');
      expect((await get2026(a.http.url, cancelled)).status).toBe('cancelled');
    }
  });

  /**
   * Writes and the reads right after them, each sent through `router` as one client sends them (2026-07-28 requests
   * and a 2025-11-25 session), on tasks until each replica has been the one their requests are routed to `rounds`
   * times. Replica A hears of every event later than B: a read of a task on the replica its writes did not go to
   * could be served the state before them, so the promise rests on routing.
   */
  async function writesThenReadsThroughRouter(router: TaskRouter, rounds: number): Promise<void> {
    const session = await client2025(router.url);
    const served = new Map<Replica, number>();
    while (router.replicas.some((each) => (served.get(each) ?? 0) < rounds)) {
      const taskId = (await startAskTask(session)).taskId;
      const target = router.replicaOf(taskId);
      served.set(target, (served.get(target) ?? 0) + 1);
      await waitForTask(session, taskId, (t) => t.status === 'input_required');
      // The target replica serves this task's reads from its watch before the write, as it would for a polling client.
      const watched = target.bridge.core.readStats().watched;
      await pollUntil(
        async () =>
          (await get2026(router.url, taskId)).status === 'input_required' && target.bridge.core.readStats().watched > watched
            ? true
            : undefined,
        { timeoutMs: 30_000, what: 'reads of the waiting task served from the watch of the replica it routes to' },
      );
      switch (served.get(target)! % 3) {
        case 0: {
          const update = await mcp2026Request(router.url, 'tasks/update', { taskId, inputResponses: ANSWER });
          expect(update.body.error).toBeUndefined();
          expect((await get2026(router.url, taskId)).status).not.toBe('input_required');
          break;
        }
        case 1: {
          const respond = await mcp2026Request(
            router.url,
            'tools/call',
            { name: 'task_respond', arguments: { taskId, action: 'accept', content: { decision: 'approve' } } },
            { headers: { 'mcp-param-taskid': taskId } },
          );
          expect(respond.body.result?.isError).toBeFalsy();
          expect((await get2026(router.url, taskId)).status).not.toBe('input_required');
          break;
        }
        default: {
          await mcp2026Request(router.url, 'tasks/cancel', { taskId });
          expect((await get2026(router.url, taskId)).status).toBe('cancelled');
        }
      }
      const responded = (await startAskTask(session)).taskId;
      await waitForTask(session, responded, (t) => t.status === 'input_required');
      // A 2025-11-25 session lives on one replica: its answer and its next poll meet there.
      const result = await session.callTool({
        name: 'task_respond',
        arguments: { taskId: responded, action: 'accept', content: { decision: 'approve' } },
      });
      expect(result.isError).toBeFalsy();
      expect((await getTask(session, responded)).status).not.toBe('input_required');
    }
  }

  test("through a balancer that routes as the cluster's does, while one replica hears from Temporal 300 ms late", async () => {
    const router = await taskRouter([await replica(FAST_TUNING, await laggingRelay(300)), await replica()]);
    await writesThenReadsThroughRouter(router, 2);
  }, 240_000);
});

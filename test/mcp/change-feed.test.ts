/**
 * Reads followed by the change feed (`MCP_CHANGE_FEED_MS`): polls of tasks whose workflows stamp their changes cost
 * Temporal one visibility query per interval for all of them, no describe and no history long poll each; a change made
 * through another replica, or a close, reaches the polls; a task whose workflow never stamped is followed by its
 * history as before. Replicas in this process on connections of their own (requests counted), over Streamable HTTP,
 * with 2025-11-25 clients of the MCP SDK and 2026-07-28 requests.
 */
import { randomUUID } from 'node:crypto';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { BridgeTuning } from '../../src/mcp/bridge/bridge-options';
import { pollUntil } from '../../src/util/wait';
import { countedReplica, stateReads, type CountedReplica } from '../helpers/counted-replica';
import { FAST_TUNING, getTask, newMcpClient, waitForTask } from '../helpers/mcp';
import { mcp2026Request } from '../helpers/mcp2026';
import { startStack } from '../helpers/test-stack';
import { FIXTURES, startAskTask, type FixtureStack } from '../fixtures/stack';
import { QUESTION_KEY } from '../fixtures/definitions';

const principal = `fed-${randomUUID().slice(0, 8)}`;
let stack: FixtureStack;
const clients: McpClient[] = [];

/** A replica whose reads the feed follows, querying every 100 ms. */
const FED: BridgeTuning = { ...FAST_TUNING, core: { ...FAST_TUNING.core, reads: { feedIntervalMs: 100 } } };

function replica(tuning: BridgeTuning, taskQueue?: string): Promise<CountedReplica> {
  return countedReplica(stack, { principal, tuning, ...(taskQueue && { taskQueue }) });
}

async function client2025(replicaOf: CountedReplica): Promise<McpClient> {
  const client = newMcpClient('change-feed', false);
  await client.connect(new StreamableHTTPClientTransport(new URL(replicaOf.http.url)));
  clients.push(client);
  return client;
}

async function get2026(replicaOf: CountedReplica, taskId: string): Promise<Record<string, any>> {
  const answer = await mcp2026Request(replicaOf.http.url, 'tasks/get', { taskId });
  if (answer.body.error) throw new Error(`tasks/get: ${answer.body.error.message}`);
  return answer.body.result!;
}

const feedQueries = (of: CountedReplica) => of.requests.get('ListWorkflowExecutions') ?? 0;

/** Tasks waiting for their answer, each read once on `reader` so that the feed follows them. */
async function followedWaitingTasks(reader: CountedReplica, client: McpClient, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) ids.push((await startAskTask(client)).taskId);
  for (const taskId of ids) await waitForTask(client, taskId, (task) => task.status === 'input_required');
  // Kept for the feed once a read was served from it.
  for (const taskId of ids) {
    const fed = reader.bridge.core.readStats().fed;
    await pollUntil(async () => ((await getTask(client, taskId)) && reader.bridge.core.readStats().fed > fed ? true : undefined), {
      timeoutMs: 30_000,
      what: `reads of ${taskId} served while the feed follows it`,
    });
  }
  return ids;
}

beforeAll(async () => {
  stack = await startStack({ name: 'change-feed', app: FIXTURES });
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await stack?.stop();
});

describe('polls followed by the change feed', () => {
  test('polls of five waiting tasks make no describe and no history request; the feed is the only request, one query for all', async () => {
    const a = await replica(FED);
    const client = await client2025(a);
    const ids = await followedWaitingTasks(a, client, 5);
    const before = { ...stateReads(a), queries: feedQueries(a) };
    const reads: unknown[] = [];
    for (let round = 0; round < 10; round++) for (const taskId of ids) reads.push(await get2026(a, taskId));
    // Long enough for several of the feed's queries.
    await pollUntil(() => (feedQueries(a) >= before.queries + 3 ? true : undefined), { timeoutMs: 30_000, what: 'three feed queries' });
    expect(stateReads(a)).toEqual({ describes: before.describes, history: before.history });
    const { feed } = a.bridge.core.readStats();
    expect(feed?.following).toBe(5);
    // Each query is one page for every followed task, not one per task.
    expect(feed!.queries).toBe(feedQueries(a));
    // What a replica that keeps nothing reads from Temporal is the same.
    const b = await replica({ ...FAST_TUNING, core: { ...FAST_TUNING.core, reads: { limit: 0 } } });
    for (const taskId of ids) expect(reads.find((read: any) => read.taskId === taskId)).toEqual(await get2026(b, taskId));
    for (const taskId of ids) await client.experimental.tasks.cancelTask(taskId);
  });

  test('an answer given through another replica and a cancel through another replica reach the polls', async () => {
    const a = await replica(FED);
    const b = await replica(FAST_TUNING);
    const client = await client2025(a);
    const [answered, cancelled] = await followedWaitingTasks(a, client, 2);
    // Counted before the writes: the feed may report the answer before the cancel is even sent.
    const before = a.bridge.core.readStats().feed!;
    expect(before.following).toBe(2);
    const update = await mcp2026Request(b.http.url, 'tasks/update', {
      taskId: answered,
      inputResponses: { [QUESTION_KEY]: { action: 'accept', content: { decision: 'approve' } } },
    });
    expect(update.body.error).toBeUndefined();
    await mcp2026Request(b.http.url, 'tasks/cancel', { taskId: cancelled });
    // Nothing reads them on A meanwhile: the feed alone tells A that both moved on, and drops what A kept.
    await pollUntil(() => (a.bridge.core.readStats().feed!.changes >= before.changes + 2 ? true : undefined), {
      timeoutMs: 60_000,
      what: 'the feed to report both tasks changed through the other replica',
    });
    expect(a.bridge.core.readStats().feed).toMatchObject({ following: 0, failures: before.failures });
    expect((await get2026(a, answered)).status).not.toBe('input_required');
    expect((await getTask(client, cancelled)).status).toBe('cancelled');
    await client.experimental.tasks.cancelTask(answered).catch(() => undefined);
  });

  test("a poll right after the client's own answer through the same replica never shows the question", async () => {
    const a = await replica(FED);
    const client = await client2025(a);
    for (const taskId of await followedWaitingTasks(a, client, 3)) {
      const result = await client.callTool({
        name: 'task_respond',
        arguments: { taskId, action: 'accept', content: { decision: 'approve' } },
      });
      expect(result.isError).toBeFalsy();
      expect((await getTask(client, taskId)).status).not.toBe('input_required');
      expect((await get2026(a, taskId)).status).not.toBe('input_required');
      await client.experimental.tasks.cancelTask(taskId).catch(() => undefined);
    }
  });

  test('a task whose workflow has not stamped a change is followed by its history, as without the feed', async () => {
    // No worker polls this queue: the run never publishes, so it carries no change stamp.
    const queue = `unpolled-${randomUUID()}`;
    const creator = await replica(FAST_TUNING, queue);
    const created = await startAskTask(await client2025(creator));
    const a = await replica(FED, queue);
    const client = await client2025(a);
    await getTask(client, created.taskId);
    expect(a.bridge.core.readStats()).toMatchObject({ fetched: 1, watched: 0, fed: 0 });
    // The read kept the task's watch: the next read is served from it once it has caught up.
    await pollUntil(async () => ((await getTask(client, created.taskId)) && a.bridge.core.readStats().watched > 0 ? true : undefined), {
      timeoutMs: 30_000,
      what: 'reads of the unstamped task served from its watch',
    });
    expect(a.bridge.core.readStats()).toMatchObject({ fed: 0, feed: { following: 0 } });
    await client.experimental.tasks.cancelTask(created.taskId);
  });

  test('reads kept for the feed stay within their limit; the least recently read go first', async () => {
    const a = await replica({ ...FED, core: { ...FED.core, reads: { feedIntervalMs: 100, feedLimit: 2 } } });
    const client = await client2025(a);
    const ids: string[] = [];
    for (let index = 0; index < 4; index++) ids.push((await startAskTask(client)).taskId);
    for (const taskId of ids) await waitForTask(client, taskId, (task) => task.status === 'input_required');
    for (const taskId of ids) await getTask(client, taskId);
    expect(a.bridge.core.readStats().feed!.following).toBeLessThanOrEqual(2);
    // The first task's read went: it is read from Temporal again, correctly.
    const describes = stateReads(a).describes;
    expect((await getTask(client, ids[0])).status).toBe('input_required');
    expect(stateReads(a).describes).toBeGreaterThan(describes);
    for (const taskId of ids) await client.experimental.tasks.cancelTask(taskId);
  });

  test("another principal's read of a kept task asks Temporal, as a read of an id nobody holds does: its time tells nothing", async () => {
    const a = await replica(FED);
    const client = await client2025(a);
    const [taskId] = await followedWaitingTasks(a, client, 1);
    const nobodys = taskId.replace(/[0-9a-f]{12}$/, randomUUID().slice(-12));
    // A feed query that fails (on a machine too busy for its deadline) drops every kept read, as it should: such a
    // round proves nothing about the other principal's reads, and is made again from the owner's fresh read.
    await pollUntil(
      async () => {
        await a.bridge.core.get(taskId, principal);
        const { fed, feed } = a.bridge.core.readStats();
        const describes = stateReads(a).describes;
        await expect(a.bridge.core.get(taskId, 'mallory')).rejects.toThrow(/Task not found/);
        expect(stateReads(a).describes).toBe(describes + 1);
        await expect(a.bridge.core.get(nobodys, 'mallory')).rejects.toThrow(/Task not found/);
        expect(stateReads(a).describes).toBe(describes + 2);
        // The owner's read is still served from what was kept.
        await a.bridge.core.get(taskId, principal);
        if (a.bridge.core.readStats().feed!.failures !== feed!.failures) return undefined;
        expect(a.bridge.core.readStats().fed).toBe(fed + 1);
        return true;
      },
      { timeoutMs: 60_000, what: 'a round of reads with no failed feed query in it' },
    );
    await client.experimental.tasks.cancelTask(taskId);
  });
});

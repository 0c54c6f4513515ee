/**
 * The production-shaped stack (npm run cluster): Temporal's server on PostgreSQL, two frontends, history, matching and
 * the worker service as processes of their own, two workers, two MCP replicas behind HAProxy, running the library's
 * fixtures. Decisions go through the balancer on both client generations while a Temporal frontend and an MCP replica
 * are killed mid-flow; a 2025-11-25 client whose session died with its replica starts a new one through the balancer
 * and finds its task; each effect is carried out once, nothing asked twice. Partitions of the links to Temporal and to
 * PostgreSQL leave no request unanswered.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateTaskResultSchema, ListTasksResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client, Connection } from '@temporalio/client';
import { ClusterStack, PROXY_POSTGRES, PROXY_TEMPORAL, randomBasePort } from '../scripts/cluster/stack';
import { randomFault } from '../scripts/soak/network-faults';
import { answer, ApprovalClients, awaitInInbox, inbox, type Person } from './helpers/approvals';
import { getTask, taskResult } from './helpers/mcp';
import { mcp2026Request } from './helpers/mcp2026';
import { sleep } from '../src/util/wait';
import { changedSinceQuery, changeStampOf } from '../src/core/change-feed';
import { eventually } from './helpers/temporal';
import type { DecisionInput } from './fixtures/definitions';
import { effectsCarriedOut, FIXTURE_WORKER_ARGS, FIXTURES } from './fixtures/stack';
import { requestDecisionTool } from './fixtures/tools';

const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-cluster-'));
const stack = new ClusterStack({
  dir,
  basePort: randomBasePort(),
  // Toxiproxy between the replicas and Temporal, and between Temporal and PostgreSQL (the last test cuts those links).
  networkFaults: true,
  workerArgs: FIXTURE_WORKER_ARGS,
  serveArgs: FIXTURES.serveArgs(),
  say: (line) => process.stderr.write(`[cluster] ${line}\n`),
});
const clients = new ApprovalClients();
let passed = false;

beforeAll(async () => {
  await stack.up();
}, 900_000);

afterAll(async () => {
  await clients.closeAll();
  // Kept for a look when the test failed.
  await stack.down(passed);
}, 120_000);

function person(principal: string): Person {
  return { principal, token: stack.tokenOf(principal), roles: '' };
}

/** A decision one holder of ap-approver settles, about an order of its own whose words the test looks for in the stores. */
function decision(): DecisionInput & { details: { order: string; item: string } } {
  const tag = randomUUID().slice(0, 8);
  return {
    subject: `order ORD-${tag}`,
    roles: ['ap-approver'],
    details: { order: `ORD-${tag}`, item: `Quokka standing desks ${tag}` },
  };
}

/** How many times the decision of `taskId` carried out its effect, from its history on the stack's Temporal. */
async function effects(taskId: string): Promise<number> {
  const connection = await Connection.connect({ address: stack.temporalAddress });
  try {
    return await effectsCarriedOut(new Client({ connection, namespace: 'default' }), taskId);
  } finally {
    await connection.close();
  }
}

const call = (input: DecisionInput) => ({ name: requestDecisionTool.name, arguments: input });

test('decisions through the balancer on both generations, a frontend and an MCP replica killed mid-flow; each effect carried out once', async () => {
  // The submitter's 2025-11-25 session lives on one replica; the balancer says which.
  let servedBy: string | null = null;
  const watching: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    servedBy = response.headers.get('x-served-by') ?? servedBy;
    return response;
  };
  const submitter = await clients.connect(stack.mcpUrl, person('submitter'), undefined, watching);
  const decided = decision();
  const created = await submitter.request({ method: 'tools/call', params: { ...call(decided), task: {} } }, CreateTaskResultSchema);
  const first = created.task.taskId;

  // 2026-07-28, stateless through the balancer: a second decision as a task, read with tasks/get.
  const asSubmitter = { headers: { authorization: `Bearer ${stack.tokenOf('submitter')}` } };
  const second = decision();
  const made = await mcp2026Request(stack.mcpUrl, 'tools/call', call(second), asSubmitter);
  expect(made.body.result?.resultType).toBe('task');
  const secondId = made.body.result!.taskId as string;
  // The balancer sends every request of one task to one replica (by Mcp-Name), where a read after a write meets it.
  const servers = new Set<string | null>();
  for (let read = 0; read < 6; read++) {
    servers.add((await mcp2026Request(stack.mcpUrl, 'tasks/get', { taskId: secondId }, asSubmitter)).headers.get('x-served-by'));
  }
  expect([...servers]).toEqual([expect.stringMatching(/^mcp-[12]$/)]);

  // Mid-flow: a Temporal frontend and the replica holding the submitter's session die.
  expect(servedBy).toMatch(/^mcp-[12]$/);
  const victim = servedBy as unknown as 'mcp-1' | 'mcp-2';
  await Promise.all([stack.kill('frontend-a'), stack.kill(victim)]);

  // The session died with its replica: the client is told so (the other replica does not know it) and starts a new
  // session through the balancer, which finds the task.
  await expect(getTask(submitter, first)).rejects.toThrow();
  const submitterAgain = await eventually(
    () => clients.connect(stack.mcpUrl, person('submitter')).catch(() => undefined),
    'a new session through the balancer',
    30_000,
  );
  expect((await getTask(submitterAgain, first)).taskId).toBe(first);
  const approverAgain = await clients.connect(stack.mcpUrl, person('approver-a'));
  const approverB = await clients.connect(stack.mcpUrl, person('approver-b'));

  // The approvals, through the surviving replica and frontend: visibility on PostgreSQL lags, so the inbox is polled.
  await awaitInInbox(approverAgain, first, undefined, 60_000);
  expect((await answer(approverAgain, first, 'approve')).isError).toBeFalsy();
  await awaitInInbox(approverB, secondId, undefined, 60_000);
  expect((await answer(approverB, secondId, 'approve')).isError).toBeFalsy();

  const result = await taskResult(submitterAgain, first, 90_000);
  expect(result.structuredContent).toMatchObject({ outcome: 'approved', approvers: [{ principal: 'approver-a' }] });
  const done = await eventually(
    async () => {
      const read = await mcp2026Request(stack.mcpUrl, 'tasks/get', { taskId: secondId }, asSubmitter);
      return read.body.result?.status === 'completed' ? read.body.result : undefined;
    },
    'the 2026-07-28 task to complete',
    90_000,
  );
  expect(done.result?.structuredContent ?? done.result).toBeDefined();
  // The task's Web UI link points at the stack's Web UI, which serves the workflow's page.
  const link = done._meta?.['temporal-mcp-tasks/web-ui'] as string;
  expect(link).toBe(`${stack.webUiUrl}/namespaces/default/workflows/${secondId}`);
  expect((await fetch(link)).status).toBe(200);

  // Each decision's effect carried out exactly once.
  expect(await effects(first)).toBe(1);
  expect(await effects(secondId)).toBe(1);
  // Temporal's PostgreSQL keeps the decisions encrypted (MCP_PAYLOAD_KEYS): none of their words in any row.
  const rows = stack.temporalRows();
  expect(rows).toContain(first);
  expect(rows).toContain('binary/encrypted');
  for (const word of [decided.details.order, second.details.order, decided.details.item, second.details.item])
    expect({ word, inPostgres: rows.includes(word) }).toEqual({ word, inPostgres: false });

  // Both parts come back and serve.
  await Promise.all([stack.start('frontend-a'), stack.start(victim)]);
  await stack.balancerReady();

  // Every frontend down: a read answers, with a retryable error or the balancer's 503, never a hang. The replica gives
  // Temporal 5 s a request (MCP_TEMPORAL_RPC_TIMEOUT_MS); a hang would last the balancer's hour (timeout server 1h).
  await Promise.all([stack.kill('frontend-a'), stack.kill('frontend-b')]);
  const giveUp = new AbortController();
  const outage = await Promise.race([
    mcp2026Request(stack.mcpUrl, 'tasks/get', { taskId: secondId }, asSubmitter),
    sleep(120_000, giveUp.signal).then(() => undefined),
  ]).finally(() => giveUp.abort());
  if (!outage) throw new Error('tasks/get with every Temporal frontend down got no answer within 2 minutes');
  expect(outage.status === 503 || outage.body.error?.data?.retryable === true).toBe(true);
  await Promise.all([stack.start('frontend-a'), stack.start('frontend-b')]);
  await stack.balancerReady(90_000);
  // Each replica's connection tries Temporal again within 2 s: reads come back within seconds (retryable errors until then).
  const back = await eventually(
    async () => {
      const read = await mcp2026Request(stack.mcpUrl, 'tasks/get', { taskId: secondId }, asSubmitter);
      return read.body.result ? read : undefined;
    },
    'reads to come back once the frontends are',
    20_000,
  );
  expect(back.body.result?.status).toBe('completed');
  const parts = await stack.status();
  expect(parts.filter((row) => !row.running)).toEqual([]);
  passed = true;
}, 300_000);

test('a call of a task tool names its task in Mcp-Param-TaskId, and the balancer sends it to the replica of that task', async () => {
  await stack.balancerReady();
  const asSubmitter = { headers: { authorization: `Bearer ${stack.tokenOf('submitter')}` } };
  const made = await mcp2026Request(stack.mcpUrl, 'tools/call', call(decision()), asSubmitter);
  const taskId = made.body.result!.taskId as string;
  const home = (await mcp2026Request(stack.mcpUrl, 'tasks/get', { taskId }, asSubmitter)).headers.get('x-served-by');
  expect(home).toMatch(/^mcp-[12]$/);
  // Requests that name no task go round robin: over both replicas.
  const spread = new Set<string | null>();
  for (let call = 0; call < 4; call++) {
    spread.add((await mcp2026Request(stack.mcpUrl, 'tools/list', {}, asSubmitter)).headers.get('x-served-by'));
  }
  expect([...spread].sort()).toEqual(['mcp-1', 'mcp-2']);
  // Calls of the task tools carry the task id in Mcp-Param-TaskId (mirrored from taskId): each one meets the task's replica.
  const served: Array<string | null> = [];
  for (let call = 0; call < 4; call++) {
    const status = await mcp2026Request(stack.mcpUrl, 'tools/call', { name: 'task_status', arguments: { taskId } }, asSubmitter);
    expect(status.body.result?.isError).toBeFalsy();
    served.push(status.headers.get('x-served-by'));
  }
  // A write by tool and a read by tasks/get meet there too: the read shows the write.
  const cancel = await mcp2026Request(stack.mcpUrl, 'tools/call', { name: 'task_cancel', arguments: { taskId } }, asSubmitter);
  served.push(cancel.headers.get('x-served-by'));
  const read = await mcp2026Request(stack.mcpUrl, 'tasks/get', { taskId }, asSubmitter);
  expect(read.headers.get('x-served-by')).toBe(home);
  expect(read.body.result?.status).toBe('cancelled');
  expect(served).toEqual([home, home, home, home, home]);
}, 120_000);

test('a task created through one replica is in the very next tasks/list through the other (shared state in PostgreSQL)', async () => {
  const replica = (name: 'mcp-1' | 'mcp-2') => `http://127.0.0.1:${stack.ports.replicas[name]}/mcp`;
  const lister = person('submitter');
  const [one, other] = await Promise.all([clients.connect(replica('mcp-1'), lister), clients.connect(replica('mcp-2'), lister)]);
  const missing: string[] = [];
  for (let round = 0; round < 10; round++) {
    const created = await one.request({ method: 'tools/call', params: { ...call(decision()), task: {} } }, CreateTaskResultSchema);
    // Noted in the shared state before the create answered, whatever visibility shows yet.
    const noted = stack.sharedStateQuery(`SELECT principal FROM mcp_recent_tasks WHERE task_id = '${created.task.taskId}'`).trim();
    if (noted !== 'submitter') missing.push(`${created.task.taskId} (not noted in the shared state)`);
    const listed = await other.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema);
    if (!listed.tasks.some((task) => task.taskId === created.task.taskId)) missing.push(created.task.taskId);
  }
  expect(missing).toEqual([]);
}, 120_000);

test("the change feed's query lists a running task on PostgreSQL's visibility only once it stamps again, and once it closes", async () => {
  const asSubmitter = { headers: { authorization: `Bearer ${stack.tokenOf('submitter')}` } };
  const made = await mcp2026Request(stack.mcpUrl, 'tools/call', call(decision()), asSubmitter);
  const taskId = made.body.result!.taskId as string;
  const connection = await Connection.connect({ address: stack.temporalAddress });
  try {
    const client = new Client({ connection, namespace: 'default', dataConverter: stack.dataConverter() });
    const handle = client.workflow.getHandle(taskId);
    const stampNow = async () => changeStampOf((await handle.describe()).raw.workflowExecutionInfo?.searchAttributes);
    const listed = async (since: number) =>
      (await client.workflow.count(`WorkflowId = '${taskId}' AND (${changedSinceQuery(since)})`)).count;
    // Once visibility has the task's latest stamp (it lags, and the workflow stamps each step until it waits for its
    // approvers), the query lists it from that stamp on, and not after it while it runs: CloseTime >= T alone lists
    // every running run there.
    const latest = await eventually(
      async () => {
        const stamp = await stampNow();
        if (stamp === undefined || (await listed(stamp)) !== 1) return undefined;
        const after = await listed(stamp + 1);
        return (await stampNow()) === stamp ? { stamp, after } : undefined;
      },
      "visibility to show the task's latest stamp",
      60_000,
    );
    expect(latest.after).toBe(0);
    await handle.cancel();
    await eventually(async () => ((await listed(latest.stamp + 1)) === 1 ? true : undefined), 'visibility to list the closed run');
  } finally {
    await connection.close();
  }
}, 120_000);

/** What `request` answered, or a failure naming `what` if it did not answer within `deadlineMs`. */
async function answeredWithin<T>(request: Promise<T>, deadlineMs: number, what: string): Promise<T> {
  const giveUp = new AbortController();
  const answered = await Promise.race([
    request.then((value) => ({ value })),
    sleep(deadlineMs, giveUp.signal).then(() => undefined),
  ]).finally(() => giveUp.abort());
  if (!answered) throw new Error(`${what} got no answer within ${deadlineMs / 1000} s`);
  return answered.value;
}

test('a partition between the replicas and Temporal, then between Temporal and PostgreSQL: every request is answered by its deadline, and the decision goes on once the links are whole', async () => {
  await stack.balancerReady();
  const asSubmitter = { headers: { authorization: `Bearer ${stack.tokenOf('submitter')}` } };
  const made = await mcp2026Request(stack.mcpUrl, 'tools/call', call(decision()), asSubmitter);
  const taskId = made.body.result!.taskId as string;
  const approver = await clients.connect(stack.mcpUrl, person('approver-a'));
  await awaitInInbox(approver, taskId, undefined, 60_000);

  // Nothing passes either way and connections stay open, silent: a request waits only as long as the replica's own deadline
  // with Temporal (5 s a request, 30 s for an answer), then says Temporal cannot be reached; a hang would last the
  // balancer's hour. The client's deadline here is twice the longest of those.
  const partition = randomFault([PROXY_TEMPORAL], 'partition');
  for (const proxy of [PROXY_TEMPORAL, PROXY_POSTGRES]) {
    try {
      for (const toxic of partition.toxics) await stack.toxiproxy.add(proxy, toxic);
      const read = await answeredWithin(
        mcp2026Request(stack.mcpUrl, 'tasks/get', { taskId }, asSubmitter),
        60_000,
        `tasks/get across a partition of ${proxy}`,
      );
      // The task as last known (a watched read), or an error that says to try again.
      expect(read.body.result?.taskId === taskId || read.body.error?.data?.retryable === true).toBe(true);
      // The inbox, or the error saying Temporal cannot be reached now and to retry.
      const inbox = await answeredWithin(
        approver.callTool({ name: 'approvals_inbox', arguments: {} }, undefined, { timeout: 120_000 }).catch((error: Error) => error),
        60_000,
        `approvals_inbox across a partition of ${proxy}`,
      );
      if (inbox instanceof Error) expect(inbox.message).toMatch(/Temporal is unavailable right now.*retry/);
      else expect(inbox.structuredContent).toMatchObject({ items: expect.any(Array) });
    } finally {
      await stack.toxiproxy.clear(proxy);
    }
  }

  // Whole again. Temporal's services may take some seconds to see PostgreSQL again (their namespace cache first): the
  // inbox is asked until it answers with the approval.
  await eventually(
    async () => (await inbox(approver).catch(() => [])).find((entry) => entry.taskId === taskId),
    'the approval in the inbox once the links are whole',
    120_000,
  );
  expect((await answer(approver, taskId, 'approve')).isError).toBeFalsy();
  await eventually(
    async () => {
      const read = await mcp2026Request(stack.mcpUrl, 'tasks/get', { taskId }, asSubmitter);
      return read.body.result?.status === 'completed' ? true : undefined;
    },
    'the decision to complete once the links are whole',
    120_000,
  );
  expect(await effects(taskId)).toBe(1);
}, 600_000);

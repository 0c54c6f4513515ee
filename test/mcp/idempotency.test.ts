import { randomUUID } from 'node:crypto';
import { CreateTaskResultSchema, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { Bridge } from '../../src/mcp/bridge';
import { ADOPT_ONLY_META, IDEMPOTENCY_KEY_META, REPLAYED_META } from '../../src/contract/wire';
import { startStack } from '../helpers/test-stack';
import { APPROVE, errorCodeOf, taskResult } from '../helpers/mcp';
import { legacyDerivedUuid } from '../../src/core/idempotency';
import { markerFromEnv } from '../../src/core/marker';
import { PRINCIPAL_KEY } from '../../src/core/principal';
import { bindSignal, TASK_META_MEMO, type TaskMeta } from '../../src/contract/task-contract';
import { argumentsDigest } from '../../src/util/arguments-digest';
import { eventually } from '../helpers/temporal';
import { ASK_WORKFLOW_TYPE } from '../fixtures/definitions';
import { askInput, FIXTURES, type FixtureStack } from '../fixtures/stack';

let stack: FixtureStack;
let alice: Bridge;
let bob: Bridge;

beforeAll(async () => {
  stack = await startStack({ name: 'idempotency', app: FIXTURES });
  [alice, bob] = await Promise.all([stack.addBridge({ principal: 'alice' }), stack.addBridge({ principal: 'bob' })]);
});

afterEach(() => stack.closeClients());

afterAll(() => stack?.stop());

const connect = async (bridge: Bridge): Promise<McpClient> =>
  (await stack.person('idempotency-test', { answer: () => APPROVE, bridge })).client;

/** A task-augmented tools/call of ask_requester with `_meta`. */
function callWithMeta(client: McpClient, args: unknown, meta: Record<string, unknown>) {
  return client.request(
    { method: 'tools/call', params: { name: 'ask_requester', arguments: args as Record<string, unknown>, task: {}, _meta: meta } },
    CreateTaskResultSchema,
  );
}

/** The run id of the newest run of a workflow: a second start would change it. */
async function latestRunId(workflowId: string): Promise<string> {
  return (await stack.temporal.workflow.getHandle(workflowId).describe()).runId;
}

describe('idempotent task creation', () => {
  test('tools/call: the same idempotency key twice gives the same task, started once, the second marked replayed', async () => {
    const client = await connect(alice);
    // Two arguments, so that their keys can come in another order.
    const input = askInput({ holdMs: 0 });
    const key = randomUUID();
    const first = await callWithMeta(client, input, { [IDEMPOTENCY_KEY_META]: key });
    const runId = await latestRunId(first.task.taskId);
    const second = await callWithMeta(client, { ...input }, { [IDEMPOTENCY_KEY_META]: key });
    expect(second.task.taskId).toBe(first.task.taskId);
    expect(second.task.createdAt).toBe(first.task.createdAt);
    expect(first._meta?.[REPLAYED_META]).toBeUndefined();
    expect(second._meta?.[REPLAYED_META]).toBe(true);
    expect(first.task.taskId).toMatch(/^ask-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Argument order does not make another call.
    const reordered = Object.fromEntries(Object.entries(input).reverse());
    expect(Object.keys(reordered)).not.toEqual(Object.keys(input));
    expect((await callWithMeta(client, reordered, { [IDEMPOTENCY_KEY_META]: key })).task.taskId).toBe(first.task.taskId);
    expect(await latestRunId(first.task.taskId)).toBe(runId);
  });

  test('tools/call: the id of a keyed call is an HMAC under the task key, not a digest anyone can compute; a call repeated across the upgrade finds the task made under the digest', async () => {
    const client = await connect(alice);
    const input = askInput();
    const key = randomUUID();
    // The task a version before keyed ids made for this key: its id the plain digest, marked and bound as it marked them.
    const legacyId = `ask-${legacyDerivedUuid('alice', 'ask_requester', key)}`;
    const marker = markerFromEnv();
    const createdAt = new Date().toISOString();
    const digest = argumentsDigest(input);
    const start = { workflowId: legacyId, principal: 'alice', tool: 'ask_requester', argumentsDigest: digest, createdAt };
    const meta: TaskMeta = {
      tool: 'ask_requester',
      ttl: 3_600_000,
      pollInterval: 1000,
      createdAt,
      argumentsDigest: digest,
      marker: marker.sign({ ...start, bound: true }),
    };
    const started = await stack.temporal.workflow.start(ASK_WORKFLOW_TYPE, {
      taskQueue: stack.taskQueue,
      workflowId: legacyId,
      args: [input],
      memo: { [TASK_META_MEMO]: meta },
      typedSearchAttributes: [{ key: PRINCIPAL_KEY, value: 'alice' }],
      workflowIdConflictPolicy: 'FAIL',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      startDelay: '15 minutes',
    });
    await stack.temporal.workflow.signalWithStart(ASK_WORKFLOW_TYPE, {
      workflowId: legacyId,
      taskQueue: stack.taskQueue,
      args: [input],
      signal: bindSignal,
      signalArgs: [marker.bind(legacyId, started.firstExecutionRunId)],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
    const repeated = await callWithMeta(client, input, { [IDEMPOTENCY_KEY_META]: key });
    expect(repeated.task.taskId).toBe(legacyId);
    expect(repeated._meta?.[REPLAYED_META]).toBe(true);
    expect((await taskResult(client, legacyId)).structuredContent).toMatchObject({ outcome: 'approved' });

    // A new key: the id is the keyed one, which neither the digest nor another task key gives.
    const fresh = randomUUID();
    const created = await callWithMeta(client, askInput(), { [IDEMPOTENCY_KEY_META]: fresh });
    expect(created.task.taskId).toBe(`ask-${marker.keyedUuid('alice', 'ask_requester', fresh)}`);
    expect(created.task.taskId).not.toBe(`ask-${legacyDerivedUuid('alice', 'ask_requester', fresh)}`);
  });

  test('tools/call: a key repeated after the task completed gets the completed task, not a second run', async () => {
    const client = await connect(alice);
    const key = randomUUID();
    const input = askInput();
    const first = await callWithMeta(client, input, { [IDEMPOTENCY_KEY_META]: key });
    const runId = await latestRunId(first.task.taskId);
    const result = await taskResult(client, first.task.taskId);
    expect(result.structuredContent).toMatchObject({ outcome: 'approved' });
    const again = await callWithMeta(client, input, { [IDEMPOTENCY_KEY_META]: key });
    expect(again.task).toMatchObject({ taskId: first.task.taskId, status: 'completed' });
    expect(again._meta?.[REPLAYED_META]).toBe(true);
    const description = await stack.temporal.workflow.getHandle(first.task.taskId).describe();
    expect(description.runId).toBe(runId);
    expect(description.status.name).toBe('COMPLETED');
  });

  test('tools/call: the same key with other arguments is refused with -32602 and starts nothing', async () => {
    const client = await connect(alice);
    const key = randomUUID();
    const first = await callWithMeta(client, askInput(), { [IDEMPOTENCY_KEY_META]: key });
    const error = await callWithMeta(client, askInput(), { [IDEMPOTENCY_KEY_META]: key }).catch((e: Error) => e);
    expect(error).toMatchObject({ code: ErrorCode.InvalidParams });
    expect((error as Error).message).toMatch(/already used for a call of ask_requester with other arguments/);
    expect((await client.experimental.tasks.getTask(first.task.taskId)).taskId).toBe(first.task.taskId);
  });

  test('tools/call: the same key from another principal is another task', async () => {
    const key = randomUUID();
    const input = askInput();
    const fromAlice = await callWithMeta(await connect(alice), input, { [IDEMPOTENCY_KEY_META]: key });
    const bobClient = await connect(bob);
    const fromBob = await callWithMeta(bobClient, input, { [IDEMPOTENCY_KEY_META]: key });
    expect(fromBob.task.taskId).not.toBe(fromAlice.task.taskId);
    expect(await errorCodeOf(bobClient.experimental.tasks.getTask(fromAlice.task.taskId))).toBe(ErrorCode.InvalidParams);
  });

  test('tools/call adopt-only: finds the task of an earlier call with the key, and starts nothing for an unknown key', async () => {
    const client = await connect(alice);
    const input = askInput();
    const key = randomUUID();
    const unknown = await callWithMeta(client, input, { [IDEMPOTENCY_KEY_META]: key, [ADOPT_ONLY_META]: true }).catch((e: Error) => e);
    expect(unknown).toMatchObject({ code: ErrorCode.InvalidParams });
    expect((unknown as Error).message).toMatch(/No task was started with idempotency key/);
    const created = await callWithMeta(client, input, { [IDEMPOTENCY_KEY_META]: key });
    const adopted = await callWithMeta(client, input, { [IDEMPOTENCY_KEY_META]: key, [ADOPT_ONLY_META]: true });
    expect(adopted.task.taskId).toBe(created.task.taskId);
    expect(adopted._meta?.[REPLAYED_META]).toBe(true);
  });

  test('tools/call: a retry after the first call stopped between starting its run and binding it binds that run and serves it', async () => {
    // A bridge of alice's that stops right after the start: its binding never leaves, as when its process dies there.
    let stopped: (error: Error) => void = () => undefined;
    const stalled = await stack.addBridge({
      principal: 'alice',
      clientInterceptors: {
        workflow: [{ signalWithStart: () => new Promise<string>((_resolve, reject) => (stopped = reject)) }],
      },
    });
    const input = askInput();
    const key = randomUUID();
    const first = callWithMeta(await connect(stalled), input, { [IDEMPOTENCY_KEY_META]: key }).catch((e: Error) => e);
    try {
      // The id a call of this key gets; its run exists once the first call has started it.
      const workflowId = `ask-${markerFromEnv().keyedUuid('alice', 'ask_requester', key)}`;
      await eventually(
        () =>
          stack.temporal.workflow
            .getHandle(workflowId)
            .describe()
            .then(
              () => true,
              () => undefined,
            ),
        'the run of the first call',
      );
      const client = await connect(alice);
      // Until visibility lists the run, the retry is told to come back (a retryable -32603).
      const retried = await eventually(
        () =>
          callWithMeta(client, input, { [IDEMPOTENCY_KEY_META]: key }).catch((error: { code?: number; message: string }) => {
            if (error.code === ErrorCode.InternalError && /still being set up; retry/.test(error.message)) return undefined;
            throw error;
          }),
        'the retry to be served',
      );
      expect(retried.task.taskId).toBe(workflowId);
      expect(retried._meta?.[REPLAYED_META]).toBe(true);
      // Bound: the run leaves its start delay, asks its question and is approved.
      expect((await taskResult(client, retried.task.taskId)).structuredContent).toMatchObject({ outcome: 'approved' });
    } finally {
      stopped(new Error('the stalled bridge is stopped'));
      await first;
    }
  });

  test('tools/call: a malformed idempotency key or adopt-only flag gets -32602 naming the field, and starts nothing', async () => {
    const client = await connect(alice);
    const before = (await client.experimental.tasks.listTasks()).tasks.length;
    for (const meta of [
      { [IDEMPOTENCY_KEY_META]: 'has space' },
      { [IDEMPOTENCY_KEY_META]: '' },
      { [IDEMPOTENCY_KEY_META]: 'x'.repeat(201) },
      { [IDEMPOTENCY_KEY_META]: 42 },
      { [IDEMPOTENCY_KEY_META]: randomUUID(), [ADOPT_ONLY_META]: 'yes' },
      { [ADOPT_ONLY_META]: true },
    ]) {
      const error = await callWithMeta(client, askInput(), meta).catch((e: Error) => e);
      expect(error).toMatchObject({ code: ErrorCode.InvalidParams });
      expect((error as Error).message).toMatch(/temporal-mcp-tasks\/(idempotency-key|adopt-only)/);
    }
    expect((await client.experimental.tasks.listTasks()).tasks.length).toBe(before);
  });
});

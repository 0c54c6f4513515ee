/**
 * The task mark binds the run: a namespace writer who replaces a running task inside the mark's creation window, with
 * the same input, a copy of its memo and even a copy of the bridge's binding signal, gets a run the bridge never serves
 * and whose question it never asks; a reset of the real run is still the task; and checking the binding costs one
 * history read per task and process. Against the run's dev server, through real SDK clients.
 */
import { randomUUID } from 'node:crypto';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { temporal } from '@temporalio/proto';
import type { Bridge } from '../../src/mcp/bridge';
import { PRINCIPAL_KEY } from '../../src/core/principal';
import { IDEMPOTENCY_KEY_META } from '../../src/contract/wire';
import {
  BIND_SIGNAL_NAME,
  TASK_STATE_MEMO,
  type PendingInput,
  type PublishedTaskState,
  type RunBinding,
} from '../../src/contract/task-contract';
import { errorCodeOf, FAST_TUNING, getTask, newMcpClient, waitForTask } from '../helpers/mcp';
import { ASK_WORKFLOW_TYPE, type AskInput } from '../fixtures/definitions';
import { askInput, FIXTURES, startAskTask, type FixtureStack } from '../fixtures/stack';
import { askRequesterTool } from '../fixtures/tools';
import { eventually } from '../helpers/temporal';
import { startStack } from '../helpers/test-stack';

const { EventType } = temporal.api.enums.v1;
const principal = `bind-${randomUUID().slice(0, 8)}`;
let stack: FixtureStack;

/** Questions the owner's client was asked, by message. */
const asked: string[] = [];

beforeAll(async () => {
  stack = await startStack({ name: 'bind', app: FIXTURES, bridge: { principal } });
});

afterEach(() => stack.closeClients());

afterAll(async () => {
  if (!stack) return;
  await stack.terminateRunningOf(principal);
  await stack.stop();
});

/** The owner's client on `bridge`: it records every question it is asked, and answers none. */
async function owner(bridge: Bridge = stack.bridge): Promise<McpClient> {
  const client = newMcpClient('bind-owner');
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params.message);
    return { action: 'cancel' };
  });
  await stack.connect(client, bridge);
  return client;
}

/** Another bridge of the same key on its own, with nothing cached: it learns every task from Temporal. */
function freshBridge(): Promise<Bridge> {
  return stack.addBridge({ principal, tuning: { ...FAST_TUNING, core: { ...FAST_TUNING.core, reads: { limit: 0 } } } });
}

/** The attacker's question: what the replacing run publishes as its state, with no worker ever running it. */
function plantedState(): PublishedTaskState {
  const input: PendingInput = {
    key: 'evil',
    request: {
      mode: 'form',
      message: 'EVIL-QUESTION: confirm the new bank account of the vendor',
      requestedSchema: { type: 'object', properties: { iban: { type: 'string' } }, required: ['iban'] },
    },
  };
  return { status: 'input_required', updatedAt: new Date().toISOString(), inputs: [input], input };
}

/** The bindings the bridge signalled to a run, as they are in its history. */
async function bindingsOf(workflowId: string, runId: string): Promise<RunBinding[]> {
  const { events } = await stack.temporal.workflow.getHandle(workflowId, runId).fetchHistory();
  return events!
    .map((event) => event.workflowExecutionSignaledEventAttributes)
    .filter((signal) => signal?.signalName === BIND_SIGNAL_NAME)
    .map((signal) => stack.temporal.options.loadedDataConverter.payloadConverter.fromPayload(signal!.input!.payloads![0]) as RunBinding);
}

/**
 * Replaces the running task with `TERMINATE_EXISTING` as a namespace writer can: the same input, the task's memo with a
 * question of the attacker's, the owner's principal, on a task queue no worker polls; with `bindings`, those signals
 * are sent to the new run before anything else happens in it, as the bridge sends its own. `delayed` (the default with
 * bindings) starts it with a start delay, as the bridge starts its runs.
 */
async function replace(taskId: string, input: AskInput, bindings: RunBinding[] = [], delayed = bindings.length > 0): Promise<string> {
  const original = await stack.temporal.workflow.getHandle(taskId).describe();
  const options = {
    taskQueue: `${stack.taskQueue}-nobody`,
    workflowId: taskId,
    args: [input],
    memo: { ...original.memo, [TASK_STATE_MEMO]: plantedState() },
    typedSearchAttributes: [{ key: PRINCIPAL_KEY, value: principal }],
  };
  const handle = await stack.temporal.workflow.start(ASK_WORKFLOW_TYPE, {
    ...options,
    workflowIdConflictPolicy: 'TERMINATE_EXISTING',
    ...(delayed && { startDelay: '1 hour' }),
  });
  for (const binding of bindings) {
    await stack.temporal.workflow.signalWithStart(ASK_WORKFLOW_TYPE, { ...options, signal: BIND_SIGNAL_NAME, signalArgs: [binding] });
  }
  return handle.firstExecutionRunId;
}

/** Waits until `client` reads the task as "Task not found" (its bridge may serve its last read until its watch sees the change). */
function awaitNotFound(client: McpClient, taskId: string): Promise<true> {
  return eventually(
    async () => ((await errorCodeOf(getTask(client, taskId))) === -32602 ? true : undefined),
    `task ${taskId} to read as not found`,
    10_000,
  );
}

describe('the task mark binds the run', () => {
  test('a replacement inside the creation window, with the same input and a copy of the memo, is "Task not found" and never asks', async () => {
    const client = await owner();
    const input = askInput();
    const task = await startAskTask(client, input);
    await waitForTask(client, task.taskId, (seen) => seen.status === 'input_required');
    const created = await stack.temporal.workflow.getHandle(task.taskId).describe();
    // The bridge bound the run it started, before the run's first workflow task.
    expect(await bindingsOf(task.taskId, created.runId)).toEqual([
      { v: 1, workflowId: task.taskId, runId: created.runId, proof: expect.any(String) },
    ]);

    const replacement = await replace(task.taskId, input);
    expect(Date.now() - Date.parse(task.createdAt)).toBeLessThan(120_000);
    await awaitNotFound(client, task.taskId);
    expect(await errorCodeOf(client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema))).toBe(-32602);
    expect((await client.experimental.tasks.listTasks()).tasks.map((listed) => listed.taskId)).not.toContain(task.taskId);
    // Nor through a bridge that never saw the task.
    const fresh = await owner(await freshBridge());
    expect(await errorCodeOf(getTask(fresh, task.taskId))).toBe(-32602);
    expect(asked.some((message) => message.startsWith('EVIL-QUESTION'))).toBe(false);
    expect((await stack.temporal.workflow.getHandle(task.taskId).describe()).runId).toBe(replacement);
  });

  test("the bridge's binding copied onto the replacement binds nothing: it names the run it was made for", async () => {
    const client = await owner();
    const input = askInput();
    const task = await startAskTask(client, input);
    await waitForTask(client, task.taskId, (seen) => seen.status === 'input_required');
    const real = (await stack.temporal.workflow.getHandle(task.taskId).describe()).runId;
    const bindings = await bindingsOf(task.taskId, real);
    expect(bindings).toHaveLength(1);

    // The copy, and the copy with the run id rewritten to the replacement's (its proof is still the real run's).
    const replacement = await replace(task.taskId, input, bindings);
    await stack.temporal.workflow
      .getHandle(task.taskId, replacement)
      .signal(BIND_SIGNAL_NAME, { ...bindings[0], runId: replacement } satisfies RunBinding);
    expect((await bindingsOf(task.taskId, replacement)).length).toBe(2);
    await awaitNotFound(client, task.taskId);
    const fresh = await owner(await freshBridge());
    expect(await errorCodeOf(getTask(fresh, task.taskId))).toBe(-32602);
    expect(asked.some((message) => message.startsWith('EVIL-QUESTION'))).toBe(false);
  });

  test('a replacement that waits in a start delay, as a run the bridge has not bound yet does, is never bound by a keyed retry', async () => {
    const client = await owner();
    const input = askInput();
    const key = randomUUID();
    const call = () =>
      client.request(
        {
          method: 'tools/call',
          params: { name: askRequesterTool.name, arguments: input, task: {}, _meta: { [IDEMPOTENCY_KEY_META]: key } },
        },
        CreateTaskResultSchema,
      );
    const { task } = await call();
    await waitForTask(client, task.taskId, (seen) => seen.status === 'input_required');
    const replacement = await replace(task.taskId, input, [], true);
    await awaitNotFound(client, task.taskId);
    // The retry of the same call finds a run that waits for a binding; visibility lists the real run beside it.
    const retried = await eventually(
      () =>
        call().then(
          () => 'served' as const,
          (error: { code?: number; message: string }) =>
            error.code === ErrorCode.InvalidParams ? error.message : /retry/.test(error.message) ? undefined : Promise.reject(error),
        ),
      'the retry to be answered',
    );
    expect(retried).toMatch(/No task was started with idempotency key/);
    expect(await bindingsOf(task.taskId, replacement)).toEqual([]);
    expect(await errorCodeOf(getTask(client, task.taskId))).toBe(-32602);
    expect(asked.some((message) => message.startsWith('EVIL-QUESTION'))).toBe(false);
  });

  test('a reset of the real run keeps its chain, and is served as the task', async () => {
    const client = await owner();
    const task = await startAskTask(client);
    await waitForTask(client, task.taskId, (seen) => seen.status === 'input_required');
    const handle = stack.temporal.workflow.getHandle(task.taskId);
    const { runId } = await handle.describe();
    const { events } = await handle.fetchHistory();
    const firstTask = events!.find((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)!;
    const reset = await stack.temporal.workflowService.resetWorkflowExecution({
      namespace: 'default',
      workflowExecution: { workflowId: task.taskId, runId },
      reason: 'test',
      workflowTaskFinishEventId: firstTask.eventId,
      requestId: randomUUID(),
    });
    expect(reset.runId).not.toBe(runId);
    await eventually(
      async () => ((await handle.describe()).runId === reset.runId ? true : undefined),
      'the reset run to be the current one',
    );
    const fresh = await owner(await freshBridge());
    const served = await waitForTask(fresh, task.taskId, (seen) => seen.status === 'input_required');
    expect(served.taskId).toBe(task.taskId);
    expect((await waitForTask(client, task.taskId, (seen) => seen.status === 'input_required')).taskId).toBe(task.taskId);
  });

  test('checking the binding costs one history read per task and process, however often the task is read', async () => {
    const client = await owner();
    const before = stack.bridge.core.runStats().historyReads;
    const task = await startAskTask(client);
    await waitForTask(client, task.taskId, (seen) => seen.status === 'input_required');
    // The bridge that created the task knows its start: it never reads it.
    expect(stack.bridge.core.runStats().historyReads).toBe(before);

    const reader = await freshBridge();
    const fresh = await owner(reader);
    for (let read = 0; read < 5; read++) expect((await getTask(fresh, task.taskId)).status).toBe('input_required');
    // Every read asked Temporal (no watched reads on this bridge), and only the first read the history.
    expect(reader.core.readStats().fetched).toBeGreaterThanOrEqual(5);
    expect(reader.core.runStats().historyReads).toBe(1);
  });
});

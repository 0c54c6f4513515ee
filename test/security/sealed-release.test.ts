/**
 * An action a workflow offers is sealed like an answer: a namespace writer's Update (no seal, a forged one, or the
 * bridge's seal of another task) changes nothing and is kept as refused; the release through the server's direct tool
 * (`DirectToolContext.sendAction`) is taken at once and says who asked. The fixtures' hold workflow and its
 * `release_hold` tool, against the run's dev server, through real SDK clients.
 */
import { randomUUID } from 'node:crypto';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { ActionSealFields } from '../../src/contract/task-contract';
import { RELEASE_UPDATE, type HoldResult } from '../fixtures/definitions';
import { effectsCarriedOut, FIXTURES, type FixtureStack } from '../fixtures/stack';
import { holdTool, releaseHoldTool, TOOLS_WITH_FIXTURES } from '../fixtures/tools';
import { newMcpClient, startTask, taskResult, waitForTask } from '../helpers/mcp';
import { eventually } from '../helpers/temporal';
import { startStack } from '../helpers/test-stack';

const principal = `release-${randomUUID().slice(0, 8)}`;
let stack: FixtureStack;

beforeAll(async () => {
  stack = await startStack({
    name: 'release',
    app: FIXTURES,
    bridge: { principal, tools: [holdTool, releaseHoldTool, ...TOOLS_WITH_FIXTURES] },
  });
});

afterEach(() => stack.closeClients());

afterAll(async () => {
  if (!stack) return;
  await stack.terminateRunningOf(principal);
  await stack.stop();
});

/** The owner's client. */
async function owner(): Promise<McpClient> {
  const client = newMcpClient('release-owner');
  await stack.connect(client);
  return client;
}

/** A task held for a day, once it offers its release; and its result. */
async function held(client: McpClient): Promise<{ taskId: string; result: Promise<{ structuredContent?: unknown }> }> {
  const { taskId } = await startTask(client, holdTool.name, { subject: `order ${randomUUID().slice(0, 8)}`, holdMs: 86_400_000 });
  const result = taskResult(client, taskId, 60_000);
  await waitForTask(client, taskId, (seen) => seen.status === 'working' && / is held$/.test(seen.statusMessage ?? ''));
  return { taskId, result };
}

/** Why the workflow failed an Update sent past the bridge. */
async function refusalOf(update: Promise<unknown>): Promise<string> {
  try {
    await update;
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError) return error.cause?.message ?? error.message;
    throw error;
  }
  throw new Error('the Update was taken');
}

const release = (client: McpClient, taskId: string) => client.callTool({ name: releaseHoldTool.name, arguments: { taskId } });

describe('actions only a bridge can ask for', () => {
  test('a plain Temporal client releases nothing; the release through the direct tool is taken at once and records who', async () => {
    const client = await owner();
    const { taskId, result } = await held(client);
    const handle = stack.temporal.workflow.getHandle(taskId);

    // The namespace writer's release, as `temporal workflow update execute` sends it, and one with a forged seal.
    expect(await refusalOf(handle.executeUpdate(RELEASE_UPDATE, { args: [{}] }))).toBe('Release refused: it carries no seal');
    const { workflowId } = handle;
    const { originalRunId } = await eventually(async () => {
      const { events } = await handle.fetchHistory();
      const id = events![0].workflowExecutionStartedEventAttributes?.originalExecutionRunId;
      return id ? { originalRunId: id } : undefined;
    }, 'the original run id');
    const forged: ActionSealFields = {
      sealed: JSON.stringify({
        v: 1,
        kind: 'action',
        workflowId,
        originalRunId,
        update: RELEASE_UPDATE,
        subject: {},
        requestedBy: { principal },
        requestedAt: new Date().toISOString(),
      }),
      proof: 'v1.AAAAAAAA.forged',
    };
    expect(await refusalOf(handle.executeUpdate(RELEASE_UPDATE, { args: [forged] }))).toMatch(
      /^Release refused: its seal does not hold \(a proof made with key AAAAAAAA/,
    );
    expect(await effectsCarriedOut(stack.temporal, taskId)).toBe(0);

    // The owner's release through the bridge is taken at once, and says who asked.
    const released = await release(client, taskId);
    expect(released.isError).toBeFalsy();
    const releasedBy = { principal, via: releaseHoldTool.name, at: expect.any(String) };
    expect(released.structuredContent).toEqual(releasedBy);
    const outcome = (await result).structuredContent as HoldResult;
    expect(outcome).toMatchObject({ releasedBy, refused: ['it carries no seal', expect.stringMatching(/^its seal does not hold/)] });
    expect(await effectsCarriedOut(stack.temporal, taskId)).toBe(1);
  });

  test("the bridge's sealed release copied onto another task is refused there", async () => {
    const client = await owner();
    const first = await held(client);
    const second = await held(client);
    expect((await release(client, first.taskId)).isError).toBeFalsy();
    await first.result;
    // The Update's argument, as the first task's history holds it.
    const { events } = await stack.temporal.workflow.getHandle(first.taskId).fetchHistory();
    const accepted = events!.find(
      (event) => event.workflowExecutionUpdateAcceptedEventAttributes,
    )!.workflowExecutionUpdateAcceptedEventAttributes!;
    const sealed = stack.temporal.options.loadedDataConverter.payloadConverter.fromPayload(
      accepted.acceptedRequest!.input!.args!.payloads![0],
    ) as ActionSealFields;
    expect(sealed.sealed).toEqual(expect.any(String));
    expect(await refusalOf(stack.temporal.workflow.getHandle(second.taskId).executeUpdate(RELEASE_UPDATE, { args: [sealed] }))).toBe(
      'Release refused: its seal was made for another run',
    );
    expect(await effectsCarriedOut(stack.temporal, second.taskId)).toBe(0);
    // The refusal leaves the task as it was: its owner still releases it, once however often asked.
    const [one, again] = [await release(client, second.taskId), await release(client, second.taskId)];
    expect(one.isError).toBeFalsy();
    expect(again.structuredContent).toEqual(one.structuredContent);
    await second.result;
    expect(await effectsCarriedOut(stack.temporal, second.taskId)).toBe(1);
  });
});

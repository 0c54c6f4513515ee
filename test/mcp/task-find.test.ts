/**
 * `task_find`: the task view's way to the task of a call it knows only by its tool and arguments. Real Temporal, real
 * SDK clients over the in-memory transport, two principals on one stack.
 */
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { Bridge } from '../../src/mcp/bridge';
import { startStack } from '../helpers/test-stack';
import { askInput, FIXTURES, startAskTask, type FixtureStack } from '../fixtures/stack';
import { FAST_TUNING } from '../helpers/mcp';
import { eventually } from '../helpers/temporal';

const ALICE = `alice-${randomUUID()}`;
let stack: FixtureStack;
let alice: Bridge;
let bob: Bridge;

beforeAll(async () => {
  stack = await startStack({ name: 'task-find', app: FIXTURES });
  [alice, bob] = await Promise.all([ALICE, `bob-${randomUUID()}`].map((principal) => stack.addBridge({ tuning: FAST_TUNING, principal })));
}, 300_000);

afterEach(() => stack.closeClients());

afterAll(() => stack?.stop());

const connect = async (bridge: Bridge): Promise<McpClient> => (await stack.person('task-find', { bridge })).client;

function find(client: McpClient, args: Record<string, unknown>): Promise<CallToolResult> {
  return client.callTool({ name: 'task_find', arguments: args }) as Promise<CallToolResult>;
}

function textOf(result: CallToolResult): string {
  return (result.content[0] as { text: string }).text;
}

describe('task_find', () => {
  test('is listed for Apps only (_meta.ui.visibility: ["app"]) and answers without a task', async () => {
    const client = await connect(alice);
    const tool = (await client.listTools()).tools.find((candidate) => candidate.name === 'task_find');
    expect(tool?._meta).toEqual({ ui: { visibility: ['app'] } });
    expect(tool?.execution).toEqual({ taskSupport: 'forbidden' });
  });

  test("finds the caller's own task by the call's tool and arguments, whatever the order of their keys", async () => {
    const client = await connect(alice);
    // Two arguments, so that their keys can come in another order.
    const input = askInput({ holdMs: 0 });
    const older = await startAskTask(client, input);
    const task = await startAskTask(client, input);
    // Keys in another order: the same call.
    const reordered = Object.fromEntries(Object.entries(input).reverse());
    expect(Object.keys(reordered)).not.toEqual(Object.keys(input));
    const found = await find(client, { tool: 'ask_requester', arguments: reordered });
    expect(found.isError).toBeFalsy();
    // The most recent of the two calls with these arguments.
    expect(found.structuredContent).toMatchObject({ found: true, task: { taskId: task.taskId } });
    expect(task.taskId).not.toBe(older.taskId);
    expect(textOf(found)).toContain(task.taskId);
  });

  test('without a tool name, finds the task of whichever tool these arguments are a call of', async () => {
    const client = await connect(alice);
    const input = askInput();
    const task = await startAskTask(client, input);
    const found = await find(client, { arguments: input });
    expect(found.structuredContent).toMatchObject({ found: true, tool: 'ask_requester', task: { taskId: task.taskId } });
    const byBob = await find(await connect(bob), { arguments: input });
    expect(byBob.structuredContent).toEqual({ found: false });
    expect(textOf(byBob)).toMatch(/^No task of yours started by a tool with these arguments/);
  });

  test('finds it through another replica too, once the visibility store shows the task', async () => {
    const client = await connect(alice);
    const input = askInput();
    const task = await startAskTask(client, input);
    // Another server of the same principal: it did not create the task, so only the store's listing can name it.
    const replica = await connect(await stack.addBridge({ tuning: FAST_TUNING, principal: ALICE }));
    const found = await eventually(async () => {
      const answer = await find(replica, { tool: 'ask_requester', arguments: input });
      return (answer.structuredContent as { found: boolean }).found ? answer : undefined;
    }, 'the task found through the visibility store');
    expect(found.structuredContent).toMatchObject({ found: true, task: { taskId: task.taskId } });
  });

  test("never finds another principal's task; other arguments find none, with a clear answer", async () => {
    const own = await connect(alice);
    const input = askInput();
    const task = await startAskTask(own, input);
    const other = await connect(bob);
    const byBob = await find(other, { tool: 'ask_requester', arguments: input });
    expect(byBob.isError).toBeFalsy();
    expect(byBob.structuredContent).toEqual({ found: false });
    expect(textOf(byBob)).toMatch(/^No task of yours started by ask_requester with these arguments/);
    expect(JSON.stringify(byBob)).not.toContain(task.taskId);
    const otherArguments = await find(own, { tool: 'ask_requester', arguments: askInput() });
    expect(otherArguments.structuredContent).toEqual({ found: false });
  });

  test('bad input is a tool error that says what to do', async () => {
    const client = await connect(alice);
    const unknown = await find(client, { tool: 'no_such_tool', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toBe('No tool named "no_such_tool" starts tasks on this server; name the tool whose call started the task.');
    const direct = await find(client, { tool: 'task_status', arguments: { taskId: 'x' } });
    expect(direct.isError).toBe(true);
    const invalid = await find(client, { tool: 'ask_requester', arguments: { subject: 7 } });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toMatch(/^These arguments are not a valid call of ask_requester \(.+\), so no task was started with them\.$/);
    const missing = await find(client, { tool: 'ask_requester' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/arguments/);
  });
});

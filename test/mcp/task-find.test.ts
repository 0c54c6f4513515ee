/**
 * `task_find`: the task view's way to the task of a call it knows only by its tool and arguments. Real Temporal, real
 * SDK clients over the in-memory transport, two principals on one stack.
 */
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { Bridge } from '../../src/mcp/bridge';
import { startStack, type TestStack } from '../helpers/test-stack';
import { FAST_TUNING } from '../helpers/mcp';
import { sampleInvoice, startInvoiceTask, TOOLS_WITH_SAMPLES } from '../helpers/example';
import { eventually } from '../helpers/temporal';

const ALICE = `alice-${randomUUID()}`;
let stack: TestStack;
let alice: Bridge;
let bob: Bridge;

beforeAll(async () => {
  stack = await startStack({ name: 'task-find' });
  [alice, bob] = await Promise.all(
    [ALICE, `bob-${randomUUID()}`].map((principal) => stack.addBridge({ tools: TOOLS_WITH_SAMPLES, tuning: FAST_TUNING, principal })),
  );
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
    const invoice = sampleInvoice();
    const older = await startInvoiceTask(client, invoice);
    const task = await startInvoiceTask(client, invoice);
    // Keys in another order: the same call.
    const reordered = Object.fromEntries(Object.entries(invoice).reverse());
    const found = await find(client, { tool: 'process_invoice', arguments: reordered });
    expect(found.isError).toBeFalsy();
    // The most recent of the two calls with these arguments.
    expect(found.structuredContent).toMatchObject({ found: true, task: { taskId: task.taskId } });
    expect(task.taskId).not.toBe(older.taskId);
    expect(textOf(found)).toContain(task.taskId);
  });

  test('without a tool name, finds the task of whichever tool these arguments are a call of', async () => {
    const client = await connect(alice);
    const invoice = sampleInvoice();
    const task = await startInvoiceTask(client, invoice);
    const found = await find(client, { arguments: invoice });
    expect(found.structuredContent).toMatchObject({ found: true, tool: 'process_invoice', task: { taskId: task.taskId } });
    const byBob = await find(await connect(bob), { arguments: invoice });
    expect(byBob.structuredContent).toEqual({ found: false });
    expect(textOf(byBob)).toMatch(/^No task of yours started by a tool with these arguments/);
  });

  test('finds it through another replica too, once the visibility store shows the task', async () => {
    const client = await connect(alice);
    const invoice = sampleInvoice();
    const task = await startInvoiceTask(client, invoice);
    // Another server of the same principal: it did not create the task, so only the store's listing can name it.
    const replica = await connect(await stack.addBridge({ tools: TOOLS_WITH_SAMPLES, tuning: FAST_TUNING, principal: ALICE }));
    const found = await eventually(async () => {
      const answer = await find(replica, { tool: 'process_invoice', arguments: invoice });
      return (answer.structuredContent as { found: boolean }).found ? answer : undefined;
    }, 'the task found through the visibility store');
    expect(found.structuredContent).toMatchObject({ found: true, task: { taskId: task.taskId } });
  });

  test("never finds another principal's task; other arguments find none, with a clear answer", async () => {
    const own = await connect(alice);
    const invoice = sampleInvoice();
    const task = await startInvoiceTask(own, invoice);
    const other = await connect(bob);
    const byBob = await find(other, { tool: 'process_invoice', arguments: invoice });
    expect(byBob.isError).toBeFalsy();
    expect(byBob.structuredContent).toEqual({ found: false });
    expect(textOf(byBob)).toMatch(/^No task of yours started by process_invoice with these arguments/);
    expect(JSON.stringify(byBob)).not.toContain(task.taskId);
    const otherArguments = await find(own, { tool: 'process_invoice', arguments: sampleInvoice() });
    expect(otherArguments.structuredContent).toEqual({ found: false });
  });

  test('bad input is a tool error that says what to do', async () => {
    const client = await connect(alice);
    const unknown = await find(client, { tool: 'no_such_tool', arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toBe('No tool named "no_such_tool" starts tasks on this server; name the tool whose call started the task.');
    const direct = await find(client, { tool: 'task_status', arguments: { taskId: 'x' } });
    expect(direct.isError).toBe(true);
    const invalid = await find(client, { tool: 'process_invoice', arguments: { invoiceNumber: 7 } });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toMatch(/^These arguments are not a valid call of process_invoice \(.+\), so no task was started with them\.$/);
    const missing = await find(client, { tool: 'process_invoice' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/arguments/);
  });
});

/**
 * A task cancelled while its workflow winds down reads `cancelled`, a terminal status: `tasks/result` and the
 * `task_result` tool answer at once with the cancellation (the JSON-RPC error the call would have got, naming the
 * task; the tool, a tool result that says so), never with an internal error. As a client does it: create, `tasks/cancel`, then at once both, ten times.
 */
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CancelTaskResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { FIXTURES, startAskTask, type FixtureStack } from '../fixtures/stack';
import { startStack } from '../helpers/test-stack';

let stack: FixtureStack;
let client: McpClient;

beforeAll(async () => {
  stack = await startStack({ name: 'cancel-wind-down', app: FIXTURES, bridge: true, http: true });
  client = new McpClient({ name: 'canceller', version: '1.0.0' }, { capabilities: { tasks: { requests: {} } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(stack.http.url)));
}, 120_000);

afterAll(async () => {
  await client?.close();
  await stack?.stop();
});

/** What a call ended with: its result, or the JSON-RPC error it was answered with. */
async function outcome(call: Promise<unknown>): Promise<unknown> {
  return call.catch((error: unknown) =>
    error instanceof McpError ? { code: error.code, message: error.message, data: error.data } : error,
  );
}

test('tasks/result and task_result right after tasks/cancel answer with the cancellation, ten rounds of ten', async () => {
  for (let round = 0; round < 10; round++) {
    const tasks = await Promise.all(Array.from({ length: 10 }, () => startAskTask(client)));
    await Promise.all(
      tasks.map((task) => client.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, CancelTaskResultSchema)),
    );
    const answers = await Promise.all(
      tasks.flatMap((task) => [
        outcome(client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, CallToolResultSchema)),
        outcome(client.callTool({ name: 'task_result', arguments: { taskId: task.taskId } })),
      ]),
    );
    answers.forEach((answer, index) => {
      const { taskId } = tasks[Math.floor(index / 2)];
      if (index % 2 === 0) {
        // tasks/result: the JSON-RPC error the call would have got.
        expect(answer).toMatchObject({ code: -32603, data: { taskId, status: 'cancelled' } });
        expect((answer as { message: string }).message).toContain(`Task ${taskId}`);
        expect((answer as { message: string }).message).not.toMatch(/without an outcome|Internal error/);
      } else {
        // task_result, a tool: a tool result that says so.
        expect(answer).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining(`Task ${taskId}`) }] });
        expect(JSON.stringify(answer)).not.toMatch(/without an outcome|Internal error/);
      }
    });
  }
}, 300_000);

import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { EXIT } from '../../src/client/args';
import { orphanGuardFetch } from '../../src/client/orphan-guard';
import { LocalTaskStore } from '../../src/client/store';
import { IDEMPOTENCY_KEY_META } from '../../src/contract/wire';
import { pollUntil } from '../../src/util/wait';
import { runClient } from '../helpers/cli';
import { startStack } from '../helpers/test-stack';
import { askInput, FIXTURES, startAskTask, type FixtureStack } from '../fixtures/stack';
import { newMcpClient, waitForTask } from '../helpers/mcp';

// A principal of this file's own: resume without a task id follows every open task of the caller.
const token = randomUUID();
const auth = { MCP_AUTH_TOKENS: `recovery-${token.slice(0, 8)}=${token}` };
const withToken = { MCP_TOKEN: token };
const authHeader = { requestInit: { headers: { authorization: `Bearer ${token}` } } };
let stack: FixtureStack;

beforeAll(async () => {
  stack = await startStack({ name: 'client-recovery', app: FIXTURES, servers: [{ env: auth }] });
});

afterAll(() => stack?.stop());

function stateDir(): string {
  return path.join(mkdtempSync(path.join(os.tmpdir(), 'client-recovery-')), 'state');
}

const APPROVE_ANSWER = ['--answer', '{"decision":"approve"}'];

describe('a request in flight when the server dies', () => {
  test('fails at once as a lost connection (-32000), not after its timeout, with the orphan guard', async () => {
    // A principal of its own: the task it leaves waiting must not show up in the resume tests below.
    const ownToken = randomUUID();
    const own = await stack.spawnServer({
      env: { MCP_AUTH_TOKENS: `guard-${ownToken.slice(0, 8)}=${ownToken}`, MCP_LOG_LEVEL: 'debug' },
    });
    // No elicitation: tasks/result can only wait, so it is in flight when the server dies.
    const client = newMcpClient('orphan-guard-test', false);
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(own.url), {
          fetch: orphanGuardFetch(),
          requestInit: { headers: { authorization: `Bearer ${ownToken}` } },
        }),
      );
      const task = await startAskTask(client);
      await waitForTask(client, task.taskId, (t) => t.status === 'input_required');
      const waiting = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, { timeout: 60_000 }).then(
        () => 'resolved',
        (error: { code?: number; message: string }) => error,
      );
      // Killed once the server holds the request (it says so when it starts waiting), not before it got there.
      await pollUntil(() => (own.stderr().includes('waiting for the task to finish method=tasks/result') ? true : undefined), {
        timeoutMs: 30_000,
        what: 'the server to wait in tasks/result',
      });
      await own.kill('SIGKILL');
      const outcome = await waiting;
      expect(outcome).toMatchObject({ code: ErrorCode.ConnectionClosed });
      expect((outcome as Error).message).toMatch(/Connection closed: the response stream (broke|ended)/);
    } finally {
      await client.close().catch(() => undefined);
      await own.kill('SIGKILL');
    }
  });
});

describe('temporal-mcp-client after a lost answer', () => {
  test('call --idempotency-key: the same call sent twice gets the same task, and the second says so', async () => {
    const dir = stateDir();
    const key = randomUUID();
    const args = JSON.stringify(askInput());
    const common = [
      'call',
      'ask_requester',
      '--url',
      stack.server.url,
      '--args',
      args,
      '--idempotency-key',
      key,
      '--json',
      '--state-dir',
      dir,
    ];
    const first = await runClient([...common, ...APPROVE_ANSWER], stack.taskQueue, withToken);
    expect(first.code).toBe(EXIT.completed);
    const second = await runClient(common, stack.taskQueue, withToken);
    expect(second.code).toBe(EXIT.completed);
    expect(second.stderr).toMatch(/found again \(an earlier call with this idempotency key made it\)/);
    expect(JSON.parse(second.stdout).taskId).toBe(JSON.parse(first.stdout).taskId);
    expect(JSON.parse(second.stdout).result.structuredContent.outcome).toBe('approved');
    const calls = new LocalTaskStore(dir).calls();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ key, tool: 'ask_requester', taskId: JSON.parse(first.stdout).taskId });
  });

  test('call --idempotency-key with a space is a usage error (exit 2)', async () => {
    const run = await runClient(
      ['call', 'ask_requester', '--url', stack.server.url, '--idempotency-key', 'a b', '--state-dir', stateDir()],
      stack.taskQueue,
      withToken,
    );
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/--idempotency-key needs 1-200 printable characters without spaces/);
  });

  test('tasks shows a call that got no answer; resume adopts the task the server started for it and finishes it', async () => {
    const dir = stateDir();
    const store = new LocalTaskStore(dir);
    const key = randomUUID();
    const args: Record<string, unknown> = askInput();
    // The client wrote its intent, the server started the task, and the answer was lost (the client died).
    store.append({ type: 'intent', key, server: stack.server.url, tool: 'ask_requester', arguments: args, at: new Date().toISOString() });
    const sdk = newMcpClient('lost-answer', false);
    await sdk.connect(new StreamableHTTPClientTransport(new URL(stack.server.url), authHeader));
    const started = await sdk.request(
      { method: 'tools/call', params: { name: 'ask_requester', arguments: args, task: {}, _meta: { [IDEMPOTENCY_KEY_META]: key } } },
      CreateTaskResultSchema,
    );
    await sdk.close();

    const listed = await runClient(['tasks', '--url', stack.server.url, '--json', '--state-dir', dir], stack.taskQueue, withToken);
    const rows = JSON.parse(listed.stdout) as { taskId: string; status: string; message: string }[];
    expect(rows.find((row) => row.status === 'unanswered')?.message).toContain(key);

    const resumed = await runClient(
      ['resume', '--url', stack.server.url, '--json', '--state-dir', dir, ...APPROVE_ANSWER],
      stack.taskQueue,
      withToken,
    );
    expect(resumed.stderr).toMatch(new RegExp(`task ${started.task.taskId}: adopted`));
    expect(resumed.code).toBe(EXIT.completed);
    const outcomes = resumed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { taskId: string; status: string });
    expect(outcomes.find((outcome) => outcome.taskId === started.task.taskId)?.status).toBe('completed');
    expect(store.calls()[0]).toMatchObject({ key, taskId: started.task.taskId });
    expect(store.unfinishedCalls()).toHaveLength(0);
  });

  test('resume: a call that never reached the server is reported as having started nothing, and given up', async () => {
    const dir = stateDir();
    const store = new LocalTaskStore(dir);
    const key = randomUUID();
    const longAgo = new Date(Date.now() - 3_600_000).toISOString();
    store.append({
      type: 'intent',
      key,
      server: stack.server.url,
      tool: 'ask_requester',
      arguments: askInput(),
      at: longAgo,
    });
    const resumed = await runClient(['resume', '--url', stack.server.url, '--state-dir', dir], stack.taskQueue, withToken);
    expect(resumed.stderr).toMatch(/started nothing \(No task was started with idempotency key/);
    expect(store.calls()[0].abandoned).toMatch(/No task was started/);
    expect(store.unfinishedCalls()).toHaveLength(0);
  });
});

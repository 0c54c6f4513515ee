/**
 * The same `call` run again after its first run was killed adopts the first run's task instead of starting a second:
 * over the real command line, against a real bridge and Temporal. A proxy between client and server loses the
 * server's answers on purpose, so that the first run is killed at a known point: after the task exists but before its
 * id reached the client, or after its id was stored but before the task ended.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Task } from '@modelcontextprotocol/sdk/types.js';
import { EXIT } from '../../src/client/args';
import { LocalTaskStore } from '../../src/client/store';
import { runClient } from '../helpers/cli';
import { ROOT } from '../helpers/dev-server';
import { newMcpClient } from '../helpers/mcp';
import { startStack } from '../helpers/test-stack';
import { askInput, FIXTURES, type FixtureStack } from '../fixtures/stack';
import { serverEnv } from '../helpers/processes';
import { eventually } from '../helpers/temporal';

// A principal per test: each test counts the tasks of its own principal in tasks/list.
const principals = ['lost-answer', 'killed-follower'].map((name) => ({
  name: `adopt-${name}-${randomUUID().slice(0, 8)}`,
  token: randomUUID(),
}));
let stack: FixtureStack;

beforeAll(async () => {
  stack = await startStack({
    name: 'client-adoption',
    app: FIXTURES,
    servers: [{ env: { MCP_AUTH_TOKENS: principals.map(({ name, token }) => `${name}=${token}`).join(',') } }],
  });
});

afterAll(() => stack?.stop());

/** What the proxy does with a request: pass it, send it on and lose the server's answer, or hold it unsent. */
type Policy = 'pass' | 'lose-answer' | 'stall';

/** An HTTP proxy to the MCP server that loses or holds requests by JSON-RPC method, as the test says. */
class LossyProxy {
  policy: (method: string) => Policy = () => 'pass';
  /** Methods whose answers the server gave and the proxy lost. */
  readonly lost: string[] = [];
  private readonly server = http.createServer((req, res) => void this.forward(req, res));

  constructor(private readonly upstream: URL) {}

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${this.upstream.pathname}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const policies = methodsOf(body).map((method) => ({ method, policy: this.policy(method) }));
    // A held request is never answered: the client waits until it is killed.
    if (policies.some(({ policy }) => policy === 'stall')) return;
    const losing = policies.filter(({ policy }) => policy === 'lose-answer').map(({ method }) => method);
    const upstream = http.request(
      this.upstream,
      { method: req.method, headers: { ...req.headers, host: this.upstream.host } },
      (answer) => {
        if (losing.length > 0) {
          answer.resume();
          answer.once('end', () => this.lost.push(...losing));
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.once('error', () => res.destroy());
    upstream.end(body);
  }
}

/** The JSON-RPC methods a POST body carries (one message or a batch). */
function methodsOf(body: Buffer): string[] {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    return (Array.isArray(parsed) ? parsed : [parsed])
      .map((message) => (message as { method?: unknown }).method)
      .filter((method): method is string => typeof method === 'string');
  } catch {
    return [];
  }
}

/** A client run in a process group of its own, so that a kill takes npm and node together, as a crash would. */
function startClient(args: string[], env: Record<string, string>) {
  const child = spawn('npm', ['run', '-s', 'client', '--', ...args], {
    cwd: ROOT,
    env: serverEnv(stack.taskQueue, env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    output: () => output,
    /** Kills the whole run with SIGKILL and waits for it to be gone. */
    async kill(): Promise<void> {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      await exited;
    },
  };
}

/** Every task of `token`'s principal, from the server's tasks/list. */
async function tasksOf(token: string): Promise<Task[]> {
  const client = newMcpClient('adoption-count', false);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(stack.server.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  try {
    const tasks: Task[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.experimental.tasks.listTasks(cursor);
      tasks.push(...page.tasks);
      cursor = page.nextCursor;
    } while (cursor);
    return tasks;
  } finally {
    await client.close();
  }
}

function scratch(): { stateDir: string; argsFile: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'client-adoption-'));
  const argsFile = path.join(dir, 'args.json');
  writeFileSync(argsFile, JSON.stringify(askInput()));
  return { stateDir: path.join(dir, 'state'), argsFile };
}

const APPROVE = ['--answer', '{"decision":"approve"}'];

describe('call run again after its first run was killed', () => {
  test('call: a call killed after the server started its task but before the answer came is adopted by the same call run again (its idempotency key): one task, completed', async () => {
    const [{ token }] = principals;
    const env = { MCP_TOKEN: token };
    const { stateDir, argsFile } = scratch();
    const proxy = new LossyProxy(new URL(stack.server.url));
    const url = await proxy.listen();
    const command = ['call', 'ask_requester', '--url', url, '--args', `@${argsFile}`, ...APPROVE, '--json', '--state-dir', stateDir];
    try {
      proxy.policy = (method) => (method === 'tools/call' ? 'lose-answer' : 'pass');
      const first = startClient(command, env);
      try {
        await eventually(async () => (proxy.lost.includes('tools/call') ? true : undefined), 'the server’s answer to tools/call', 60_000);
      } finally {
        await first.kill();
      }
      // The first run knew its intent and key, never its task.
      expect(new LocalTaskStore(stateDir).unfinishedCalls()).toHaveLength(1);
      const started = await eventually(async () => (await tasksOf(token))[0], 'the task in tasks/list');
      expect(started.status).not.toBe('completed');

      proxy.policy = () => 'pass';
      const again = await runClient(command, stack.taskQueue, env);
      expect(again.stderr).toMatch(/adopting the call of ask_requester with the same arguments sent at \S+, whose answer never came/);
      expect(again.stderr).toContain(`task ${started.taskId} found again`);
      expect(again.code).toBe(EXIT.completed);
      expect(JSON.parse(again.stdout)).toMatchObject({
        taskId: started.taskId,
        status: 'completed',
        result: { structuredContent: { outcome: 'approved' } },
      });
      const tasks = await tasksOf(token);
      expect(tasks.map((task) => [task.taskId, task.status])).toEqual([[started.taskId, 'completed']]);
      expect(new LocalTaskStore(stateDir).calls()).toMatchObject([{ taskId: started.taskId }]);
    } finally {
      await proxy.close();
    }
  });

  test('call: a call killed while it followed its task is adopted by the same call run again (its stored task id), which finishes it; --new starts a second task', async () => {
    const [, { token }] = principals;
    const env = { MCP_TOKEN: token };
    const { stateDir, argsFile } = scratch();
    const proxy = new LossyProxy(new URL(stack.server.url));
    const url = await proxy.listen();
    const command = ['call', 'ask_requester', '--url', url, '--args', `@${argsFile}`, ...APPROVE, '--json', '--state-dir', stateDir];
    try {
      // The task is created and its id stored and printed; nothing after that reaches the server.
      proxy.policy = (method) => (method.startsWith('tasks/') ? 'stall' : 'pass');
      const first = startClient(command, env);
      let taskId: string;
      try {
        taskId = await eventually(async () => /task (\S+) created/.exec(first.output())?.[1], 'the first run’s "created" line', 60_000);
      } finally {
        await first.kill();
      }
      expect(new LocalTaskStore(stateDir).task(taskId)?.status).toBeUndefined();

      proxy.policy = () => 'pass';
      const again = await runClient(command, stack.taskQueue, env);
      expect(again.stderr).toMatch(
        new RegExp(
          `adopting task ${taskId}, started at \\S+ by an earlier call of ask_requester with the same arguments .*--new starts another task`,
        ),
      );
      expect(again.stderr).not.toMatch(/created \(ttl/);
      expect(again.code).toBe(EXIT.completed);
      expect(JSON.parse(again.stdout)).toMatchObject({
        taskId,
        status: 'completed',
        result: { structuredContent: { outcome: 'approved' } },
      });
      expect((await tasksOf(token)).map((task) => task.taskId)).toEqual([taskId]);

      const fresh = await runClient([...command, '--new'], stack.taskQueue, env);
      expect(fresh.stderr).not.toMatch(/adopting/);
      const second = JSON.parse(fresh.stdout) as { taskId: string };
      expect(second.taskId).not.toBe(taskId);
      // A task of its own, run to its end: asked its own question, answered, completed.
      expect(fresh.code).toBe(EXIT.completed);
      expect(second).toMatchObject({ status: 'completed', result: { structuredContent: { outcome: 'approved' } } });
      expect((await tasksOf(token)).map((task) => task.taskId).sort()).toEqual([taskId, second.taskId].sort());
    } finally {
      await proxy.close();
    }
  });

  test('call --help documents adoption and --new; --new with --idempotency-key is a usage error (exit 2)', async () => {
    const help = await runClient(['--help'], stack.taskQueue);
    expect(help.code).toBe(EXIT.completed);
    expect(help.stdout).toMatch(/--new +call: start a new task even if an earlier call of the same tool with the same arguments/);
    expect(help.stdout).toMatch(
      /Running the same call again \(same server, tool and arguments, in any key order\) while the earlier one is open adopts/,
    );
    const both = await runClient(['call', 'ask_requester', '--new', '--idempotency-key', 'k-1'], stack.taskQueue);
    expect(both.code).toBe(EXIT.usage);
    expect(both.stderr).toMatch(/--new and --idempotency-key do not go together/);
  });
});

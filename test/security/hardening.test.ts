/**
 * The security review's findings, one test each, against the real dev server and real HTTP: whose task it is, only
 * tasks this bridge started, bounded resources, Origin and Host, tokens, and what the client prints.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateTaskResultSchema,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  type CallToolResult,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { ASK_WORKFLOW_TYPE } from '../fixtures/definitions';
import { askRequesterTool, requestDecisionTool } from '../fixtures/tools';
import { PRINCIPAL_KEY, localPrincipal } from '../../src/core/principal';
import { TASK_META_MEMO, TASK_STATE_MEMO } from '../../src/contract/task-contract';
import { jsonSchema } from '../../src/mcp/tools/schema';
import { printable } from '../../src/client/printable';
import { ServerTokens } from '../../src/client/tokens';
import { freePort } from '../helpers/dev-server';
import { startStack } from '../helpers/test-stack';
import { FIXTURES, startAskTask, type FixtureStack } from '../fixtures/stack';
import { APPROVE, errorCodeOf, getTask, newMcpClient, ScriptedUser, taskResult, waitForTask } from '../helpers/mcp';
import { answer, ApprovalClients, inbox, makePeople, textOf, writeTokensFile } from '../helpers/approvals';
import { pollUntil } from '../../src/util/wait';
import { runServeToExit, type HttpServerProcess } from '../helpers/processes';
import { eventually } from '../helpers/temporal';

let stack: FixtureStack;
/** A task queue no worker polls. */
let idleQueue: string;

beforeAll(async () => {
  stack = await startStack({ name: 'security', app: FIXTURES });
  idleQueue = `${stack.taskQueue}-idle`;
});

afterAll(() => stack?.stop());

function serve(env: Record<string, string> = {}, taskQueue = stack.taskQueue): Promise<HttpServerProcess> {
  return stack.spawnServer({ env, taskQueue });
}

async function httpClient(url: string, token?: string, headers: Record<string, string> = {}) {
  const client = newMcpClient('security-test');
  new ScriptedUser(() => APPROVE).attach(client);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { ...headers, ...(token && { authorization: `Bearer ${token}` }) } },
    }),
  );
  return client;
}

/** Runs `npm run -s serve -- ARGS` expecting it to refuse to start: its exit code and stderr. */
function serveRefuses(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return runServeToExit(stack.taskQueue, args, env);
}

/** An initialize sent with node's http client, which (unlike fetch) lets a test set the Host header. */
function initializeWithHost(url: string, host: string): Promise<number> {
  const { hostname, port, pathname } = new URL(url);
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        hostname,
        port,
        path: pathname,
        method: 'POST',
        headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.once('error', reject);
    request.end(body);
  });
}

function initialize(url: string, headers: Record<string, string>) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
}

describe('1. a caller identity that is really theirs', () => {
  test('without credentials the principal is the OS user and host, not a shared constant', () => {
    const principal = localPrincipal({});
    expect(principal).toBe(`local:${os.userInfo().username}@${os.hostname()}`.replace(/[^A-Za-z0-9._:@+-]/g, '_'));
    expect(localPrincipal({ MCP_LOCAL_PRINCIPAL: 'ops-desk' })).toBe('ops-desk');
    expect(() => localPrincipal({ MCP_LOCAL_PRINCIPAL: "x' OR 1=1" })).toThrow(/principal/);
  });

  test('a task made over no-auth HTTP is invisible to a server acting for another local principal', async () => {
    const mine = await serve();
    const theirs = await serve({ MCP_LOCAL_PRINCIPAL: `someone-else-${randomUUID().slice(0, 8)}` });
    const client = await httpClient(mine.url);
    const other = await httpClient(theirs.url);
    try {
      const task = await startAskTask(client);
      expect(await errorCodeOf(getTask(other, task.taskId))).toBe(ErrorCode.InvalidParams);
      expect(await errorCodeOf(other.experimental.tasks.cancelTask(task.taskId))).toBe(ErrorCode.InvalidParams);
      expect((await other.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).not.toContain(task.taskId);
      await client.experimental.tasks.cancelTask(task.taskId);
    } finally {
      await client.close();
      await other.close();
    }
  });

  test('with --no-auth (anyone who reaches the address is the one local principal) tasks/list is neither declared nor served', async () => {
    const open = await stack.spawnServer({ env: { MCP_ALLOWED_HOSTS: '127.0.0.1,0.0.0.0' }, host: '0.0.0.0', args: ['--no-auth'] });
    const loopback = await serve();
    const [anyone, local] = await Promise.all([httpClient(open.url.replace('0.0.0.0', '127.0.0.1')), httpClient(loopback.url)]);
    try {
      expect(anyone.getServerCapabilities()?.tasks).toEqual({ cancel: {}, requests: { tools: { call: {} } } });
      expect(await errorCodeOf(anyone.experimental.tasks.listTasks())).toBe(ErrorCode.MethodNotFound);
      // A task is still theirs to follow by its id; on loopback (the machine's own users) the listing stays.
      const task = await startAskTask(anyone);
      expect((await getTask(anyone, task.taskId)).taskId).toBe(task.taskId);
      expect(local.getServerCapabilities()?.tasks).toMatchObject({ list: {} });
      expect(Array.isArray((await local.experimental.tasks.listTasks()).tasks)).toBe(true);
      await anyone.experimental.tasks.cancelTask(task.taskId);
    } finally {
      await anyone.close();
      await local.close();
    }
  });

  test('MCP_LOCAL_ROLES are for stdio: over HTTP they are ignored with a warning, and granted only with --local-roles-over-http and a loud one', async () => {
    const id = randomUUID().slice(0, 8);
    const env = { MCP_LOCAL_PRINCIPAL: `desk-${id}`, MCP_LOCAL_ROLES: 'spend-approver' };
    const [plain, granted] = await Promise.all([stack.spawnServer({ env }), stack.spawnServer({ env, args: ['--local-roles-over-http'] })]);
    expect(plain.stderr()).toContain(
      'MCP_LOCAL_ROLES (spend-approver) is ignored over HTTP: it would give those roles to EVERY process and user of this machine that connects to',
    );
    expect(granted.stderr()).toMatch(
      new RegExp(
        `WARNING: --local-roles-over-http: EVERY process and user of this machine that connects to ${granted.url.replace(/[.]/g, '\\.')} ` +
          `acts as desk-${id} with the role\\(s\\) spend-approver`,
      ),
    );
    // Someone else asks the spend approvers.
    const requester = newMcpClient('requester');
    await stack.connect(requester, await stack.addBridge({ principal: `requester-${id}` }));
    const created = await requester.request(
      {
        method: 'tools/call',
        params: { name: requestDecisionTool.name, arguments: { subject: 'a desk', roles: ['spend-approver'] }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    const [grantedClient, plainClient] = await Promise.all([httpClient(granted.url), httpClient(plain.url)]);
    try {
      await waitForTask(requester, taskId, (task) => task.statusMessage?.startsWith('Waiting for') ?? false);
      await pollUntil(async () => ((await inbox(grantedClient)).some((item) => item.taskId === taskId) ? true : undefined), {
        timeoutMs: 30_000,
        what: 'the question in the inbox of the server that grants the local roles over HTTP',
      });
      expect((await inbox(plainClient)).some((item) => item.taskId === taskId)).toBe(false);
      const refused = await answer(plainClient, taskId, 'approve');
      expect(textOf(refused)).toBe(`No question "approval" of task ${taskId} awaits your answer. Nothing was recorded.`);
    } finally {
      await requester.experimental.tasks.cancelTask(taskId).catch(() => undefined);
      await grantedClient.close();
      await plainClient.close();
      await stack.closeClients();
    }
  });

  test('a token may not take a local principal name', async () => {
    for (const name of ['local', 'local:root@host']) {
      const refused = await serveRefuses(['--http', `127.0.0.1:${await freePort()}`], {
        MCP_AUTH_TOKENS: `${name}=a-long-enough-token-0123`,
      });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/reserved for local callers/);
    }
  });
});

describe('2. only tasks this bridge created', () => {
  test('a workflow planted in the namespace with the principal and a task memo is "not found", like a missing one', async () => {
    const bridge = await stack.addBridge({ taskQueue: idleQueue });
    const client = newMcpClient('forgery-test');
    const user = new ScriptedUser(() => APPROVE);
    user.attach(client);
    const close = await stack.connect(client, bridge);
    try {
      const planted: string[] = [];
      const plant = async (type: string, meta: Record<string, unknown>) => {
        const workflowId = `planted-${randomUUID()}`;
        await stack.temporal.workflow.start(type, {
          taskQueue: idleQueue,
          workflowId,
          args: [],
          typedSearchAttributes: [{ key: PRINCIPAL_KEY, value: bridge.localPrincipal }],
          memo: {
            [TASK_META_MEMO]: { tool: askRequesterTool.name, ttl: 60_000, pollInterval: 1000, ...meta },
            [TASK_STATE_MEMO]: {
              status: 'input_required',
              updatedAt: new Date().toISOString(),
              inputs: [
                { key: 'login', request: { mode: 'url', message: 'Sign in', url: 'https://evil.example/login', elicitationId: 'x' } },
              ],
            },
          },
        });
        planted.push(workflowId);
      };
      await plant('Anything', {});
      await plant(ASK_WORKFLOW_TYPE, {});
      await plant(ASK_WORKFLOW_TYPE, { marker: 'forged-mark-of-the-right-length-0000000000000' });
      const real = await startAskTask(client);
      // The real task is listed once visibility has it; none of the planted ones ever is.
      const listed = await eventually(async () => {
        const { tasks } = await client.experimental.tasks.listTasks();
        return tasks.some((task) => task.taskId === real.taskId) ? tasks.map((task) => task.taskId) : undefined;
      }, 'the real task listed');
      for (const workflowId of planted) {
        expect(listed).not.toContain(workflowId);
        expect(await errorCodeOf(getTask(client, workflowId))).toBe(ErrorCode.InvalidParams);
        expect(await errorCodeOf(taskResult(client, workflowId, 5000))).toBe(ErrorCode.InvalidParams);
      }
      expect(user.asked).toHaveLength(0);
      for (const workflowId of [...planted, real.taskId]) await stack.temporal.workflow.getHandle(workflowId).terminate();
    } finally {
      await close();
    }
  });
});

describe('4. one caller cannot exhaust the server', () => {
  test('sessions per principal are bounded: the longest idle is closed when a new one opens', async () => {
    const server = await serve({ MCP_HTTP_MAX_SESSIONS_PER_PRINCIPAL: '3' });
    const clients = [];
    for (let index = 0; index < 4; index++) clients.push(await httpClient(server.url));
    try {
      // The first session was evicted: its next request is refused; the newest still work.
      await expect(clients[0].listTools()).rejects.toThrow();
      for (const client of clients.slice(1)) expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    } finally {
      await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    }
  });

  test('concurrent waits per principal are bounded with a retryable error; open tasks per principal too', async () => {
    const server = await serve(
      {
        MCP_MAX_WAITS_PER_PRINCIPAL: '2',
        MCP_MAX_OPEN_TASKS_PER_PRINCIPAL: '3',
        MCP_LOCAL_PRINCIPAL: `quota-${randomUUID().slice(0, 8)}`,
        MCP_LOG_LEVEL: 'debug',
      },
      idleQueue,
    );
    const client = await httpClient(server.url);
    const quiet = newMcpClient('quiet', false);
    await quiet.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    try {
      const tasks = [];
      for (let index = 0; index < 3; index++) tasks.push(await startAskTask(client));
      const tooMany = await startAskTask(client).then(
        () => undefined,
        (error: McpError) => error,
      );
      expect(tooMany?.code).toBe(ErrorCode.InvalidRequest);
      expect(tooMany?.message).toMatch(/Too many open tasks/);

      // Two tasks/result waits (no worker runs: they block), the third is refused.
      const waiting = tasks.slice(0, 2).map((task) => taskResult(quiet, task.taskId, 60_000).catch(() => undefined));
      // Both hold their place once the server says it waits for them.
      const waits = () => server.stderr().match(/waiting for the task to finish method=tasks\/result/g)?.length ?? 0;
      await pollUntil(() => (waits() >= 2 ? true : undefined), { timeoutMs: 30_000, what: 'the server to wait in two tasks/result' });
      const refused = await taskResult(quiet, tasks[2].taskId, 10_000).then(
        () => undefined,
        (error: McpError) => error,
      );
      expect(refused?.message).toMatch(/Too many waits/);
      expect(refused?.data).toMatchObject({ retryable: true });
      for (const task of tasks) await client.experimental.tasks.cancelTask(task.taskId);
      await Promise.all(waiting);
    } finally {
      await client.close();
      await quiet.close();
    }
  });

  test("an approver's open forms count against the waits quota: with a quota of 2 the third is refused, retryably", async () => {
    const people = makePeople({ asker: '', approver: 'spend-approver' });
    const server = await serve({
      MCP_AUTH_TOKENS_FILE: writeTokensFile(people),
      MCP_MAX_WAITS_PER_PRINCIPAL: '2',
      MCP_TASK_OPS_PER_SECOND: '0',
      MCP_ELICITATION_TIMEOUT_MS: '120000',
    });
    const clients = new ApprovalClients();
    // The approver's client shows each form and leaves it open until the test closes them all.
    const shown: (() => void)[] = [];
    const approver = new McpClient(
      { name: 'approver', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} }, tasks: { requests: {} } } },
    );
    approver.setRequestHandler(
      ElicitRequestSchema,
      () => new Promise<ElicitResult>((resolve) => shown.push(() => resolve({ action: 'cancel' }))),
    );
    await approver.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { authorization: `Bearer ${people.approver.token}` } },
      }),
    );
    try {
      const asker = await clients.connect(server.url, people.asker);
      const taskIds: string[] = [];
      for (const purpose of ['one', 'two', 'three']) {
        const created = await asker.request(
          {
            method: 'tools/call',
            params: { name: requestDecisionTool.name, arguments: { subject: purpose, roles: ['spend-approver'] }, task: {} },
          },
          CreateTaskResultSchema,
        );
        await waitForTask(asker, created.task.taskId, (task) => task.statusMessage?.startsWith('Waiting for') ?? false);
        taskIds.push(created.task.taskId);
      }
      const putForm = (taskId: string) =>
        approver.callTool({ name: 'approvals_answer', arguments: { taskId, key: 'approval' } }, undefined, { timeout: 120_000 });
      const open = taskIds.slice(0, 2).map(putForm);
      await pollUntil(() => (shown.length >= 2 ? true : undefined), { timeoutMs: 30_000, what: 'two forms to be shown' });
      // Refused at once; a third form shown means it was not counted.
      const refused = await Promise.race([
        putForm(taskIds[2]).then(
          () => undefined,
          (error: McpError) => error,
        ),
        pollUntil(() => (shown.length >= 3 ? true : undefined), { timeoutMs: 60_000, what: 'a third form' }).then(
          () => 'a third form was shown',
        ),
      ]);
      expect(refused).toBeInstanceOf(McpError);
      if (!(refused instanceof McpError)) return;
      expect(refused?.code).toBe(ErrorCode.InternalError);
      expect(refused?.message).toMatch(/Too many waits/);
      expect(refused?.data).toMatchObject({ retryable: true, limit: 2 });
      expect(shown).toHaveLength(2);
      // Closing the forms gives the places back: the third form is shown.
      for (const close of shown.splice(0)) close();
      for (const result of await Promise.all(open)) expect(textOf(result as CallToolResult)).toMatch(/You dismissed the question/);
      const third = putForm(taskIds[2]);
      await pollUntil(() => (shown.length >= 1 ? true : undefined), { timeoutMs: 30_000, what: 'the third form to be shown' });
      shown.splice(0).forEach((close) => close());
      expect(textOf((await third) as CallToolResult)).toMatch(/You dismissed the question/);
      for (const taskId of taskIds) await asker.experimental.tasks.cancelTask(taskId);
    } finally {
      shown.splice(0).forEach((close) => close());
      await approver.close();
      await clients.closeAll();
    }
  });

  test('a 2025-11-25 principal polling in a tight loop is slowed with a retryable -32603 that says when to retry', async () => {
    const server = await serve({ MCP_TASK_OPS_PER_SECOND: '5', MCP_LOCAL_PRINCIPAL: `poller-${randomUUID().slice(0, 8)}` }, idleQueue);
    const client = await httpClient(server.url);
    try {
      const missing = `missing-${randomUUID()}`;
      const errors = await Promise.all(
        Array.from({ length: 40 }, () =>
          client.experimental.tasks.getTask(missing).then(
            () => undefined,
            (error: McpError) => error,
          ),
        ),
      );
      const limited = errors.filter((error) => error?.code === ErrorCode.InternalError);
      expect(limited.length).toBeGreaterThan(0);
      for (const error of limited) {
        expect(error?.message).toMatch(/Too many task requests/);
        expect(error?.data).toMatchObject({ retryable: true, retryAfterMs: expect.any(Number), limit: 5 });
      }
      // Every other poll got what a poll of an unknown task gets.
      for (const error of errors.filter((candidate) => candidate?.code !== ErrorCode.InternalError)) {
        expect(error?.code).toBe(ErrorCode.InvalidParams);
      }
    } finally {
      await client.close();
    }
  });

  test('a full connection cap closes silent sockets for new ones: idle sockets from several loopback addresses keep no client out', async () => {
    const server = await serve({ MCP_HTTP_MAX_CONNECTIONS: '16', MCP_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '4' });
    const { port } = new URL(server.url);
    // Four addresses hold four silent sockets each, the whole cap, and open another as soon as one is closed.
    let stopped = false;
    let connected = 0;
    const open = new Set<net.Socket>();
    const hold = (localAddress: string) => {
      if (stopped) return;
      const socket = net.connect({ host: '127.0.0.1', port: Number(port), localAddress });
      open.add(socket);
      socket.once('connect', () => connected++);
      socket.on('error', () => undefined);
      socket.once('close', () => {
        open.delete(socket);
        setTimeout(() => hold(localAddress), 20);
      });
    };
    for (const address of ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5']) for (let index = 0; index < 4; index++) hold(address);
    const client = newMcpClient('behind-the-idle', false);
    try {
      await pollUntil(() => (connected >= 16 ? true : undefined), { timeoutMs: 30_000, what: 'sixteen silent sockets' });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      for (let call = 0; call < 5; call++) expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      // The silent ones were still there, reopened: the client got in by closing them, not because they left.
      expect(open.size).toBeGreaterThanOrEqual(12);
    } finally {
      stopped = true;
      for (const socket of open) socket.destroy();
      await client.close().catch(() => undefined);
    }
  });

  test('a request that trickles in is cut off after the request timeout', async () => {
    const server = await serve({ MCP_HTTP_REQUEST_TIMEOUT_MS: '1500', MCP_HTTP_HEADERS_TIMEOUT_MS: '1000' });
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const closed = new Promise<string>((resolve) => {
      let received = '';
      socket.on('data', (chunk) => (received += chunk));
      // Cut while bytes of ours are still unread, the connection is reset (ECONNRESET) rather than closed: cut either way.
      socket.on('error', () => undefined);
      socket.once('close', () => resolve(received));
    });
    socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`);
    const trickle = setInterval(() => socket.write('{'), 300);
    // Twenty times the request timeout: a connection still open by then was not cut by it.
    const received = await Promise.race([closed, new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 30_000))]);
    clearInterval(trickle);
    socket.destroy();
    expect(received).not.toBe('still open');
  });
});

describe('6. Origin and Host', () => {
  test('a browser origin that is not loopback is refused with 403, with and without tokens; loopback and listed ones pass', async () => {
    const noAuth = await serve({ MCP_ALLOWED_ORIGINS: 'https://app.example.com' });
    const token = `tok-${randomUUID()}`;
    const withTokens = await serve({ MCP_AUTH_TOKENS: `alice=${token}` });
    expect((await initialize(noAuth.url, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await initialize(withTokens.url, { origin: 'http://evil.example', authorization: `Bearer ${token}` })).status).toBe(403);
    expect((await initialize(noAuth.url, { origin: 'http://localhost:6274' })).status).toBe(200);
    expect((await initialize(noAuth.url, { origin: 'https://app.example.com' })).status).toBe(200);
    expect((await initialize(noAuth.url, {})).status).toBe(200);
    expect(await initializeWithHost(noAuth.url, 'evil.example')).toBe(403);
    expect(await initializeWithHost(noAuth.url, new URL(noAuth.url).host)).toBe(200);
  });

  test('a non-loopback address needs MCP_ALLOWED_HOSTS, even with --no-auth', async () => {
    const refused = await serveRefuses(['--http', `0.0.0.0:${await freePort()}`, '--no-auth'], {});
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/MCP_ALLOWED_HOSTS/);
  });
});

describe('8. bad input answered to the spec', () => {
  test('a tools-file pattern that backtracks is refused at load; declared schemas report one problem and strip unknown properties', () => {
    expect(() => jsonSchema({ type: 'object', properties: { name: { type: 'string', pattern: '^(a+)+$' } } })).toThrow(/exponential/);
    const schema = jsonSchema({
      type: 'object',
      properties: { name: { type: 'string', minLength: 1 }, days: { type: 'integer' } },
      required: ['name', 'days'],
    });
    const junk = Object.fromEntries(Array.from({ length: 20_000 }, (_, index) => [`k${index}`, 'x'.repeat(20)]));
    const stripped = schema.check({ name: 'Ada', days: 3, ...junk });
    expect(stripped).toEqual({ ok: true, value: { name: 'Ada', days: 3 } });
    const wrong = schema.check({ name: '', days: 'x', ...junk });
    expect(wrong.ok).toBe(false);
    expect(wrong.ok === false && wrong.problems).toHaveLength(1);
  });
});

describe('9. tokens and the client', () => {
  test('a # inside a token is part of it; a reversed pair does not print the token', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-tokens-'));
    const file = path.join(dir, 'tokens');
    const token = `abc#def-${randomUUID()}`;
    writeFileSync(file, `# the desk\nalice ${token}\n`);
    const server = await serve({ MCP_AUTH_TOKENS_FILE: file });
    expect((await initialize(server.url, { authorization: `Bearer ${token}` })).status).toBe(200);
    expect((await initialize(server.url, { authorization: `Bearer ${token.split('#')[0]}` })).status).toBe(401);
    const secret = `s3cret-${randomUUID()}`;
    const reversed = await serveRefuses(['--http', `127.0.0.1:${await freePort()}`], { MCP_AUTH_TOKENS: `${secret}$=alice` });
    expect(reversed.code).toBe(2);
    expect(reversed.stderr).not.toContain(secret);
  });

  test('the client prints server text without control characters, and keeps tokens per server in a file only its owner reads', async () => {
    expect(printable('ok\u001b]0;pwned\u0007 \u001b[2Jdone\r\nnext\tline\u009b')).toBe('ok]0;pwned [2Jdone\nnext\tline');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-client-tokens-'));
    const tokens = new ServerTokens(dir);
    tokens.remember('http://a.example/mcp', 'token-a');
    tokens.remember('http://b.example/mcp/', 'token-b');
    expect(tokens.get('http://a.example/mcp')).toBe('token-a');
    expect(tokens.get('http://b.example/mcp')).toBe('token-b');
    expect(tokens.get('http://c.example/mcp')).toBeUndefined();
    expect(statSync(path.join(dir, 'tokens.json')).mode & 0o777).toBe(0o600);
    expect(readFileSync(path.join(dir, 'tokens.json'), 'utf8')).not.toContain('token-c');
  });
});

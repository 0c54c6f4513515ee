import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  McpError,
  RELATED_TASK_META_KEY,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { orphanGuardFetch } from '../../src/client/orphan-guard';
import { WEB_UI_META } from '../../src/contract/wire';
import { pollUntil } from '../../src/util/wait';
import { freePort, ROOT, temporalDev } from '../helpers/dev-server';
import { APPROVE, errorCodeOf, getTask, newMcpClient, ScriptedUser, taskResult, waitForTask } from '../helpers/mcp';
import { startStack } from '../helpers/test-stack';
import { answersSent, askInput, FIXTURES, type FixtureStack, startAskTask } from '../fixtures/stack';
import { serverEnv, type HttpServerProcess } from '../helpers/processes';
import { eventually, expectedWebUiLink, testAddress } from '../helpers/temporal';

interface JsonRpcError {
  error: { code: number; message: string };
}

let stack: FixtureStack;
const clients: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  stack = await startStack({ name: 'transports', app: FIXTURES });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)));
});

afterAll(() => stack?.stop());

async function httpClient(url: string, user = new ScriptedUser(() => APPROVE), token?: string) {
  const client = newMcpClient('http-test');
  user.attach(client);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : undefined),
  );
  clients.push(client);
  return { client, user };
}

function httpServer(env: Record<string, string> = {}, via: 'npm' | 'node' = 'npm'): Promise<HttpServerProcess> {
  return stack.spawnServer({ env, via });
}

/** `npm run -s serve -- …args` to its end. */
function runServe(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('npm', ['run', '-s', 'serve', '--', ...args], { cwd: ROOT, env: serverEnv(stack.taskQueue, env) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A GET with a Host header of our choosing (fetch does not let one set it). */
function getWithHost(url: string, host: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { host } }, (response) => {
      response.resume();
      resolve({ status: response.statusCode ?? 0 });
    });
    request.once('error', reject);
  });
}

/** `npm run -s serve` serving the fixtures' tools and no sample, over stdio. */
const STDIO_SERVE = ['run', '-s', 'serve', '--', ...FIXTURES.serveArgs()];

describe('stdio (npm run -s serve)', () => {
  test('prints nothing but JSON-RPC on stdout', async () => {
    const child = spawn('npm', STDIO_SERVE, { cwd: ROOT, env: serverEnv(stack.taskQueue), stdio: ['pipe', 'pipe', 'pipe'] });
    const lines: string[] = [];
    const reader = createInterface({ input: child.stdout! });
    reader.on('line', (line) => lines.push(line));
    const send = (message: object) => child.stdin!.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    send({ jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId: 'ask-00000000-0000-4000-8000-000000000000' } });
    send({ jsonrpc: '2.0', id: 4, method: 'tasks/get', params: {} });
    send({ jsonrpc: '2.0', id: 5, method: 'tasks/result', params: { taskId: 42 } });
    send({ jsonrpc: '2.0', id: 6, method: 'tasks/list', params: { cursor: 'not-a-cursor' } });
    send({ jsonrpc: '2.0', id: 7, method: 'tasks/delete', params: { taskId: 'x' } });
    await pollUntil(() => (lines.length >= 7 ? true : undefined), {
      timeoutMs: 60_000,
      what: () => `seven answers on stdout (got ${lines.length}: ${lines.join(' | ')})`,
    }).finally(() => child.stdin!.end());
    await new Promise((resolve) => child.once('exit', resolve));
    const messages = lines.map((line) => JSON.parse(line));
    const byId = new Map(messages.map((m) => [m.id, m]));
    expect([...byId.keys()].sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(byId.get(1).result.capabilities.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    expect(byId.get(3).error).toMatchObject({ code: -32602, message: expect.stringMatching(/Task not found/) });
    expect(byId.get(4).error).toMatchObject({ code: -32602, message: expect.stringMatching(/taskId/) });
    expect(byId.get(5).error.code).toBe(-32602);
    expect(byId.get(6).error).toMatchObject({ code: -32602, message: expect.stringMatching(/cursor/) });
    expect(byId.get(7).error.code).toBe(-32601);
  });

  test('the approve path through a spawned stdio server', async () => {
    const client = newMcpClient('stdio-test');
    const user = new ScriptedUser(() => APPROVE).attach(client);
    const transport = new StdioClientTransport({
      command: 'npm',
      args: STDIO_SERVE,
      cwd: ROOT,
      env: serverEnv(stack.taskQueue),
      stderr: 'pipe',
    });
    const errors: Error[] = [];
    await client.connect(transport);
    transport.onerror = (error) => errors.push(error);
    clients.push(client);
    const task = await startAskTask(client);
    const result = await taskResult(client, task.taskId);
    expect(result).toMatchObject({
      structuredContent: { outcome: 'approved' },
      _meta: { [RELATED_TASK_META_KEY]: { taskId: task.taskId } },
    });
    expect(user.asked).toHaveLength(1);
    expect(errors).toEqual([]);
    expect(await answersSent(stack.temporal, task.taskId)).toBe(1);
  });
});

describe('Streamable HTTP (npm run -s serve -- --http)', () => {
  test('a second server process serves tasks/get and tasks/result for a task the first created, even after the first is killed', async () => {
    const [first, second] = await Promise.all([httpServer(), httpServer()]);
    const creator = await httpClient(first.url);
    const task = await startAskTask(creator.client);
    await waitForTask(creator.client, task.taskId, (t) => t.status === 'input_required');
    await first.kill('SIGKILL');

    const resumer = await httpClient(second.url);
    expect((await getTask(resumer.client, task.taskId)).status).toBe('input_required');
    const result = await taskResult(resumer.client, task.taskId);
    expect(result.structuredContent).toMatchObject({ outcome: 'approved' });
    expect(creator.user.asked).toHaveLength(0);
    expect(resumer.user.asked).toHaveLength(1);
    expect(resumer.user.asked[0]._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: task.taskId });
    expect(await answersSent(stack.temporal, task.taskId)).toBe(1);
  });

  test('a client that only polls tasks/get gets the elicitation on its standalone stream', async () => {
    const server = await httpServer();
    const { client, user } = await httpClient(server.url);
    const task = await startAskTask(client);
    const done = await waitForTask(client, task.taskId, (t) => t.status === 'completed', 30_000);
    expect(done.status).toBe('completed');
    expect(user.asked).toHaveLength(1);
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ outcome: 'approved' });
  });

  test('every answer about a task links its workflow in the Web UI: the created task, tasks/get, the result, a plain call that stops at a question', async () => {
    const server = await httpServer();
    const { client } = await httpClient(server.url);
    const created = await client.request(
      { method: 'tools/call', params: { name: 'ask_requester', arguments: askInput(), task: {} } },
      CreateTaskResultSchema,
    );
    const link = expectedWebUiLink(created.task.taskId);
    expect(created._meta?.[WEB_UI_META]).toBe(link);
    expect((await client.experimental.tasks.getTask(created.task.taskId))._meta?.[WEB_UI_META]).toBe(link);
    const result = await taskResult(client, created.task.taskId);
    expect(result._meta).toMatchObject({ [WEB_UI_META]: link, [RELATED_TASK_META_KEY]: { taskId: created.task.taskId } });
    // The model reads the text; the link is for people and clients.
    expect(JSON.stringify(result.content)).not.toContain(link);

    // A client that cannot be asked: its plain call answers with the pending task at the question.
    const mute = newMcpClient('mute', false);
    await mute.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    clients.push(mute);
    const pending = await mute.callTool({ name: 'ask_requester', arguments: askInput() });
    const { pendingTask } = pending.structuredContent as { pendingTask: { taskId: string } };
    expect(pending._meta?.[WEB_UI_META]).toBe(expectedWebUiLink(pendingTask.taskId));
    await mute.experimental.tasks.cancelTask(pendingTask.taskId);

    const off = await httpServer({ TEMPORAL_WEB_UI_URL: 'off' });
    const plain = await httpClient(off.url);
    expect((await plain.client.experimental.tasks.getTask(created.task.taskId))._meta?.[WEB_UI_META]).toBeUndefined();
    const custom = await httpServer({ TEMPORAL_WEB_UI_URL: 'https://temporal.example.com/ui/' });
    const other = await httpClient(custom.url);
    expect((await other.client.experimental.tasks.getTask(created.task.taskId))._meta?.[WEB_UI_META]).toBe(
      `https://temporal.example.com/ui/namespaces/default/workflows/${created.task.taskId}`,
    );
  });

  test('MCP_LOG_FORMAT=json: stderr holds one JSON object a line, and the lines of a task creation carry its taskId', async () => {
    const server = await httpServer({ MCP_LOG_FORMAT: 'json', MCP_LOG_LEVEL: 'debug' }, 'node');
    const { client } = await httpClient(server.url);
    const task = await startAskTask(client);
    await getTask(client, task.taskId);
    await client.experimental.tasks.cancelTask(task.taskId);
    await server.kill('SIGTERM');
    const lines = server
      .stderr()
      .split('\n')
      .filter((line) => line !== '');
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const entry of entries) {
      expect(entry).toMatchObject({ time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), level: expect.any(String), msg: expect.any(String) });
    }
    const creation = entries.filter((entry) => entry.method === 'tools/call');
    expect(creation.map((entry) => entry.msg)).toContain('task created');
    for (const entry of creation) expect(entry).toMatchObject({ taskId: task.taskId, principal: expect.stringMatching(/^local:/) });
    expect(entries.find((entry) => entry.msg === 'task cancellation requested')).toMatchObject({
      taskId: task.taskId,
      method: 'tasks/cancel',
    });
    expect(entries.map((entry) => entry.msg)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^serve: MCP Streamable HTTP on/), 'serve: stopped']),
    );
  });

  test('GET /healthz answers {"status":"ok"} without credentials and only for an allowed Host; 503 with the reason once Temporal is gone', async () => {
    const tokens = { MCP_AUTH_TOKENS: 'alice=alice-token-0123456789' };
    const server = await httpServer(tokens);
    const healthz = server.url.replace(/\/mcp$/, '/healthz');
    const ok = await fetch(healthz);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: 'ok' });
    expect((await fetch(healthz, { method: 'POST' })).status).toBe(405);
    expect((await getWithHost(healthz, 'rebinding.example')).status).toBe(403);

    // A dev server of its own, stopped under a running MCP server: /healthz turns 503 and says why.
    const port = await freePort();
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'healthz-'));
    await temporalDev('start', port, stateDir);
    try {
      const orphan = await httpServer({ TEMPORAL_ADDRESS: `127.0.0.1:${port}` });
      const orphanHealthz = orphan.url.replace(/\/mcp$/, '/healthz');
      expect((await fetch(orphanHealthz)).status).toBe(200);
      await temporalDev('stop', port, stateDir);
      const down = await fetch(orphanHealthz);
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({
        status: 'unavailable',
        // Nothing of Temporal's own error text reaches a caller without credentials.
        reason: 'Temporal did not answer DescribeNamespace within 2000 ms',
      });
    } finally {
      await temporalDev('stop', port, stateDir);
    }
  });

  test('SIGTERM: a blocked tasks/result sees its stream end, /healthz stops answering, the server exits 0 without waiting for it', async () => {
    // Responses under way may take a minute to finish: a server that let the blocked one run would take that long.
    const shutdownTimeoutMs = 60_000;
    const server = await httpServer({ MCP_LOG_LEVEL: 'debug', MCP_SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs) }, 'node');
    // A client that cannot be asked: its tasks/result blocks while the task waits for an answer.
    const client = newMcpClient('blocked', false);
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { fetch: orphanGuardFetch() }));
    clients.push(client);
    const task = await startAskTask(client);
    await waitForTask(client, task.taskId, (t) => t.status === 'input_required');
    const blocked = taskResult(client, task.taskId, 60_000).then(
      () => 'answered',
      (error: unknown) => error,
    );
    await pollUntil(() => (server.stderr().includes(`waiting for the task to finish method=tasks/result`) ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the server to wait in tasks/result',
    });
    const signalled = Date.now();
    await server.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalled).toBeLessThan(shutdownTimeoutMs / 2);
    const outcome = await blocked;
    expect(outcome).toBeInstanceOf(McpError);
    expect((outcome as McpError).code).toBe(ErrorCode.ConnectionClosed);
    expect(server.stderr()).toMatch(/serve: SIGTERM: stopping[\s\S]*serve: stopped/);
    await expect(fetch(server.url.replace(/\/mcp$/, '/healthz'))).rejects.toThrow();

    // Nothing was lost: the task lives in Temporal, and another server finishes it.
    const other = await httpClient((await httpServer()).url);
    expect((await taskResult(other.client, task.taskId)).structuredContent).toMatchObject({ outcome: 'approved' });
  });

  test('serve --check: one line and exit 0 when the namespace and the search attribute are there; exit 1 naming what is missing', async () => {
    const ok = await runServe(['--check'], {});
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      /^serve: ok: Temporal 127\.0\.0\.1:\d+, namespace default \(retention [\d.]+ h\), search attributes McpPrincipal, McpAwaiting, McpChangedAt\n$/,
    );
    const missing = await runServe(['--check'], { TEMPORAL_NAMESPACE: 'no-such-namespace' });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/namespace "no-such-namespace" does not exist/);

    // A namespace of its own, without the search attribute.
    const namespace = `check-${Date.now()}`;
    const connection = await Connection.connect({ address: testAddress() });
    try {
      await new TemporalClient({ connection }).workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs('1 day'),
      });
    } finally {
      await connection.close();
    }
    const bare = await eventually(async () => {
      const run = await runServe(['--check'], { TEMPORAL_NAMESPACE: namespace });
      return /search attribute/.test(run.stderr) ? run : undefined;
    }, 'the new namespace to be known');
    expect(bare.code).toBe(1);
    expect(bare.stderr).toMatch(
      /search attribute McpPrincipal is not registered in namespace "check-\d+".*--name McpPrincipal --type Keyword/,
    );

    // With each one registered, the check names the next one missing.
    const { INDEXED_VALUE_TYPE_KEYWORD, INDEXED_VALUE_TYPE_KEYWORD_LIST } = temporal.api.enums.v1.IndexedValueType;
    const steps: { registered: Record<string, temporal.api.enums.v1.IndexedValueType>; next: string; type: string }[] = [
      { registered: { McpPrincipal: INDEXED_VALUE_TYPE_KEYWORD }, next: 'McpAwaiting', type: 'KeywordList' },
      { registered: { McpAwaiting: INDEXED_VALUE_TYPE_KEYWORD_LIST }, next: 'McpChangedAt', type: 'Datetime' },
    ];
    for (const { registered, next, type } of steps) {
      const operator = await Connection.connect({ address: testAddress() });
      try {
        await operator.operatorService.addSearchAttributes({ namespace, searchAttributes: registered });
      } finally {
        await operator.close();
      }
      const run = await eventually(
        async () => {
          const checked = await runServe(['--check'], { TEMPORAL_NAMESPACE: namespace });
          return checked.stderr.includes(next) ? checked : undefined;
        },
        `${Object.keys(registered)[0]} to be known in the new namespace`,
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        new RegExp(`search attribute ${next} is not registered in namespace "check-\\d+".*--name ${next} --type ${type}`),
      );
    }
  });

  test('a client still sending an oversized body reads its 413: the rest is taken and dropped, the connection is not reset', async () => {
    const server = await httpServer();
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const errors: Error[] = [];
    socket.on('error', (error) => errors.push(error));
    let received = '';
    const answered = new Promise<void>((resolve) =>
      socket.on('data', (chunk) => {
        received += chunk.toString();
        // The whole answer: its last chunk.
        if (received.includes('\r\n0\r\n\r\n')) resolve();
      }),
    );
    const size = 3 * 1024 * 1024;
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${size}\r\n\r\n`,
    );
    socket.write('x'.repeat(64 * 1024));
    // The answer comes before the body is sent; the client goes on sending it, as a client that streams its body does.
    await answered;
    for (let sent = 64 * 1024; sent < size; sent += 64 * 1024) {
      await new Promise<void>((resolve) => socket.write('x'.repeat(Math.min(64 * 1024, size - sent)), () => resolve()));
    }
    // The server took the whole body: a request on the same connection is answered.
    socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await pollUntil(async () => (received.split('HTTP/1.1 ').length > 2 ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the second answer',
    });
    socket.destroy();
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received).toContain('"code":-32600');
    expect(errors).toEqual([]);
  });

  test('bad HTTP input gets JSON-RPC errors: oversized body 413, broken JSON -32700, unknown session 404, wrong path 404', async () => {
    const server = await httpServer();
    const post = (body: string, headers: Record<string, string> = {}, url = server.url) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body,
      });
    const huge = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { pad: 'x'.repeat(2 * 1024 * 1024) } }));
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as JsonRpcError).error.code).toBe(-32600);
    const broken = await post('{"jsonrpc":');
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as JsonRpcError).error.code).toBe(-32700);
    const stale = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { 'mcp-session-id': 'no-such-session' });
    expect(stale.status).toBe(404);
    const elsewhere = await post('{}', {}, server.url.replace('/mcp', '/other'));
    expect(elsewhere.status).toBe(404);
    // The server is still healthy afterwards.
    const { client } = await httpClient(server.url);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });
});

describe('tasks belong to the caller (bearer tokens)', () => {
  const ALICE = 'alice-token-0123456789';
  const BOB = 'bob-token-0123456789ab';
  const tokens = { MCP_AUTH_TOKENS: `alice=${ALICE},bob=${BOB}` };

  test('a new session of the same principal finds, answers and finishes its task; another principal gets -32602 everywhere', async () => {
    const server = await httpServer(tokens);
    const alice = await httpClient(server.url, new ScriptedUser(() => APPROVE), ALICE);
    const task = await startAskTask(alice.client);
    await waitForTask(alice.client, task.taskId, (t) => t.status === 'input_required');
    await alice.client.close();

    const bob = await httpClient(server.url, new ScriptedUser(() => APPROVE), BOB);
    expect(await errorCodeOf(getTask(bob.client, task.taskId))).toBe(ErrorCode.InvalidParams);
    expect(await errorCodeOf(taskResult(bob.client, task.taskId))).toBe(ErrorCode.InvalidParams);
    expect(await errorCodeOf(bob.client.experimental.tasks.cancelTask(task.taskId))).toBe(ErrorCode.InvalidParams);
    expect((await bob.client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).not.toContain(task.taskId);
    // The companion tools that read or steer a task do not find it either.
    for (const [name, args] of [
      ['task_status', {}],
      ['task_respond', { action: 'accept', content: { decision: 'approve' } }],
    ] as const) {
      const denied = await bob.client.callTool({ name, arguments: { taskId: task.taskId, ...args } });
      expect(denied).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/Task not found/) }] });
    }
    expect(bob.user.asked).toHaveLength(0);

    const again = await httpClient(server.url, new ScriptedUser(() => APPROVE), ALICE);
    const listed = await eventually(async () => {
      const { tasks } = await again.client.experimental.tasks.listTasks();
      return tasks.find((t) => t.taskId === task.taskId);
    }, 'the task in alice’s tasks/list');
    expect(listed.status).toBe('input_required');
    expect((await taskResult(again.client, task.taskId)).structuredContent).toMatchObject({ outcome: 'approved' });
    expect(again.user.asked).toHaveLength(1);
  });

  test('requests without a valid token get 401, and a session cannot be used with another token', async () => {
    const server = await httpServer(tokens);
    const initialize = (token?: string) =>
      fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(token && { authorization: `Bearer ${token}` }),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        }),
      });
    const missing = await initialize();
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await initialize('wrong-token-0123456789')).status).toBe(401);
    const ok = await initialize(ALICE);
    expect(ok.status).toBe(200);
    const session = ok.headers.get('mcp-session-id')!;
    await ok.body?.cancel();
    const hijack = await fetch(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${BOB}`,
        'mcp-session-id': session,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(hijack.status).toBe(404);
  });

  test('serve refuses a non-loopback address without tokens or --no-auth, and a bad token file names the line', async () => {
    const run = (args: string[], env: Record<string, string>) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn('npm', ['run', '-s', 'serve', '--', ...args], { cwd: ROOT, env: serverEnv(stack.taskQueue, env) });
        let stderr = '';
        child.stderr.on('data', (chunk) => (stderr += chunk));
        child.once('exit', (code) => resolve({ code, stderr }));
      });
    const open = await run(['--http', '0.0.0.0:0'], {});
    expect(open.code).toBe(2);
    expect(open.stderr).toMatch(/without authentication.*MCP_AUTH_TOKENS.*--no-auth/);
    const short = await run(['--http', '127.0.0.1:0'], { MCP_AUTH_TOKENS: 'alice=short' });
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/MCP_AUTH_TOKENS entry 1: the token of "alice" is shorter than 16/);
  });
});

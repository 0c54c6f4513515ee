/**
 * A credential bounds what it opened, not only what it asks: a real `serve --http` process with OAuth (a local issuer)
 * and a tokens file. A task subscription (2026-07-28 `subscriptions/listen`) opened with an access token ends with its
 * final result when the token expires; a static token removed from the tokens file ends its subscription, its
 * 2025-11-25 standalone stream, and its blocked `tasks/result` (answered "Unauthorized"), while another token's
 * streams go on. Every request after that is 401.
 */
import { writeFileSync } from 'node:fs';
import { CallToolResultSchema, GetTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { pollUntil } from '../../src/util/wait';
import { makePeople, writeTokensFile } from '../helpers/approvals';
import { TestIssuer } from '../helpers/issuer';
import { connectOverHttp } from '../helpers/mcp';
import { askInput, FIXTURES, startAskTask, type FixtureStack } from '../fixtures/stack';
import { askRequesterTool } from '../fixtures/tools';
import { mcp2026Request, openListen, readSse } from '../helpers/mcp2026';
import { startStack } from '../helpers/test-stack';

const SCOPE = 'mcp:tasks';
const people = makePeople({ alice: '', bob: '' });
let tokensFile: string;
let issuer: TestIssuer;
let stack: FixtureStack;
const clients: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  issuer = await TestIssuer.start();
  tokensFile = writeTokensFile(people);
  stack = await startStack({
    name: 'credential-lifetime',
    app: FIXTURES,
    servers: [{ env: { MCP_OAUTH_ISSUER: issuer.url, MCP_OAUTH_SCOPES: SCOPE, MCP_AUTH_TOKENS_FILE: tokensFile } }],
  });
}, 120_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  await stack?.stop();
  await issuer?.close();
});

/**
 * A task of the token's principal, once it waits for an answer nobody gives (`input_required`): it stays open through
 * the test.
 */
async function waitingTask(token: string): Promise<string> {
  const headers = { authorization: `Bearer ${token}` };
  const made = await mcp2026Request(stack.server.url, 'tools/call', { name: askRequesterTool.name, arguments: askInput() }, { headers });
  const taskId = made.body.result?.taskId as string;
  expect(taskId).toEqual(expect.any(String));
  await pollUntil(
    async () =>
      (await mcp2026Request(stack.server.url, 'tasks/get', { taskId }, { headers })).body.result?.status === 'input_required'
        ? true
        : undefined,
    { timeoutMs: 30_000, what: `task ${taskId} waiting for its answer` },
  );
  return taskId;
}

const acknowledged = (messages: Record<string, any>[]) =>
  messages.some((message) => message.method === 'notifications/subscriptions/acknowledged') ? true : undefined;

test('a subscription opened with an access token ends with its final result when the token expires, the task still open', async () => {
  const lasting = await issuer.token({ sub: 'erin', aud: stack.server.url, scope: SCOPE });
  const taskId = await waitingTask(lasting);
  const expiresAt = Math.floor(Date.now() / 1000) + 4;
  const brief = await issuer.token({ sub: 'erin', aud: stack.server.url, scope: SCOPE, exp: expiresAt });
  const listen = readSse(await openListen(stack.server.url, 'short-lived', [taskId], brief));
  await pollUntil(() => acknowledged(listen.messages), { timeoutMs: 30_000, what: 'the acknowledgement' });
  expect(await listen.ended).toBe('clean');
  // Ended by the expiry (not before it), with the listen request's response.
  expect(Date.now()).toBeGreaterThanOrEqual(expiresAt * 1000);
  expect(listen.messages.at(-1)).toMatchObject({ id: 'short-lived', result: { resultType: 'complete' } });
  const task = await mcp2026Request(stack.server.url, 'tasks/get', { taskId }, { headers: { authorization: `Bearer ${lasting}` } });
  expect(task.body.result?.status).toBe('input_required');
  // The expired token opens nothing more.
  expect((await openListen(stack.server.url, 'again', [taskId], brief)).status).toBe(401);
  await mcp2026Request(stack.server.url, 'tasks/cancel', { taskId }, { headers: { authorization: `Bearer ${lasting}` } });
}, 60_000);

test("a token removed from the tokens file ends its subscription, its standalone stream and its blocked tasks/result; another's go on", async () => {
  const [bobsTask, alicesTask] = [await waitingTask(people.bob.token), await waitingTask(people.alice.token)];
  const bobsListen = readSse(await openListen(stack.server.url, 'bob', [bobsTask], people.bob.token));
  const alicesListen = readSse(await openListen(stack.server.url, 'alice', [alicesTask], people.alice.token));
  await pollUntil(() => (acknowledged(bobsListen.messages) && acknowledged(alicesListen.messages)) || undefined, {
    timeoutMs: 30_000,
    what: 'both acknowledgements',
  });
  // bob on 2025-11-25 too: a tasks/result that blocks (nobody answers), and the session's standalone stream.
  const { client } = await connectOverHttp(stack.server.url, 'bob-2025', { token: people.bob.token });
  clients.push(client);
  const task2025 = await startAskTask(client);
  await pollUntil(
    async () =>
      (await client.request({ method: 'tasks/get', params: { taskId: task2025.taskId } }, GetTaskResultSchema)).status === 'input_required'
        ? true
        : undefined,
    { timeoutMs: 30_000, what: 'the 2025-11-25 task to wait for its answer' },
  );
  const blocked = client
    .request({ method: 'tasks/result', params: { taskId: task2025.taskId } }, CallToolResultSchema, { timeout: 120_000 })
    .then(
      () => 'answered',
      (error: Error) => error.message,
    );
  const sessionId = await rawSession(people.bob.token);
  const standalone = await fetch(stack.server.url, {
    headers: {
      accept: 'text/event-stream',
      authorization: `Bearer ${people.bob.token}`,
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-11-25',
    },
  });
  expect(standalone.status).toBe(200);
  const standaloneStream = readSse(standalone);

  // The keeper removes bob's token.
  writeFileSync(tokensFile, `${people.alice.principal} ${people.alice.token}\n`, { mode: 0o600 });
  const removedAt = Date.now();
  expect(await bobsListen.ended).toBe('clean');
  expect(bobsListen.messages.at(-1)).toMatchObject({ id: 'bob', result: { resultType: 'complete' } });
  expect(await blocked).toMatch(/Unauthorized: the credential this request came with expired or was revoked/);
  expect(await standaloneStream.ended).toBe('clean');
  // Within the stated bound: the file is looked at every second.
  expect(Date.now() - removedAt).toBeLessThan(30_000);
  // Bob is refused from now on; alice's subscription goes on, and she is served.
  expect((await openListen(stack.server.url, 'bob-again', [bobsTask], people.bob.token)).status).toBe(401);
  const alices = await mcp2026Request(
    stack.server.url,
    'tasks/get',
    { taskId: alicesTask },
    { headers: { authorization: `Bearer ${people.alice.token}` } },
  );
  expect(alices.body.result?.status).toBe('input_required');
  expect(await Promise.race([alicesListen.ended, new Promise((resolve) => setTimeout(() => resolve('open'), 1_500))])).toBe('open');
  await mcp2026Request(
    stack.server.url,
    'tasks/cancel',
    { taskId: alicesTask },
    { headers: { authorization: `Bearer ${people.alice.token}` } },
  );
  expect(await alicesListen.ended).toBe('clean');
}, 120_000);

/** A 2025-11-25 session opened by hand (initialize, then initialized), with no stream of its own yet: its id. */
async function rawSession(token: string): Promise<string> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` };
  const initialized = await fetch(stack.server.url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  await initialized.text();
  const sessionId = initialized.headers.get('mcp-session-id')!;
  const notified = await fetch(stack.server.url, {
    method: 'POST',
    headers: { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await notified.text();
  return sessionId;
}

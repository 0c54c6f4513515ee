/**
 * A server that stops ends each open task subscription (`subscriptions/listen`, 2026-07-28) with the listen request's
 * response before the stream closes, over Streamable HTTP and over stdio, so a client can tell a server that ended the
 * subscription from a connection that broke.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT } from '../helpers/dev-server';
import { mcp2026Request, openListen, readSse } from '../helpers/mcp2026';
import { serverEnv } from '../helpers/processes';
import { startStack } from '../helpers/test-stack';
import { askInput, FIXTURES, type FixtureStack } from '../fixtures/stack';
import { pollUntil } from '../../src/util/wait';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};
type Message = Record<string, any>;

let stack: FixtureStack;

beforeAll(async () => {
  stack = await startStack({ name: 'listen-shutdown', app: FIXTURES, servers: [{}] });
});

afterAll(() => stack?.stop());

/** A task that waits for an answer nobody gives: it stays open through the test. */
async function openTask(url: string): Promise<string> {
  const made = await mcp2026Request(url, 'tools/call', { name: 'ask_requester', arguments: askInput() });
  return made.body.result!.taskId as string;
}

test('Streamable HTTP: SIGTERM ends an open subscription with its response, after its acknowledgement', async () => {
  const server = stack.server;
  const taskId = await openTask(server.url);
  const response = await openListen(server.url, 'until-shutdown', [taskId]);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const { messages, ended: reading } = readSse(response);
  await pollUntil(() => (messages.some((message) => message.method === 'notifications/subscriptions/acknowledged') ? true : undefined), {
    timeoutMs: 60_000,
    what: 'the acknowledgement',
  });
  const stopped = server.kill('SIGTERM');
  await reading;
  await stopped;
  expect(messages[messages.length - 1]).toMatchObject({ jsonrpc: '2.0', id: 'until-shutdown', result: { resultType: 'complete' } });
  // Nothing but the task's own notifications came between the acknowledgement and the response.
  expect(messages.slice(1, -1).every((message) => message.method === 'notifications/tasks')).toBe(true);
});

test('stdio: SIGTERM ends an open subscription with its response before the server exits', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'mcp', 'serve', 'main.ts'), ...FIXTURES.serveArgs()], {
    cwd: ROOT,
    env: serverEnv(stack.taskQueue),
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  // 'close', not 'exit': stdout has been read to its end.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const messages: Message[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => messages.push(JSON.parse(line)));
  try {
    const send = (message: object) => child.stdin!.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask_requester', arguments: askInput(), _meta: META } });
    const created = await pollUntil(() => messages.find((message) => message.id === 1), { timeoutMs: 60_000, what: 'the task' });
    const taskId = created.result.taskId as string;
    send({
      jsonrpc: '2.0',
      id: 'until-shutdown',
      method: 'subscriptions/listen',
      params: { notifications: { taskIds: [taskId] }, _meta: META },
    });
    await pollUntil(() => (messages.some((message) => message.method === 'notifications/subscriptions/acknowledged') ? true : undefined), {
      timeoutMs: 60_000,
      what: 'the acknowledgement',
    });
    child.kill('SIGTERM');
    await exited;
    expect(messages[messages.length - 1]).toMatchObject({ jsonrpc: '2.0', id: 'until-shutdown', result: { resultType: 'complete' } });
  } finally {
    child.kill('SIGKILL');
  }
});

/**
 * The 2026-07-28 front-end in memory, over a fake task core: the SDK's server with this project's handlers on the
 * SDK's in-memory transport, requests written as a 2026-07-28 client sends them (per-request envelope), no Temporal.
 */
import { createRequestStateCodec, InMemoryTransport } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Approvals } from '../../src/approvals/approvals';
import { TASKS_EXTENSION } from '../../src/mcp/calls/call-plan';
import { createMcp2026Server, type Mcp2026Dependencies } from '../../src/mcp/mcp2026/server';
import { CallSeal } from '../../src/mcp/protocol/signed-call';
import { FakeCore, PRINCIPAL, report, view } from '../helpers/fake-core';

type Answer = { result?: Record<string, any>; error?: { code: number; message: string; data?: unknown } };

/** A session of raw requests against a 2026-07-28 server over `core`. */
async function serve(core: FakeCore) {
  const key = 'k'.repeat(32);
  const deps: Mcp2026Dependencies = {
    core,
    approvals: {} as Approvals,
    tools: [report],
    inlineBudgetMs: 1000,
    requestState: createRequestStateCodec({ key, ttlSeconds: 60, bind: () => PRINCIPAL }),
    seal: new CallSeal(key, 60_000),
    serverInfo: { name: 'front-end-test', version: '1.0.0' },
    instructions: '',
  };
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const handle = serveStdio(() => createMcp2026Server(deps, PRINCIPAL), { legacy: 'reject', transport: serverSide as never });
  const pending = new Map<number, (answer: Answer) => void>();
  clientSide.onmessage = (message) => {
    const { id, ...answer } = message as { id: number } & Answer;
    pending.get(id)?.(answer);
  };
  await clientSide.start();
  let next = 1;
  return {
    request(method: string, params: Record<string, unknown>, extensions: Record<string, unknown> = { [TASKS_EXTENSION]: {} }) {
      const id = next++;
      const envelope = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': { extensions },
      };
      return new Promise<Answer>((resolve) => {
        pending.set(id, resolve);
        void clientSide.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: envelope } });
      });
    },
    close: async () => {
      await clientSide.close();
      await (handle as { close?: () => Promise<void> }).close?.();
    },
  };
}

let core: FakeCore;
let session: Awaited<ReturnType<typeof serve>>;
beforeEach(async () => {
  core = new FakeCore();
  session = await serve(core);
});
afterEach(() => session.close());

test('a call from a client with the tasks extension starts the task and answers with it (resultType task)', async () => {
  const answer = await session.request('tools/call', { name: 'report', arguments: { region: 'south' } });
  expect(answer.result).toMatchObject({ resultType: 'task', taskId: 'report-1', status: 'working' });
  expect(core.created).toEqual([{ tool: 'report', input: { region: 'south' }, principal: PRINCIPAL, options: {} }]);
});

test('tasks/get renders the view inline: an ended task carries its result, a failed one its error as the workflow gave it', async () => {
  core.tasks.set('done', view('done', { status: 'COMPLETED', closeTime: new Date(), result: { content: [{ type: 'text', text: 'ok' }] } }));
  core.tasks.set('refused', view('refused', { status: 'FAILED', failure: { kind: 'protocol', message: 'Region unknown', code: -32602 } }));
  expect((await session.request('tasks/get', { taskId: 'done' })).result).toMatchObject({
    taskId: 'done',
    status: 'completed',
    result: { content: [{ type: 'text', text: 'ok' }] },
  });
  expect((await session.request('tasks/get', { taskId: 'refused' })).result).toMatchObject({
    status: 'failed',
    error: { code: -32602, message: 'Region unknown' },
  });
});

test('the core’s errors are JSON-RPC errors with its words; task methods need the extension (-32021)', async () => {
  expect((await session.request('tasks/get', { taskId: 'nonesuch' })).error).toEqual({ code: -32602, message: 'Task not found: nonesuch' });
  expect((await session.request('tasks/get', { taskId: 'nonesuch' }, {})).error).toMatchObject({
    code: -32021,
    data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  });
});

/**
 * Hostile and malformed input against a running server, both protocol generations, over real HTTP: every input gets
 * the spec's error (never a 5xx, never a crash), the server keeps serving, and Temporal holds no task that was not
 * asked for properly.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PRINCIPAL_SEARCH_ATTRIBUTE } from '../../src/contract/task-contract';
import { startStack } from '../helpers/test-stack';
import { runServeToExit } from '../helpers/processes';
import { eventually } from '../helpers/temporal';
import { QUESTION_KEY } from '../fixtures/definitions';
import { askInput, FIXTURES, type FixtureStack } from '../fixtures/stack';
import { askRequesterTool } from '../fixtures/tools';

const principal = `hostile-${randomUUID().slice(0, 8)}`;
let stack: FixtureStack;
let tried = 0;

beforeAll(async () => {
  stack = await startStack({
    name: 'bad-input',
    app: FIXTURES,
    // No worker: a task that slipped through would stay, and be counted.
    worker: false,
    servers: [{ env: { MCP_LOCAL_PRINCIPAL: principal, MCP_HTTP_MAX_BODY_BYTES: String(2 * 1024 * 1024) } }],
  });
}, 60_000);

afterAll(async () => {
  console.error(`[test] bad input: ${tried} hostile inputs tried`);
  await stack?.stop();
});

const MCP2026_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};

/** Posts `body` (a string, sent as is) and returns the HTTP status and the JSON-RPC error code, if any. */
async function post(body: string, headers: Record<string, string> = {}): Promise<{ status: number; code?: number; text: string }> {
  tried++;
  const response = await fetch(stack.server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  const text = await response.text();
  const json = text.startsWith('{')
    ? text
    : (text
        .split('\n')
        .find((line) => line.startsWith('data: '))
        ?.slice(6) ?? '');
  let code: number | undefined;
  try {
    code = (JSON.parse(json) as { error?: { code: number } }).error?.code;
  } catch {
    code = undefined;
  }
  return { status: response.status, code, text };
}

/** A 2026-07-28 request with the given method and params (params may be anything, even not an object). */
function mcp2026(method: unknown, params: unknown, id: unknown = 1, headers: Record<string, string> = {}) {
  const withMeta = params && typeof params === 'object' && !Array.isArray(params) ? { ...(params as object), _meta: MCP2026_META } : params;
  const name = (params as { taskId?: unknown; name?: unknown } | null)?.taskId ?? (params as { name?: unknown } | null)?.name;
  return post(JSON.stringify({ jsonrpc: '2.0', id, method, params: withMeta }), {
    'mcp-protocol-version': '2026-07-28',
    ...(typeof method === 'string' && { 'mcp-method': method }),
    ...(typeof name === 'string' && name.length < 1000 && /^[\x20-\x7e]*$/.test(name) && { 'mcp-name': name }),
    ...headers,
  });
}

/** A 2025-11-25 session: initialize once, then send requests on it. */
async function session() {
  const init = await fetch(stack.server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'hostile', version: '1' } },
    }),
  });
  const id = init.headers.get('mcp-session-id')!;
  await init.text();
  const headers = { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' };
  await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
  return (method: unknown, params: unknown, id: unknown = 1) => post(JSON.stringify({ jsonrpc: '2.0', id, method, params }), headers);
}

const SPEC_CODES = new Set([-32700, -32600, -32601, -32602, -32020, -32021, -32022]);

/** The answer is a client error: a 4xx, or a JSON-RPC error with a code the spec gives for bad input. */
function expectRefused(answer: { status: number; code?: number; text: string }, what: string) {
  if (answer.status >= 500) throw new Error(`${what}: HTTP ${answer.status} ${answer.text.slice(0, 300)}`);
  const refused = (answer.status >= 400 && answer.status < 500) || (answer.code !== undefined && SPEC_CODES.has(answer.code));
  const toolError = answer.code === undefined && /"isError":true/.test(answer.text);
  if (!refused && !toolError) throw new Error(`${what}: not refused (HTTP ${answer.status}): ${answer.text.slice(0, 300)}`);
}

async function openTasks(): Promise<number> {
  const { count } = await stack.temporal.workflowService.countWorkflowExecutions({
    namespace: 'default',
    query: `${PRINCIPAL_SEARCH_ATTRIBUTE} = '${principal}'`,
  });
  return Number(count ?? 0);
}

describe('hostile input', () => {
  test('malformed JSON-RPC, oversize and deeply nested bodies', async () => {
    for (const [what, body] of [
      ['not JSON', '{"jsonrpc": "2.0", "id": 1, "method": '],
      ['a bare string', '"tools/list"'],
      ['null', 'null'],
      ['a number', '42'],
      ['an empty batch', '[]'],
      ['a batch of junk', '[1, 2, 3]'],
      ['no jsonrpc', '{"id": 1, "method": "tools/list"}'],
      ['jsonrpc 1.0', '{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}'],
      ['a method that is a number', '{"jsonrpc": "2.0", "id": 1, "method": 7}'],
      ['nested arrays 400k deep', `${'['.repeat(400_000)}${']'.repeat(400_000)}`],
      [
        'nested params 100k deep',
        `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`,
      ],
      ['3 MiB', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(3 * 1024 * 1024) } })],
      ['a NUL-laden body', '\u0000\u0000{}'],
    ] as const) {
      expectRefused(await post(body), what);
      expectRefused(await post(body, { 'mcp-protocol-version': '2026-07-28' }), `${what} (2026-07-28)`);
    }
  });

  test('hostile ids, methods, task ids, cursors and ttl values, in both generations', async () => {
    const legacy = await session();
    const hugeId = 'i'.repeat(100_000);
    const badTaskIds: unknown[] = [
      7,
      null,
      {},
      [],
      '',
      '../../etc/passwd',
      "x' OR '1'='1",
      'ask-' + 'f'.repeat(5000),
      '\u0000',
      'ask-00000000-0000-4000-8000-000000000000',
    ];
    for (const taskId of badTaskIds) {
      for (const method of ['tasks/get', 'tasks/cancel', 'tasks/result'])
        expectRefused(await legacy(method, { taskId }), `${method} ${String(taskId).slice(0, 30)}`);
      for (const method of ['tasks/get', 'tasks/cancel', 'tasks/update']) {
        expectRefused(await mcp2026(method, { taskId, inputResponses: {} }), `2026 ${method} ${String(taskId).slice(0, 30)}`);
      }
    }
    for (const cursor of [7, {}, '', 'garbage', 'A'.repeat(100_000), Buffer.from('{"t":1e308,"id":"x"}').toString('base64url')]) {
      expectRefused(await legacy('tasks/list', { cursor }), `cursor ${String(cursor).slice(0, 20)}`);
    }
    for (const ttl of [-1, 1.5, '100', 1e308, {}, true]) {
      expectRefused(
        await legacy('tools/call', { name: askRequesterTool.name, arguments: askInput(), task: { ttl } }),
        `ttl ${String(ttl)}`,
      );
    }
    for (const id of [{ a: 1 }, [1], 1.5, hugeId, true]) {
      expectRefused(await legacy('tools/call', { name: 'nope', arguments: {} }, id), `id ${JSON.stringify(id).slice(0, 20)}`);
      expectRefused(await mcp2026('tools/call', { name: 'nope', arguments: {} }, id), `2026 id ${JSON.stringify(id).slice(0, 20)}`);
    }
    for (const method of ['', 'x'.repeat(100_000), 'tasks/../tools/call', '__proto__', 'constructor']) {
      expectRefused(await legacy(method, {}), `method ${method.slice(0, 20)}`);
      expectRefused(await mcp2026(method, {}), `2026 method ${method.slice(0, 20)}`);
    }
    // Headers that disagree with the body.
    expectRefused(
      await mcp2026('tasks/get', { taskId: 'ask-00000000-0000-4000-8000-000000000000' }, 1, { 'mcp-name': 'other' }),
      'Mcp-Name mismatch',
    );
    expectRefused(await mcp2026('tools/list', {}, 1, { 'mcp-method': 'tools/call' }), 'Mcp-Method mismatch');
  });

  test('hostile tool arguments and answers', async () => {
    const legacy = await session();
    const argumentSets: unknown[] = [
      null,
      'a string',
      [],
      // Each breaks one rule of ask_requester's schema (AskInputSchema).
      { ...askInput(), holdMs: 1.5 },
      { ...askInput(), subject: '' },
      { ...askInput(), subject: 'x'.repeat(201) },
      { ...askInput(), holdMs: '5\u0000; rm -rf /' },
      { ...askInput(), subject: 'x'.repeat(1_500_000) },
      { ...askInput(), holdMs: Number.MAX_VALUE },
      { ...askInput(), holdMs: -5 },
      { ...askInput(), refuse: ['a', 'list'] },
      JSON.parse('{"__proto__": {"polluted": true}, "subject": 1}'),
    ];
    for (const args of argumentSets) {
      expectRefused(
        await legacy('tools/call', { name: askRequesterTool.name, arguments: args, task: {} }),
        `task call ${JSON.stringify(args)?.slice(0, 40)}`,
      );
      expectRefused(
        await legacy('tools/call', { name: askRequesterTool.name, arguments: args }),
        `plain call ${JSON.stringify(args)?.slice(0, 40)}`,
      );
      expectRefused(
        await mcp2026('tools/call', { name: askRequesterTool.name, arguments: args }),
        `2026 call ${JSON.stringify(args)?.slice(0, 40)}`,
      );
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    for (const answer of [
      null,
      'accept',
      { action: 'maybe' },
      { action: 'accept', content: 'x' },
      { action: 'accept', content: { decision: 'approve'.repeat(100_000) } },
    ]) {
      expectRefused(
        await legacy('tools/call', {
          name: 'task_respond',
          arguments: { taskId: 'ask-00000000-0000-4000-8000-000000000000', ...(answer as object) },
        }),
        `task_respond ${JSON.stringify(answer)?.slice(0, 30)}`,
      );
      expectRefused(
        await mcp2026('tasks/update', { taskId: 'ask-00000000-0000-4000-8000-000000000000', inputResponses: { [QUESTION_KEY]: answer } }),
        `tasks/update ${JSON.stringify(answer)?.slice(0, 30)}`,
      );
    }
  });

  // Five servers started one after the other, each through npm and tsx: a minute or more on a busy machine.
  test('hostile tools files are refused at start with a message, and the server stays up for everyone else', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-bad-tools-'));
    const files: Record<string, string> = {
      'backtracking.yaml':
        'tools:\n  - name: t\n    workflowType: W\n    inputSchema: {type: object, properties: {a: {type: string, pattern: "^(a+)+$"}}}\n',
      'not-an-object.yaml': 'tools:\n  - name: t\n    workflowType: W\n    inputSchema: {type: string}\n',
      'aliases.yaml': `a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\ntools: []\n`,
      'bad-name.yaml': 'tools:\n  - name: "rm -rf"\n    workflowType: W\n    inputSchema: {type: object}\n',
      'garbage.json': '{"tools": [',
    };
    for (const [name, text] of Object.entries(files)) {
      tried++;
      writeFileSync(path.join(dir, name), text);
      const refused = await runServeToExit(stack.taskQueue, ['--no-samples', '--tools', path.join(dir, name)]);
      expect({ name, code: refused.code }).toEqual({ name, code: 2 });
      expect(refused.stderr).toMatch(new RegExp(name.replace('.', '\\.')));
    }
  }, 300_000);

  test('after all that the server answers, and Temporal holds only the one task asked for properly', async () => {
    const legacy = await session();
    const ok = await legacy('tools/list', {});
    expect(ok.status).toBe(200);
    expect(ok.code).toBeUndefined();
    const created = await legacy('tools/call', { name: askRequesterTool.name, arguments: askInput(), task: {} });
    expect(created.code).toBeUndefined();
    const taskId = /"taskId":"([^"]+)"/.exec(created.text)![1];
    // Visibility catches up: the one task appears, and nothing else ever did.
    await eventually(async () => ((await openTasks()) >= 1 ? true : undefined), 'the proper task counted');
    expect(await openTasks()).toBe(1);
    await stack.temporal.workflow.getHandle(taskId).terminate();
  });
});

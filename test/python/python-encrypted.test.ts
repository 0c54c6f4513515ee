/**
 * A Python workflow whose payloads are encrypted with the bridge's keys (examples/python/payload_codec.py): the Python
 * worker and the bridge share MCP_PAYLOAD_KEYS, each reads what the other wrote, and Temporal keeps only ciphertext.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { ROOT } from '../helpers/dev-server';
import { connectOverHttp, taskResult } from '../helpers/mcp';
import { spawnHttpServerOnFreePort, spawnPythonWorker, type HttpServerProcess, type SpawnedProcess } from '../helpers/processes';
import { pythonWorkerEnvironment } from '../helpers/python';
import { testAddress, uniqueTaskQueue } from '../helpers/temporal';

const pythonQueue = uniqueTaskQueue('python-encrypted');
const dir = mkdtempSync(path.join(os.tmpdir(), 'python-encrypted-'));
const keys = path.join(dir, 'payload-keys');
let worker: SpawnedProcess | undefined;
let server: HttpServerProcess | undefined;
let client: McpClient | undefined;

beforeAll(async () => {
  writeFileSync(keys, `py1 ${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  const declared = parseYaml(readFileSync(path.join(ROOT, 'examples/python/tools.yaml'), 'utf8')) as { tools: { taskQueue?: string }[] };
  for (const tool of declared.tools) tool.taskQueue = pythonQueue;
  const toolsFile = path.join(dir, 'tools.yaml');
  writeFileSync(toolsFile, stringifyYaml(declared));
  const started = await Promise.allSettled([
    pythonWorkerEnvironment()
      .then((python) => spawnPythonWorker(python, 'examples/python/worker.py', pythonQueue, { MCP_PAYLOAD_KEYS: keys }))
      .then((spawned) => (worker = spawned)),
    spawnHttpServerOnFreePort(uniqueTaskQueue('python-encrypted-server'), { MCP_PAYLOAD_KEYS: keys }, ['--tools', toolsFile]).then(
      (spawned) => (server = spawned),
    ),
  ]);
  const failed = started.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}, 300_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await Promise.all([server?.kill(), worker?.kill()]);
  rmSync(dir, { recursive: true, force: true });
});

test('request_purchase with MCP_PAYLOAD_KEYS: the bridge reads what the Python worker encrypted, and Temporal keeps ciphertext only', async () => {
  expect(worker!.stderr()).toContain('payloads encrypted with key py1');
  const item = `Walrus espresso machine ${randomUUID().slice(0, 8)}`;
  const connected = await connectOverHttp(server!.url, 'python-encrypted', {
    answer: () => ({ action: 'accept', content: { decision: 'approve', comment: 'Tapir fund' } }),
  });
  client = connected.client;
  const created = await client.request(
    { method: 'tools/call', params: { name: 'request_purchase', arguments: { item, amount: 777.31, requester: 'Ada' }, task: {} } },
    CreateTaskResultSchema,
  );
  const { taskId } = created.task;
  // The question the Python workflow published (its memo), decrypted by the bridge.
  const result = await taskResult(client, taskId);
  expect(connected.user.asked[0].message).toBe(`Approve buying ${item} for 777.31 EUR, requested by Ada?`);
  expect(result.structuredContent).toMatchObject({ item, amount: 777.31, approved: true, decision: 'approve', comment: 'Tapir fund' });

  const cli = execFileSync(path.join(ROOT, 'temporal-dev.sh'), ['cli-path'], { encoding: 'utf8' }).trim();
  const history = execFileSync(cli, ['workflow', 'show', '--address', testAddress(), '--workflow-id', taskId, '--output', 'json'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const keyIds = new Set(
    [...history.matchAll(/"encryption-key-id":\s*"([^"]+)"/g)].map((match) => Buffer.from(match[1], 'base64').toString()),
  );
  expect(keyIds).toEqual(new Set(['py1']));
  const decoded = [...history.matchAll(/"([A-Za-z0-9+/]{16,}={0,2})"/g)].map((match) => Buffer.from(match[1], 'base64').toString('latin1'));
  const readable = `${history}\n${decoded.join('\n')}`;
  for (const word of [item, '777.31', 'Tapir fund'])
    expect({ word, inHistory: readable.includes(word) }).toEqual({ word, inHistory: false });
}, 240_000);

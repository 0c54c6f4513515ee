/**
 * The baseline of the bench's poller rows: an MCP 2026-07-28 server with the tasks extension whose tasks live in a
 * Map in memory (nothing durable, no Temporal), built with the same SDK and served through the same HTTP glue as the
 * bridge. `tools/call` of `hold` creates a working task; `tasks/get` reads it.
 *
 *   node --import tsx scripts/lib/in-memory-tasks-server.ts --port P
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createMcpHandler, ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { sendWebResponse, toWebRequest } from '../../src/mcp/mcp2026/node-adapter';

const HELP = `Usage: node --import tsx scripts/lib/in-memory-tasks-server.ts --port P

An in-memory MCP 2026-07-28 task server (tasks extension) on http://127.0.0.1:P/mcp: tools/call of "hold" creates a
task that stays working, tasks/get reads it. The bench's baseline for the server's CPU per poll.
`;

const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

interface Task {
  taskId: string;
  status: 'working';
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
}

const tasks = new Map<string, Task>();

function makeServer(): Server {
  const server = new Server(
    { name: 'in-memory-tasks', version: '1.0.0' },
    { capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } } },
  );
  server.setRequestHandler('tools/list', async () => ({
    tools: [{ name: 'hold', description: 'Creates a task that stays working.', inputSchema: { type: 'object' } }] as never,
  }));
  server.setRequestHandler('tools/call', async () => {
    const now = new Date().toISOString();
    const task: Task = {
      taskId: randomUUID(),
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: 86_400_000,
      pollIntervalMs: 1000,
    };
    tasks.set(task.taskId, task);
    return { resultType: 'task', ...task } as never;
  });
  server.setRequestHandler('tasks/get', { params: z.looseObject({ taskId: z.string() }) }, async (params) => {
    const task = tasks.get(params.taskId);
    if (!task) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Task ${params.taskId} not found`);
    return task as never;
  });
  return server;
}

function main(argv: string[]): void {
  if (argv.includes('--help') || argv.includes('-h')) return void process.stdout.write(HELP);
  const index = argv.indexOf('--port');
  const port = Number(argv[index + 1]);
  if (index < 0 || !Number.isInteger(port) || port <= 0) throw new Error('--port P is required (a TCP port); see --help');
  const handler = createMcpHandler(() => makeServer(), { legacy: 'reject' });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      toWebRequest(req, res, body)
        .then((request) => handler.fetch(request, { parsedBody: body }))
        .then((response) => sendWebResponse(res, response))
        .catch((error: Error) => {
          process.stderr.write(`in-memory server: ${error.message}\n`);
          res.destroy();
        });
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(port, '127.0.0.1', () => process.stderr.write(`in-memory task server on http://127.0.0.1:${port}/mcp\n`));
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

try {
  main(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`in-memory server: ${(error as Error).message}\n`);
  process.exit(2);
}

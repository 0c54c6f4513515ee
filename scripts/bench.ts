/**
 * Benchmarks: npm run bench [-- --tasks N] [-- --help]
 *
 * Starts its own dev server, runs a worker and the bridge in this process with an in-memory MCP client, and prints
 * latencies of the task operations and the throughput of the payments ledger. Figures, not assertions.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { PaymentsLedger } from '../src/activities/payments';
import { freePort } from './lib/processes';
import { createBridge } from '../src/mcp/bridge';
import { sleep } from '../src/util/wait';
import { createInvoiceWorker } from '../src/worker';

const ROOT = path.resolve(__dirname, '..');

const HELP = `Usage: npm run bench [-- --tasks N] [-- --help]

Prints latency percentiles of tools/call (task creation), tasks/get, tasks/list and tasks/cancel against a dev
server it starts itself, the payments ledger's throughput, and the process's memory. --tasks sets how many tasks
are created (default 100).
`;

function percentiles(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  return `p50 ${at(50).toFixed(1)} ms  p95 ${at(95).toFixed(1)} ms  max ${sorted[sorted.length - 1].toFixed(1)} ms  (n=${samples.length})`;
}

async function timed<T>(samples: number[], work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  samples.push(performance.now() - started);
  return result;
}

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return;
  }
  const at = argv.indexOf('--tasks');
  const count = at >= 0 ? Number(argv[at + 1]) : 100;
  if (!Number.isInteger(count) || count < 1) throw new Error('--tasks needs a whole number above 0');

  const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-bench-'));
  const port = await freePort();
  const devEnv = { ...process.env, TEMPORAL_PORT: String(port), TEMPORAL_STATE_DIR: dir, TEMPORAL_HEADLESS: '1', TEMPORAL_DB_FILE: '' };
  const dev = (command: string) => {
    const run = spawnSync(path.join(ROOT, 'temporal-dev.sh'), [command], { env: devEnv, stdio: ['ignore', 'ignore', 'inherit'] });
    if (run.status !== 0) throw new Error(`./temporal-dev.sh ${command} failed`);
  };
  dev('start');
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const address = `127.0.0.1:${port}`;
  const taskQueue = 'bench';
  const nativeConnection = await NativeConnection.connect({ address });
  const worker = await createInvoiceWorker({
    connection: nativeConnection,
    namespace: 'default',
    taskQueue,
    activities: {
      ledgerDir: path.join(dir, 'payments'),
      erpRegistryDir: path.join(dir, 'erp'),
      erpDelayMs: 0,
      paymentDelayMs: 0,
      paymentFailAttempts: 0,
    },
  });
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const bridge = await createBridge({ temporal: { address, namespace: 'default', taskQueue, connectionOptions: { address } }, client });
  const mcp = new McpClient({ name: 'bench', version: '1' }, { capabilities: { tasks: {} } });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await bridge.createServer().connect(serverSide);
  await mcp.connect(clientSide);

  try {
    const line = (label: string, figures: string) => process.stdout.write(`${label.padEnd(34)} ${figures}\n`);
    const create: number[] = [];
    const ids: string[] = [];
    const started = performance.now();
    for (let i = 0; i < count; i++) {
      const invoice = {
        vendorId: 'V-100',
        invoiceNumber: `INV-B${i}-${port}`,
        currency: 'EUR',
        lineItems: [{ lineItemId: 'LI-1', description: 'x', amount: 1 }],
      };
      const { task } = await timed(create, () =>
        mcp.request({ method: 'tools/call', params: { name: 'process_invoice', arguments: invoice, task: {} } }, CreateTaskResultSchema),
      );
      ids.push(task.taskId);
    }
    line(
      `tools/call (task creation) x${count}`,
      `${percentiles(create)}  ${(count / ((performance.now() - started) / 1000)).toFixed(1)} tasks/s`,
    );

    // Wait until every task asks for approval, then read them.
    for (const id of ids) {
      for (;;) {
        const task = await mcp.experimental.tasks.getTask(id);
        if (task.status === 'input_required') break;
        await sleep(50);
      }
    }
    const get: number[] = [];
    for (const id of ids) await timed(get, () => mcp.experimental.tasks.getTask(id));
    line('tasks/get (input_required)', percentiles(get));

    const list: number[] = [];
    for (let i = 0; i < 10; i++) {
      await timed(list, async () => {
        let cursor: string | undefined;
        do cursor = (await mcp.experimental.tasks.listTasks(cursor)).nextCursor;
        while (cursor);
      });
    }
    line(`tasks/list, all pages of ${count}`, percentiles(list));

    const cancel: number[] = [];
    for (const id of ids) await timed(cancel, () => mcp.experimental.tasks.cancelTask(id));
    line('tasks/cancel', percentiles(cancel));
    const getCancelled: number[] = [];
    for (const id of ids) await timed(getCancelled, () => mcp.experimental.tasks.getTask(id));
    line('tasks/get (cancelled)', percentiles(getCancelled));

    const ledger = new PaymentsLedger(path.join(dir, 'ledger-bench.jsonl'));
    const payments = 500;
    const payStarted = performance.now();
    await Promise.all(
      Array.from({ length: payments }, (_, i) =>
        ledger.pay({ taskId: `t${i % 50}`, vendorId: 'V', invoiceNumber: 'I', currency: 'EUR', lineItemId: `LI-${i}`, amount: 1 }),
      ),
    );
    const seconds = (performance.now() - payStarted) / 1000;
    line(
      `ledger: ${payments} payments, 1 file`,
      `${(payments / seconds).toFixed(0)} payments/s (fsync each; reads the file under the lock)`,
    );
    const memory = process.memoryUsage();
    line(
      'memory (bench process: worker+bridge)',
      `rss ${(memory.rss / 2 ** 20).toFixed(0)} MiB, heap used ${(memory.heapUsed / 2 ** 20).toFixed(0)} MiB`,
    );
  } finally {
    await mcp.close();
    worker.shutdown();
    await running;
    await nativeConnection.close();
    await connection.close();
    dev('stop');
    rmSync(dir, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).catch((error: Error) => {
  process.stderr.write(`bench: ${error.message}\n`);
  process.exit(1);
});

/**
 * A worker of the bench's hold workflow alone (./hold-workflow.ts), on TEMPORAL_ADDRESS:
 * `node --import tsx scripts/lib/hold-worker.ts TASK_QUEUE`. Says "hold worker: polling" on stderr once it polls. With
 * MCP_PAYLOAD_KEYS, its payloads are encrypted as the bridge's.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { dataConverterFromEnv } from '../../src/shared/payload-codec';

async function main(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS;
  const taskQueue = process.argv[2];
  if (!address || !taskQueue) throw new Error('usage: TEMPORAL_ADDRESS=HOST:PORT node --import tsx scripts/lib/hold-worker.ts TASK_QUEUE');
  const dataConverter = dataConverterFromEnv();
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    ...(dataConverter && { dataConverter }),
    connection,
    namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
    taskQueue,
    workflowsPath: require.resolve('./hold-workflow'),
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
  process.stderr.write(`hold worker: polling ${taskQueue}\n`);
  await worker.run();
  await connection.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`hold worker: ${(error as Error).message}\n`);
  process.exit(1);
});

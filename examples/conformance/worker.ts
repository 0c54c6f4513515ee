/**
 * Runs the conformance fixture workflows on their own task queue (`conformance`, or CONFORMANCE_TASK_QUEUE).
 * Usage: node --import tsx examples/conformance/worker.ts [--help]
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { createAnswerActivities } from '../../src/shared/answer-proof';
import { temporalConfigFromEnv } from '../../src/shared/temporal-config';

const HELP = `Usage: node --import tsx examples/conformance/worker.ts [--help]

Runs the workflows behind examples/conformance/tools.yaml until SIGINT or SIGTERM.
Environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE as for the main worker; CONFORMANCE_TASK_QUEUE (default "conformance").
`;

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) return void process.stdout.write(HELP);
  const config = temporalConfigFromEnv();
  const taskQueue = process.env.CONFORMANCE_TASK_QUEUE ?? 'conformance';
  const connection = await NativeConnection.connect(config.connectionOptions);
  const worker = await Worker.create({
    connection,
    namespace: config.namespace,
    taskQueue,
    workflowsPath: require.resolve('./workflows'),
    activities: createAnswerActivities(),
  });
  console.error(`conformance worker: polling task queue "${taskQueue}" on ${config.address}`);
  process.once('SIGINT', () => worker.shutdown());
  process.once('SIGTERM', () => worker.shutdown());
  await worker.run();
  await connection.close();
}

main(process.argv.slice(2)).catch((error: Error) => {
  console.error(`conformance worker: ${error.message}`);
  process.exit(1);
});

/**
 * Runs the conformance fixture workflows on their own task queue (`conformance`, or CONFORMANCE_TASK_QUEUE).
 * Usage: node --import tsx examples/conformance/worker.ts [--help]
 */
import { runTaskWorker } from 'temporal-mcp-tasks';

const HELP = `Usage: node --import tsx examples/conformance/worker.ts [--help]

Runs the workflows behind examples/conformance/tools.yaml until SIGINT or SIGTERM.
Environment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE as for the main worker; CONFORMANCE_TASK_QUEUE (default "conformance").
`;

if (process.argv.includes('--help') || process.argv.includes('-h')) process.stdout.write(HELP);
else {
  runTaskWorker({ taskQueue: process.env.CONFORMANCE_TASK_QUEUE ?? 'conformance', workflowsPath: require.resolve('./workflows') }).catch(
    (error: Error) => {
      console.error(`conformance worker: ${error.message}`);
      process.exit(1);
    },
  );
}

/**
 * npm run drill [-- --quick] [-- --help]: the fault drill's command line. See scripts/drill/drill.ts.
 */
import { formatMatrix, FULL_CELLS, QUICK_CELLS, runDrill } from './drill';

const HELP = `Usage: npm run drill [-- --quick] [-- --help]

Kills parts of the system with SIGKILL at four moments of the invoice flow (before approval is asked, while the
approval elicitation is in flight, during payments, while a scheduled payment's timer waits), restarts them, and
checks that every run ends completed and paid, each line item paid once in the ledger, the approval asked once.
Victims: the client, the MCP server, the worker, the Temporal dev server, and all of them at once.

  --quick   the reduced matrix that npm test runs (${QUICK_CELLS.length} cells instead of ${FULL_CELLS.length})

It starts its own dev server, worker and MCP server in a temporary folder. When every cell passes the folder is
removed; when one fails it is kept, and its path printed: logs/ holds the server's and the worker's logs (with a
marker line at the start of each cell), each cell's folder its client's and operator's logs and client store, and
dev-<port>.log the dev server's log.
Exit code 0 when every cell passes, 1 otherwise.
`;

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  process.stdout.write(HELP);
  process.exit(0);
}
const unknown = argv.find((arg) => arg !== '--quick');
if (unknown) {
  process.stderr.write(`drill: unknown argument "${unknown}"; see --help\n`);
  process.exit(2);
}
const cells = argv.includes('--quick') ? QUICK_CELLS : FULL_CELLS;
runDrill(cells, (line) => process.stderr.write(`${line}\n`)).then(
  ({ results, keptDir }) => {
    process.stdout.write(`${formatMatrix(results)}\n`);
    const failed = results.filter((r) => !r.ok);
    for (const r of failed) process.stdout.write(`FAIL ${r.moment} × ${r.victim}: ${r.problems.join('; ')}\n`);
    if (keptDir) process.stdout.write(`drill: logs of every process are kept in ${keptDir}\n`);
    process.stdout.write(`drill: ${results.length - failed.length} passed, ${failed.length} failed\n`);
    process.exit(failed.length === 0 ? 0 : 1);
  },
  (error: Error) => {
    process.stderr.write(`drill: ${error.stack ?? error.message}\n`);
    process.exit(1);
  },
);

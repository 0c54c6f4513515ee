/**
 * npm run drill [-- --quick | --cells LIST] [-- --repeat N] [-- --help]: the fault drill's command line. See
 * scripts/drill/drill.ts.
 */
import { formatMatrix, FULL_CELLS, MOMENTS, QUICK_CELLS, runDrill, VICTIMS, type DrillCell } from './drill';

const HELP = `Usage: npm run drill [-- --quick | --cells MOMENT:VICTIM[,...]] [-- --repeat N] [-- --help]

Kills parts of the system with SIGKILL at four moments of the invoice flow (before approval is asked, while the
approval elicitation is in flight, during payments, while a scheduled payment's timer waits), restarts them, and
checks that every run ends completed and paid, each line item paid once in the ledger, the approval asked once, and
the restarted client reads the task it was told about (never "not found").
Victims: the client, the MCP server, the worker, the Temporal dev server, and all of them at once.

  --quick        the reduced matrix that npm test runs (${QUICK_CELLS.length} cells instead of ${FULL_CELLS.length})
  --cells LIST   only these cells, e.g. approval-in-flight:all,timer-wait:temporal
                 (moments: ${MOMENTS.join(', ')};
                 victims: ${VICTIMS.join(', ')})
  --repeat N     run the chosen cells N times over (default 1), e.g. --cells approval-in-flight:all --repeat 20

It starts its own dev server, worker and MCP server in a temporary folder. When every cell passes the folder is
removed; when one fails it is kept, and its path printed: logs/ holds the server's and the worker's logs (with a
marker line at the start of each cell), each cell's folder its client's and operator's logs and client store, and
dev-<port>.log the dev server's log.
Exit code 0 when every cell passes, 1 when one fails, 2 for a usage error.
`;

const usage = (message: string): never => {
  process.stderr.write(`drill: ${message}; see --help\n`);
  process.exit(2);
};

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  process.stdout.write(HELP);
  process.exit(0);
}
let chosen: DrillCell[] = FULL_CELLS;
let repeat = 1;
for (let index = 0; index < argv.length; index++) {
  const arg = argv[index];
  if (arg === '--quick') chosen = QUICK_CELLS;
  else if (arg === '--cells') chosen = parseCells(argv[++index] ?? usage('--cells needs a list of MOMENT:VICTIM'));
  else if (arg === '--repeat') {
    repeat = Number(argv[++index]);
    if (!Number.isInteger(repeat) || repeat < 1 || repeat > 1000) usage('--repeat needs a whole number from 1 to 1000');
  } else usage(`unknown argument "${arg}"`);
}
const cells = Array.from({ length: repeat }, () => chosen).flat();

function parseCells(list: string): DrillCell[] {
  return list.split(',').map((item) => {
    const [moment, victim] = item.trim().split(':');
    if (!(MOMENTS as readonly string[]).includes(moment)) usage(`"${moment}" is not a moment (${MOMENTS.join(', ')})`);
    if (!(VICTIMS as readonly string[]).includes(victim)) usage(`"${victim}" is not a victim (${VICTIMS.join(', ')})`);
    return { moment, victim } as DrillCell;
  });
}

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

/**
 * npm run soak -- --minutes M --concurrency C [--kill-every S] [--cluster [--fault-gap S | --no-network-faults]]: the
 * soak's command line. See scripts/soak/soak.ts.
 */
import { formatSoak, runSoak } from './soak';

const HELP = `Usage: npm run soak -- [--minutes M] [--concurrency C] [--kill-every S] [--cluster [--fault-gap S | --no-network-faults]] [--help]

Keeps C invoices in flight for M minutes, submitted through the CLI client by a submitter with a token of its own
(every other one with a line item months out that the submitter releases), while SIGKILLing a random victim every S
seconds (a client, the MCP server, the worker, the Temporal dev server, or all of them) and restarting it. Approvers
other than the submitter (three holders of the role ap-approver; two with --cluster, its approver-a and approver-b),
each an MCP client over Streamable HTTP, poll approvals_inbox and approve with approvals_answer, sending a call again
on a fresh connection when a kill cuts it; every other pair of invoices is above the workers'
INVOICE_SECOND_APPROVER_ABOVE and needs two of them. The MCP servers and the workers share a decision store in the
soak's folder (MCP_DECISION_STORE), the signed records of those answers. Then checks the books:
every invoice paid with each line item once, approved by as many distinct approvers as it needs (never the
submitter, nobody twice, no answer an approver saw taken missing), nobody asked the same question twice, no workflow
that no client knows.

  --minutes M       how long new invoices are started (default 10)
  --concurrency C   invoices in flight at once (default 8)
  --kill-every S    seconds between kills (default 20)
  --cluster         on the production-shaped stack of npm run cluster (its own, in a temporary folder): Temporal's
                    server on PostgreSQL, two frontends, two workers and two MCP replicas behind HAProxy; the victims
                    are a client, an MCP replica, a worker, a Temporal frontend, the history or the matching service,
                    or PostgreSQL (restarted). Toxiproxy stands between the MCP replicas and Temporal's frontends
                    and between Temporal's services and PostgreSQL, and faults of the network come beside the kills:
                    latency, a slow link, resets or a partition, on one of the two links, for 10–60 s each
  --fault-gap S     with --cluster: seconds of whole links between two faults of the network (default 30)
  --no-network-faults  with --cluster: no Toxiproxy, kills only

Prints tasks, kills and recovery time (from the restart until every task in flight at the kill has moved on) p50/max
per victim; the faults of the network by kind; the approvals, those sent again after a lost reply (recorded on the
retry, or refused as answered already because the lost one had been taken: neither is a problem) and the decision
records; then lost, paid twice, asked twice, answered twice, wrong approvers, orphans, client errors, and approvers'
requests that had no reply by their deadline (20 s for the inbox, 45 s for an answer, 15 s to connect). It starts its
own stack in a temporary folder, removed when everything checks out and kept (with every process's log) otherwise.
Exit code 0 when nothing is wrong, 1 otherwise, 2 for a bad command line.
`;

function parse(argv: string[]): {
  minutes: number;
  concurrency: number;
  killEverySeconds: number;
  faultGapSeconds: number;
  stack: 'dev' | 'cluster';
} {
  const options = { minutes: 10, concurrency: 8, killEverySeconds: 20, faultGapSeconds: 30 };
  const stack = argv.includes('--cluster') ? 'cluster' : 'dev';
  const noFaults = argv.includes('--no-network-faults');
  if (stack === 'dev' && (noFaults || argv.includes('--fault-gap'))) {
    throw new Error('faults of the network need the cluster (Toxiproxy between its parts): add --cluster');
  }
  argv = argv.filter((arg) => arg !== '--cluster' && arg !== '--no-network-faults');
  const flags: Record<string, keyof typeof options> = {
    '--minutes': 'minutes',
    '--concurrency': 'concurrency',
    '--kill-every': 'killEverySeconds',
    '--fault-gap': 'faultGapSeconds',
  };
  for (let i = 0; i < argv.length; i++) {
    const name = flags[argv[i]];
    if (!name) throw new Error(`unknown argument "${argv[i]}"; see --help`);
    const value = Number(argv[++i]);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`${argv[i - 1]} needs a number above 0, not "${argv[i] ?? ''}"`);
    options[name] = name === 'minutes' ? value : Math.round(value);
  }
  if (noFaults && argv.includes('--fault-gap')) throw new Error('--fault-gap and --no-network-faults contradict each other');
  return { ...options, faultGapSeconds: stack === 'cluster' && !noFaults ? options.faultGapSeconds : 0, stack };
}

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  process.stdout.write(HELP);
  process.exit(0);
}
let options: ReturnType<typeof parse>;
try {
  options = parse(argv);
} catch (error) {
  process.stderr.write(`soak: ${(error as Error).message}\n`);
  process.exit(2);
}
runSoak({ ...options, log: (line) => process.stderr.write(`${line}\n`) }).then(
  (report) => {
    process.stdout.write(`${formatSoak(report)}\n`);
    for (const problem of report.problems) process.stdout.write(`PROBLEM ${problem}\n`);
    if (report.keptDir) process.stdout.write(`soak: logs of every process are kept in ${report.keptDir}\n`);
    process.exit(report.problems.length === 0 ? 0 : 1);
  },
  (error: Error) => {
    process.stderr.write(`soak: ${error.stack ?? error.message}\n`);
    process.exit(1);
  },
);

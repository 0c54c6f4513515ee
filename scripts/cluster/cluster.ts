/**
 * The production-shaped stack on one machine: npm run cluster -- up|down|status [--help]
 */
import path from 'node:path';
import { BRIDGE_PROCESSES, ClusterStack, SERVER_VERSION, TEMPORAL_SERVICES, UI_VERSION } from './stack';
import { TOXIPROXY_VERSION } from '../lib/toxiproxy';
import { ROOT } from '../lib/processes';

const HELP = `Usage: npm run cluster -- <up|down|status> [--network-faults] [--purge] [--help]

A production-shaped stack on this machine, every part a process of its own:
  - PostgreSQL (Debian's package; installed with apt-get when missing) holding Temporal's persistence and
    visibility, both applied by Temporal's own SQL tool;
  - Temporal's server ${SERVER_VERSION}, built once with 'go install' into the cache beside the CLI: two frontends,
    history, matching and the worker service, from scripts/cluster/config/cluster.yaml;
  - the namespace "default" (retention 72 h) and the search attributes McpPrincipal, McpAwaiting and McpChangedAt, registered
    through the frontends' operator API;
  - Temporal's Web UI server ${UI_VERSION} (built the same way), which the replicas' task links point at;
  - HAProxy (installed with apt-get when missing) in front of the frontends (gRPC) and of two MCP server replicas
    (HTTP; 2025-11-25 sessions stay on their replica by the Mcp-Session-Id header);
  - two workers and two MCP server replicas sharing the marker and request-state keys and a token file.

Commands:
  up       start what is not running (builds and installs what is missing first); idempotent. With
           --network-faults, Toxiproxy ${TOXIPROXY_VERSION} (built with 'go install' into the cache) sits between the
           replicas and Temporal's balancer and between Temporal and PostgreSQL, its API on CLUSTER_BASE_PORT +95,
           for faults of the network injected by hand through Toxiproxy's HTTP API; the stack stays that way
           until it is stopped
  status   one line per part: running or not, and where
  down     stop every part, PostgreSQL last; --purge also removes the stack's folder (data, logs, keys)

Environment:
  CLUSTER_DIR        the stack's folder (default .cluster in the checkout): data, logs, pids, keys, token file
  CLUSTER_BASE_PORT  ports are counted from it (default 17000): PostgreSQL +1, Temporal (balancer) +33,
                     Web UI +40, MCP (balancer) +80, replicas +81 and +82, HAProxy stats +90, services +101..+105
The token file (<CLUSTER_DIR>/tokens) holds the principals submitter, approver-a and approver-b (ap-approver).
`;

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h') || argv.length === 0) {
    process.stdout.write(HELP);
    if (argv.length === 0) process.exitCode = 2;
    return;
  }
  const [command, ...rest] = argv;
  const allowed = (arg: string) => (arg === '--purge' && command === 'down') || (arg === '--network-faults' && command === 'up');
  const unknown = rest.find((arg) => !allowed(arg));
  if (unknown) throw new Error(`unknown argument "${unknown}"; see --help`);
  const basePort = Number(process.env.CLUSTER_BASE_PORT ?? 17000);
  if (!Number.isInteger(basePort) || basePort < 1024 || basePort > 65000) {
    throw new Error(`CLUSTER_BASE_PORT must be a whole number from 1024 to 65000, not "${process.env.CLUSTER_BASE_PORT}"`);
  }
  const stack = new ClusterStack({
    dir: process.env.CLUSTER_DIR ?? path.join(ROOT, '.cluster'),
    basePort,
    ...(rest.includes('--network-faults') && { networkFaults: true }),
  });
  switch (command) {
    case 'up':
      await stack.up();
      process.stdout.write(
        `MCP endpoint   ${stack.mcpUrl} (tokens in ${stack.tokensFile})\nTemporal       ${stack.temporalAddress}\n` +
          `Web UI         ${stack.webUiUrl}\n` +
          `HAProxy stats  http://127.0.0.1:${stack.ports.haproxyStats}/\nlogs           ${path.join(stack.dir, 'logs')}\n`,
      );
      return;
    case 'down':
      await stack.down(rest.includes('--purge'));
      return;
    case 'status': {
      const rows = await stack.status();
      for (const row of rows) process.stdout.write(`${row.part.padEnd(16)} ${row.running ? 'running' : 'stopped'}  ${row.detail}\n`);
      // PostgreSQL, HAProxy and the Web UI (and Toxiproxy), besides the services and the bridge's processes.
      const expected = (stack.networkFaults ? 4 : 3) + TEMPORAL_SERVICES.length + BRIDGE_PROCESSES.length;
      process.exitCode = rows.filter((row) => row.running).length === expected ? 0 : 1;
      return;
    }
    default:
      throw new Error(`unknown command "${command}"; use up, down or status (see --help)`);
  }
}

main(process.argv.slice(2)).catch((error: Error) => {
  process.stderr.write(`cluster: ${error.message}\n`);
  process.exit(1);
});

/**
 * The `temporal-mcp-tasks` command: the server, the worker, the client and the dev server behind one name.
 * Usage: temporal-mcp-tasks <serve|worker|client|approvals|codec-server|dev-server> [options]; each takes --help.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { PACKAGE_VERSION } from './version';

const HELP = `Usage: temporal-mcp-tasks <command> [options]

Temporal workflows served as MCP tasks.

Commands:
  serve        the MCP server: stdio, or Streamable HTTP with --http HOST:PORT (--tools FILE adds declared workflows,
               --samples the sample tools of a checkout)
  worker       a Temporal worker of your workflows and activities (--workflows, --activities) with the bridge's
               own activities
  client       the task-aware MCP client: call a tool as a task, list, resume, answer and cancel tasks
  approvals    verify the signed decision records of a task's approvals, or an exported receipt, offline with
               the bridge's public key (approvals verify TASK, approvals verify --receipt FILE); make an approver's
               own key and sign a decision with it (approvals keygen, approvals sign)
  codec-server the codec endpoint of Temporal's Web UI and CLI for payloads encrypted with MCP_PAYLOAD_KEYS
               (--http HOST:PORT), for the people it authorizes
  dev-server   a local Temporal dev server for trying it out (run, start, stop, status)

Options:
  -v, --version   print the version
  -h, --help      show this help

Every command takes --help, e.g. temporal-mcp-tasks serve --help.
`;

/** The packaged dev server script: one folder above the compiled (or source) module. */
const DEV_SERVER_SCRIPT = path.join(__dirname, '..', 'temporal-dev.sh');

/**
 * Runs `temporal-dev.sh` with `argv`. Its state (SQLite file, log, pid) goes to `.temporal/` in the current folder
 * unless TEMPORAL_STATE_DIR says otherwise, never into the installed package. Exits with the script's exit code.
 */
function runDevServer(argv: string[]): void {
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
    process.stdout.write(`${PACKAGE_VERSION}\n`);
    return;
  }
  const child = spawn('bash', [DEV_SERVER_SCRIPT, ...argv], {
    stdio: 'inherit',
    env: {
      ...process.env,
      TEMPORAL_STATE_DIR: process.env.TEMPORAL_STATE_DIR || path.resolve('.temporal'),
      TEMPORAL_DEV_COMMAND: 'temporal-mcp-tasks dev-server',
    },
  });
  // Ctrl-C reaches the script through the terminal, so this process only waits for it to finish; a SIGTERM sent to
  // this process alone is passed on.
  const ignore = () => undefined;
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', ignore);
  process.on('SIGTERM', forward);
  child.once('error', (error) => {
    console.error(`dev-server: cannot run ${DEV_SERVER_SCRIPT} with bash: ${error.message}`);
    process.exit(1);
  });
  child.once('exit', (code, signal) => {
    process.off('SIGINT', ignore);
    process.off('SIGTERM', forward);
    process.exit(code ?? 128 + (signal ? os.constants.signals[signal] : 0));
  });
}

/** Runs the command line; the command it names takes the rest of it. */
export function runCommandLine(argv: string[]): void {
  const [command, ...rest] = argv;
  // Each command is loaded only when it runs: the client needs none of the server's modules, and so on.
  switch (command) {
    case 'serve':
      return (require('./mcp/serve/main') as typeof import('./mcp/serve/main')).runServeCommand(rest);
    case 'worker':
      return (require('./worker') as typeof import('./worker')).runWorkerCommand(rest);
    case 'client':
      return (require('./client/main') as typeof import('./client/main')).runClientCommand(rest);
    case 'approvals':
      return (require('./records/cli') as typeof import('./records/cli')).runApprovalsCommand(rest);
    case 'codec-server':
      return (require('./codec/main') as typeof import('./codec/main')).runCodecServerCommand(rest);
    case 'dev-server':
      return runDevServer(rest);
    case '-v':
    case '--version':
      process.stdout.write(`${PACKAGE_VERSION}\n`);
      return;
    case '-h':
    case '--help':
      process.stdout.write(HELP);
      return;
    case undefined:
      process.stderr.write(HELP);
      process.exitCode = 2;
      return;
    default:
      process.stderr.write(`temporal-mcp-tasks: unknown command "${command}"; see --help\n`);
      process.exitCode = 2;
  }
}

if (require.main === module) runCommandLine(process.argv.slice(2));

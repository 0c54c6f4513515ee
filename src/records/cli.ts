/**
 * `temporal-mcp-tasks approvals`: the auditor's command. Verifies a task's decision records in the decision store, or
 * an exported receipt, offline with the bridge's public key alone (no Temporal, no bridge).
 */
import { APPROVALS_EXIT, ApprovalsUsageError, type CommandOutput } from './command-line';
import { keygenCommand } from './keygen-command';
import { signCommand } from './sign-command';
import { verifyCommand } from './verify-command';
import { escapeControls } from '../util/log';

/** The --help text of `approvals`. */
const APPROVALS_HELP = `Usage: temporal-mcp-tasks approvals <command> [options]

Checks the signed decision records of approvals, offline, with the bridge's public key alone.

Commands:
  verify   verify the decision records of a task (in the decision store), or an exported receipt
  keygen   make an approver's own Ed25519 key: the private key to a file, the public key for the directory
  sign     sign a decision with an approver's own key, for approvals_answer's signature

Options:
  -h, --help   show this help

Each command takes --help, e.g. temporal-mcp-tasks approvals verify --help.
`;

const STD: CommandOutput = { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) };

/** Runs `approvals …` and resolves to its exit code. */
export async function runApprovalsCli(argv: string[], io: CommandOutput = STD): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case '-h':
      case '--help':
        io.out(APPROVALS_HELP);
        return APPROVALS_EXIT.valid;
      case undefined:
        io.err(APPROVALS_HELP);
        return APPROVALS_EXIT.usage;
      case 'verify':
        return await verifyCommand(rest, io);
      case 'keygen':
        return keygenCommand(rest, io);
      case 'sign':
        return signCommand(rest, io);
      default:
        throw new ApprovalsUsageError(`unknown command "${command}"; see temporal-mcp-tasks approvals --help`);
    }
  } catch (error) {
    // Bad usage, a key that cannot be used, a store that cannot be read: the records were not checked.
    io.err(`approvals: ${escapeControls((error as Error).message)}\n`);
    return APPROVALS_EXIT.usage;
  }
}

/** Runs `approvals …` and sets the process's exit code (`temporal-mcp-tasks approvals`). */
export function runApprovalsCommand(argv: string[]): void {
  void runApprovalsCli(argv).then((code) => {
    process.exitCode = code;
  });
}

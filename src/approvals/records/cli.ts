/**
 * `temporal-mcp-tasks approvals`: the auditor's command. Verifies a task's decision records in the decision store, or
 * an exported receipt, offline with the bridge's public key alone (no Temporal, no bridge).
 */
import { lstatSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { subjectLines } from './subject-text';
import { escapeControls } from '../../util/log';
import { decisionPublicKeysFromEnv, DecisionKeyError, publicKeysFromFiles, type DecisionPublicKeys } from './keys';
import { exportReceipt, verifyReceipt, type QuestionReport, type ReceiptReport } from './receipt';
import { decisionStoreFromEnv, openDecisionStore } from './store';

/** Exit codes of the command. */
export const APPROVALS_EXIT = { valid: 0, invalid: 1, usage: 2, notApproved: 3 } as const;

export const APPROVALS_HELP = `Usage: temporal-mcp-tasks approvals <command> [options]

Checks the signed decision records of approvals, offline, with the bridge's public key alone.

Commands:
  verify   verify the decision records of a task (in the decision store), or an exported receipt

Options:
  -h, --help   show this help

See temporal-mcp-tasks approvals verify --help.
`;

export const VERIFY_HELP = `Usage: temporal-mcp-tasks approvals verify TASK [--store DIR|URL] [--public-key FILE[,FILE]] [--export FILE] [--json]
       temporal-mcp-tasks approvals verify --receipt FILE [--public-key FILE[,FILE]] [--json]

Verifies the decision records of task TASK as the decision store holds them, or a receipt exported before: every
record belongs to the task, the chain is whole and in order, each digest matches its record, each signature is valid
under the public key, and each subject digest matches what was shown. Then reports each question: the subject shown,
each decision (who, in which role, when, by which path) and whether it stands approved by distinct people with no
rejection on record. Needs neither Temporal nor the bridge.

Options:
  --store DIR|URL           the decision store: a directory or a postgres:// URL (default MCP_DECISION_STORE, else
                            .data/decisions in the current folder)
  --public-key FILE[,FILE]  the bridge's decision public key(s), SPKI PEM, comma-separated (default
                            MCP_DECISION_PUBLIC_KEY, else ~/.config/temporal-mcp-tasks/decision-signing-key.pub.pem)
  --export FILE             also write the task's records to FILE as a receipt, to verify later with --receipt
  --receipt FILE            verify this receipt instead of the store
  --json                    print the report as JSON
  -h, --help                show this help

A question stands approved only when the bridge's signed close record says it closed approved, with as many distinct
approvals as it required on record: records that end before their question's close (still open, or cut) are never
read as approved.

Exit status:
  0  the records verify, and every question on record stands approved
  1  they do not verify (a record altered, missing, moved or forged), or there are none
  2  the command could not check them: a usage error, a key or receipt file that cannot be read, a store that cannot
     be reached; the message says what to do
  3  the records verify, and a question does not stand approved: rejected, declined, expired, or open (not closed, or
     the records end early)
`;

/** Thrown for a command line or a setting that does not allow the check; exit 2. */
export class ApprovalsUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ApprovalsUsageError';
  }
}

/** Where the command writes. */
export interface CommandOutput {
  out(text: string): void;
  err(text: string): void;
}

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

async function verifyCommand(argv: string[], io: CommandOutput): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        store: { type: 'string' },
        'public-key': { type: 'string' },
        export: { type: 'string' },
        receipt: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new ApprovalsUsageError(`${(error as Error).message}; see temporal-mcp-tasks approvals verify --help`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(VERIFY_HELP);
    return APPROVALS_EXIT.valid;
  }
  const see = 'see temporal-mcp-tasks approvals verify --help';
  if (positionals.length > 1) throw new ApprovalsUsageError(`verify takes one task id, not ${positionals.length}; ${see}`);
  const taskId = positionals[0];
  if (values.receipt !== undefined) {
    if (taskId !== undefined) throw new ApprovalsUsageError(`give a task id or --receipt FILE, not both; ${see}`);
    if (values.store !== undefined) throw new ApprovalsUsageError(`--store has no use with --receipt: a receipt holds its records; ${see}`);
    if (values.export !== undefined)
      throw new ApprovalsUsageError(`--export has no use with --receipt: the receipt is exported already; ${see}`);
  } else if (taskId === undefined || taskId.trim() === '') {
    throw new ApprovalsUsageError(`give the task id to verify, or --receipt FILE; ${see}`);
  }
  for (const [name, value] of Object.entries({
    store: values.store,
    'public-key': values['public-key'],
    export: values.export,
    receipt: values.receipt,
  })) {
    if (value !== undefined && value.trim() === '') throw new ApprovalsUsageError(`--${name} needs a value; ${see}`);
  }
  const keys = keysOf(values['public-key']);

  let report: ReceiptReport;
  let source: string;
  if (values.receipt !== undefined) {
    source = `the receipt ${values.receipt}`;
    report = verifyReceipt(readReceipt(values.receipt), keys);
  } else {
    const store = values.store !== undefined ? openDecisionStore(values.store) : decisionStoreFromEnv();
    source = store.describe();
    try {
      let receipt;
      try {
        receipt = await exportReceipt(store, taskId!);
      } catch (error) {
        throw new ApprovalsUsageError(`${(error as Error).message}; check --store or MCP_DECISION_STORE`);
      }
      report = verifyReceipt(receipt, keys);
      if (report.records === 0)
        report.problems.splice(
          0,
          report.problems.length,
          `there are no decision records of task ${taskId} in ${source}: check the task id and --store`,
        );
      if (values.export !== undefined) {
        writeReceipt(values.export, `${JSON.stringify(receipt, null, 2)}\n`);
      }
    } finally {
      await store.close();
    }
  }
  if (values.json)
    io.out(`${JSON.stringify({ source, ...report, ...(values.export !== undefined && { exportedTo: values.export }) }, null, 2)}\n`);
  else io.out(humanReport(report, source, values.export));
  if (!report.ok) return APPROVALS_EXIT.invalid;
  return report.questions.every((question) => question.standing === 'approved') ? APPROVALS_EXIT.valid : APPROVALS_EXIT.notApproved;
}

function keysOf(option: string | undefined): DecisionPublicKeys {
  if (option === undefined) {
    try {
      const keys = decisionPublicKeysFromEnv();
      // Read now: the check has no use for keys that may appear later.
      void keys.keyIds;
      return keys;
    } catch (error) {
      if (error instanceof DecisionKeyError) throw new ApprovalsUsageError(`${error.message}; or give --public-key FILE`);
      throw error;
    }
  }
  return publicKeysFromFiles(
    option
      .split(',')
      .map((file) => file.trim())
      .filter(Boolean),
  );
}

function readReceipt(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ApprovalsUsageError(`cannot read the receipt ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON: the receipt was damaged; verifyReceipt says so and the check fails.
    return text;
  }
}

/**
 * Writes a receipt to `file` whole, never through a link: a symbolic link planted at `file` is refused, and the text
 * goes to a new file beside it that is then renamed to `file` (a rename replaces a link, it does not follow one).
 */
function writeReceipt(file: string, text: string): void {
  const isLink = (() => {
    try {
      return lstatSync(file).isSymbolicLink();
    } catch {
      return false;
    }
  })();
  if (isLink)
    throw new ApprovalsUsageError(`--export ${file} is a symbolic link; the receipt is never written through one: give another path`);
  const temp = path.join(path.dirname(path.resolve(file)), `.${path.basename(file)}.${randomUUID()}.tmp`);
  try {
    writeFileSync(temp, text, { flag: 'wx', mode: 0o644 });
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new ApprovalsUsageError(`cannot write the receipt to ${file}: ${(error as Error).message}`);
  }
}

/** The report as a person reads it. Every text that came from a record is shown with its control characters escaped. */
export function humanReport(report: ReceiptReport, source: string, exportedTo?: string): string {
  const lines: string[] = [];
  const safe = (text: unknown) => escapeControls(String(text));
  lines.push(
    `Task ${safe(report.taskId ?? '(none)')}: ${report.records} decision record${report.records === 1 ? '' : 's'} in ${safe(source)}`,
  );
  lines.push(`Checked with key${report.checkedWith.length === 1 ? '' : 's'} ${report.checkedWith.join(', ') || '(none)'}`);
  for (const question of report.questions) lines.push('', ...questionLines(question, safe));
  lines.push('');
  if (report.ok) lines.push('VALID: every record belongs to the task, the chain is whole, and every digest and signature checks out.');
  else lines.push(...report.problems.map((problem) => `INVALID: ${safe(problem)}`));
  if (exportedTo !== undefined) lines.push(`Receipt written to ${safe(exportedTo)}.`);
  return `${lines.join('\n')}\n`;
}

function questionLines(question: QuestionReport, safe: (text: unknown) => string): string[] {
  // Each line of the question on a line of its own (control characters are escaped by `safe`).
  const asked = String(question.message ?? '')
    .split('\n')
    .map((line, index) => `${index === 0 ? '  Asked: ' : '         '}${safe(line)}`);
  const lines = [`Question "${safe(question.key)}" (run ${safe(question.run)})`, ...asked];
  lines.push(...subjectLines(question.shown, safe));
  for (const decision of question.decisions) {
    const role = decision.roles.length > 0 ? `, role${decision.roles.length === 1 ? '' : 's'} ${decision.roles.map(safe).join(', ')}` : '';
    const acting = decision.actingAs !== undefined ? `, asked as ${safe(decision.actingAs)}` : '';
    const extra = [
      decision.delegatedTo !== undefined ? `handed to ${safe(decision.delegatedTo)}` : '',
      decision.comment !== undefined ? `comment "${safe(decision.comment)}"` : '',
      decision.reason !== undefined ? `reason "${safe(decision.reason)}"` : '',
      decision.outcome !== undefined ? `closed as ${safe(decision.outcome)}, ${safe(decision.required)} approval(s) required` : '',
      decision.voided ? 'VOIDED by a later record' : '',
      decision.sameSubject ? '' : 'shown ANOTHER subject',
      decision.signed ? 'signed' : 'unsigned (recorded by the workflow)',
    ].filter(Boolean);
    lines.push(
      `  ${decision.seq}. ${decision.decision} by ${safe(decision.person)} (principal ${safe(decision.principal)}${role}${acting}) at ${safe(decision.at)} via ${safe(decision.via)}; ${extra.join('; ')}`,
    );
  }
  lines.push(`  Verdict: ${safe(question.verdict)}`);
  return lines;
}

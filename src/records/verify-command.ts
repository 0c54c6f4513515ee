/**
 * `temporal-mcp-tasks approvals verify`: checks a task's decision records as the decision store holds them, or an
 * exported receipt, with the bridge's public key, and reports each question and whether it stands approved. Exports
 * the store's records as a receipt on request.
 */
import { lstatSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { ApproversDirectory, ApproversDirectoryError } from './directory';
import type { ApproverKeyring } from './approver-signatures';
import { APPROVALS_EXIT, ApprovalsUsageError, parseOptions, type CommandOutput } from './command-line';
import { humanReport } from './human-report';
import {
  decisionPublicKeysFromEnv,
  DecisionKeyError,
  existingDecisionSigner,
  publicKeysFromFiles,
  type DecisionPublicKeys,
  type DecisionSigner,
} from './keys';
import { exportReceipt, verifyReceipt, type ReceiptReport } from './receipt';
import { decisionStoreFromEnv, openDecisionStore } from './store';
import { payloadKeysFromEnv } from '../shared/payload-keys';
import { replaceFileDurably } from '../util/durable-files';

/** The --help text of `approvals verify`. */
const VERIFY_HELP = `Usage: temporal-mcp-tasks approvals verify TASK [--store DIR|URL] [--public-key FILE[,FILE]] [--directory FILE] [--export FILE] [--json]
       temporal-mcp-tasks approvals verify --receipt FILE [--public-key FILE[,FILE]] [--directory FILE] [--json]

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
  --directory FILE          the approvers directory: approvers' own signatures are checked against the keys it
                            lists, and approvals by people it says must sign count only with one (default
                            MCP_APPROVERS_DIRECTORY; without either, own signatures are reported unchecked)
  --export FILE             also write the task's records to FILE as a receipt, to verify later with --receipt;
                            where the bridge's key is (MCP_DECISION_SIGNING_KEY, or this machine's), the receipt is
                            sealed with it: its number of records and last digest, so that a cut end is INVALID
  --receipt FILE            verify this receipt instead of the store
  --json                    print the report as JSON
  -h, --help                show this help

A record that carries an approver's own signature that does not verify under their listed key is INVALID.

Records the bridge stored encrypted (MCP_PAYLOAD_KEYS set) are read with the keys file MCP_PAYLOAD_KEYS names; an
exported receipt holds them decrypted, for an auditor who has no keys.

A question stands approved only when the bridge's signed close record says it closed approved, with as many distinct
approvals as it required on record: records that end before their question's close (still open, or cut) are never
read as approved. A close the bridge wrote after the question closed (the bridge that took the closing answer
stopped before writing it) says "closed late by repair"; expiries and cancellations close on record too. An unsealed
receipt cannot show that no record followed its last one (a reset can reopen a question
and a rejection close it again), so its approval is not established: exit 3, whatever its questions show.

Exit status:
  0  the records verify, every question on record stands approved, and they are all there are (the store, or a
     sealed receipt)
  1  they do not verify (a record altered, missing, moved or forged), or there are none
  2  the command could not check them: a usage error, a key or receipt file that cannot be read, a store that cannot
     be reached; the message says what to do
  3  the records verify, and a question does not stand approved: rejected, declined, expired, cancelled, or open
     (not closed, or the records end early)
`;

/** The options of `approvals verify`, as read. */
interface VerifyOptions {
  store?: string;
  'public-key'?: string;
  export?: string;
  receipt?: string;
  directory?: string;
  json?: boolean;
  help?: boolean;
}

/** What a check found, and where the records came from (the store, or the receipt), as the report names it. */
interface Verified {
  report: ReceiptReport;
  source: string;
}

/** Runs `approvals verify` and resolves to its exit code; throws {@link ApprovalsUsageError}. */
export async function verifyCommand(argv: string[], io: CommandOutput): Promise<number> {
  const { values, positionals } = parseOptions(
    argv,
    {
      store: { type: 'string' },
      'public-key': { type: 'string' },
      export: { type: 'string' },
      receipt: { type: 'string' },
      directory: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    'verify',
    true,
  );
  if (values.help) {
    io.out(VERIFY_HELP);
    return APPROVALS_EXIT.valid;
  }
  const taskId = taskIdOf(values, positionals);
  const keys = keysOf(values['public-key']);
  const signatures = approverKeysOf(values.directory);
  const verified =
    values.receipt !== undefined
      ? { source: `the receipt ${values.receipt}`, report: verifyReceipt(readReceipt(values.receipt), keys, signatures) }
      : await verifyStore(taskId!, values, keys, signatures);
  return printReport(verified, values, io);
}

/**
 * The task id `verify` is given (none with --receipt). Throws {@link ApprovalsUsageError} for a command line that does
 * not say what to check: more than one task id, both a task id and a receipt, options a receipt has no use for, none
 * of them, an option with an empty value.
 */
function taskIdOf(values: VerifyOptions, positionals: string[]): string | undefined {
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
    directory: values.directory,
  })) {
    if (value !== undefined && value.trim() === '') throw new ApprovalsUsageError(`--${name} needs a value; ${see}`);
  }
  return taskId;
}

/**
 * Checks the records of `taskId` in the store of `--store` (else MCP_DECISION_STORE) and writes them to the file of
 * `--export` as a receipt, sealed with the bridge's key when this machine holds it. Closes the store.
 */
async function verifyStore(
  taskId: string,
  values: VerifyOptions,
  keys: DecisionPublicKeys,
  signatures: ApproverKeyring | undefined,
): Promise<Verified> {
  const store = values.store !== undefined ? openDecisionStore(values.store, payloadKeysFromEnv()) : decisionStoreFromEnv();
  const source = store.location();
  try {
    let receipt;
    try {
      receipt = await exportReceipt(store, taskId, values.export !== undefined ? sealingKey() : undefined);
    } catch (error) {
      throw new ApprovalsUsageError(`${(error as Error).message}; check --store or MCP_DECISION_STORE`);
    }
    const report = verifyReceipt(receipt, keys, signatures);
    if (report.records === 0)
      report.problems.splice(
        0,
        report.problems.length,
        `there are no decision records of task ${taskId} in ${source}: check the task id and --store`,
      );
    if (values.export !== undefined) {
      writeReceipt(values.export, `${JSON.stringify(receipt, null, 2)}\n`);
    }
    return { report, source };
  } finally {
    await store.close();
  }
}

/** Writes the report (as JSON with --json) and returns the exit code it calls for. */
function printReport({ report, source }: Verified, values: VerifyOptions, io: CommandOutput): number {
  // The store is read whole; a receipt is whole only when sealed.
  const whole = values.receipt === undefined || report.sealed;
  const approved = report.questions.every((question) => question.standing === 'approved');
  const established = report.ok && approved && whole;
  if (values.json)
    io.out(
      `${JSON.stringify({ source, ...report, established, ...(values.export !== undefined && { exportedTo: values.export }) }, null, 2)}\n`,
    );
  else io.out(humanReport(report, source, values.export));
  if (!report.ok) return APPROVALS_EXIT.invalid;
  return established ? APPROVALS_EXIT.valid : APPROVALS_EXIT.notApproved;
}

/** The bridge's key, when this machine holds it: an export is sealed with it. Never makes one. */
function sealingKey(): DecisionSigner | undefined {
  try {
    return existingDecisionSigner();
  } catch (error) {
    if (error instanceof DecisionKeyError) throw new ApprovalsUsageError(`${error.message} (it seals the receipt --export writes)`);
    throw error;
  }
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

/** The approvers' keys of `--directory FILE`, else MCP_APPROVERS_DIRECTORY; none without either. */
function approverKeysOf(option: string | undefined): ApproverKeyring | undefined {
  try {
    return (option !== undefined ? ApproversDirectory.load(option) : ApproversDirectory.fromEnv())?.signatures();
  } catch (error) {
    if (error instanceof ApproversDirectoryError) throw new ApprovalsUsageError(error.message);
    throw error;
  }
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
    // Whole on disk before it takes the name: a crash leaves the old file or the new one, never a part.
    replaceFileDurably(file, temp, text);
  } catch (error) {
    throw new ApprovalsUsageError(`cannot write the receipt to ${file}: ${(error as Error).message}`);
  }
}

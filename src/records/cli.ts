/**
 * `temporal-mcp-tasks approvals`: the auditor's command. Verifies a task's decision records in the decision store, or
 * an exported receipt, offline with the bridge's public key alone (no Temporal, no bridge).
 */
import { lstatSync, readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ApproversDirectory, ApproversDirectoryError } from './directory';
import { ApproverKeyError, generateApproverKey, signStatement, statementOf, type ApproverKeyring } from './approver-signatures';
import { digestOf } from './canonical';
import { CHALLENGE_PATTERN } from '../contract/decision-records';
import { subjectLines } from './subject-text';
import { replaceFileDurably } from '../util/durable-files';
import { escapeControls } from '../util/log';
import {
  decisionPublicKeysFromEnv,
  DecisionKeyError,
  existingDecisionSigner,
  publicKeysFromFiles,
  type DecisionPublicKeys,
  type DecisionSigner,
} from './keys';
import { exportReceipt, verifyReceipt, type QuestionReport, type ReceiptReport, type ReportedDecision } from './receipt';
import { decisionStoreFromEnv, openDecisionStore } from './store';
import { payloadKeysFromEnv } from '../shared/payload-keys';

/** Exit codes of the command. */
export const APPROVALS_EXIT = { valid: 0, invalid: 1, usage: 2, notApproved: 3 } as const;

export const APPROVALS_HELP = `Usage: temporal-mcp-tasks approvals <command> [options]

Checks the signed decision records of approvals, offline, with the bridge's public key alone.

Commands:
  verify   verify the decision records of a task (in the decision store), or an exported receipt
  keygen   make an approver's own Ed25519 key: the private key to a file, the public key for the directory
  sign     sign a decision with an approver's own key, for approvals_answer's signature

Options:
  -h, --help   show this help

Each command takes --help, e.g. temporal-mcp-tasks approvals verify --help.
`;

export const VERIFY_HELP = `Usage: temporal-mcp-tasks approvals verify TASK [--store DIR|URL] [--public-key FILE[,FILE]] [--directory FILE] [--export FILE] [--json]
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

export const KEYGEN_HELP = `Usage: temporal-mcp-tasks approvals keygen --out FILE [--json]

Makes an approver's own Ed25519 key pair. The private key goes to FILE (PKCS#8 PEM, mode 0600, never over an existing
file): keep it where only its owner can read it. Prints the public key and its id; the keeper of the approvers
directory adds the public key to the person's entry:  "keys": [{ "ed25519": "<public key>" }].

Options:
  --out FILE   where the private key is written
  --json       print {"publicKey", "keyId", "privateKeyFile"} as JSON
  -h, --help   show this help
`;

export const SIGN_HELP = `Usage: temporal-mcp-tasks approvals sign --key FILE --task TASK --run RUN --question KEY --decision DECISION
                                          (--subject FILE | --subject-digest DIGEST) [--challenge CHALLENGE]
                                          [--delegate-to PRINCIPAL]

Signs one decision with an approver's own key and prints the signature as JSON, to give as the signature argument of
approvals_answer. What is signed is the canonical JSON of
  {"format":"temporal-mcp-tasks/approver-statement","v":2,"taskId":TASK,"run":RUN,"key":KEY,"subject":DIGEST,
   "decision":DECISION}
(with "delegatedTo" for a hand-over, and "challenge" when one is given), DIGEST being the digest of what the question
shows. The run names this workflow of the task id, so the signature counts for no other. Give the subject as
approvals_inbox lists it (--subject, a JSON file, or - for stdin: it is printed, and its digest computed here), or its
subjectDigest; the run and the challenge as it lists them (a challenge is used once, within 30 minutes).

Options:
  --key FILE                the approver's private key (approvals keygen)
  --task TASK               the task id
  --run RUN                 the task's run, as approvals_inbox lists it
  --challenge CHALLENGE     the one-time challenge approvals_inbox lists for you, if it lists one
  --question KEY            the question's key
  --decision DECISION       approve, reject, decline or delegate
  --subject FILE            what the question shows, as JSON (- reads stdin)
  --subject-digest DIGEST   instead of --subject: its digest (sha256:...)
  --delegate-to PRINCIPAL   for delegate: to whom
  -h, --help                show this help
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

// eslint-disable-next-line max-lines-per-function -- longer than a function should be; split next
async function verifyCommand(argv: string[], io: CommandOutput): Promise<number> {
  const parsedArgs = parsed(
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
  const { values, positionals } = parsedArgs;
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
    directory: values.directory,
  })) {
    if (value !== undefined && value.trim() === '') throw new ApprovalsUsageError(`--${name} needs a value; ${see}`);
  }
  const keys = keysOf(values['public-key']);
  const signatures = approverKeysOf(values.directory);

  let report: ReceiptReport;
  let source: string;
  if (values.receipt !== undefined) {
    source = `the receipt ${values.receipt}`;
    report = verifyReceipt(readReceipt(values.receipt), keys, signatures);
  } else {
    const store = values.store !== undefined ? openDecisionStore(values.store, payloadKeysFromEnv()) : decisionStoreFromEnv();
    source = store.describe();
    try {
      let receipt;
      try {
        receipt = await exportReceipt(store, taskId!, values.export !== undefined ? sealingKey() : undefined);
      } catch (error) {
        throw new ApprovalsUsageError(`${(error as Error).message}; check --store or MCP_DECISION_STORE`);
      }
      report = verifyReceipt(receipt, keys, signatures);
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

function parsed<T extends Record<string, { type: 'string' | 'boolean'; short?: string }>>(
  argv: string[],
  options: T,
  command: string,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: argv, allowPositionals, strict: true, options });
  } catch (error) {
    throw new ApprovalsUsageError(`${(error as Error).message}; see temporal-mcp-tasks approvals ${command} --help`);
  }
}

function keygenCommand(argv: string[], io: CommandOutput): number {
  const { values } = parsed(argv, { out: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, 'keygen');
  if (values.help) {
    io.out(KEYGEN_HELP);
    return APPROVALS_EXIT.valid;
  }
  const out = typeof values.out === 'string' ? values.out.trim() : '';
  if (out === '')
    throw new ApprovalsUsageError('give --out FILE, where the private key is written; see temporal-mcp-tasks approvals keygen --help');
  const key = generateApproverKey();
  try {
    // Never over an existing file (a key someone relies on), never through a link, readable by its owner only.
    writeFileSync(out, key.privateKeyPem, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ApprovalsUsageError(
      code === 'EEXIST'
        ? `${out} exists; keygen never replaces a key: give another --out`
        : `cannot write ${out}: ${(error as Error).message}`,
    );
  }
  const privateKeyFile = path.resolve(out);
  if (values.json)
    io.out(`${JSON.stringify({ publicKey: key.publicKey, keyId: key.keyId, privateKeyFile }, null, 2)}
`);
  else
    io.out(
      `Private key written to ${privateKeyFile} (keep it to yourself).
` +
        `Public key ${key.keyId}: add it to your entry of the approvers directory:
  "keys": [{ "ed25519": "${key.publicKey}" }]
`,
    );
  return APPROVALS_EXIT.valid;
}

const DECISIONS = ['approve', 'reject', 'decline', 'delegate'] as const;
const SUBJECT_DIGEST = /^sha256:[A-Za-z0-9_-]{43}$/;

function signCommand(argv: string[], io: CommandOutput): number {
  const { values } = parsed(
    argv,
    {
      key: { type: 'string' },
      task: { type: 'string' },
      question: { type: 'string' },
      decision: { type: 'string' },
      subject: { type: 'string' },
      'subject-digest': { type: 'string' },
      'delegate-to': { type: 'string' },
      run: { type: 'string' },
      challenge: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    'sign',
  );
  if (values.help) {
    io.out(SIGN_HELP);
    return APPROVALS_EXIT.valid;
  }
  const see = 'see temporal-mcp-tasks approvals sign --help';
  const need = (name: 'key' | 'task' | 'question' | 'decision' | 'run'): string => {
    const value = values[name];
    if (typeof value !== 'string' || value.trim() === '') throw new ApprovalsUsageError(`give --${name}; ${see}`);
    return value;
  };
  const [keyFile, taskId, key, decision, run] = [need('key'), need('task'), need('question'), need('decision'), need('run')];
  const challenge = values.challenge;
  if (challenge !== undefined && !CHALLENGE_PATTERN.test(challenge))
    throw new ApprovalsUsageError(`--challenge is the challenge approvals_inbox gives, as it gives it; ${see}`);
  if (!(DECISIONS as readonly string[]).includes(decision))
    throw new ApprovalsUsageError(`--decision is one of ${DECISIONS.join(', ')}, not "${decision}"; ${see}`);
  const delegateTo = values['delegate-to'];
  if ((decision === 'delegate') !== (delegateTo !== undefined))
    throw new ApprovalsUsageError(`give --delegate-to with --decision delegate, and only then; ${see}`);
  if ((values.subject === undefined) === (values['subject-digest'] === undefined))
    throw new ApprovalsUsageError(`give either --subject FILE or --subject-digest DIGEST; ${see}`);
  let subject: string;
  if (values.subject !== undefined) {
    const shown = readJson(values.subject === '-' ? 0 : values.subject, values.subject === '-' ? 'stdin' : values.subject);
    subject = digestOf(shown);
    // What is signed, shown to the one who signs it.
    io.err(
      [`Signing a ${decision} of "${key}" on task ${taskId}, about:`, ...subjectLines(shown, (text) => escapeControls(String(text)))].join(
        '\n',
      ) + '\n',
    );
  } else {
    subject = values['subject-digest']!;
    if (!SUBJECT_DIGEST.test(subject)) throw new ApprovalsUsageError(`--subject-digest is "sha256:" and 43 base64url characters; ${see}`);
  }
  let privateKeyPem: string;
  try {
    privateKeyPem = readFileSync(keyFile, 'utf8');
  } catch (error) {
    throw new ApprovalsUsageError(`cannot read the key ${keyFile}: ${(error as Error).message}`);
  }
  const statement = statementOf(
    {
      taskId,
      run,
      question: { key },
      subject,
      decision: decision as (typeof DECISIONS)[number],
      ...(delegateTo !== undefined && { delegatedTo: delegateTo }),
    },
    { version: 2, ...(challenge !== undefined && { challenge }) },
  );
  try {
    io.out(`${JSON.stringify(signStatement(statement, privateKeyPem))}
`);
  } catch (error) {
    if (error instanceof ApproverKeyError) throw new ApprovalsUsageError(`the key ${keyFile} is ${error.message}`);
    throw error;
  }
  return APPROVALS_EXIT.valid;
}

function readJson(source: string | number, name: string): unknown {
  let text: string;
  try {
    text = readFileSync(source, 'utf8');
  } catch (error) {
    throw new ApprovalsUsageError(`cannot read ${name}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApprovalsUsageError(`${name} is not JSON (${(error as Error).message}): give the subject as approvals_inbox lists it`);
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

/** The report as a person reads it. Every text that came from a record is shown with its control characters escaped. */
export function humanReport(report: ReceiptReport, source: string, exportedTo?: string): string {
  const lines: string[] = [];
  const safe = (text: unknown) => escapeControls(String(text));
  lines.push(
    `Task ${safe(report.taskId ?? '(none)')}: ${report.records} decision record${report.records === 1 ? '' : 's'} in ${safe(source)}`,
  );
  lines.push(`Checked with key${report.checkedWith.length === 1 ? '' : 's'} ${report.checkedWith.join(', ') || '(none)'}`);
  if (!report.approverKeysChecked) lines.push("Approvers' own signatures not checked: give --directory FILE (the approvers directory)");
  for (const question of report.questions) lines.push('', ...questionLines(question, safe));
  lines.push('');
  if (report.sealed)
    lines.push(`Sealed: the receipt holds the ${report.records} record(s) it was exported with; none was cut from its end.`);
  else if (source.startsWith('the receipt ')) {
    lines.push(
      "Not sealed (exported without the bridge's key): it cannot show that no record followed its last one, so approval is not established by it (exit 3). Ask for a receipt exported where the bridge's key is, or verify the store.",
    );
  }
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
      decision.closedAt !== undefined ? `the workflow closed it at ${safe(decision.closedAt)}` : '',
      decision.voided ? 'VOIDED by a later record' : '',
      decision.sameSubject ? '' : 'shown ANOTHER subject',
      decision.signed ? 'signed' : 'unsigned (recorded by the workflow)',
      ownSignatureText(decision),
    ].filter(Boolean);
    lines.push(
      `  ${decision.seq}. ${decision.decision} by ${safe(decision.person)} (principal ${safe(decision.principal)}${role}${acting}) at ${safe(decision.at)} via ${safe(decision.via)}; ${extra.join('; ')}`,
    );
  }
  lines.push(`  Verdict: ${safe(question.verdict)}`);
  return lines;
}

function ownSignatureText(decision: ReportedDecision): string {
  const own = decision.ownSignature;
  const key = own?.keyId !== undefined ? ` ${own.keyId}` : '';
  if (own?.status === 'valid') {
    const unbound = own.statement === 1 ? ' (a version 1 statement: it names no run)' : '';
    return `signed by ${decision.person} with their own key${key}${unbound}`;
  }
  if (own?.status === 'invalid') return `their own signature${key} does NOT verify`;
  if (own?.status === 'unknown-key') return `signed with key${key}, which the directory does not list for ${decision.person}`;
  if (own?.status === 'unchecked') return `bears an own signature${key}, not checked (no directory)`;
  return decision.mustSign ? `NOT signed by ${decision.person}, who must sign` : '';
}

/**
 * `temporal-mcp-tasks approvals sign`: signs one decision with an approver's own key, for approvals_answer's
 * signature, after showing on stderr what is signed.
 */
import { readFileSync } from 'node:fs';
import { ApproverKeyError, signStatement, statementOf } from './approver-signatures';
import { digestOf } from './canonical';
import { APPROVALS_EXIT, ApprovalsUsageError, parseOptions, type CommandOutput } from './command-line';
import { subjectLines } from './subject-text';
import { CHALLENGE_PATTERN } from '../contract/decision-records';
import { escapeControls } from '../util/log';

/** The --help text of `approvals sign`. */
const SIGN_HELP = `Usage: temporal-mcp-tasks approvals sign --key FILE --task TASK --run RUN --question KEY --decision DECISION
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

const DECISIONS = ['approve', 'reject', 'decline', 'delegate'] as const;
const SUBJECT_DIGEST = /^sha256:[A-Za-z0-9_-]{43}$/;

/** Runs `approvals sign` and returns its exit code; throws {@link ApprovalsUsageError}. */
export function signCommand(argv: string[], io: CommandOutput): number {
  const { values } = parseOptions(
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

/** The JSON of file `source` (0: stdin), called `name` in messages; throws {@link ApprovalsUsageError}. */
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

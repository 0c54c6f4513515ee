/**
 * The command line of the client: its help, options and parsing.
 */
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { IDEMPOTENCY_KEY_PATTERN } from '../contract/wire';
import { defaultStateDir } from './store';

/** The `--url` value that means "spawn the stdio server". */
export const STDIO = 'stdio';

/** The `--help` text. */
export const HELP = `Usage: temporal-mcp-tasks client <command> [options]

Commands:
  call <tool> --args <json|@file>   call a tool; a task-capable tool runs as a task that is followed to its end
                                    (the same call run again adopts the earlier one's open task; --new: a new task)
  tasks                             list your open and recent tasks (the server's tasks/list and the local store)
  resume [taskId]                   follow one task, or every open one, to its end (after a crash or restart)
  result <taskId>                   wait for a task's result and print it
  cancel <taskId>                   cancel a task

Options:
  --url <url>             Streamable HTTP endpoint, e.g. http://127.0.0.1:3000/mcp (default: spawn the server on stdio;
                          resume uses the server a task was created on)
  --token <token>         bearer token for --url (default: $MCP_TOKEN); sent to that server only, and remembered
                          for it in the state directory so that resume sends each server its own token
  --answer <json>         an answer to the next question: {"action":"accept","content":{...}}, {"action":"decline"},
                          or bare content (accept); repeat for several questions
  --answers-file <file>   answers as a JSON object keyed by input key (e.g. {"approval": {...}}), or an array in order
  --no-input              never ask at the terminal: without a scripted answer, stop with exit code 6
  --ttl <ms>              requested task ttl
  --new                   call: start a new task even if an earlier call of the same tool with the same arguments
                          is still open (see below)
  --idempotency-key <k>   the key a task call is sent with (default: the key of the open earlier call it adopts, else
                          a new UUID); a call repeated with the same key, after a crash for example, gets the task the
                          first one made instead of a new one
  --json                  print the outcome as JSON on stdout (progress stays on stderr)
  --state-dir <dir>       local task store (default: ${defaultStateDir()})
  --reconnect-timeout <s> how long to keep retrying an unreachable server (default 300)
  --answer-delay-ms <ms>  wait before sending each answer (for drills)
  -v, --version           print the version
  -h, --help              show this help

Every task call is written to the local store, with its idempotency key, before it is sent, and its task id as soon as
it is known. A call whose answer was lost is sent again with the same key and gets the same task; resume adopts the
task of a call that never got its answer. Answers are remembered per task and question: if a question comes back
after a crash, the remembered answer is given again without asking. A lost connection or an unavailable server is
retried (reads, task calls, and tools marked idempotent) for --reconnect-timeout seconds.

Running the same call again (same server, tool and arguments, in any key order) while the earlier one is open adopts
the earlier one instead of starting a second task: a line on stderr names its task id (or its idempotency key, when
its answer never came) and when it started, and the task is followed to its end like resume does (its result is
printed if it ended meanwhile). An earlier call is open until the store has seen its task end or found it gone from
the server. --new starts another task all the same; with --idempotency-key the key alone decides.

Exit codes: 0 completed, 1 completed with a tool error, 2 usage error, 3 failed, 4 cancelled, 5 server unreachable,
6 input needed and none available, 7 other error (e.g. unknown task).
`;

/** Thrown for command lines that cannot run. */
export class UsageError extends Error {}

/** What the command line asked for. */
export interface Options {
  url?: string;
  token?: string;
  answers: string[];
  answersFile?: string;
  noInput: boolean;
  ttl?: number;
  idempotencyKey?: string;
  /** `call`: start a new task even when an open earlier call has the same tool and arguments. */
  new: boolean;
  json: boolean;
  stateDir: string;
  reconnectTimeoutMs: number;
  answerDelayMs: number;
  args?: string;
  help: boolean;
  version: boolean;
}

/** Splits the command line into the command, its positional arguments and the options; throws UsageError. */
export function parseCommandLine(argv: string[]): { command?: string; positional: string[]; options: Options } {
  const options = defaultOptions();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith('-')) i = readOption(argv, i, options);
    else positional.push(argv[i]);
  }
  if (options.new && options.idempotencyKey !== undefined) {
    throw new UsageError('--new and --idempotency-key do not go together: a call sent again with a key gets the task that key made');
  }
  if (options.url) {
    try {
      new URL(options.url);
    } catch {
      throw new UsageError(`--url needs an http(s) URL, not "${options.url}"`);
    }
  }
  return { command: positional.shift(), positional, options };
}

/** The options of a command line that gives none. */
function defaultOptions(): Options {
  return {
    answers: [],
    noInput: false,
    new: false,
    json: false,
    stateDir: defaultStateDir(),
    reconnectTimeoutMs: 300_000,
    answerDelayMs: 0,
    help: false,
    version: false,
    token: process.env.MCP_TOKEN || undefined,
  };
}

/**
 * Reads the option `argv[i]` into `options`, with its value `argv[i + 1]` if it takes one; returns the index of the last
 * argument it read. Throws UsageError for an unknown option, or a value that is missing or malformed.
 */
function readOption(argv: string[], i: number, options: Options): number {
  const arg = argv[i];
  switch (arg) {
    case '-h':
    case '--help':
      options.help = true;
      break;
    case '-v':
    case '--version':
      options.version = true;
      break;
    case '--url':
      options.url = valueAfter(argv, i++, arg);
      break;
    case '--token':
      options.token = valueAfter(argv, i++, arg);
      break;
    case '--answer':
      options.answers.push(valueAfter(argv, i++, arg));
      break;
    case '--answers-file':
      options.answersFile = valueAfter(argv, i++, arg);
      break;
    case '--no-input':
      options.noInput = true;
      break;
    case '--ttl':
      options.ttl = numberOf(valueAfter(argv, i++, arg), arg);
      break;
    case '--idempotency-key':
      options.idempotencyKey = valueAfter(argv, i++, arg);
      if (!IDEMPOTENCY_KEY_PATTERN.test(options.idempotencyKey)) {
        throw new UsageError(`${arg} needs 1-200 printable characters without spaces, not "${options.idempotencyKey}"`);
      }
      break;
    case '--new':
      options.new = true;
      break;
    case '--json':
      options.json = true;
      break;
    case '--state-dir':
      options.stateDir = path.resolve(valueAfter(argv, i++, arg));
      break;
    case '--reconnect-timeout':
      options.reconnectTimeoutMs = numberOf(valueAfter(argv, i++, arg), arg) * 1000;
      break;
    case '--answer-delay-ms':
      options.answerDelayMs = numberOf(valueAfter(argv, i++, arg), arg);
      break;
    case '--args':
      options.args = valueAfter(argv, i++, arg);
      break;
    default:
      throw new UsageError(`unknown option "${arg}"; see --help`);
  }
  return i;
}

/** The value after the option at `argv[i]`; throws UsageError when there is none. */
function valueAfter(argv: string[], i: number, flag: string): string {
  const next = argv[i + 1];
  if (next === undefined) throw new UsageError(`${flag} needs a value`);
  return next;
}

/** The number of an option's value; throws UsageError unless it is a number of 0 or more. */
function numberOf(raw: string, flag: string): number {
  const parsed = Number(raw);
  if (!Number.isFinite(parsed) || parsed < 0) throw new UsageError(`${flag} needs a number of 0 or more, not "${raw}"`);
  return parsed;
}

/** The tool arguments of `--args` (JSON, or @file); throws UsageError. */
export function parseToolArgs(raw: string | undefined): Record<string, unknown> {
  if (raw === undefined) return {};
  let text = raw;
  if (raw.startsWith('@')) {
    try {
      text = readFileSync(raw.slice(1), 'utf8');
    } catch (error) {
      throw new UsageError(`--args ${raw}: ${(error as Error).message}`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--args is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('--args must be a JSON object');
  return parsed as Record<string, unknown>;
}

/** Exit codes a script can rely on. */
export const EXIT = {
  completed: 0,
  toolError: 1,
  usage: 2,
  failed: 3,
  cancelled: 4,
  unreachable: 5,
  needsInput: 6,
  error: 7,
} as const;

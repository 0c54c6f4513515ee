/**
 * A task-aware MCP command-line client: npm run client -- <command> [options]. See HELP below.
 */
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { ADOPT_ONLY_META, IDEMPOTENCY_KEY_META, IDEMPOTENCY_KEY_PATTERN, INPUT_KEY_META, REPLAYED_META } from '../../shared/wire';
import { AnswerError, ScriptedAnswers, TerminalAnswers, type AnswerProvider } from './answers';
import { orphanGuardFetch } from './orphan-guard';
import { defaultStateDir, LocalTaskStore, type StoredCall, type StoredTask } from './store';

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

const ROOT = path.resolve(__dirname, '..', '..', '..');
const STDIO = 'stdio';

const HELP = `Usage: temporal-mcp-client <command> [options]

Commands:
  call <tool> --args <json|@file>   call a tool; a task-capable tool runs as a task that is followed to its end
  tasks                             list your open and recent tasks (the server's tasks/list and the local store)
  resume [taskId]                   follow one task, or every open one, to its end (after a crash or restart)
  result <taskId>                   wait for a task's result and print it
  cancel <taskId>                   cancel a task

Options:
  --url <url>             Streamable HTTP endpoint, e.g. http://127.0.0.1:3000/mcp (default: spawn the server on stdio;
                          resume uses the server a task was created on)
  --token <token>         bearer token for --url (default: $MCP_TOKEN)
  --answer <json>         an answer to the next question: {"action":"accept","content":{...}}, {"action":"decline"},
                          or bare content (accept); repeat for several questions
  --answers-file <file>   answers as a JSON object keyed by input key (e.g. {"approval": {...}}), or an array in order
  --no-input              never ask at the terminal: without a scripted answer, stop with exit code 6
  --ttl <ms>              requested task ttl
  --idempotency-key <k>   the key a task call is sent with (default: a new UUID per call); a call repeated with the
                          same key, after a crash for example, gets the task the first one made instead of a new one
  --json                  print the outcome as JSON on stdout (progress stays on stderr)
  --state-dir <dir>       local task store (default: ${defaultStateDir()})
  --reconnect-timeout <s> how long to keep retrying an unreachable server (default 300)
  --answer-delay-ms <ms>  wait before sending each answer (for drills)
  -h, --help              show this help

Every task call is written to the local store, with its idempotency key, before it is sent, and its task id as soon as
it is known. A call whose answer was lost is sent again with the same key and gets the same task; resume adopts the
task of a call that never got its answer. Answers are remembered per task and question: if a question comes back
after a crash, the remembered answer is given again without asking. A lost connection or an unavailable server is
retried (reads, task calls, and tools marked idempotent) for --reconnect-timeout seconds.

Exit codes: 0 completed, 1 completed with a tool error, 2 usage error, 3 failed, 4 cancelled, 5 server unreachable,
6 input needed and none available, 7 other error (e.g. unknown task).
`;

/** Thrown for command lines that cannot run. */
class UsageError extends Error {}

/** Thrown when the server stays unreachable past the reconnect timeout. */
class UnreachableError extends Error {}

/** Thrown when a question needs an answer and none can be given here. */
class NeedsInputError extends Error {}

interface Options {
  url?: string;
  token?: string;
  answers: string[];
  answersFile?: string;
  noInput: boolean;
  ttl?: number;
  idempotencyKey?: string;
  json: boolean;
  stateDir: string;
  reconnectTimeoutMs: number;
  answerDelayMs: number;
  args?: string;
  help: boolean;
}

function parseCommandLine(argv: string[]): { command?: string; positional: string[]; options: Options } {
  const options: Options = {
    answers: [],
    noInput: false,
    json: false,
    stateDir: defaultStateDir(),
    reconnectTimeoutMs: 300_000,
    answerDelayMs: 0,
    help: false,
    token: process.env.MCP_TOKEN || undefined,
  };
  const positional: string[] = [];
  const value = (i: number, flag: string) => {
    const next = argv[i + 1];
    if (next === undefined) throw new UsageError(`${flag} needs a value`);
    return next;
  };
  const number = (raw: string, flag: string) => {
    const parsed = Number(raw);
    if (!Number.isFinite(parsed) || parsed < 0) throw new UsageError(`${flag} needs a number of 0 or more, not "${raw}"`);
    return parsed;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    switch (arg) {
      case '-h':
      case '--help':
        options.help = true;
        break;
      case '--url':
        options.url = value(i++, arg);
        break;
      case '--token':
        options.token = value(i++, arg);
        break;
      case '--answer':
        options.answers.push(value(i++, arg));
        break;
      case '--answers-file':
        options.answersFile = value(i++, arg);
        break;
      case '--no-input':
        options.noInput = true;
        break;
      case '--ttl':
        options.ttl = number(value(i++, arg), arg);
        break;
      case '--idempotency-key':
        options.idempotencyKey = value(i++, arg);
        if (!IDEMPOTENCY_KEY_PATTERN.test(options.idempotencyKey)) {
          throw new UsageError(`${arg} needs 1-200 printable characters without spaces, not "${options.idempotencyKey}"`);
        }
        break;
      case '--json':
        options.json = true;
        break;
      case '--state-dir':
        options.stateDir = path.resolve(value(i++, arg));
        break;
      case '--reconnect-timeout':
        options.reconnectTimeoutMs = number(value(i++, arg), arg) * 1000;
        break;
      case '--answer-delay-ms':
        options.answerDelayMs = number(value(i++, arg), arg);
        break;
      case '--args':
        options.args = value(i++, arg);
        break;
      default:
        if (arg.startsWith('-')) throw new UsageError(`unknown option "${arg}"; see --help`);
        positional.push(arg);
    }
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

/** Progress on stderr: a live line on a terminal, plain lines otherwise. */
class Progress {
  private live = false;
  /** While a form is on screen, status lines wait: they would overwrite the prompt. */
  paused = false;
  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {}

  status(task: Task): void {
    if (this.paused) return;
    const line = `task ${task.taskId}: ${task.status}${task.statusMessage ? ` — ${task.statusMessage}` : ''}`;
    if (this.stream.isTTY) {
      const width = this.stream.columns ?? 120;
      this.stream.write(`\r\x1b[2K${line.length > width - 1 ? `${line.slice(0, width - 2)}…` : line}`);
      this.live = true;
      if (isTerminal(task.status)) this.end();
    } else this.stream.write(`${line}\n`);
  }

  note(message: string): void {
    this.end();
    this.stream.write(`${message}\n`);
  }

  end(): void {
    if (this.live) this.stream.write('\n');
    this.live = false;
  }
}

/** Where a task is served. */
type Target = { kind: 'stdio' } | { kind: 'http'; url: string; token?: string };

function targetName(target: Target): string {
  return target.kind === 'http' ? target.url : STDIO;
}

/** One live MCP connection. */
interface Session {
  client: McpClient;
  close(): Promise<void>;
}

/** What the elicitation handler needs to know about the current run. */
interface AskContext {
  store: LocalTaskStore;
  answers: AnswerProvider;
  progress: Progress;
  answerDelayMs: number;
  /** Set when a question could not be answered here; the follow loop stops with exit code 6. */
  unanswered?: { taskId?: string; message: string };
  onUnanswered?: () => void;
}

async function openSession(target: Target, ask: AskContext): Promise<Session> {
  const client = new McpClient(
    { name: 'temporal-mcp-client', version: '0.1.0' },
    { capabilities: { elicitation: { form: {}, url: {} }, tasks: { list: {}, cancel: {} } } },
  );
  client.setRequestHandler(ElicitRequestSchema, (request) => answerElicitation(request.params, ask));
  const transport =
    target.kind === 'http'
      ? new StreamableHTTPClientTransport(new URL(target.url), {
          // A request whose response stream breaks fails at once instead of waiting for its timeout.
          fetch: orphanGuardFetch(),
          requestInit: target.token ? { headers: { authorization: `Bearer ${target.token}` } } : undefined,
        })
      : new StdioClientTransport({
          command: process.execPath,
          args: ['--import', 'tsx', path.join(ROOT, 'src', 'mcp', 'main.ts')],
          cwd: ROOT,
          env: process.env as Record<string, string>,
          stderr: 'ignore',
        });
  await client.connect(transport);
  return { client, close: () => client.close().catch(() => undefined) };
}

async function answerElicitation(params: ElicitRequest['params'], ask: AskContext): Promise<ElicitResult> {
  const taskId = (params._meta?.[RELATED_TASK_META_KEY] as { taskId?: string } | undefined)?.taskId;
  const key = typeof params._meta?.[INPUT_KEY_META] === 'string' ? (params._meta[INPUT_KEY_META] as string) : undefined;
  const at = () => new Date().toISOString();
  if (taskId) ask.store.append({ type: 'asked', taskId, key, message: params.message, at: at() });
  const remembered = taskId && key ? ask.store.task(taskId)?.answers.get(key) : undefined;
  if (remembered && taskId) {
    ask.progress.note(`task ${taskId}: question "${key}" came back; giving the remembered answer again`);
    ask.store.append({ type: 'answered', taskId, key, response: remembered, source: 'store', at: at() });
    return remembered;
  }
  ask.progress.end();
  ask.progress.paused = true;
  let given: Awaited<ReturnType<AnswerProvider['answer']>>;
  try {
    given = await ask.answers.answer(params, key);
  } finally {
    ask.progress.paused = false;
  }
  if (!given || given.response.action === 'cancel') {
    ask.unanswered = { taskId, message: params.message };
    ask.onUnanswered?.();
    return { action: 'cancel' };
  }
  if (taskId) ask.store.append({ type: 'answered', taskId, key, response: given.response, source: given.source, at: at() });
  ask.progress.note(
    `task ${taskId ?? '?'}: answered ${given.response.action}${given.response.content ? ` ${JSON.stringify(given.response.content)}` : ''}`,
  );
  if (ask.answerDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, ask.answerDelayMs));
  return given.response;
}

/**
 * Errors after which the same call may succeed: the connection is gone, or the server said "retry". A request that
 * timed out counts as a lost connection: its answer is not coming on that connection.
 */
function isTransient(error: unknown): boolean {
  if (error instanceof McpError) {
    if ((error.data as { retryable?: boolean } | undefined)?.retryable === true) return true;
    return error.code === ErrorCode.ConnectionClosed || error.code === ErrorCode.RequestTimeout || /session not found/i.test(error.message);
  }
  const text = `${(error as Error)?.message ?? ''} ${String((error as { cause?: unknown })?.cause ?? '')}`;
  return /fetch failed|ECONNREFUSED|ECONNRESET|socket hang up|Not connected|Connection closed|terminated|Session not found|EPIPE/i.test(
    text,
  );
}

/** An error's message without the "MCP error <code>: " prefixes the SDK adds on each side of the wire. */
function plainMessage(error: unknown): string {
  return ((error as Error)?.message ?? String(error)).replace(/^(MCP error -?\d+: )+/, '');
}

/** The end of a followed task. */
interface Outcome {
  taskId: string;
  status: Task['status'];
  result?: CallToolResult;
  error?: string;
}

class Runner {
  readonly store: LocalTaskStore;
  readonly progress = new Progress();
  readonly ask: AskContext;

  constructor(readonly options: Options) {
    this.store = new LocalTaskStore(options.stateDir);
    const terminal = !options.noInput && process.stdin.isTTY ? new TerminalAnswers() : undefined;
    this.ask = {
      store: this.store,
      answers: new ScriptedAnswers(options.answers, options.answersFile, terminal),
      progress: this.progress,
      answerDelayMs: options.answerDelayMs,
    };
  }

  /** The server to talk to: --url, else the one a stored task or call was made on, else stdio. */
  target(stored?: Pick<StoredTask, 'server'>): Target {
    const url = this.options.url ?? (stored && stored.server !== STDIO ? stored.server : undefined);
    return url ? { kind: 'http', url, token: this.options.token } : { kind: 'stdio' };
  }

  /** Opens a session, retrying an unreachable server until `deadline` (the reconnect timeout from now by default). */
  async connect(target: Target, deadline = Date.now() + this.options.reconnectTimeoutMs): Promise<Session> {
    for (let attempt = 0, delay = 250; ; attempt++, delay = Math.min(delay * 2, 5_000)) {
      try {
        return await openSession(target, this.ask);
      } catch (error) {
        if (Date.now() + delay > deadline) {
          throw new UnreachableError(`cannot reach the MCP server (${targetName(target)}): ${(error as Error).message}`);
        }
        if (attempt === 0) this.progress.note(`server ${targetName(target)} unreachable (${(error as Error).message}); retrying`);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  /**
   * Runs `work` on a fresh session to `target`; after a lost connection or a "retry" answer, runs it again on a new
   * session, until the reconnect timeout. Only for work that is safe to repeat: reads, keyed task calls, idempotent
   * tools.
   */
  async retrying<T>(target: Target, what: string, work: (session: Session) => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.options.reconnectTimeoutMs;
    for (;;) {
      const session = await this.connect(target, deadline);
      try {
        return await work(session);
      } catch (error) {
        if (!isTransient(error)) throw error;
        if (Date.now() > deadline) {
          throw new UnreachableError(
            `${what}: the server stayed unavailable for ${Math.round(this.options.reconnectTimeoutMs / 1000)} s: ${(error as Error).message}`,
          );
        }
        this.progress.note(`${what}: ${(error as Error).message}; retrying`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      } finally {
        await session.close();
      }
    }
  }

  /**
   * Sends a task call with its idempotency key, again after a lost connection, and returns the task: the same one
   * however often it is sent. With `adoptOnly` the server starts nothing and only finds the task of an earlier call.
   */
  async createTask(target: Target, call: Pick<StoredCall, 'key' | 'tool' | 'arguments'>, ttl?: number, adoptOnly = false) {
    const params = {
      name: call.tool,
      arguments: call.arguments,
      task: ttl !== undefined ? { ttl } : {},
      _meta: { [IDEMPOTENCY_KEY_META]: call.key, ...(adoptOnly && { [ADOPT_ONLY_META]: true }) },
    };
    const created = await this.retrying(target, `tools/call ${call.tool}`, (session) =>
      session.client.request({ method: 'tools/call', params }, CreateTaskResultSchema),
    );
    this.store.append({
      type: 'created',
      taskId: created.task.taskId,
      server: targetName(target),
      tool: call.tool,
      createdAt: created.task.createdAt,
      key: call.key,
      at: new Date().toISOString(),
    });
    return { task: created.task, replayed: created._meta?.[REPLAYED_META] === true };
  }

  /** Follows a task to its end over `target`, reconnecting and retrying through outages up to the reconnect timeout. */
  async follow(taskId: string, target: Target, quiet = false): Promise<Outcome> {
    let session: Session | undefined;
    let troubleSince: number | undefined;
    for (;;) {
      session ??= await this.connect(target);
      const connectedAt = Date.now();
      try {
        return await this.followOnce(session, taskId, quiet);
      } catch (error) {
        if (!isTransient(error)) throw error;
        // A session that worked for a while before failing starts a new outage.
        if (troubleSince === undefined || Date.now() - connectedAt > 10_000) troubleSince = Date.now();
        if (Date.now() - troubleSince > this.options.reconnectTimeoutMs) {
          throw new UnreachableError(
            `task ${taskId}: the server stayed unavailable for ${Math.round(this.options.reconnectTimeoutMs / 1000)} s: ${(error as Error).message}`,
          );
        }
        this.progress.note(`task ${taskId}: ${(error as Error).message}; retrying`);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      } finally {
        await session.close();
      }
      session = undefined;
    }
  }

  private async followOnce(session: Session, taskId: string, quiet: boolean): Promise<Outcome> {
    const { client } = session;
    const stop = new AbortController();
    this.ask.unanswered = undefined;
    this.ask.onUnanswered = () => stop.abort();
    let last = '';
    const show = (task: Task) => {
      const line = `${task.status} ${task.statusMessage ?? ''}`;
      if (line === last) return;
      last = line;
      this.store.append({ type: 'status', taskId, status: task.status, statusMessage: task.statusMessage, at: new Date().toISOString() });
      if (!quiet) this.progress.status(task);
    };
    show(await client.experimental.tasks.getTask(taskId));
    // Status display runs beside tasks/result, which blocks until the end and carries the questions. It also notices
    // a server that went away while tasks/result waits (its stream may not say so), and ends the wait.
    let lost: unknown;
    const watching = (async () => {
      let failures = 0;
      while (!stop.signal.aborted) {
        let task: Task | undefined;
        try {
          task = await client.experimental.tasks.getTask(taskId);
          failures = 0;
          show(task);
          if (isTerminal(task.status)) return;
        } catch (error) {
          if (isTransient(error) && ++failures >= 2) {
            lost = error;
            stop.abort();
            return;
          }
        }
        await new Promise((resolve) => setTimeout(resolve, task?.pollInterval ?? 1000));
      }
    })();
    try {
      for (;;) {
        try {
          const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, {
            timeout: 24 * 3600_000,
            signal: stop.signal,
          });
          const task = await client.experimental.tasks.getTask(taskId);
          show(task);
          return { taskId, status: task.status, result };
        } catch (error) {
          // Set by the elicitation handler meanwhile; the cast undoes narrowing from the reset above.
          const unanswered = this.ask.unanswered as AskContext['unanswered'];
          if (lost) throw lost;
          if (unanswered) {
            throw new NeedsInputError(
              `task ${taskId} needs input: "${unanswered.message}". Answer it with: resume ${taskId} --answer '<json>' (or run resume at a terminal)`,
            );
          }
          if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) continue;
          const status = error instanceof McpError ? (error.data as { status?: Task['status'] } | undefined)?.status : undefined;
          if (status === 'failed' || status === 'cancelled') {
            show(await client.experimental.tasks.getTask(taskId));
            return { taskId, status, error: (error as Error).message };
          }
          throw error;
        }
      }
    } finally {
      stop.abort();
      await watching;
    }
  }

  report(outcome: Outcome): number {
    this.progress.end();
    if (this.options.json) process.stdout.write(`${JSON.stringify(outcome)}\n`);
    else if (outcome.result) {
      for (const block of outcome.result.content) {
        if (block.type === 'text') process.stdout.write(`${block.text}\n`);
      }
    } else process.stdout.write(`task ${outcome.taskId} ${outcome.status}: ${outcome.error ?? ''}\n`);
    if (outcome.status === 'failed') return EXIT.failed;
    if (outcome.status === 'cancelled') return EXIT.cancelled;
    return outcome.result?.isError ? EXIT.toolError : EXIT.completed;
  }
}

function parseToolArgs(raw: string | undefined): Record<string, unknown> {
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

async function call(runner: Runner, tool: string | undefined, options: Options): Promise<number> {
  if (!tool) throw new UsageError('call needs a tool name, e.g. call process_invoice --args @invoice.json');
  const args = parseToolArgs(options.args);
  const target = runner.target();
  const tools = await runner.retrying(target, 'tools/list', async (session) => (await session.client.listTools()).tools);
  const declared = tools.find((candidate) => candidate.name === tool);
  if (!declared) throw new UsageError(`the server has no tool "${tool}"; it has: ${tools.map((t) => t.name).join(', ')}`);
  const taskSupport = declared.execution?.taskSupport ?? 'forbidden';
  if (taskSupport === 'forbidden') {
    const once = (session: Session) =>
      session.client.callTool({ name: tool, arguments: args }, undefined, { timeout: 600_000 }) as Promise<CallToolResult>;
    // Only a tool that says repeating it is harmless is sent again after a lost connection.
    const repeatable = declared.annotations?.idempotentHint === true || declared.annotations?.readOnlyHint === true;
    const result = repeatable
      ? await runner.retrying(target, `tools/call ${tool}`, once)
      : await runner.connect(target).then(async (session) => {
          try {
            return await once(session);
          } finally {
            await session.close();
          }
        });
    return runner.report({ taskId: '-', status: 'completed', result });
  }
  // The intent is on disk before the call is sent: a crash before the answer leaves a call that resume can adopt.
  const key = options.idempotencyKey ?? randomUUID();
  runner.store.append({ type: 'intent', key, server: targetName(target), tool, arguments: args, at: new Date().toISOString() });
  const { task, replayed } = await runner.createTask(target, { key, tool, arguments: args }, options.ttl);
  runner.progress.note(
    `task ${task.taskId} ${replayed ? 'found again (an earlier call with this idempotency key made it)' : 'created'} ` +
      `(ttl ${task.ttl === null ? 'unlimited' : `${task.ttl} ms`})`,
  );
  return runner.report(await runner.follow(task.taskId, target));
}

/** Every task of the caller's on `target`, all pages of tasks/list (re-read after a lost connection). */
function serverTasks(runner: Runner, target: Target): Promise<Task[]> {
  return runner.retrying(target, 'tasks/list', async (session) => {
    const tasks: Task[] = [];
    let cursor: string | undefined;
    do {
      const page = await session.client.experimental.tasks.listTasks(cursor);
      tasks.push(...page.tasks);
      cursor = page.nextCursor;
    } while (cursor);
    return tasks;
  });
}

async function listTasks(runner: Runner, options: Options): Promise<number> {
  const target = runner.target();
  const rows = new Map<string, { taskId: string; status: string; tool: string; createdAt: string; message: string; server: string }>();
  for (const stored of runner.store.tasks()) {
    rows.set(stored.taskId, {
      taskId: stored.taskId,
      status: stored.status ?? 'unknown',
      tool: stored.tool,
      createdAt: stored.createdAt,
      message: stored.statusMessage ?? '',
      server: stored.server,
    });
  }
  // A call whose answer never came: its task, if the server started one, is adopted by resume.
  for (const call of runner.store.unfinishedCalls()) {
    rows.set(`call:${call.key}`, {
      taskId: '-',
      status: 'unanswered',
      tool: call.tool,
      createdAt: call.at,
      message: `call sent with idempotency key ${call.key} got no answer; resume adopts its task if the server started one`,
      server: call.server,
    });
  }
  let unreachable: string | undefined;
  try {
    for (const task of await serverTasks(runner, target)) {
      const known = rows.get(task.taskId);
      rows.set(task.taskId, {
        taskId: task.taskId,
        status: task.status,
        tool: known?.tool ?? '',
        createdAt: task.createdAt,
        message: task.statusMessage ?? '',
        server: targetName(target),
      });
    }
  } catch (error) {
    if (!(error instanceof UnreachableError)) throw error;
    unreachable = (error as Error).message;
  }
  const sorted = [...rows.values()].sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
  if (options.json) process.stdout.write(`${JSON.stringify(sorted)}\n`);
  else if (sorted.length === 0) process.stdout.write('no tasks\n');
  else {
    for (const row of sorted) {
      process.stdout.write(`${row.taskId}  ${row.status.padEnd(14)}  ${row.createdAt}  ${row.tool}  ${row.message}\n`);
    }
  }
  if (unreachable) {
    runner.progress.note(`${unreachable}; showing the local store only`);
    return EXIT.unreachable;
  }
  return EXIT.completed;
}

/** How long after sending a call "no task for this key" may still mean "its start is under way". */
const ADOPT_GRACE_MS = 120_000;

/**
 * Finds the tasks of calls that never got their answer (the client or the server died in between) by asking the
 * server for the task of each call's idempotency key, without starting anything. Returns the adopted task ids.
 */
async function adoptUnfinishedCalls(runner: Runner): Promise<Map<string, Target>> {
  const adopted = new Map<string, Target>();
  for (const call of runner.store.unfinishedCalls()) {
    const where = runner.target(call);
    try {
      const { task } = await runner.createTask(where, call, undefined, true);
      runner.progress.note(`task ${task.taskId}: adopted; the call of ${call.tool} sent at ${call.at} had started it`);
      adopted.set(task.taskId, where);
    } catch (error) {
      if (!(error instanceof McpError && error.code === ErrorCode.InvalidParams)) throw error;
      if (/No task was started/.test(error.message) && Date.now() - Date.parse(call.at) < ADOPT_GRACE_MS) {
        runner.progress.note(`the call of ${call.tool} sent at ${call.at} has no task yet; resume again to adopt it`);
        continue;
      }
      const reason = plainMessage(error);
      runner.store.append({ type: 'abandoned', key: call.key, reason, at: new Date().toISOString() });
      runner.progress.note(`the call of ${call.tool} sent at ${call.at} started nothing (${reason}); call it again if it is still wanted`);
    }
  }
  return adopted;
}

async function resume(runner: Runner, taskId: string | undefined): Promise<number> {
  if (taskId) {
    const stored = runner.store.task(taskId);
    return runner.report(await runner.follow(taskId, runner.target(stored)));
  }
  const open = await adoptUnfinishedCalls(runner);
  for (const stored of runner.store.tasks()) {
    if (!stored.status || !isTerminal(stored.status)) open.set(stored.taskId, runner.target(stored));
  }
  const target = runner.target();
  for (const task of await serverTasks(runner, target)) {
    if (!isTerminal(task.status) && !open.has(task.taskId)) open.set(task.taskId, target);
  }
  if (open.size === 0) {
    runner.progress.note('no open tasks to resume');
    return EXIT.completed;
  }
  let code: number = EXIT.completed;
  for (const [id, where] of open) {
    let outcome: number;
    try {
      outcome = runner.report(await runner.follow(id, where));
    } catch (error) {
      if (error instanceof McpError && error.code === ErrorCode.InvalidParams) {
        runner.progress.note(`task ${id}: ${error.message}`);
        outcome = EXIT.error;
      } else throw error;
    }
    if (code === EXIT.completed) code = outcome;
  }
  return code;
}

async function cancel(runner: Runner, taskId: string | undefined): Promise<number> {
  if (!taskId) throw new UsageError('cancel needs a task id');
  const task = await runner.retrying(runner.target(runner.store.task(taskId)), `tasks/cancel ${taskId}`, async (session) => {
    try {
      return await session.client.experimental.tasks.cancelTask(taskId);
    } catch (error) {
      // A cancel repeated after a lost answer finds the task cancelled by the first one.
      if (error instanceof McpError && error.code === ErrorCode.InvalidParams && /already cancelled/.test(error.message)) {
        return session.client.experimental.tasks.getTask(taskId);
      }
      throw error;
    }
  });
  runner.store.append({ type: 'status', taskId, status: task.status, statusMessage: task.statusMessage, at: new Date().toISOString() });
  if (runner.options.json) process.stdout.write(`${JSON.stringify(task)}\n`);
  else process.stdout.write(`task ${taskId} ${task.status}\n`);
  return EXIT.completed;
}

/** Runs the command line; resolves to the exit code. */
export async function runCli(argv: string[]): Promise<number> {
  let runner: Runner | undefined;
  try {
    const { command, positional, options } = parseCommandLine(argv);
    if (options.help || !command) {
      (options.help ? process.stdout : process.stderr).write(HELP);
      return options.help ? EXIT.completed : EXIT.usage;
    }
    runner = new Runner(options);
    switch (command) {
      case 'call':
        return await call(runner, positional[0], options);
      case 'tasks':
        return await listTasks(runner, options);
      case 'resume':
        return await resume(runner, positional[0]);
      case 'result': {
        if (!positional[0]) throw new UsageError('result needs a task id');
        const stored = runner.store.task(positional[0]);
        return runner.report(await runner.follow(positional[0], runner.target(stored), true));
      }
      case 'cancel':
        return await cancel(runner, positional[0]);
      default:
        throw new UsageError(`unknown command "${command}"; see --help`);
    }
  } catch (error) {
    runner?.progress.end();
    const message = plainMessage(error);
    if (error instanceof UsageError || error instanceof AnswerError) {
      process.stderr.write(`client: ${message}\n`);
      return EXIT.usage;
    }
    if (error instanceof UnreachableError) {
      process.stderr.write(`client: ${message}\n`);
      return EXIT.unreachable;
    }
    if (error instanceof NeedsInputError) {
      process.stderr.write(`client: ${message}\n`);
      return EXIT.needsInput;
    }
    process.stderr.write(`client: ${message}\n`);
    return EXIT.error;
  }
}

if (require.main === module) {
  runCli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: Error) => {
      process.stderr.write(`client: ${error.message}\n`);
      process.exit(EXIT.error);
    },
  );
}

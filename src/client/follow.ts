/**
 * Following a task to its end across lost connections, and reporting how it ended.
 */
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import {
  type CallToolResult,
  CallToolResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  McpError,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { ADOPT_ONLY_META, IDEMPOTENCY_KEY_META, REPLAYED_META, WEB_UI_META } from '../contract/wire';
import { retryWithBackoff, sleep } from '../util/wait';
import { ScriptedAnswers, TerminalAnswers } from './answers';
import { LocalTaskStore, type StoredCall, type StoredTask } from './store';
import { printable } from './printable';
import { ServerTokens } from './tokens';
import { EXIT, Options, STDIO } from './args';
import { Progress } from './progress';
import { AskContext, NeedsInputError, Session, Target, UnreachableError, isTransient, openSession, targetName } from './connection';

/** The end of a followed task. */
export interface Outcome {
  taskId: string;
  status: Task['status'];
  result?: CallToolResult;
  error?: string;
  /** The task's workflow in the Temporal Web UI, when the server links it. */
  webUi?: string;
}

/** The Web UI link a server put in a message's `_meta`, if it is an http(s) URL. */
function webUiOf(meta: Record<string, unknown> | undefined): string | undefined {
  const link = meta?.[WEB_UI_META];
  return typeof link === 'string' && /^https?:\/\/[^\s]+$/.test(link) ? link : undefined;
}

/** Runs commands against a server: sessions that reconnect, the local store, progress, and following tasks. */
export class Runner {
  readonly store: LocalTaskStore;
  private readonly tokens: ServerTokens;
  readonly progress = new Progress();
  readonly ask: AskContext;
  /** Tasks whose Web UI link this run has printed. */
  private readonly linked = new Set<string>();

  constructor(readonly options: Options) {
    this.store = new LocalTaskStore(options.stateDir);
    this.tokens = new ServerTokens(options.stateDir);
    const terminal = !options.noInput && process.stdin.isTTY ? new TerminalAnswers() : undefined;
    this.ask = {
      store: this.store,
      answers: new ScriptedAnswers(options.answers, options.answersFile, terminal),
      progress: this.progress,
      answerDelayMs: options.answerDelayMs,
    };
  }

  /**
   * The server to talk to: --url, else the one a stored task or call was made on, else stdio. The --url server gets
   * --token (remembered for it); any other server only the token remembered for it.
   */
  target(stored?: Pick<StoredTask, 'server'>): Target {
    const url = this.options.url ?? (stored && stored.server !== STDIO ? stored.server : undefined);
    if (!url) return { kind: 'stdio' };
    if (url === this.options.url && this.options.token) {
      this.tokens.remember(url, this.options.token);
      return { kind: 'http', url, token: this.options.token };
    }
    const token = this.tokens.get(url);
    return { kind: 'http', url, ...(token && { token }) };
  }

  /** Opens a session, retrying an unreachable server until `deadline` (the reconnect timeout from now by default). */
  async connect(target: Target, deadline = Date.now() + this.options.reconnectTimeoutMs): Promise<Session> {
    try {
      return await retryWithBackoff(() => openSession(target, this.ask), {
        isRetryable: () => true,
        deadline,
        onRetry: (error, attempt) => {
          if (attempt === 0) this.progress.note(`server ${targetName(target)} unreachable (${(error as Error).message}); retrying`);
        },
      });
    } catch (error) {
      throw new UnreachableError(`cannot reach the MCP server (${targetName(target)}): ${(error as Error).message}`);
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
        await sleep(500);
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
        await sleep(1_000);
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
    let webUi: string | undefined;
    const show = (task: Task & { _meta?: Record<string, unknown> }) => {
      webUi ??= webUiOf(task._meta);
      if (webUi && !quiet) this.printLink(taskId, webUi);
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
        await sleep(task?.pollInterval ?? 1000);
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
          webUi ??= webUiOf(result._meta);
          return { taskId, status: task.status, result, ...(webUi && { webUi }) };
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
            return { taskId, status, error: (error as Error).message, ...(webUi && { webUi }) };
          }
          throw error;
        }
      }
    } finally {
      stop.abort();
      await watching;
    }
  }

  /** Prints where to see the task's workflow in the Web UI, once per task. */
  private printLink(taskId: string, webUi: string): void {
    if (this.linked.has(taskId)) return;
    this.linked.add(taskId);
    this.progress.note(`task ${taskId}: ${webUi}`);
  }

  report(outcome: Outcome): number {
    this.progress.end();
    if (outcome.webUi && !this.options.json) this.printLink(outcome.taskId, outcome.webUi);
    if (this.options.json) process.stdout.write(`${JSON.stringify(outcome)}\n`);
    else if (outcome.result) {
      for (const block of outcome.result.content) {
        if (block.type === 'text') process.stdout.write(`${printable(block.text)}\n`);
      }
    } else process.stdout.write(`${printable(`task ${outcome.taskId} ${outcome.status}: ${outcome.error ?? ''}`)}\n`);
    // A tool error is a failed task in 2025-11-25 and a completed one in 2026-07-28: either way it has an isError result.
    if (outcome.result?.isError) return EXIT.toolError;
    if (outcome.status === 'failed') return EXIT.failed;
    if (outcome.status === 'cancelled') return EXIT.cancelled;
    return EXIT.completed;
  }
}

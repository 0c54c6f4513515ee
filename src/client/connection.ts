/**
 * Where tasks are served and how a session to it is opened, with the questions answered on it.
 */
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
  ErrorCode,
  McpError,
  RELATED_TASK_META_KEY,
} from '@modelcontextprotocol/sdk/types.js';
import { INPUT_KEY_META } from '../contract/wire';
import { sleep } from '../util/wait';
import { type AnswerProvider } from './answers';
import { orphanGuardFetch } from './orphan-guard';
import { LocalTaskStore } from './store';
import { STDIO } from './args';
import { Progress } from './progress';
import { PACKAGE_VERSION } from '../version';

/**
 * How to start the stdio server: the compiled server beside this compiled client (the package), in the caller's
 * folder; or its TypeScript source through tsx (a checkout run from `src/`), in the checkout, where tsx resolves.
 */
function stdioServerCommand(): { args: string[]; cwd?: string } {
  if (path.extname(__filename) !== '.ts') return { args: [path.join(__dirname, '..', 'mcp', 'serve', 'main.js')] };
  return { args: ['--import', 'tsx', path.join(__dirname, '..', 'mcp', 'serve', 'main.ts')], cwd: path.resolve(__dirname, '..', '..') };
}

/** Thrown when the server stays unreachable past the reconnect timeout. */
export class UnreachableError extends Error {}

/** Thrown when a question needs an answer and none can be given here. */
export class NeedsInputError extends Error {}

/** Where a task is served. */
export type Target = { kind: 'stdio' } | { kind: 'http'; url: string; token?: string };

/** How a target is named in messages. */
export function targetName(target: Target): string {
  return target.kind === 'http' ? target.url : STDIO;
}

/** One live MCP connection. */
export interface Session {
  client: McpClient;
  close(): Promise<void>;
}

/** What the elicitation handler needs to know about the current run. */
export interface AskContext {
  store: LocalTaskStore;
  answers: AnswerProvider;
  progress: Progress;
  answerDelayMs: number;
  /** Set when a question could not be answered here; the follow loop stops with exit code 6. */
  unanswered?: { taskId?: string; message: string };
  onUnanswered?: () => void;
}

/** Connects an MCP client to `target`, answering elicitations as `ask` says. */
export async function openSession(target: Target, ask: AskContext): Promise<Session> {
  const client = new McpClient(
    { name: 'temporal-mcp-client', version: PACKAGE_VERSION },
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
          ...stdioServerCommand(),
          env: process.env as Record<string, string>,
          stderr: 'ignore',
        });
  await client.connect(transport);
  return { client, close: () => client.close().catch(() => undefined) };
}

/** Answers one elicitation: from the remembered or scripted answers, at the terminal, or not at all. */
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
  if (ask.answerDelayMs > 0) await sleep(ask.answerDelayMs);
  return given.response;
}

/**
 * Errors after which the same call may succeed: the connection is gone, a balancer had no live server for it, or the
 * server said "retry". A request that timed out counts as a lost connection: its answer is not coming on that
 * connection.
 */
export function isTransient(error: unknown): boolean {
  // A balancer's "bad gateway", "unavailable" or "gateway timeout": a replica died under the request, or none is up.
  if (error instanceof StreamableHTTPError && [502, 503, 504].includes(error.code ?? 0)) return true;
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
export function plainMessage(error: unknown): string {
  return ((error as Error)?.message ?? String(error)).replace(/^(MCP error -?\d+: )+/, '');
}

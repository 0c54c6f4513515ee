/** Principals with static tokens and roles, and their approvals_* calls, for the approval tests. */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { pollUntil } from '../../src/util/wait';
import { ROOT } from './dev-server';

/** A principal of the token file, with the token that stands for it and its roles (comma-separated). */
export interface Person {
  principal: string;
  token: string;
  roles: string;
}

/** People named `<name>-<random>`, each with a fresh token and the roles given. */
export function makePeople<K extends string>(roles: Record<K, string>): Record<K, Person> {
  const suffix = randomUUID().slice(0, 6);
  return Object.fromEntries(
    Object.entries(roles).map(([name, list]) => [
      name,
      { principal: `${name}-${suffix}`, token: `${name}-token-${randomUUID()}`, roles: list },
    ]),
  ) as Record<K, Person>;
}

/** A token file (principal, token, roles on each line) of `people`, in a fresh temporary folder. */
export function writeTokensFile(people: Record<string, Person>): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-approvals-')), 'tokens');
  const lines = Object.values(people).map((p) => `${p.principal} ${p.token} ${p.roles}`.trim());
  writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  return file;
}

/** What approvals_inbox lists of one question. */
export interface InboxEntry {
  taskId: string;
  key: string;
  accepted: number;
  required: number;
  message: string;
  dueAt?: string;
}

/** 2025-11-25 SDK clients acting as people over one server's HTTP endpoint; closes them all at the end. */
export class ApprovalClients {
  private readonly open: McpClient[] = [];
  /** The forms put to clients of {@link connect} with `forms`, in order. */
  readonly asked: ElicitRequest['params'][] = [];

  /**
   * A client with task support acting as `person` on the server at `url`; with `forms`, it also declares form
   * elicitation and answers each form with `forms` (the forms it was shown are in `asked`); `fetch` replaces the
   * transport's.
   */
  async connect(
    url: string,
    person: Person,
    forms?: (params: ElicitRequest['params']) => ElicitResult,
    fetch?: typeof globalThis.fetch,
  ): Promise<McpClient> {
    const capabilities = { tasks: { requests: {} }, ...(forms && { elicitation: { form: {} } }) };
    const client = new McpClient({ name: `approvals-${person.principal}`, version: '1.0.0' }, { capabilities });
    if (forms) {
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        this.asked.push(request.params);
        return forms(request.params);
      });
    }
    const headers = { authorization: `Bearer ${person.token}` };
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers }, ...(fetch && { fetch }) }));
    this.open.push(client);
    return client;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.open.map((client) => client.close().catch(() => undefined)));
  }
}

export function textOf(result: CallToolResult): string {
  return (result.content[0] as { text: string }).text;
}

/** The caller's inbox, first page. */
export async function inbox(client: McpClient): Promise<InboxEntry[]> {
  const result = (await client.callTool({ name: 'approvals_inbox', arguments: {} })) as CallToolResult;
  if (result.isError) throw new Error(`approvals_inbox failed: ${textOf(result)}`);
  return (result.structuredContent as { items: InboxEntry[] }).items;
}

/** approvals_answer with these arguments. */
export function callAnswer(client: McpClient, args: Record<string, unknown>): Promise<CallToolResult> {
  return client.callTool({ name: 'approvals_answer', arguments: args }) as Promise<CallToolResult>;
}

/** An approval (`decision` in the form) of the question `approval` of `taskId`, with extra arguments. */
export function answer(client: McpClient, taskId: string, decision: 'approve' | 'reject', extra: Record<string, unknown> = {}) {
  return callAnswer(client, { taskId, key: 'approval', action: 'accept', content: { decision }, ...extra });
}

/** Polls the caller's inbox until `taskId` shows there and `accept` holds (visibility lags); returns its entry. */
export async function awaitInInbox(
  client: McpClient,
  taskId: string,
  accept: (entry: InboxEntry) => boolean = () => true,
  timeoutMs = 30_000,
): Promise<InboxEntry> {
  let last: InboxEntry | undefined;
  return pollUntil(
    async () => {
      last = (await inbox(client)).find((candidate) => candidate.taskId === taskId);
      return last && accept(last) ? last : undefined;
    },
    { timeoutMs, intervalMs: 250, what: () => `task ${taskId} in the inbox as expected (last: ${JSON.stringify(last)})` },
  );
}

/** `temporal-mcp-tasks approvals …` as a person runs it from the checkout, with `env` added; `input` goes to its stdin. */
export function approvalsCommand(args: string[], env: Record<string, string> = {}, input?: string) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'approvals', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    input,
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  return { code: run.status, out: run.stdout, err: run.stderr };
}

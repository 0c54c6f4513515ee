/**
 * One approver of the soak: a person holding the approver role, as an MCP SDK client over Streamable HTTP that polls
 * `approvals_inbox` and approves what it lists with `approvals_answer`, through the soak's kills. A call that fails
 * (a lost connection, a server that is restarting, a session the restarted server does not know, a timeout) is sent
 * again on a fresh connection, as a person would press again. What became of each answer is kept for the books.
 */
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { backoffMs, sleep } from '../../src/util/wait';
import type { StackPerson } from './soak-stack';

/** The invoice's question to its approvers. */
export const APPROVAL_KEY = 'approval';

/**
 * What one approver's answer to one invoice became, as far as the approver can tell:
 * - `recorded`: the first reply said it was recorded;
 * - `recorded-on-retry`: the reply of an earlier attempt was lost, a later attempt was recorded (so the lost one was not);
 * - `taken-before-lost-reply`: the reply of an earlier attempt was lost, and the retry was refused because this
 *   approver had answered already: the lost attempt was taken;
 * - `refused`: refused for another reason with no attempt lost before (the question closed first: the other approver
 *   was quicker), so nothing of this approver's was recorded;
 * - `unknown`: an attempt's reply was lost and no later reply told (the soak stopped, or a later refusal did not say).
 */
export type AnswerFate = 'recorded' | 'recorded-on-retry' | 'taken-before-lost-reply' | 'refused' | 'unknown';

/** The fates whose answer must be in the invoice's result. */
export const COUNTED_FATES: readonly AnswerFate[] = ['recorded', 'recorded-on-retry', 'taken-before-lost-reply'];

/** The refusal of a second answer by the same person (the contract's wording, as the tool says it). */
const ANSWERED_ALREADY = 'You have answered this question already';
/** Refusals that leave the answer's fate open: the workflow may still take it ("it may be recorded later"). */
const OUTCOME_OPEN = /did not take the answer within|was not ready to take the answer within/;

const INBOX_INTERVAL_MS = 500;
const INBOX_TIMEOUT_MS = 20_000;
/** Above the bridge's own patience with Temporal (30 s), so that its answer comes before ours gives up. */
const ANSWER_TIMEOUT_MS = 45_000;
const CONNECT_TIMEOUT_MS = 15_000;

/** One approver's loop and its tally (see the module's comment). */
export class SoakApprover {
  /** By task id: what became of this approver's answer to the task's approval. */
  readonly fates = new Map<string, AnswerFate>();
  /** What went wrong, one line each. */
  readonly problems: string[] = [];
  /** Questions the inbox listed again after this approver's answer to them was known to be recorded. */
  askedAgain = 0;
  /** Refusals "answered already" of an answer whose earlier attempts all had a reply (so none was lost). */
  answeredTwice = 0;
  /** Connections dropped after a failed call. */
  reconnects = 0;
  /**
   * Requests that had no reply by their deadline: the server must answer every request in time, with its result or
   * an error saying Temporal is unavailable, whatever the network between it and Temporal does. A lost connection (a
   * kill) is not counted: it ends the request at once.
   */
  lateReplies = 0;
  private client?: McpClient;
  private failuresInRow = 0;
  /** Timeouts counted already (a connect's is seen again by the call that connected). */
  private readonly noted = new WeakSet<object>();

  constructor(
    readonly person: StackPerson,
    private readonly url: string,
    private readonly log: (line: string) => void,
  ) {}

  get principal(): string {
    return this.person.principal;
  }

  /** Polls the inbox and approves what it lists until `stop` aborts; never throws. */
  async run(stop: AbortSignal): Promise<void> {
    try {
      while (!stop.aborted) {
        const items = await this.inbox();
        for (const taskId of items ?? []) {
          if (stop.aborted) break;
          await this.approve(taskId, stop);
        }
        await sleep(items ? INBOX_INTERVAL_MS : backoffMs(this.failuresInRow, 250, 2_000), stop);
      }
    } finally {
      await this.client?.close().catch(() => undefined);
      this.client = undefined;
    }
  }

  /** The task ids of the approvals the inbox lists, every page; undefined when a call failed (the connection is dropped). */
  private async inbox(): Promise<string[] | undefined> {
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      let result: CallToolResult;
      try {
        const client = await this.connected();
        const args = cursor === undefined ? {} : { cursor };
        result = (await client.callTool({ name: 'approvals_inbox', arguments: args }, undefined, {
          timeout: INBOX_TIMEOUT_MS,
        })) as CallToolResult;
      } catch (error) {
        this.noteLate('approvals_inbox', INBOX_TIMEOUT_MS, error);
        await this.drop('approvals_inbox', error);
        return undefined;
      }
      this.failuresInRow = 0;
      if (result.isError) {
        // Temporal unavailable, for instance: the tool says so; the next poll tries again.
        this.log(`soak: ${this.principal}: approvals_inbox: ${textOf(result)}`);
        return undefined;
      }
      const page = result.structuredContent as { items: { taskId: string; key: string }[]; nextCursor?: string };
      ids.push(...page.items.filter((item) => item.key === APPROVAL_KEY).map((item) => item.taskId));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return ids;
  }

  /** Approves `taskId`'s question, sending it again until a reply says what became of it, or `stop` aborts. */
  private async approve(taskId: string, stop: AbortSignal): Promise<void> {
    const earlier = this.fates.get(taskId);
    if (earlier && COUNTED_FATES.includes(earlier)) {
      this.askedAgain++;
      this.problems.push(`${this.principal}: the inbox listed ${taskId} again after the answer to it was recorded (${earlier})`);
    }
    // An attempt whose reply was lost may have been taken: a refusal as "answered already" then tells it was.
    let lostReply = earlier === 'unknown';
    while (!stop.aborted) {
      let result: CallToolResult;
      try {
        const client = await this.connected();
        result = (await client.callTool(
          {
            name: 'approvals_answer',
            arguments: {
              taskId,
              key: APPROVAL_KEY,
              action: 'accept',
              content: { decision: 'approve' },
              comment: `soak: ${this.principal}`,
            },
          },
          undefined,
          { timeout: ANSWER_TIMEOUT_MS },
        )) as CallToolResult;
      } catch (error) {
        this.noteLate(`approvals_answer ${taskId}`, ANSWER_TIMEOUT_MS, error);
        lostReply = true;
        this.settle(taskId, 'unknown');
        await this.drop(`approvals_answer ${taskId}`, error);
        await sleep(backoffMs(this.failuresInRow, 250, 2_000), stop);
        continue;
      }
      this.failuresInRow = 0;
      const text = textOf(result);
      if (!result.isError) {
        this.settle(taskId, lostReply ? 'recorded-on-retry' : 'recorded');
        return;
      }
      if (text.startsWith(ANSWERED_ALREADY)) {
        if (lostReply) {
          this.settle(taskId, 'taken-before-lost-reply');
          return;
        }
        this.answeredTwice++;
        this.problems.push(
          `${this.principal}: approvals_answer ${taskId} was refused as answered already, ` +
            (earlier ? `after the answer to it was recorded (${earlier})` : 'though this approver had not answered it before'),
        );
        return;
      }
      if (OUTCOME_OPEN.test(text)) {
        lostReply = true;
        this.settle(taskId, 'unknown');
        this.log(`soak: ${this.principal}: approvals_answer ${taskId}: ${text}; answering again`);
        await sleep(1_000, stop);
        continue;
      }
      // Most often the other approver closed the question first. After a lost reply it cannot be told whether the
      // lost attempt was taken: the result decides.
      if (!lostReply) this.settle(taskId, 'refused');
      return;
    }
  }

  /** Counts `error` as a late reply (and a problem) when it is the client's timeout of `what` after `timeoutMs`. */
  private noteLate(what: string, timeoutMs: number, error: unknown): void {
    // The SDK's own timeout; a JSON-RPC error of the same code in an HTTP answer (an unknown session) is not one.
    if (!(error instanceof McpError) || error.code !== ErrorCode.RequestTimeout || this.noted.has(error)) return;
    this.noted.add(error as object);
    this.lateReplies++;
    this.problems.push(`${this.principal}: ${what} had no reply within its deadline of ${timeoutMs / 1000} s`);
  }

  /** Keeps what became of the answer to `taskId`; an answer known to be taken stays so, whatever a repeat hears. */
  private settle(taskId: string, fate: AnswerFate): void {
    const known = this.fates.get(taskId);
    if (known && COUNTED_FATES.includes(known)) return;
    this.fates.set(taskId, fate);
  }

  private async connected(): Promise<McpClient> {
    if (this.client) return this.client;
    const client = new McpClient({ name: `soak-${this.principal}`, version: '1.0.0' }, { capabilities: {} });
    const headers = { authorization: `Bearer ${this.person.token}` };
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(this.url), { requestInit: { headers } }), {
        timeout: CONNECT_TIMEOUT_MS,
      });
    } catch (error) {
      this.noteLate('initialize', CONNECT_TIMEOUT_MS, error);
      await client.close().catch(() => undefined);
      throw error;
    }
    this.client = client;
    return client;
  }

  /** Drops the connection after a failed call; the next call connects again. Logs the first failure of a run of them. */
  private async drop(what: string, error: unknown): Promise<void> {
    if (this.failuresInRow++ === 0) this.log(`soak: ${this.principal}: ${what}: ${(error as Error).message}; connecting again`);
    const client = this.client;
    this.client = undefined;
    if (client) {
      this.reconnects++;
      await client.close().catch(() => undefined);
    }
  }
}

function textOf(result: CallToolResult): string {
  const first = result.content?.[0];
  return first?.type === 'text' ? first.text : '';
}

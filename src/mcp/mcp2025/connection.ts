/**
 * One 2025-11-25 connection: what it holds (open questions, progress tokens, last statuses) and how a call goes on
 * it (its {@link CallPort}), tasks/get, tasks/list, tasks/cancel and tasks/result. Tasks themselves live in Temporal.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ErrorCode,
  RELATED_TASK_META_KEY,
  type CallToolRequest,
  type CallToolResult,
  type ElicitRequest,
  type ServerNotification,
  type ServerRequest,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import { REPLAYED_META } from '../../contract/wire';
import { idempotencyOf, pendingTaskResult, ttlOf } from '../calls/call-tool';
import { planCall, type CallAnswer, type CallPlan } from '../calls/call-plan';
import { runCall, type CallPort } from '../calls/call-runner';
import { setBounded } from '../../util/bounded';
import { log } from '../../util/log';
import { AskingPace, refusalBackoffMs } from './asking-pace';
import { InputChannel, type InputChannelOptions } from './input-channel';
import { JsonRpcError } from '../protocol/wire-errors';
import { asToolResult, callAnswerOf } from '../protocol/outcome';
import { type TaskPort, type TaskView, toolErrorOf, webUiMeta } from '../../core';
import type { Approvals } from '../../approvals/approvals';
import type { ToolDefinition, WorkflowTool } from '../tools/types';
import type { InputContent } from '../../contract/task-contract';
import { toolTables } from '../tools';
import type { CallSeal } from '../protocol/signed-call';
import { sleep } from '../../util/wait';

/** Key of the line a host may hand the model as soon as a task exists (MCP 2025-11-25). */
const MODEL_IMMEDIATE_RESPONSE_META = 'io.modelcontextprotocol/model-immediate-response';

/**
 * The task as MCP 2025-11-25 reports it: a tool result with `isError: true` makes the task `failed`
 * ("For tool calls specifically, this includes cases where the tool call result has isError set to true"), with the
 * error text as its status message. tasks/result still returns that CallToolResult.
 */
export function mcp2025Task(view: TaskView): Task {
  const toolError = toolErrorOf(view);
  if (toolError === undefined) return view.task;
  return { ...view.task, status: 'failed', statusMessage: toolError };
}

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Tasks a connection remembers at most (last status, progress token and value); the oldest are forgotten first. */
const PER_CONNECTION_LIMIT = 1000;

/** Everything one MCP server instance needs; shared by all connections of a process. */
export interface Mcp2025Dependencies {
  core: TaskPort;
  approvals: Approvals;
  tools: readonly ToolDefinition[];
  /** The principal a request acts for; one local principal unless the transport authenticates. */
  principalOf(extra: Extra): string;
  /** The caller's roles, from its credentials. */
  rolesOf(extra: Extra): string[];
  input: InputChannelOptions;
  /** How long a plain (not task-augmented) call of a task tool waits before it answers with the task id. */
  inlineBudgetMs: number;
  /** Seals the calls that wait for a confirmation before they start (`confirm_start`). */
  seal: CallSeal;
  /**
   * Whether `tasks/list` is served and declared (`tasks.list`); without it the method is -32601. Off where callers are
   * not told apart (HTTP with `--no-auth`: everyone who reaches the address is one principal).
   */
  listing: boolean;
}

/**
 * What one 2025-11-25 connection holds: its open questions (an {@link InputChannel} per principal), the progress
 * tokens of the tasks it created, the last status and progress it reported. Tasks themselves live in Temporal.
 */
export class Mcp2025Connection {
  private readonly channels = new Map<string, InputChannel>();
  /** The progress token of a task-augmented call stays valid for the task's life (MCP 2025-11-25). */
  private readonly progressTokens = new Map<string, string | number>();
  /** Last status this connection saw per task: a change is announced with notifications/tasks/status. */
  private readonly seen = new Map<string, Task['status']>();
  /** Last progress value sent per progress token: successive tasks/result calls on one token never go back. */
  private readonly progressSent = new Map<string | number, number>();
  private readonly byName: ReadonlyMap<string, ToolDefinition>;
  private readonly workflowTools: ReadonlyMap<string, WorkflowTool<any, any>>;

  constructor(
    private readonly server: Server,
    private readonly deps: Mcp2025Dependencies,
  ) {
    ({ byName: this.byName, workflowTools: this.workflowTools } = toolTables(deps.tools));
  }

  /**
   * tools/call: carries out its {@link planCall plan} (`planned`, when it was made where the request was received); a
   * task-augmented call answers with the task, a plain one waits inline.
   */
  callTool(request: CallToolRequest, extra: Extra, planned?: CallPlan): Promise<object> {
    const { name, arguments: args, task } = request.params;
    const capabilities = this.server.getClientCapabilities();
    const plan =
      planned ?? planCall({ generation: 'mcp2025', taskAugmented: task !== undefined, name, args, tools: this.byName, capabilities });
    const { core, approvals, seal } = this.deps;
    return runCall(plan, this.callPort(request, extra), { core, approvals, seal, workflowTools: this.workflowTools });
  }

  /**
   * How a call goes on this connection: questions are elicitations on the call's own stream, asked again after an
   * answer that did not fit (after a pause that grows with each refusal in a row); a task-augmented call answers with
   * the task; a plain one waits inline, asking the task's questions, up to its budget.
   */
  private callPort(request: CallToolRequest, extra: Extra): CallPort<object> {
    const principal = this.deps.principalOf(extra);
    const elicit = (params: ElicitRequest['params']) =>
      this.server.elicitInput(params, {
        relatedRequestId: extra.requestId,
        signal: extra.signal,
        timeout: this.deps.input.elicitationTimeoutMs,
      });
    return {
      caller: { principal, roles: this.deps.rolesOf(extra) },
      answer: answerOf,
      startOptions: () => ({
        requestedTtl: ttlOf(request.params.task),
        ...idempotencyOf(request.params._meta as Record<string, unknown> | undefined),
      }),
      askConfirmation: async (question, refusals) => {
        if (refusals > 0) {
          await sleep(refusalBackoffMs(refusals), extra.signal);
          if (extra.signal.aborted) throw cancelled();
        }
        return { kind: 'answered', answer: await elicit(question.request) };
      },
      askForm: async (form) => {
        const answer = await elicit({ mode: 'form', ...form });
        return { kind: 'answered', answer: { action: answer.action, ...(answer.content && { content: answer.content as InputContent }) } };
      },
      awaitResult: async (taskId, budgetMs) => {
        const answer = await this.awaitResult(taskId, extra, budgetMs);
        return answer && asToolResult(answer);
      },
      created: (view) => this.observe(view),
      taskAnswer: (view, plan) => {
        const token = extra._meta?.progressToken;
        if (token !== undefined) setBounded(this.progressTokens, view.task.taskId, token, PER_CONNECTION_LIMIT);
        const immediate = plan.tool.immediateResponse?.(plan.input, view.task.taskId);
        const meta = {
          ...(immediate && { [MODEL_IMMEDIATE_RESPONSE_META]: immediate }),
          ...(view.replayed && { [REPLAYED_META]: true }),
          ...webUiMeta(view),
        };
        return { task: mcp2025Task(view), ...(Object.keys(meta).length > 0 && { _meta: meta }) };
      },
      waitInline: async (view) => {
        const { taskId } = view.task;
        const answer = await this.awaitResult(taskId, extra, this.deps.inlineBudgetMs);
        if (answer) return answerOf(answer);
        const now = await this.deps.core.get(taskId, principal);
        const unaskable = now.input !== undefined && !this.channelFor(principal).canAsk(now.input);
        return pendingTaskResult(now, unaskable ? { kind: 'question' } : { kind: 'budget', budgetMs: this.deps.inlineBudgetMs });
      },
    };
  }

  /**
   * tasks/get, with the workflow's Web UI link in `_meta`; a client that only polls is offered the pending question on
   * its standalone stream.
   */
  async getTask(taskId: string, extra: Extra): Promise<Task & { _meta?: Record<string, unknown> }> {
    const principal = this.deps.principalOf(extra);
    const view = await this.deps.core.get(taskId, principal);
    this.observe(view);
    if (view.input) this.channelFor(principal).offer(view);
    const meta = webUiMeta(view);
    return { ...mcp2025Task(view), ...(Object.keys(meta).length > 0 && { _meta: meta }) };
  }

  /** tasks/list: the caller's tasks, a page at a time. */
  async listTasks(cursor: string | undefined, extra: Extra): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const page = await this.deps.core.list(this.deps.principalOf(extra), cursor);
    return { tasks: page.views.map(mcp2025Task), ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }) };
  }

  /** tasks/cancel: the task reads cancelled before this returns; a terminal one gets -32602. */
  async cancelTask(taskId: string, extra: Extra): Promise<Task> {
    const view = await this.deps.core.cancel(taskId, this.deps.principalOf(extra));
    this.observe(view);
    return mcp2025Task(view);
  }

  /**
   * Waits until the task is terminal and returns its result, or undefined once `budgetMs` has passed. While it waits
   * and the task needs input, asks for it on this request's stream, one question at a time (a dismissed one is asked
   * again on this request only after MCP_INPUT_DISMISS_COOLDOWN_MS, see {@link AskingPace}). With a progress token on
   * the request, sends progress notifications as it goes.
   */
  async awaitResult(taskId: string, extra: Extra, budgetMs = Infinity): Promise<CallAnswer | undefined> {
    return this.deps.core.waiting(this.deps.principalOf(extra), () => {
      log.debug('waiting for the task to finish', { taskId, ...(budgetMs !== Infinity && { budgetMs }) });
      return this.waitForResult(taskId, extra, budgetMs);
    });
  }

  private async waitForResult(taskId: string, extra: Extra, budgetMs: number): Promise<CallAnswer | undefined> {
    const principal = this.deps.principalOf(extra);
    const { core } = this.deps;
    const channel = this.channelFor(principal);
    const progress = progressReporter(taskId, extra, this.progressTokens.get(taskId), this.progressSent);
    // tasks/result keeps blocking through a Temporal outage (the follower waits it out); a bounded wait ends at its budget.
    const follower = core.follow(taskId, principal, { signal: extra.signal, deadline: Date.now() + budgetMs });
    // One question at a time, in the order the workflow asked them; a dismissed one lets the others be asked at once,
    // and holds back every question it leaves for a while (see AskingPace).
    const pace = new AskingPace(this.deps.input.dismissCooldownMs);
    for await (const view of follower) {
      this.observe(view);
      progress(view);
      if (isTerminal(view.task.status)) return callAnswerOf(view);
      // Never a question this connection already answered.
      const next = pace.next(view.inputs.filter((candidate) => !channel.answeredHere(taskId, candidate.key)));
      if (next.kind === 'none') continue;
      // Held back: read again when the pause ends, or sooner if the task changes (it may end, or ask something new).
      if (next.kind === 'pause') {
        follower.readAgainWithin(next.waitMs);
        continue;
      }
      const { input } = next;
      // A bounded wait (a plain call, task_result) ends at a question this client cannot be asked: it is answered
      // with task_respond. tasks/result keeps blocking (the question may be answered elsewhere).
      if (!channel.canAsk(input)) {
        if (budgetMs !== Infinity) return undefined;
        continue;
      }
      const outcome = await channel.ask({ ...view, input }, extra.requestId, extra.signal);
      if (outcome.kind === 'dismissed') {
        pace.dismissedOne(input.key);
        // The other open questions are asked at once: nothing changed in Temporal to wake the follower.
        follower.readAgainIn(0);
      } else if (outcome.kind === 'invalid') {
        // A bad answer is asked again, saying what was wrong (tasks/result blocks until the task is terminal), after a
        // pause that grows with each refusal in a row: a client that keeps answering badly is not asked in a hot loop.
        pace.refused();
        follower.readAgainIn(0);
      } else pace.settled();
    }
    if (extra.signal.aborted) throw cancelled();
    return undefined;
  }

  /** Ends what the connection has under way once it closed: pushed questions, their timers and watches. */
  close(): void {
    for (const channel of this.channels.values()) channel.close();
    this.channels.clear();
  }

  private channelFor(principal: string): InputChannel {
    let channel = this.channels.get(principal);
    if (!channel) {
      channel = new InputChannel(this.server, this.deps.core, principal, this.deps.input);
      this.channels.set(principal, channel);
    }
    return channel;
  }

  /** Records what this connection saw of a task; announces a status change; forgets a finished task. */
  private observe(view: TaskView): void {
    const task = mcp2025Task(view);
    const before = this.seen.get(task.taskId);
    if (isTerminal(task.status)) {
      this.seen.delete(task.taskId);
      const token = this.progressTokens.get(task.taskId);
      if (token !== undefined) this.progressSent.delete(token);
      this.progressTokens.delete(task.taskId);
      for (const channel of this.channels.values()) channel.forget(task.taskId);
    } else setBounded(this.seen, task.taskId, task.status, PER_CONNECTION_LIMIT);
    if (before !== undefined && before !== task.status) {
      this.server.notification({ method: 'notifications/tasks/status', params: task }).catch(() => undefined);
    }
  }
}

/**
 * Progress notifications for a request that carries a progress token (or for a task whose creating call carried one):
 * the workflow's published progress when it
 * has some, otherwise a keep-alive with the status message at most every 10 s. Values only ever increase.
 */
function progressReporter(
  taskId: string,
  extra: Extra,
  taskToken: string | number | undefined,
  sent: Map<string | number, number>,
): (view: TaskView) => void {
  const token = extra._meta?.progressToken ?? taskToken;
  if (token === undefined) return () => undefined;
  let last = sent.get(token) ?? 0;
  let lastSentAt = 0;
  return (view) => {
    const published = view.progress;
    const message = published?.message ?? view.task.statusMessage;
    let value: number;
    if (published && published.progress > last) value = published.progress;
    else if (Date.now() - lastSentAt >= 10_000) value = last + (published ? 0.001 : 1);
    else return;
    last = value;
    setBounded(sent, token, value, PER_CONNECTION_LIMIT);
    lastSentAt = Date.now();
    extra
      .sendNotification({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress: value,
          ...(published?.total !== undefined && { total: published.total }),
          ...(message && { message }),
          // Everything related to a task carries its related-task _meta (MCP 2025-11-25, tasks).
          _meta: { [RELATED_TASK_META_KEY]: { taskId } },
        },
      })
      .catch(() => undefined);
  };
}

/** A call's answer in this generation: a tool result, or its JSON-RPC error thrown for the SDK to send. */
export function answerOf(answer: CallAnswer): CallToolResult {
  if (answer.kind === 'error') throw JsonRpcError.of(answer.error);
  return answer.result;
}

/** What a request the client cancelled ends with (the SDK sends nothing for it). */
function cancelled(): JsonRpcError {
  return new JsonRpcError(ErrorCode.ConnectionClosed, 'Request was cancelled');
}

/**
 * How a tools/call goes in MCP 2026-07-28: the server sends no requests of its own, so a question is an
 * `input_required` result whose sealed `requestState` the client brings back, with its answers, on the retried call.
 * A task-augmented call (the tasks extension, SEP-2663) answers with `resultType: "task"`; a plain one waits inline.
 */
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { CallToolResult as ToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type ClientCapabilities,
  type InputRequiredResult,
  CLIENT_CAPABILITIES_META_KEY,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { FormInputRequest, PendingInput } from '../../contract/task-contract';
import { annotateRequest } from '../../shared/telemetry';
import { idempotencyOf, pendingTaskResult } from '../calls/call-tool';
import type { CallAnswer } from '../calls/call-plan';
import type { Asked, CallPort, FormAnswer } from '../calls/call-runner';
import { canElicit, type ElicitationCapability } from '../calls/can-elicit';
import { CONFIRMATION_KEY, previousAnswerProblem } from '../protocol/confirmation';
import { asToolResult, callAnswerOf } from '../protocol/outcome';
import { isInvalidParams, jsonRpcFailureOf } from '../protocol/wire-errors';
import { type CreatedTask, type TaskPort, type TaskView, webUiMeta } from '../../core';
import { inputRequestsOf, mcp2026Task } from './task-shape';

/**
 * What a plain call carries through the client between `input_required` rounds (sealed by the SDK's codec, bound to
 * the principal, short-lived): the round's origin (the tool and a digest of its arguments: a state is honoured only
 * on a retry of the same call) and what the round waits on, a task's questions or the confirmation asked before start.
 */
export type ResumeState = Origin & ({ kind: 'task'; taskId: string } | { kind: 'confirm' } | { kind: 'direct' });

/** The call a round was issued for: the tool and a digest of its arguments. */
export type Origin = { tool: string; args: string };

/** What a call of this generation answers with. */
export type Mcp2026Answer = CallToolResult | InputRequiredResult;

/** The key of the form a direct tool puts to its caller (see `DirectToolContext.ask`) among a round's inputRequests. */
const DIRECT_FORM_KEY = 'form';

/** What every call of a process shares. */
export interface Mcp2026CallDependencies {
  core: TaskPort;
  /** How long a plain call of a task tool waits before it answers with the task id. */
  inlineBudgetMs: number;
  /** Seals the `requestState` of an input_required round; bound to the principal, so no one else can resume it. */
  requestState: RequestStateCodec<ResumeState>;
}

/** One tools/call of a 2026-07-28 request: the {@link CallPort} the call runner carries it out through. */
export class Mcp2026Call implements CallPort<Mcp2026Answer> {
  constructor(
    private readonly deps: Mcp2026CallDependencies,
    readonly caller: { principal: string; roles: readonly string[] },
    private readonly ctx: ServerContext,
    /** The call as it came; absent for a tool that is not declared. */
    private readonly origin: Origin | undefined,
    private readonly meta: Record<string, unknown> | undefined,
    /** The round this retried call answers, if any (checked to be this call's). */
    private readonly resume: ResumeState | undefined,
  ) {}

  answer(answer: CallAnswer): CallToolResult {
    return answerOf(answer);
  }

  startOptions() {
    return idempotencyOf(this.meta);
  }

  carriedConfirmation(): unknown {
    return this.resume?.kind === 'confirm' ? this.responses()?.[CONFIRMATION_KEY] : undefined;
  }

  /** A question is a round of its own: the retried call brings the answer ({@link carriedConfirmation}). */
  async askConfirmation(question: PendingInput): Promise<Asked<Mcp2026Answer>> {
    return { kind: 'ends', answer: await this.inputRound([question], { kind: 'confirm' }) };
  }

  /** The answer the retried call carries, if any; otherwise the call ends with the form as an input_required round. */
  async askForm(request: Omit<FormInputRequest, 'mode'>): Promise<Asked<Mcp2026Answer, FormAnswer>> {
    const answer = this.resume?.kind === 'direct' ? this.responses()?.[DIRECT_FORM_KEY] : undefined;
    const { action, content } = (answer ?? {}) as { action?: unknown; content?: unknown };
    if (action === 'accept' || action === 'decline' || action === 'cancel') {
      const reply: FormAnswer = {
        action,
        ...(action === 'accept' && typeof content === 'object' && content !== null && { content: content as FormAnswer['content'] }),
      };
      return { kind: 'answered', answer: reply };
    }
    return {
      kind: 'ends',
      answer: await this.inputRound([{ key: DIRECT_FORM_KEY, request: { mode: 'form', ...request } }], { kind: 'direct' }),
    };
  }

  /** No server-to-client requests in this generation: waits without asking; a question is answered with task_respond. */
  async awaitResult(taskId: string, budgetMs: number): Promise<ToolResult | undefined> {
    const { core } = this.deps;
    return core.waiting(this.caller.principal, async () => {
      const follower = core.follow(taskId, this.caller.principal, { signal: this.ctx.mcpReq.signal, deadline: Date.now() + budgetMs });
      for await (const view of follower) {
        if (isTerminal(view.task.status)) return asToolResult(callAnswerOf(view));
        if (view.inputs.length > 0) return undefined;
      }
      return undefined;
    });
  }

  taskAnswer(view: CreatedTask): CallToolResult {
    const webUi = webUiMeta(view);
    return {
      resultType: 'task',
      ...mcp2026Task(view),
      ...(Object.keys(webUi).length > 0 && { _meta: webUi }),
    } as unknown as CallToolResult;
  }

  waitInline(view: TaskView): Promise<Mcp2026Answer> {
    return this.awaitPlainCall(view);
  }

  /** A retried plain call whose round asked its task's questions: hands the answers to the task, then goes on waiting. */
  async resumeTask(taskId: string): Promise<Mcp2026Answer> {
    const { core } = this.deps;
    const { principal } = this.caller;
    annotateRequest({ taskId });
    let view = await core.get(taskId, principal);
    let problem: string | undefined;
    const responses = this.responses();
    if (responses) {
      try {
        await core.answer(view, responses, { principal, via: 'input_required' });
      } catch (error) {
        if (!isInvalidParams(error)) throw error;
        // An answer that does not fit is asked again, saying what was wrong.
        problem = jsonRpcFailureOf(error)!.message;
      }
      // Read again: the answers just given are no longer outstanding.
      view = await core.get(taskId, principal);
    }
    return this.awaitPlainCall(view, problem);
  }

  /**
   * A plain call waits for its task inline, up to the budget. A question is asked the 2026 way: an input_required
   * result whose `requestState` names the task, answered by the retried call's `inputResponses`.
   */
  private async awaitPlainCall(created: TaskView, problem?: string): Promise<Mcp2026Answer> {
    const { core, inlineBudgetMs } = this.deps;
    const { principal } = this.caller;
    const elicitation = capabilitiesOf(this.ctx).elicitation as ElicitationCapability | undefined;
    return core.waiting(principal, async () => {
      const follower = core.follow(created.task.taskId, principal, {
        from: created,
        signal: this.ctx.mcpReq.signal,
        deadline: Date.now() + inlineBudgetMs,
      });
      for await (const view of follower) {
        if (isTerminal(view.task.status)) return answerOf(callAnswerOf(view));
        const askable = view.inputs.filter((input) => canElicit(elicitation, input));
        if (view.inputs.length > 0 && askable.length === view.inputs.length) {
          const inputs = problem
            ? askable.map((input) => ({
                ...input,
                request: { ...input.request, message: previousAnswerProblem(problem) + input.request.message },
              }))
            : askable;
          return await this.inputRound(inputs, { kind: 'task', taskId: view.task.taskId });
        }
        if (view.inputs.length > 0) return pendingTaskResult(view, { kind: 'question' }) as CallToolResult;
      }
      if (this.ctx.mcpReq.signal.aborted) throw new ProtocolError(ProtocolErrorCode.InternalError, 'Request was cancelled');
      return pendingTaskResult(follower.latest ?? created, { kind: 'budget', budgetMs: inlineBudgetMs }) as CallToolResult;
    });
  }

  /** An input_required round: the questions, and the sealed state the retried call brings back with its answers. */
  private async inputRound(
    inputs: PendingInput[],
    state: { kind: 'task'; taskId: string } | { kind: 'confirm' } | { kind: 'direct' },
  ): Promise<InputRequiredResult> {
    return {
      resultType: 'input_required',
      inputRequests: inputRequestsOf(inputs),
      requestState: await this.deps.requestState.mint({ ...this.origin!, ...state }, this.ctx),
    } as InputRequiredResult;
  }

  /** The answers this request carries (the SDK lifts `inputResponses` out of the params), when they are an object. */
  private responses(): Record<string, unknown> | undefined {
    const responses = this.ctx.mcpReq.inputResponses;
    return responses && typeof responses === 'object' && !Array.isArray(responses) ? (responses as Record<string, unknown>) : undefined;
  }
}

/** The client capabilities this request declared (2026-07-28 carries them per request). */
export function capabilitiesOf(ctx: ServerContext): ClientCapabilities {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return (envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined) ?? {};
}

/** A call's answer in this generation: a tool result, or its JSON-RPC error thrown as the SDK's `ProtocolError`. */
export function answerOf(answer: CallAnswer): CallToolResult {
  if (answer.kind === 'error') throw new ProtocolError(answer.error.code, answer.error.message, answer.error.data);
  return answer.result as CallToolResult;
}

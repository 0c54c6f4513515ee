/**
 * MCP 2026-07-28 requests (stateless, per-request `_meta`) and the tasks extension
 * `io.modelcontextprotocol/tasks` (SEP-2663), over the same Temporal-backed task core as 2025-11-25.
 *
 * The SDK (v2) serves the base protocol: `server/discover`, the per-request envelope, header checks, `resultType`,
 * `-32601` for `tasks/result` and `tasks/list`. This module adds the tools and the three task methods.
 */
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type ClientCapabilities,
  type InputRequiredResult,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { FormInputRequest, InputContent, PendingInput } from '../../shared/task-contract';
import { annotateRequest, traceRequest, type RequestScope } from '../../shared/telemetry';
import { APP_RESOURCES, readAppResource } from '../app/ui';
import { describeTool, directToolContext, idempotencyOf, pendingTaskResult } from '../calls/call-tool';
import {
  declinedConfirmation,
  planCall,
  TASKS_EXTENSION,
  unaskedConfirmation,
  type CallAnswer,
  type DirectPlan,
  type StartPlan,
} from '../calls/call-plan';
import { canElicit, type ElicitationCapability } from '../calls/can-elicit';
import { isInvalidParams, jsonRpcFailureOf, plainMessage } from '../protocol/wire-errors';
import { callResultOf } from '../protocol/outcome';
import { argumentsDigest } from '../../util/arguments-digest';
import { applyConfirmation, CONFIRMATION_KEY, previousAnswerProblem } from '../protocol/confirmation';
import type { CallSeal } from '../protocol/signed-call';
import { toolTables } from '../tools';
import type { TaskCore } from '../tasks/task-core';
import type { Approvals } from '../../approvals/approvals';
import { webUiMeta, type TaskView } from '../tasks/task-view';
import { detailedTask, inputRequestsOf, mcp2026Task } from './task-shape';
import type { DirectToolContext, ToolDefinition } from '../tools/types';

/**
 * What a plain call carries through the client between `input_required` rounds (sealed by the SDK's codec, bound to
 * the principal, short-lived): the round's origin (the tool and a digest of its arguments: a state is honoured only
 * on a retry of the same call) and what the round waits on, a task's questions or the confirmation asked before start.
 */
export type ResumeState = Origin & ({ kind: 'task'; taskId: string } | { kind: 'confirm' } | { kind: 'direct' });

/** The call a round was issued for: the tool and a digest of its arguments. */
type Origin = { tool: string; args: string };

/** The key of the form a direct tool puts to its caller (see `DirectToolContext.ask`) among a round's inputRequests. */
const DIRECT_FORM_KEY = 'form';

/** Thrown by a direct tool's `ask` on a call that carries no answer yet: the call answers with an input_required round. */
class FormRound {
  constructor(readonly request: Omit<FormInputRequest, 'mode'>) {}
}

/** Everything the 2026-07-28 front-end needs; shared by all requests of a process. */
export interface Mcp2026Dependencies {
  core: TaskCore;
  approvals: Approvals;
  tools: readonly ToolDefinition[];
  /** How long a plain call of a task tool waits before it answers with the task id. */
  inlineBudgetMs: number;
  /** Seals the `requestState` of an input_required round; bound to the principal, so no one else can resume it. */
  requestState: RequestStateCodec<ResumeState>;
  /** Seals the calls that wait for a confirmation before they start (`confirm_start`). */
  seal: CallSeal;
  serverInfo: { name: string; version: string };
  instructions: string;
}

const TaskIdParams = z.looseObject({ taskId: z.string() });

/**
 * Makes the MCP server that answers one 2026-07-28 request for `principal`. Called per request by the SDK's
 * handler; holds no state between requests (the tasks live in Temporal).
 */
export function createMcp2026Server(deps: Mcp2026Dependencies, principal: string, roles: readonly string[] = []): Server {
  const server = new Server(deps.serverInfo, {
    capabilities: { tools: {}, resources: {}, extensions: { [TASKS_EXTENSION]: {} } },
    instructions: deps.instructions,
    requestState: { verify: (state, ctx) => deps.requestState.verify(state, ctx) },
  });
  const { core } = deps;
  const { byName, workflowTools } = toolTables(deps.tools);
  /** A tools/call or tasks/* request in its span and log context. */
  const traced = <T>(method: string, params: { name?: unknown; taskId?: unknown; _meta?: unknown }, work: () => Promise<T>) => {
    const scope: RequestScope = { method, principal };
    if (typeof params.name === 'string') scope.tool = params.name;
    if (typeof params.taskId === 'string') scope.taskId = params.taskId;
    if (params._meta && typeof params._meta === 'object') scope.meta = params._meta as Record<string, unknown>;
    return traceRequest(scope, () =>
      protocolErrors(async () => {
        await core.quotas.takeOperation(principal);
        return work();
      }),
    );
  };

  server.setRequestHandler('tools/list', async () => ({ tools: deps.tools.map(describeTool) as never }));
  server.setRequestHandler('resources/list', async () => ({ resources: APP_RESOURCES }));
  server.setRequestHandler('resources/read', (request) => protocolErrors(() => readAppResource(request.params.uri)) as never);

  server.setRequestHandler('tools/call', (request, ctx) =>
    traced('tools/call', request.params, async (): Promise<CallToolResult | InputRequiredResult> => {
      const { name, _meta } = request.params;
      const args = request.params.arguments ?? {};
      // A call of a workflow tool is bound to its arguments as they came (the plan's check may strip what a
      // configured schema does not declare), and the round it resumes is checked before anything else.
      const origin = byName.get(name)?.kind === 'workflow' ? { tool: name, args: argumentsDigest(args) } : undefined;
      const resume = origin && resumeStateOf(ctx, origin);
      if (resume?.kind === 'task') return continueTask(resume.taskId, origin!, ctx);
      const plan = planCall({ generation: 'mcp2026', name, args, tools: byName, capabilities: capabilitiesOf(ctx) });
      if (plan.kind === 'error' || plan.kind === 'result') return answerOf(plan);
      if (plan.kind === 'direct') return runDirectTool(plan, args, ctx);
      return startWorkflow(plan, origin!, resume, _meta as Record<string, unknown> | undefined, ctx);
    }),
  );

  server.setRequestHandler('tasks/get', { params: TaskIdParams }, (params, ctx) =>
    traced('tasks/get', params, async () => {
      requireTasks(ctx);
      const view = await core.get(params.taskId, principal);
      const meta = webUiMeta(view);
      return { ...detailedTask(view), ...(Object.keys(meta).length > 0 && { _meta: meta }) } as never;
    }),
  );

  // The SDK lifts `inputResponses` out of every request's params into ctx.mcpReq.inputResponses.
  server.setRequestHandler('tasks/update', { params: TaskIdParams }, (params, ctx) =>
    traced('tasks/update', params, async () => {
      const { taskId } = params;
      requireTasks(ctx);
      // The client waits for the acknowledgement: a busy Temporal slows it down rather than fail it.
      const view = await core.getPatiently(taskId, principal);
      const responses = ctx.mcpReq.inputResponses;
      if (responses === undefined || responses === null || typeof responses !== 'object' || Array.isArray(responses)) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          'tasks/update needs params.inputResponses: an object of answers keyed by input request',
        );
      }
      // Unknown and already answered keys are ignored (SEP-2663); answers that do not fit fail the call, and none is passed on.
      await core.answer(view, responses as Record<string, unknown>, { principal, via: 'tasks/update' });
      return {};
    }),
  );

  // Cooperative and acknowledged only; a terminal task is left as it is.
  server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, (params, ctx) =>
    traced('tasks/cancel', params, async () => {
      const { taskId } = params;
      requireTasks(ctx);
      const view = await core.get(taskId, principal);
      if (!isTerminal(view.task.status)) {
        await core.cancel(taskId, principal).catch((error: unknown) => {
          // It ended between the read and the cancel: nothing to do.
          if (!isInvalidParams(error)) throw error;
        });
      }
      return {};
    }),
  );

  /** A retried plain call: hands its answers to its task, then goes on waiting. */
  async function continueTask(taskId: string, origin: Origin, ctx: ServerContext): Promise<CallToolResult | InputRequiredResult> {
    annotateRequest({ taskId });
    let view = await core.get(taskId, principal);
    let problem: string | undefined;
    const responses = ctx.mcpReq.inputResponses;
    if (responses && typeof responses === 'object') {
      try {
        await core.answer(view, responses as Record<string, unknown>, { principal, via: 'input_required' });
      } catch (error) {
        if (!isInvalidParams(error)) throw error;
        // An answer that does not fit is asked again, saying what was wrong.
        problem = plainMessage(error);
      }
      // Read again: the answers just given are no longer outstanding.
      view = await core.get(taskId, principal);
    }
    return awaitPlainCall(view, ctx, origin, problem);
  }

  /**
   * Carries out a plan that starts a workflow: its confirmation as an input_required round (answered by the retried
   * call's `inputResponses`), the start, then the answer the plan names.
   */
  async function startWorkflow(
    plan: StartPlan,
    origin: Origin,
    resume: ResumeState | undefined,
    meta: Record<string, unknown> | undefined,
    ctx: ServerContext,
  ): Promise<CallToolResult | InputRequiredResult> {
    // The request's own fields before anything is asked: a bad idempotency key asks nothing and starts nothing.
    const idempotency = idempotencyOf(meta);
    let input = plan.input;
    if (plan.confirmation) {
      const { confirm, question, askable } = plan.confirmation;
      const answer =
        resume?.kind === 'confirm' ? (ctx.mcpReq.inputResponses as Record<string, unknown> | undefined)?.[CONFIRMATION_KEY] : undefined;
      const outcome = answer === undefined ? undefined : applyConfirmation(confirm, plan.input, answer);
      if (outcome?.kind === 'declined') return answerOf(declinedConfirmation(plan, outcome.action));
      if (outcome?.kind !== 'start') {
        if (!askable) {
          return answerOf(unaskedConfirmation(plan, question, deps.seal.seal({ principal, tool: plan.tool.name, args: plan.input })));
        }
        const why = outcome?.kind === 'invalid' ? previousAnswerProblem(outcome.problem) : '';
        const asked = { ...question, request: { ...question.request, message: why + question.request.message } };
        return inputRound([asked], { kind: 'confirm', ...origin }, ctx);
      }
      input = outcome.input;
    }
    const view = await core.create(plan.tool, input, principal, idempotency);
    annotateRequest({ taskId: view.task.taskId });
    if (plan.then === 'task') {
      const webUi = webUiMeta(view);
      return {
        resultType: 'task',
        ...mcp2026Task(view),
        ...(Object.keys(webUi).length > 0 && { _meta: webUi }),
      } as unknown as CallToolResult;
    }
    if (plan.then === 'view') return pendingTaskResult(view, { kind: 'view' }) as CallToolResult;
    return awaitPlainCall(view, ctx, origin);
  }

  /**
   * A plain call waits for its task inline, up to the budget. A question is asked the 2026 way: an input_required
   * result whose `requestState` names the task, answered by the retried call's `inputResponses`.
   */
  async function awaitPlainCall(
    created: TaskView,
    ctx: ServerContext,
    origin: Origin,
    problem?: string,
  ): Promise<CallToolResult | InputRequiredResult> {
    const elicitation = capabilitiesOf(ctx).elicitation as ElicitationCapability | undefined;
    const endWait = await core.quotas.beginWait(principal);
    try {
      const follower = core.follow(created.task.taskId, principal, {
        from: created,
        signal: ctx.mcpReq.signal,
        deadline: Date.now() + deps.inlineBudgetMs,
      });
      for await (const view of follower) {
        if (isTerminal(view.task.status)) return callResultOf(view) as CallToolResult;
        const askable = view.inputs.filter((input) => canElicit(elicitation, input));
        if (view.inputs.length > 0 && askable.length === view.inputs.length) {
          const inputs = problem
            ? askable.map((input) => ({
                ...input,
                request: { ...input.request, message: previousAnswerProblem(problem) + input.request.message },
              }))
            : askable;
          return await inputRound(inputs, { kind: 'task', taskId: view.task.taskId, ...origin }, ctx);
        }
        if (view.inputs.length > 0) return pendingTaskResult(view, { kind: 'question' }) as CallToolResult;
      }
      if (ctx.mcpReq.signal.aborted) throw new ProtocolError(ProtocolErrorCode.InternalError, 'Request was cancelled');
      return pendingTaskResult(follower.latest ?? created, { kind: 'budget', budgetMs: deps.inlineBudgetMs }) as CallToolResult;
    } finally {
      endWait();
    }
  }

  async function runDirectTool(
    { tool, input, mayAsk }: DirectPlan,
    args: unknown,
    ctx: ServerContext,
  ): Promise<CallToolResult | InputRequiredResult> {
    // No server-to-client requests in this generation: wait without asking; a question is answered with task_respond.
    const awaitResult = async (taskId: string, budgetMs: number) => {
      const endWait = await core.quotas.beginWait(principal);
      try {
        return await waitInline(taskId, budgetMs);
      } finally {
        endWait();
      }
    };
    const origin = { tool: tool.name, args: argumentsDigest(args) };
    const resume = resumeStateOf(ctx, origin, 'direct');
    // A form is an input_required round: the tool runs again from the top on the retried call, which carries the answer.
    const answer = resume ? (ctx.mcpReq.inputResponses as Record<string, unknown> | undefined)?.[DIRECT_FORM_KEY] : undefined;
    const ask: DirectToolContext['ask'] = async (request) => {
      const { action, content } = (answer ?? {}) as { action?: unknown; content?: unknown };
      if (action === 'accept' || action === 'decline' || action === 'cancel') {
        return {
          action,
          ...(action === 'accept' && typeof content === 'object' && content !== null && { content: content as InputContent }),
        };
      }
      throw new FormRound(request);
    };
    try {
      return (await tool.handler(
        input,
        directToolContext(
          { core, approvals: deps.approvals, seal: deps.seal, workflowTools },
          { principal, roles },
          awaitResult,
          mayAsk ? ask : undefined,
        ),
      )) as CallToolResult;
    } catch (error) {
      if (!(error instanceof FormRound)) throw error;
      return inputRound(
        [{ key: DIRECT_FORM_KEY, request: { mode: 'form' as const, ...error.request } }],
        { kind: 'direct', ...origin },
        ctx,
      );
    }

    async function waitInline(taskId: string, budgetMs: number) {
      const follower = core.follow(taskId, principal, { signal: ctx.mcpReq.signal, deadline: Date.now() + budgetMs });
      for await (const view of follower) {
        if (isTerminal(view.task.status)) return callResultOf(view);
        if (view.inputs.length > 0) return undefined;
      }
      return undefined;
    }
  }

  /** An input_required round: the questions, and the sealed state the retried call brings back with its answers. */
  async function inputRound(inputs: PendingInput[], state: ResumeState, ctx: ServerContext): Promise<InputRequiredResult> {
    return {
      resultType: 'input_required',
      inputRequests: inputRequestsOf(inputs),
      requestState: await deps.requestState.mint(state, ctx),
    } as InputRequiredResult;
  }

  return server;
}

/** The client capabilities this request declared (2026-07-28 carries them per request). */
function capabilitiesOf(ctx: ServerContext): ClientCapabilities {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return (envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined) ?? {};
}

/** -32021 unless this request declared the tasks extension. */
function requireTasks(ctx: ServerContext): void {
  if (capabilitiesOf(ctx).extensions?.[TASKS_EXTENSION] === undefined) {
    throw new ProtocolError(
      ProtocolErrorCode.MissingRequiredClientCapability,
      `Task methods need the ${TASKS_EXTENSION} extension: declare it in the request's client capabilities`,
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    );
  }
}

/**
 * The requestState a retried call carries, if any (of the kind `only`, when named); -32602 when it was issued for
 * another call: a state is the server's promise for one call, refused on another tool or other arguments.
 */
function resumeStateOf(ctx: ServerContext, origin: Origin, only?: ResumeState['kind']): ResumeState | undefined {
  const resume = ctx.mcpReq.requestState<ResumeState>();
  if (
    resume !== undefined &&
    (resume?.tool !== origin.tool || resume.args !== origin.args || (only !== undefined && resume.kind !== only))
  ) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `requestState was issued for another call; retry the call that received it with the same tool and arguments, or call afresh without it`,
    );
  }
  return resume;
}

/** A plan's answer in this generation: a tool result, or the JSON-RPC error thrown as a `ProtocolError`. */
function answerOf(answer: CallAnswer): CallToolResult {
  if (answer.kind === 'error') throw new ProtocolError(answer.error.code, answer.error.message, answer.error.data);
  return answer.result as CallToolResult;
}

/** Errors in this SDK's error type (see {@link jsonRpcFailureOf}); "Temporal unreachable" becomes a retryable error. */
async function protocolErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    const failure = jsonRpcFailureOf(error);
    if (failure) throw new ProtocolError(failure.code, failure.message, failure.data);
    throw error;
  }
}

/**
 * Carries out a {@link CallPlan} the same way in every protocol generation. What differs on the wire is a generation's
 * {@link CallPort}: how it answers, asks a question, answers with a task and waits for one. The runner holds the rest:
 * the order of checks (the request's own fields before any question), the confirmation asked again after an answer
 * that does not fit, a declined or unaskable confirmation, the start, and a direct tool's context.
 */
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FormInputRequest, InputContent, PendingInput } from '../../contract/task-contract';
import { annotateRequest } from '../../shared/telemetry';
import { applyConfirmation, previousAnswerProblem } from '../protocol/confirmation';
import { JsonRpcError } from '../protocol/wire-errors';
import type { CallSeal } from '../protocol/signed-call';
import type { CreatedTask, CreateOptions, TaskView } from '../../core';
import type { DirectToolContext } from '../tools/types';
import { directToolContext, pendingTaskResult, type DirectToolDependencies } from './call-tool';
import {
  declinedConfirmation,
  unaskedConfirmation,
  type CallAnswer,
  type CallPlan,
  type DirectPlan,
  type PlannedConfirmation,
  type StartPlan,
} from './call-plan';

/** A form's answer, as a direct tool's `ask` returns it. */
export type FormAnswer = { action: 'accept' | 'decline' | 'cancel'; content?: InputContent };

/**
 * How a question was put: the caller's answer, or the answer that ends this call while the question is out (2026-07-28:
 * an input_required round, which the retried call answers).
 */
export type Asked<Answer, Reply = unknown> = { kind: 'answered'; answer: Reply } | { kind: 'ends'; answer: Answer };

/**
 * What a generation does for a call, on its own wire. `Answer` is what its tools/call handler returns; a JSON-RPC
 * error is thrown by {@link answer}, at the edge, since that is how either SDK sends one.
 */
export interface CallPort<Answer> {
  readonly caller: { principal: string; roles: readonly string[] };
  /** A call's answer given without a task: a tool result, or the JSON-RPC error (thrown). */
  answer(answer: CallAnswer): Answer;
  /** The options the request itself carries for a start (ttl, idempotency key); a malformed one throws -32602. */
  startOptions(): CreateOptions;
  /** The answer to the confirmation this request already carries (2026-07-28: a retried call's), if any. */
  carriedConfirmation?(): unknown;
  /**
   * Puts a start's confirmation to the caller, after `refusals` answers in a row that did not fit (its message then
   * says why first); the caller's answer, or the answer that ends the call while it is out (an input_required round).
   */
  askConfirmation(question: PendingInput, refusals: number): Promise<Asked<Answer>>;
  /** Puts a direct tool's form to the caller: their answer, or the answer that ends the call while the form is out. */
  askForm(request: Omit<FormInputRequest, 'mode'>): Promise<Asked<Answer, FormAnswer>>;
  /** Waits for a task for a direct tool (`DirectToolContext.awaitResult`). */
  awaitResult(taskId: string, budgetMs: number): Promise<CallToolResult | undefined>;
  /** The task a call started exists: a generation that remembers what its connection saw notes it here. */
  created?(view: TaskView): void;
  /** The answer with the task (`then: 'task'`). */
  taskAnswer(view: CreatedTask, plan: StartPlan): Answer;
  /** Waits for the task inline, up to the generation's budget (`then: 'inline'`). */
  waitInline(view: TaskView): Promise<Answer>;
  /**
   * Goes on with the task whose input_required round this retried call answers: hands it the answers the call
   * carries, then waits as {@link waitInline} does. Only a generation with rounds (2026-07-28) has it.
   */
  resumeTask?(taskId: string): Promise<Answer>;
}

/** Carries out `plan` through `port`. */
export async function runCall<Answer>(plan: CallPlan, port: CallPort<Answer>, deps: DirectToolDependencies): Promise<Answer> {
  switch (plan.kind) {
    case 'error':
    case 'result':
      return port.answer(plan);
    case 'direct':
      return runDirect(plan, port, deps);
    case 'start':
      return start(plan, port, deps);
    case 'resume':
      if (!port.resumeTask)
        throw new JsonRpcError(ProtocolErrorCode.InternalError, 'This protocol generation resumes no input_required round');
      return port.resumeTask(plan.taskId);
  }
}

async function start<Answer>(plan: StartPlan, port: CallPort<Answer>, deps: DirectToolDependencies): Promise<Answer> {
  // The request's own fields before anything is asked: a bad ttl or idempotency key asks nothing and starts nothing.
  const options = port.startOptions();
  let input = plan.input;
  if (plan.confirmation) {
    const confirmed = await confirm(plan, plan.confirmation, port, deps.seal);
    if (confirmed.kind === 'ends') return confirmed.answer;
    input = confirmed.input;
  }
  const view = await deps.core.create(plan.tool, input, port.caller.principal, options);
  annotateRequest({ taskId: view.task.taskId });
  port.created?.(view);
  if (plan.then === 'task') return port.taskAnswer(view, plan);
  if (plan.then === 'view') return port.answer({ kind: 'result', result: pendingTaskResult(view, { kind: 'view' }) });
  return port.waitInline(view);
}

/**
 * Asks the plan's confirmation before anything starts: an answer the call already carries (a 2026-07-28 retried call)
 * is taken first; a client that cannot be asked gets the question and a `confirm_start` token instead. An answer that
 * does not fit is asked again, saying why; a declined one starts nothing.
 */
async function confirm<Answer>(
  plan: StartPlan,
  { confirm, question, askable }: PlannedConfirmation,
  port: CallPort<Answer>,
  seal: CallSeal,
): Promise<{ kind: 'start'; input: unknown } | { kind: 'ends'; answer: Answer }> {
  let answer = port.carriedConfirmation?.();
  let why = '';
  for (let refusals = 0; ; refusals++) {
    if (answer === undefined) {
      if (!askable) {
        const token = seal.seal({ principal: port.caller.principal, tool: plan.tool.name, args: plan.input });
        return { kind: 'ends', answer: port.answer(unaskedConfirmation(plan, question, token)) };
      }
      const asked = await port.askConfirmation(
        { ...question, request: { ...question.request, message: why + question.request.message } },
        refusals,
      );
      if (asked.kind === 'ends') return asked;
      answer = asked.answer;
    }
    const outcome = applyConfirmation(confirm, plan.input, answer);
    if (outcome.kind === 'start') return outcome;
    if (outcome.kind === 'declined') return { kind: 'ends', answer: port.answer(declinedConfirmation(plan, outcome.action)) };
    why = previousAnswerProblem(outcome.problem);
    answer = undefined;
  }
}

/**
 * Runs a direct tool's handler with its context. A form it puts that ends the call (an input_required round) is the
 * call's answer: the handler's `ask` then never returns, so nothing in the tool's code (a try/catch around `ask`) can
 * take the round for a failure, and the retried call runs the handler again with the answer. A form counts as one of
 * the principal's waits while it is out.
 */
async function runDirect<Answer>(
  { tool, input, mayAsk }: DirectPlan,
  port: CallPort<Answer>,
  deps: DirectToolDependencies,
): Promise<Answer> {
  let end!: (answer: Answer) => void;
  const ended = new Promise<{ ends: Answer }>((resolve) => (end = (answer) => resolve({ ends: answer })));
  const ask: DirectToolContext['ask'] = async (request) => {
    const asked = await deps.core.waiting(port.caller.principal, () => port.askForm(request));
    if (asked.kind === 'answered') return asked.answer;
    end(asked.answer);
    return new Promise<never>(() => undefined);
  };
  const context = directToolContext(
    deps,
    tool.name,
    port.caller,
    (taskId, budgetMs) => port.awaitResult(taskId, budgetMs),
    mayAsk ? ask : undefined,
  );
  const outcome = await Promise.race([tool.handler(input, context).then((result) => ({ result })), ended]);
  return 'ends' in outcome ? outcome.ends : port.answer({ kind: 'result', result: outcome.result });
}

/**
 * A terminal task's outcome as the tool call's answer, the same in every place that returns it (2025-11-25
 * `tasks/result`, a plain call waiting inline in either generation, `task_result`, the 2026-07-28 task's inline
 * `result` and `error`): a tool result, or the JSON-RPC error the call would have got, as data.
 */
import { ErrorCode, RELATED_TASK_META_KEY, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { webUiMeta, type TaskOutcome, type TaskView } from '../../core';
import type { JsonRpcFailure } from './wire-errors';

/** A call's answer without a task: a JSON-RPC error, or a tool result. Each generation puts it on its wire. */
export type CallAnswer = { kind: 'error'; error: JsonRpcFailure } | { kind: 'result'; result: CallToolResult };

/** How the terminal task `view` ended; throws when it was not read to its end (a fault of the server). */
export function outcomeOf(view: TaskView): TaskOutcome {
  if (view.outcome === undefined) throw new Error(`task ${view.task.taskId} is ${view.task.status}, without an outcome`);
  return view.outcome;
}

/**
 * The answer of a terminal task's call, with related-task `_meta` on a result: the workflow's return value, or its
 * application failure as a tool error; a failed or cancelled task answers with the JSON-RPC error the call would have
 * got ({@link outcomeFailure}).
 */
export function callAnswerOf(view: TaskView): CallAnswer {
  const { taskId } = view.task;
  const related = { [RELATED_TASK_META_KEY]: { taskId }, ...webUiMeta(view) };
  const outcome = outcomeOf(view);
  switch (outcome.kind) {
    case 'result':
      return { kind: 'result', result: { ...outcome.result, _meta: { ...outcome.result._meta, ...related } } };
    case 'tool-error':
      return { kind: 'result', result: { content: [{ type: 'text', text: outcome.message }], isError: true, _meta: related } };
    default:
      return { kind: 'error', error: outcomeFailure(view, outcome) };
  }
}

/**
 * The answer of a terminal task as a tool result, for a tool that reports on another task (`task_result`): a failed or
 * cancelled task is a tool error with the words of its JSON-RPC error.
 */
export function toolResultOf(view: TaskView): CallToolResult {
  return asToolResult(callAnswerOf(view));
}

/** A call's answer as a tool result: a JSON-RPC error becomes a tool error with its words. */
export function asToolResult(answer: CallAnswer): CallToolResult {
  if (answer.kind === 'result') return answer.result;
  return { content: [{ type: 'text', text: answer.error.message }], isError: true };
}

/**
 * The JSON-RPC error of a task that failed or was cancelled: the code the workflow chose (-32603 otherwise), its
 * words, and the task in `data`; a cancelled one's says what the workflow reported having done before it stopped.
 */
export function outcomeFailure(view: TaskView, outcome: Extract<TaskOutcome, { kind: 'failed' | 'cancelled' }>): JsonRpcFailure {
  const { taskId } = view.task;
  if (outcome.kind === 'cancelled')
    return { code: ErrorCode.InternalError, message: outcome.message, data: { taskId, status: 'cancelled' } };
  if (outcome.code !== undefined) return { code: outcome.code, message: outcome.message, data: { taskId } };
  return { code: ErrorCode.InternalError, message: outcome.message, data: { taskId, status: 'failed' } };
}

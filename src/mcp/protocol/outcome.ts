/**
 * A terminal task's outcome as the tool call's answer, the same in every place that returns it (2025-11-25
 * `tasks/result`, a plain call waiting inline in either generation, `task_result`, the 2026-07-28 task's inline
 * `result` and `error`): a tool result, or the JSON-RPC error the call would have got.
 */
import { ErrorCode, McpError, RELATED_TASK_META_KEY, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { webUiMeta, type TaskOutcome, type TaskView } from '../tasks/task-view';

/** How the terminal task `view` ended; throws when it was not read to its end (a fault of the server). */
export function outcomeOf(view: TaskView): TaskOutcome {
  if (view.outcome === undefined) throw new Error(`task ${view.task.taskId} is ${view.task.status}, without an outcome`);
  return view.outcome;
}

/**
 * The tool result of a terminal task, as the original call would have returned it, with related-task `_meta`: a
 * workflow's return value, or its application failure as a tool error. Failed and cancelled tasks throw the JSON-RPC
 * error the call would have got ({@link outcomeError}).
 */
export function callResultOf(view: TaskView): CallToolResult {
  const { taskId } = view.task;
  const related = { [RELATED_TASK_META_KEY]: { taskId }, ...webUiMeta(view) };
  const outcome = outcomeOf(view);
  switch (outcome.kind) {
    case 'result':
      return { ...outcome.result, _meta: { ...outcome.result._meta, ...related } };
    case 'tool-error':
      return { content: [{ type: 'text', text: outcome.message }], isError: true, _meta: related };
    default:
      throw outcomeError(view, outcome);
  }
}

/**
 * The JSON-RPC error of a task that failed or was cancelled: the code the workflow chose (-32603 otherwise), its
 * words, and the task in `data`; a cancelled one's says what the workflow reported having done before it stopped.
 */
export function outcomeError(view: TaskView, outcome: Extract<TaskOutcome, { kind: 'failed' | 'cancelled' }>): McpError {
  const { taskId } = view.task;
  if (outcome.kind === 'cancelled') return new McpError(ErrorCode.InternalError, outcome.message, { taskId, status: 'cancelled' });
  if (outcome.code !== undefined) return new McpError(outcome.code, outcome.message, { taskId });
  return new McpError(ErrorCode.InternalError, outcome.message, { taskId, status: 'failed' });
}

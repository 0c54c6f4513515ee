/**
 * A task as 2026-07-28 with the tasks extension (SEP-2663) shows it: flat, `ttlMs` and `pollIntervalMs`, and in
 * `tasks/get` and `notifications/tasks` with its questions, its result or its error inline. Pure: everything comes
 * from the task view, with no further read.
 */
import { RELATED_TASK_META_KEY, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PendingInput } from '../../contract/task-contract';
import { outcomeFailure, outcomeOf, toolResultOf } from '../protocol/outcome';
import type { TaskView } from '../../core';

/** A flat SEP-2663 task: what `tools/call` answers with (`resultType: "task"`) and the core of `tasks/get`. */
export function mcp2026Task(view: TaskView) {
  const { taskId, status, statusMessage, createdAt, lastUpdatedAt, ttl, pollInterval } = view.task;
  return {
    taskId,
    status,
    ...(statusMessage !== undefined && { statusMessage }),
    createdAt,
    lastUpdatedAt,
    ttlMs: ttl ?? null,
    ...(pollInterval !== undefined && { pollIntervalMs: pollInterval }),
  };
}

/** The `inputRequests` of a task waiting for input: one `elicitation/create` per outstanding key. */
export function inputRequestsOf(inputs: readonly PendingInput[]) {
  return Object.fromEntries(inputs.map((input) => [input.key, { method: 'elicitation/create' as const, params: input.request }]));
}

/**
 * The task in the shape `tasks/get` answers and `notifications/tasks` carries: with its questions, its result or its
 * error inline.
 */
export function detailedTask(view: TaskView) {
  const task = mcp2026Task(view);
  switch (view.task.status) {
    case 'input_required':
      return { ...task, inputRequests: inputRequestsOf(view.inputs) };
    case 'completed':
      // A tool error is a completed task in this generation: its CallToolResult carries isError.
      return { ...task, result: withoutRelatedTask(toolResultOf(view)) };
    case 'failed': {
      const outcome = outcomeOf(view);
      const error = outcome.kind === 'failed' || outcome.kind === 'cancelled' ? outcomeFailure(view, outcome) : undefined;
      return {
        ...task,
        error: { code: error?.code ?? -32603, message: error?.message ?? task.statusMessage ?? 'The task failed' },
      };
    }
    default:
      return task;
  }
}

/** The result as inlined in a task: it is the task's own, so it names no related task (SEP-2663). */
function withoutRelatedTask(result: CallToolResult): CallToolResult {
  const meta: Record<string, unknown> = { ...result._meta };
  delete meta[RELATED_TASK_META_KEY];
  const { _meta: _dropped, ...rest } = result;
  return Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
}

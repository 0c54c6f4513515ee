/**
 * What a tools/call does, whatever protocol generation carries it: tool descriptors, argument errors, the
 * idempotency `_meta`, and the answer of a plain call whose task outlived its wait.
 */
import { ErrorCode, McpError, RELATED_TASK_META_KEY, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { ADOPT_ONLY_META, IDEMPOTENCY_KEY_META, IDEMPOTENCY_KEY_PATTERN } from '../shared/wire';
import type { TaskView } from './tasks/repository';
import type { ToolDefinition } from './tools/types';

/** The tools/list entry of a tool. */
export function describeTool(tool: ToolDefinition): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.input.jsonSchema,
    ...(tool.kind === 'workflow' && tool.output && { outputSchema: tool.output.jsonSchema }),
    ...(tool.annotations && { annotations: tool.annotations }),
    execution: { taskSupport: tool.kind === 'workflow' ? tool.taskSupport : 'forbidden' },
  };
}

/** The ttl a task-augmented call asks for; -32602 unless it is a whole, non-negative number of milliseconds. */
export function ttlOf(task: { ttl?: unknown } | undefined): number | undefined {
  const ttl = task?.ttl;
  if (ttl === undefined || ttl === null) return undefined;
  if (typeof ttl !== 'number' || !Number.isSafeInteger(ttl) || ttl < 0) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `params.task.ttl must be a whole number of milliseconds, 0 or more (got ${JSON.stringify(ttl)})`,
    );
  }
  return ttl;
}

/** The call's idempotency key and adopt-only flag from its `_meta`; -32602 when they are malformed. */
export function idempotencyOf(meta: Record<string, unknown> | undefined): { idempotencyKey?: string; adoptOnly?: boolean } {
  const key = meta?.[IDEMPOTENCY_KEY_META];
  const adoptOnly = meta?.[ADOPT_ONLY_META];
  if (key !== undefined && (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key))) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `_meta["${IDEMPOTENCY_KEY_META}"] must be 1-200 printable ASCII characters without spaces (a UUID, for example)`,
    );
  }
  if (adoptOnly !== undefined && typeof adoptOnly !== 'boolean') {
    throw new McpError(ErrorCode.InvalidParams, `_meta["${ADOPT_ONLY_META}"] must be true or false`);
  }
  if (adoptOnly && key === undefined) {
    throw new McpError(ErrorCode.InvalidParams, `_meta["${ADOPT_ONLY_META}"] needs _meta["${IDEMPOTENCY_KEY_META}"]`);
  }
  return { ...(key !== undefined && { idempotencyKey: key as string }), ...(adoptOnly === true && { adoptOnly }) };
}

/**
 * The answer to a plain call whose task outlived the wait: the task id and how to finish the job with the companion
 * tools. Marked isError, since it does not carry the tool's declared structured result.
 */
export function overBudgetResult(view: TaskView, budgetMs: number): CallToolResult {
  const { taskId, status, statusMessage } = view.task;
  const question = view.input ? ` It is waiting for an answer to: "${view.input.request.message}" (answer with task_respond).` : '';
  return {
    content: [
      {
        type: 'text',
        text:
          `Not finished within the ${Math.round(budgetMs / 1000)} s this call may wait; the work goes on as task ${taskId} ` +
          `(${status}${statusMessage ? `: ${statusMessage}` : ''}).${question} ` +
          `Use task_status, task_result, task_respond or task_cancel with taskId "${taskId}" to follow it.`,
      },
    ],
    isError: true,
    _meta: { [RELATED_TASK_META_KEY]: { taskId } },
  };
}

export function invalidArgumentsText(name: string, problems: string[]): string {
  return `Invalid arguments for tool ${name}: ${problems.join('; ')}`;
}

export function invalidArgumentsResult(name: string, problems: string[]): CallToolResult {
  return { content: [{ type: 'text', text: `${invalidArgumentsText(name, problems)}. Fix them and call again.` }], isError: true };
}

/** What the companion tools (task_status, task_result, task_respond, task_cancel) share. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { refusalOf } from '../protocol/wire-errors';
import type { TaskView } from '../../core';
import type { DirectToolContext } from './types';
import { X_MCP_HEADER } from '../protocol/param-headers';

/** The `{Name}` of the `Mcp-Param-{Name}` header that carries a task tool's `taskId`. */
const TASK_ID_HEADER_NAME = 'TaskId';

/**
 * The task id argument of every companion tool and of `approvals_answer`. Mirrored into the `Mcp-Param-TaskId` header
 * by 2026-07-28 clients over HTTP (SEP-2243 `x-mcp-header`), so that a balancer sends a call about a task to the
 * replica that serves the task's `tasks/*` requests (hashed on `Mcp-Name`), where a read after a write finds it.
 */
export const TaskIdSchema = z
  .string()
  .min(1)
  .max(200)
  .describe('The task id the tool call returned.')
  .meta({ [X_MCP_HEADER]: TASK_ID_HEADER_NAME });

/** A text tool result. */
export function text(message: string, extra: Partial<CallToolResult> = {}): CallToolResult {
  return { content: [{ type: 'text', text: message }], ...extra };
}

/** A refusal (a JSON-RPC error, or one of the task core's) as a tool error the model can read; undefined for anything else. */
function errorResult(error: unknown, hint = ''): CallToolResult | undefined {
  const refusal = refusalOf(error);
  return refusal && text(`${refusal.message}${hint}`, { isError: true });
}

/**
 * Runs `work` on a task the caller owns. An unknown (or someone else's) task, and any JSON-RPC error the work meets,
 * become tool errors saying so.
 */
export async function withTask(
  context: DirectToolContext,
  taskId: string,
  work: (view: TaskView) => Promise<CallToolResult>,
): Promise<CallToolResult> {
  let view: TaskView;
  try {
    view = await context.task(taskId);
  } catch (error) {
    const refusal = errorResult(error, '. Check the task id.');
    if (refusal) return refusal;
    throw error;
  }
  try {
    return await work(view);
  } catch (error) {
    const refusal = errorResult(error);
    if (refusal) return refusal;
    throw error;
  }
}

/** The `structuredContent` of a task's status: the task, the question(s) it waits on, its progress and actions. */
export function statusContent(view: TaskView): Record<string, unknown> {
  return {
    task: view.task,
    ...(view.input && { question: { key: view.input.key, ...view.input.request } }),
    ...(view.inputs.length > 1 && { questions: view.inputs.map((input) => ({ key: input.key, ...input.request })) }),
    ...(view.progress && { progress: view.progress }),
    ...(view.actions && { actions: view.actions }),
  };
}

/** The task's status in a sentence, with the question it waits on and how to answer it. */
export function statusSentence(view: TaskView): string {
  const { taskId, status, statusMessage } = view.task;
  let line = `Task ${taskId} is ${status}${statusMessage ? `: ${statusMessage}` : ''}.`;
  if (view.input?.request.mode === 'form') {
    const requiredFields = view.input.request.requestedSchema.required ?? [];
    const fields = Object.entries(view.input.request.requestedSchema.properties).map(([name, property]) => {
      const choices = 'enum' in property ? ` (one of ${property.enum.join(', ')})` : ` (${property.type})`;
      return `${name}${choices}${requiredFields.includes(name) ? ', required' : ''}`;
    });
    line += ` It asks: "${view.input.request.message}" Answer with task_respond, fields: ${fields.join('; ')}.`;
  } else if (view.input?.request.mode === 'url') {
    line += ` It asks you to open ${view.input.request.url}: "${view.input.request.message}" Then answer with task_respond (accept or decline).`;
  }
  return line;
}

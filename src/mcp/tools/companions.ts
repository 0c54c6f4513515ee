import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { z } from 'zod';
import { checkFormContent } from '../../shared/task-contract';
import { type TaskView } from '../tasks/repository';
import { zodSchema } from './schema';
import type { DirectTool, DirectToolContext } from './types';

const TaskIdSchema = z.string().min(1).max(200).describe('The task id the tool call returned.');

function text(message: string, extra: Partial<CallToolResult> = {}): CallToolResult {
  return { content: [{ type: 'text', text: message }], ...extra };
}

/** A JSON-RPC error as a tool error the model can read. */
function errorResult(error: McpError, hint = ''): CallToolResult {
  return text(`${error.message.replace(/^MCP error -?\d+: /, '')}${hint}`, { isError: true });
}

/**
 * Runs `work` on a task the caller owns. An unknown (or someone else's) task, and any JSON-RPC error the work meets,
 * become tool errors saying so.
 */
async function withTask(
  context: DirectToolContext,
  taskId: string,
  work: (view: TaskView) => Promise<CallToolResult>,
): Promise<CallToolResult> {
  let view: TaskView;
  try {
    view = await context.task(taskId);
  } catch (error) {
    if (error instanceof McpError) return errorResult(error, '. Check the task id.');
    throw error;
  }
  try {
    return await work(view);
  } catch (error) {
    if (error instanceof McpError) return errorResult(error);
    throw error;
  }
}

function describe(view: TaskView): string {
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

/** `task_status`: where a task is, and the question it waits on, if any. */
export const taskStatusTool: DirectTool<{ taskId: string }> = {
  kind: 'direct',
  name: 'task_status',
  title: 'Task status',
  description: 'Tells the status of a task started by another tool, and the question it waits on, if any.',
  input: zodSchema(z.object({ taskId: TaskIdSchema })),
  annotations: { readOnlyHint: true },
  handler: ({ taskId }, context) =>
    withTask(context, taskId, async (view) =>
      text(describe(view), {
        structuredContent: {
          task: view.task,
          ...(view.input && { question: { key: view.input.key, ...view.input.request } }),
        },
      }),
    ),
};

/** `task_result`: the result of a finished task; waits a little (asking questions inline) if it is still running. */
export const taskResultTool: DirectTool<{ taskId: string; waitSeconds: number }> = {
  kind: 'direct',
  name: 'task_result',
  title: 'Task result',
  description:
    'Returns the result of a task started by another tool, as that tool would have returned it. If the task is still ' +
    'running, waits up to waitSeconds (asking its questions if this client can answer them), then reports its status.',
  input: zodSchema(
    z.object({
      taskId: TaskIdSchema,
      waitSeconds: z.number().int().min(0).max(45).default(0).describe('How long to wait for the end, 0-45 s.'),
    }),
  ),
  annotations: { readOnlyHint: true },
  handler: ({ taskId, waitSeconds }, context) =>
    withTask(context, taskId, async (view) => {
      if (isTerminal(view.task.status)) return context.backend.result(view);
      const result = waitSeconds > 0 ? await context.awaitResult(taskId, waitSeconds * 1000) : undefined;
      return result ?? text(describe(await context.task(taskId)));
    }),
};

const RespondSchema = z.object({
  taskId: TaskIdSchema,
  action: z.enum(['accept', 'decline']).describe('accept to answer with content, decline to refuse.'),
  content: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]))
    .optional()
    .describe('The answer, field by field, as task_status lists the fields (accept only).'),
});

/** `task_respond`: answers the question a task waits on. */
export const taskRespondTool: DirectTool<z.infer<typeof RespondSchema>> = {
  kind: 'direct',
  name: 'task_respond',
  title: 'Answer a task',
  description: 'Answers the question a task waits on (see task_status). The task resumes once the answer is recorded.',
  input: zodSchema(RespondSchema),
  handler: ({ taskId, action, content }, context) =>
    withTask(context, taskId, async (view) => {
      if (!view.input) return text(`${describe(view)} It is not waiting for an answer.`, { isError: true });
      if (action === 'accept' && view.input.request.mode === 'form') {
        const problem = checkFormContent(view.input.request.requestedSchema, content ?? {});
        if (problem) return text(`The answer does not fit the question: ${problem}. Nothing was recorded.`, { isError: true });
      }
      await context.backend.respond(view, { key: view.input.key, action, ...(action === 'accept' && content && { content }) });
      return text(`Answer recorded for task ${taskId}; it resumes. Use task_status or task_result to follow it.`);
    }),
};

/** `task_cancel`: cancels a running task. */
export const taskCancelTool: DirectTool<{ taskId: string }> = {
  kind: 'direct',
  name: 'task_cancel',
  title: 'Cancel a task',
  description: 'Cancels a running task started by another tool.',
  input: zodSchema(z.object({ taskId: TaskIdSchema })),
  annotations: { destructiveHint: true, idempotentHint: true },
  handler: ({ taskId }, context) =>
    withTask(context, taskId, async () => {
      const cancelled = await context.backend.cancel(taskId, context.principal);
      return text(`Task ${taskId} is ${cancelled.task.status}.`);
    }),
};

/** The companion tools that let any client, and the model itself, finish a task. */
export const COMPANION_TOOLS = [taskStatusTool, taskResultTool, taskRespondTool, taskCancelTool];

import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { z } from 'zod';
import { toolResultOf } from '../protocol/outcome';
import { zodSchema } from './schema';
import { statusSentence, TaskIdSchema, text, withTask } from './task-tool-support';
import type { DirectTool } from './types';

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
  // Waiting asks the task's questions and sends progress on the call's stream; without a wait it only reads.
  answersAtOnce: ({ waitSeconds }) => waitSeconds === 0,
  handler: ({ taskId, waitSeconds }, context) =>
    withTask(context, taskId, async (view) => {
      if (isTerminal(view.task.status)) return toolResultOf(view);
      const result = waitSeconds > 0 ? await context.awaitResult(taskId, waitSeconds * 1000) : undefined;
      return result ?? text(statusSentence(await context.task(taskId)));
    }),
};

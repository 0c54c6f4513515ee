import { z } from 'zod';
import { zodSchema } from './schema';
import { TaskIdSchema, text, withTask } from './task-tool-support';
import type { BridgeToolContext, DirectTool } from './types';

/** `task_cancel`: cancels a running task. */
export const taskCancelTool: DirectTool<{ taskId: string }, BridgeToolContext> = {
  kind: 'direct',
  name: 'task_cancel',
  title: 'Cancel a task',
  description: 'Cancels a running task started by another tool.',
  input: zodSchema(z.object({ taskId: TaskIdSchema })),
  annotations: { destructiveHint: true, idempotentHint: true },
  answersAtOnce: () => true,
  handler: ({ taskId }, context) =>
    withTask(context, taskId, async () => {
      const cancelled = await context.core.cancel(taskId, context.principal);
      return text(`Task ${taskId} is ${cancelled.task.status}.`);
    }),
};

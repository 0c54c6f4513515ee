import { z } from 'zod';
import { zodSchema } from './schema';
import { describe, TaskIdSchema, text, withTask } from './task-tool-support';
import type { DirectTool } from './types';

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

import { z } from 'zod';
import { zodSchema } from './schema';
import { statusContent, statusSentence, TaskIdSchema, text, withTask } from './task-tool-support';
import type { DirectTool } from './types';

/** `task_status`: where a task is, and the question it waits on, if any. */
export const taskStatusTool: DirectTool<{ taskId: string }> = {
  kind: 'direct',
  name: 'task_status',
  title: 'Task status',
  description:
    'Tells the status of a task started by another tool, the questions it waits on, and what may be done to it now (actions: ' +
    'a tool to call with the taskId and the given arguments).',
  input: zodSchema(z.object({ taskId: TaskIdSchema })),
  annotations: { readOnlyHint: true },
  answersAtOnce: () => true,
  handler: ({ taskId }, context) =>
    withTask(context, taskId, async (view) => text(statusSentence(view), { structuredContent: statusContent(view) })),
};

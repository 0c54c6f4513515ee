import { z } from 'zod';
import { checkFormContent } from '../../contract/task-contract';
import { zodSchema } from './schema';
import { statusSentence, TaskIdSchema, text, withTask } from './task-tool-support';
import type { BridgeToolContext, DirectTool } from './types';

const RespondSchema = z.object({
  taskId: TaskIdSchema,
  key: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('Which question this answers, when the task waits on several (its key in task_status); default the first.'),
  action: z.enum(['accept', 'decline']).describe('accept to answer with content, decline to refuse.'),
  content: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]))
    .optional()
    .describe('The answer, field by field, as task_status lists the fields (accept only).'),
});

/** `task_respond`: answers the question a task waits on. */
export const taskRespondTool: DirectTool<z.infer<typeof RespondSchema>, BridgeToolContext> = {
  kind: 'direct',
  name: 'task_respond',
  title: 'Answer a task',
  description: 'Answers the question a task waits on (see task_status). The task resumes once the answer is recorded.',
  input: zodSchema(RespondSchema),
  answersAtOnce: () => true,
  handler: ({ taskId, key, action, content }, context) =>
    withTask(context, taskId, async (view) => {
      const input = key === undefined ? view.input : view.inputs.find((candidate) => candidate.key === key);
      if (!input) {
        const which = key === undefined ? 'an answer' : `an answer to "${key}"`;
        return text(`${statusSentence(view)} It is not waiting for ${which}.`, { isError: true });
      }
      if (action === 'accept' && input.request.mode === 'form') {
        const problem = checkFormContent(input.request.requestedSchema, content ?? {});
        if (problem) return text(`The answer does not fit the question: ${problem}. Nothing was recorded.`, { isError: true });
      }
      const answer = { key: input.key, action, ...(action === 'accept' && content && { content }) };
      await context.core.respond(view, answer, { principal: context.principal, via: 'task_respond' });
      return text(`Answer recorded for task ${taskId}; it resumes. Use task_status or task_result to follow it.`);
    }),
};

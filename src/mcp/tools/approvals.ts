/**
 * The approver's side: questions workflows address to principals and roles other than the task's own (see
 * `requestDecision`), found in one inbox across every task, and answered one person at a time. Who the caller is and
 * which roles they hold come from their credentials only, never from arguments.
 */
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { plainMessage } from '../tasks/errors';
import { AnswerRefusedError, type InboxItem } from '../tasks/repository';
import { zodSchema } from './schema';
import { TaskIdSchema, text } from './task-tool-support';
import type { DirectTool } from './types';

const InboxSchema = z.object({
  cursor: z.string().max(2_000).optional().describe('The nextCursor of the previous page, for the next one.'),
});

/** `approvals_inbox`: the questions awaiting the caller's decision. */
export const approvalsInboxTool: DirectTool<z.infer<typeof InboxSchema>> = {
  kind: 'direct',
  name: 'approvals_inbox',
  title: 'Approvals awaiting me',
  description:
    'Lists the questions that running tasks ask of you (by your name or one of your roles) and that you may answer now: ' +
    'approvals of requests by others, newest first, a page at a time. Answer one with approvals_answer.',
  input: zodSchema(InboxSchema),
  annotations: { readOnlyHint: true },
  handler: async ({ cursor }, context) => {
    const page = await context.backend.inbox(context.principal, context.roles, cursor);
    const lines = page.items.map(describeItem);
    const summary = page.items.length === 0 ? 'Nothing awaits your decision.' : `${page.items.length} question(s) await your decision:`;
    return text([summary, ...lines, ...(page.nextCursor ? ['More: call again with the cursor.'] : [])].join('\n'), {
      structuredContent: { items: page.items, ...(page.nextCursor && { nextCursor: page.nextCursor }) },
    });
  },
};

function describeItem(item: InboxItem): string {
  const fields = Object.entries(item.requestedSchema.properties)
    .map(([name, property]) => `${name}${'enum' in property ? ` (${property.enum.join('/')})` : ` (${property.type})`}`)
    .join(', ');
  const due = item.dueAt ? `; due ${item.dueAt}` : '';
  return `- task ${item.taskId}, question "${item.key}": ${item.message} [${item.accepted} of ${item.required} approval(s)${due}; fields: ${fields}]`;
}

const AnswerSchema = z.object({
  taskId: TaskIdSchema,
  key: z.string().min(1).max(200).describe('The question, as approvals_inbox lists it.'),
  action: z.enum(['accept', 'decline']).describe('accept to answer with content (e.g. an approval), decline to refuse the question.'),
  content: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]))
    .optional()
    .describe('The answer, field by field, as approvals_inbox lists the fields (accept only).'),
  comment: z.string().max(2_000).optional().describe('A note recorded with your answer.'),
});

/** `approvals_answer`: one person's decision on a question addressed to them. */
export const approvalsAnswerTool: DirectTool<z.infer<typeof AnswerSchema>> = {
  kind: 'direct',
  name: 'approvals_answer',
  title: 'Answer an approval',
  description:
    'Answers a question from approvals_inbox as yourself. The workflow checks that the question is open, that it is ' +
    'addressed to you, that you did not ask for it and have not answered it, and records who answered, when and with ' +
    'what; a refused answer changes nothing.',
  input: zodSchema(AnswerSchema),
  handler: async ({ taskId, key, action, content, comment }, context) => {
    try {
      const record = await context.backend.decide(
        taskId,
        key,
        { action, ...(content && { content }), ...(comment !== undefined && { comment }) },
        { principal: context.principal, roles: [...context.roles], via: 'approvals_answer' },
      );
      return text(`Your ${record.action === 'accept' ? 'answer' : 'refusal'} to "${key}" on task ${taskId} is recorded.`, {
        structuredContent: { taskId, key, recorded: record },
      });
    } catch (error) {
      if (error instanceof AnswerRefusedError) return text(`${error.message}. Nothing was recorded.`, { isError: true });
      if (error instanceof McpError)
        return text(`${plainMessage(error)}. Check the task id and the key in approvals_inbox.`, { isError: true });
      throw error;
    }
  },
};

import { z } from 'zod';
import { applyConfirmation, confirmationRequest, declinedResult, startedResult } from '../protocol/confirmation';
import { zodSchema } from './schema';
import { text } from './task-tool-support';
import type { BridgeToolContext, DirectTool } from './types';

const ConfirmSchema = z.object({
  confirmation: z
    .string()
    .min(1)
    .max(1_000_000)
    .describe('The confirmation token the tool call answered with (pendingConfirmation.confirmation).'),
  action: z.enum(['accept', 'decline']).describe('accept to start the work, decline to leave it unstarted.'),
  content: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]))
    .optional()
    .describe('The fields the question asks for, when it asks for any (accept only).'),
});

/**
 * `confirm_start`: answers the question a tool asks before it starts, for clients that cannot be asked (no
 * elicitation). Accepting starts the task; declining starts nothing.
 */
export const confirmStartTool: DirectTool<z.infer<typeof ConfirmSchema>, BridgeToolContext> = {
  kind: 'direct',
  name: 'confirm_start',
  title: 'Confirm a call',
  description:
    'Answers the confirmation a tool asks before it starts work (a tool call answered with pendingConfirmation). ' +
    'Ask the user first; accept starts the task, decline starts nothing.',
  input: zodSchema(ConfirmSchema),
  answersAtOnce: () => true,
  handler: async ({ confirmation, action, content }, context) => {
    const call = context.confirmations.open(confirmation, context.principal);
    const tool = call && context.confirmations.tool(call.tool);
    if (!call || !tool?.confirm) {
      return text('This confirmation is unknown, expired or not yours; call the tool again to be asked afresh.', { isError: true });
    }
    const outcome = applyConfirmation(tool.confirm, call.args, { action, ...(content && { content }) });
    if (outcome.kind === 'declined') return declinedResult(tool, outcome.action);
    if (outcome.kind === 'invalid') {
      const question = confirmationRequest(tool.confirm, call.args);
      return text(`The answer does not fit the question "${question.request.message}": ${outcome.problem}. Nothing was started.`, {
        isError: true,
      });
    }
    return startedResult(await context.core.create(tool, outcome.input, context.principal));
  },
};

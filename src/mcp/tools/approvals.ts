/**
 * The approver's side: questions workflows address to principals and roles other than the task's own (see
 * `requestDecision`), found in one inbox across every task, and answered one person at a time. Who the caller is and
 * which roles they hold come from their credentials only, never from arguments.
 */
import { z } from 'zod';
import { AnswerRefusedError, TaskCoreError, TooManyRequestsError } from '../../core';
import { zodSchema } from './schema';
import { TaskIdSchema, text } from './task-tool-support';
import type { BridgeToolContext, DirectTool } from './types';
import type { OpenQuestion } from '../../approvals/approvals';
import type { InboxItem } from '../../approvals/inbox';
import { ApproverSignatureSchema } from '../../approvals/signature-schema';
import { escapeControls } from '../../util/log';

const InboxSchema = z.object({
  cursor: z.string().max(2_000).optional().describe('The nextCursor of the previous page, for the next one.'),
});

/** `approvals_inbox`: the questions awaiting the caller's decision. */
export const approvalsInboxTool: DirectTool<z.infer<typeof InboxSchema>, BridgeToolContext> = {
  kind: 'direct',
  name: 'approvals_inbox',
  title: 'Approvals awaiting me',
  description:
    'Lists the questions that running tasks ask of you (by your name or one of your roles) and that you may answer now: ' +
    'approvals of requests by others, newest first, a page at a time. Answer one with approvals_answer.',
  input: zodSchema(InboxSchema),
  annotations: { readOnlyHint: true },
  // Hosts that render MCP Apps show the inbox in the task view: the list, then a question with its form.
  view: true,
  answersAtOnce: () => true,
  handler: async ({ cursor }, context) => {
    const page = await context.approvals.inbox(context.principal, context.roles, cursor);
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
  const when = [item.escalatesAt && `escalates ${item.escalatesAt}`, item.dueAt && `due ${item.dueAt}`].filter(Boolean).join('; ');
  const signing = item.mustSign
    ? `; your approval must carry your own signature (over subject ${item.subjectDigest}${item.passkeyLink ? `; passkey: ${item.passkeyLink}&decision=approve` : ''})`
    : '';
  // A question's text is the workflow's, with what its submitter wrote in it: its lines after the first are indented
  // and its controls escaped, so no line of it reads as another item of this list.
  const message = item.message
    .split(/\r\n|\n/)
    .map(escapeControls)
    .join('\n    ');
  return (
    `- task ${item.taskId}, question "${item.key}", submitted by ${escapeControls(item.requester)}: ${message} ` +
    `[${progressOf(item)}${when ? `; ${when}` : ''}; fields: ${fields}${signing}]`
  );
}

/** "1 of 2 approvals": how far a question has come. */
function progressOf(question: { accepted: number; required: number }): string {
  return `${question.accepted} of ${question.required} approval${question.required === 1 ? '' : 's'}`;
}

const AnswerSchema = z.object({
  taskId: TaskIdSchema,
  key: z.string().min(1).max(200).describe('The question, as approvals_inbox lists it.'),
  action: z
    .enum(['accept', 'decline', 'delegate'])
    .optional()
    .describe(
      'accept to answer with content (e.g. an approval), decline to refuse the question, delegate to hand it to someone ' +
        'else. Omit it to have the question put to you as a form, where your client can show one.',
    ),
  content: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]))
    .optional()
    .describe('The answer, field by field, as approvals_inbox lists the fields (accept only).'),
  comment: z.string().max(2_000).optional().describe('A note recorded with your answer.'),
  delegateTo: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('delegate only: the principal who is asked in your place (not the requester, not someone who answered).'),
  signature: ApproverSignatureSchema.optional().describe(
    'Your own signature of this decision, as `temporal-mcp-tasks approvals sign` prints it: Ed25519 over the canonical ' +
      'JSON of {"format":"temporal-mcp-tasks/approver-statement","v":2,"taskId":…,"run":<run from approvals_inbox>,"key":…,' +
      '"subject":<subjectDigest from approvals_inbox>,"decision":"approve"|"reject"|"decline"|"delegate"} (and "delegatedTo" ' +
      'for a hand-over, "challenge" with the challenge approvals_inbox gave you, used once), with a key ' +
      "the approvers directory lists for you; or a passkey's, as the server's passkey page (/passkeys) makes it " +
      '("alg":"webauthn"). Required for approvals by people the directory says must sign.',
  ),
});

/** `approvals_answer`: one person's decision on a question addressed to them. */
export const approvalsAnswerTool: DirectTool<z.infer<typeof AnswerSchema>, BridgeToolContext> = {
  kind: 'direct',
  name: 'approvals_answer',
  title: 'Answer an approval',
  description:
    'Answers a question from approvals_inbox as yourself. The workflow checks that the question is open, that it is ' +
    'addressed to you, that you did not ask for it and have not answered it, and records who answered, when and with ' +
    'what; a refused answer changes nothing. With action delegate and delegateTo, hands the question to that person ' +
    'instead (recorded like an answer).',
  input: zodSchema(AnswerSchema),
  // Without an action the question is put to the caller as a form on this call's stream.
  answersAtOnce: ({ action }) => action !== undefined,
  handler: async ({ taskId, key, action, content, comment, delegateTo, signature }, context) => {
    if ((action === 'delegate') !== (delegateTo !== undefined)) {
      return text('Give delegateTo with action delegate, and only then. Nothing was recorded.', { isError: true });
    }
    const by = { principal: context.principal, roles: [...context.roles] };
    let via = 'approvals_answer';
    // A form is put to the caller once the question is known to be theirs to answer; the decision then goes to the
    // question as read, without reading it again.
    let target: OpenQuestion | { taskId: string; key: string } = { taskId, key };
    try {
      if (action === undefined) {
        const question = await context.approvals.question(taskId, key, by);
        const { request, requester, answers, audience } = question.input;
        if (!context.ask) {
          return text(
            `Your client cannot show a form: call again with action (accept, decline or delegate)` +
              ` and content with the fields ${Object.keys(request.requestedSchema.properties).join(', ')}. Nothing was recorded.`,
            { isError: true },
          );
        }
        const accepted = answers.filter((given) => given.action === 'accept').length;
        const answer = await context.ask({
          message:
            `${request.message}\n\nSubmitted by ${requester}; ${progressOf({ accepted, required: audience.required ?? 1 })} so far.` +
            `\n(You answer as ${context.principal}; your answer is recorded with your name.)`,
          requestedSchema: request.requestedSchema,
        });
        if (answer.action === 'cancel') return text(`You dismissed the question "${key}" on task ${taskId}. Nothing was recorded.`);
        action = answer.action;
        content = answer.content as typeof content;
        via = 'approvals_answer (form)';
        target = question;
      }
      const record = await context.approvals.decide(
        target,
        {
          action,
          ...(action === 'delegate' ? { content: { to: delegateTo! } } : content && { content }),
          ...(comment !== undefined && { comment }),
          ...(signature && { signature }),
        },
        { ...by, via },
      );
      const what = { accept: 'answer', decline: 'refusal', delegate: `hand-over to ${delegateTo}` }[record.action];
      return text(`Your ${what} to "${key}" on task ${taskId} is recorded.`, {
        structuredContent: { taskId, key, recorded: record },
      });
    } catch (error) {
      if (error instanceof AnswerRefusedError)
        return text(`${error.message}. ${error.onRecord ?? 'Nothing was recorded.'}`, { isError: true });
      // Over a quota: the caller's client is told to retry (a JSON-RPC error), not that the task id is wrong.
      if (error instanceof TooManyRequestsError) throw error;
      if (error instanceof TaskCoreError)
        return text(`${error.message}. Check the task id and the key in approvals_inbox.`, { isError: true });
      throw error;
    }
  },
};

/**
 * A question asked on the call itself, before any workflow starts ("Start a payment run for 42 invoices?"): a tool
 * may declare one. Every generation asks it its own way (an elicitation on the 2025-11-25 call, an `input_required`
 * round on 2026-07-28, the `confirm_start` companion tool for clients that cannot be asked); what it asks, and what
 * an answer does, is decided here. Pure functions.
 */
import { RELATED_TASK_META_KEY, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { checkFormContent, type FormInputRequest, type InputContent, type PendingInput } from '../../contract/task-contract';
import type { TaskView } from '../../core';

/** A question a tool asks before it starts its workflow. */
export interface StartConfirmation {
  /** The question; `{{name}}` is replaced by the call's argument `name` (a missing one by nothing). */
  message: string;
  /** Fields the person fills in; none: a plain yes (accept) or no (decline). */
  requestedSchema?: FormInputRequest['requestedSchema'];
  /** The workflow's input property that receives the accepted answer's fields; none: they are not passed on. */
  into?: string;
}

/** The key of the confirmation among the questions of a call. */
export const CONFIRMATION_KEY = 'confirm_start';

/**
 * What goes before a question asked again because its previous answer could not be used, in every generation and for
 * every question (a confirmation, a workflow's): the problem as one sentence, then a blank line.
 */
export function previousAnswerProblem(problem: string): string {
  const text = problem.trimEnd();
  return `Your previous answer could not be used: ${/[.!?]$/.test(text) ? text : `${text}.`}\n\n`;
}

/** What a caller's answer to a confirmation does. */
export type ConfirmationOutcome =
  /** Start the workflow with this input. */
  | { kind: 'start'; input: unknown }
  /** The person said no (decline) or dismissed it (cancel): nothing starts. */
  | { kind: 'declined'; action: 'decline' | 'cancel' }
  /** The answer does not fit the form: ask again, saying why. */
  | { kind: 'invalid'; problem: string };

/** The confirmation of `tool` for a call with `args`, as an input request. */
export function confirmationRequest(confirmation: StartConfirmation, args: unknown): PendingInput {
  const values = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>;
  const message = confirmation.message.replace(/\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g, (_, name: string) => {
    const value = values[name];
    return value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  });
  return {
    key: CONFIRMATION_KEY,
    request: { mode: 'form', message, requestedSchema: confirmation.requestedSchema ?? { type: 'object', properties: {} } },
  };
}

/** What an answer (an ElicitResult: `action` and, when accepted, `content`) to the confirmation of a call does. */
export function applyConfirmation(confirmation: StartConfirmation, args: unknown, answer: unknown): ConfirmationOutcome {
  const { action, content } = (answer ?? {}) as { action?: unknown; content?: unknown };
  if (action === 'decline' || action === 'cancel') return { kind: 'declined', action };
  if (action !== 'accept') return { kind: 'invalid', problem: 'action must be accept, decline or cancel' };
  const schema = confirmation.requestedSchema ?? { type: 'object' as const, properties: {} };
  // Fields the form does not ask for are left out rather than refused.
  const fields =
    typeof content === 'object' && content !== null && !Array.isArray(content)
      ? Object.fromEntries(Object.entries(content).filter(([name]) => Object.hasOwn(schema.properties, name)))
      : (content ?? {});
  const problem = checkFormContent(schema, fields);
  if (problem) return { kind: 'invalid', problem };
  const input = confirmation.into ? { ...(args as Record<string, unknown>), [confirmation.into]: fields as InputContent } : args;
  return { kind: 'start', input };
}

/**
 * The answer to a call of `tool` whose confirmation was declined: a tool error saying nothing was started. Only the
 * tool's name is used, so this module needs nothing of the tool registry (which needs it for {@link StartConfirmation}).
 */
export function declinedResult(tool: { readonly name: string }, action: 'decline' | 'cancel'): CallToolResult {
  const how = action === 'decline' ? 'declined' : 'dismissed';
  return {
    content: [{ type: 'text', text: `Not started: the confirmation of ${tool.name} was ${how}, so no task was created.` }],
    isError: true,
  };
}

/**
 * The answer to a plain call from a client that cannot be asked: the question, and how to answer it with
 * `confirm_start` (its `confirmation` token stands for this call and this caller, and expires).
 */
export function pendingConfirmationResult(tool: { readonly name: string }, question: PendingInput, token: string): CallToolResult {
  const request = question.request as FormInputRequest;
  const fields = Object.keys(request.requestedSchema.properties);
  const how =
    fields.length > 0
      ? `ask the user, then call confirm_start with this confirmation, action "accept" and content {${fields.join(', ')}} (or action "decline")`
      : 'ask the user, then call confirm_start with this confirmation and action "accept" or "decline"';
  return {
    content: [
      { type: 'text', text: `${tool.name} needs a confirmation before it starts: "${request.message}" Nothing has started yet; ${how}.` },
    ],
    structuredContent: { pendingConfirmation: { confirmation: token, question: { key: question.key, ...request } } },
  };
}

/** The answer of `confirm_start` once the workflow started: the task and how to follow it. */
export function startedResult(view: TaskView): CallToolResult {
  const { taskId, status } = view.task;
  return {
    content: [{ type: 'text', text: `Confirmed; started task ${taskId}. Follow it with task_status, task_result or task_respond.` }],
    structuredContent: { taskId, status },
    _meta: { [RELATED_TASK_META_KEY]: { taskId } },
  };
}

/** The structured content of a pending confirmation, admitted by the output schema of every tool that asks one. */
export const PENDING_CONFIRMATION_SCHEMA = {
  type: 'object',
  properties: {
    pendingConfirmation: {
      type: 'object',
      description: 'Nothing started yet: answer the question with confirm_start and this confirmation.',
      properties: {
        confirmation: { type: 'string' },
        question: {
          type: 'object',
          properties: { key: { type: 'string' }, mode: { type: 'string', enum: ['form'] }, message: { type: 'string' } },
          required: ['key', 'mode', 'message'],
        },
      },
      required: ['confirmation', 'question'],
    },
  },
  required: ['pendingConfirmation'],
} as const;

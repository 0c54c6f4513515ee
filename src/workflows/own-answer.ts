/**
 * The answer a workflow takes to one of its task's own questions: a decline, an accept of a URL request, or an accept
 * of a form whose content fits the form; anything else is not taken, and the question stays open. Pure; sandboxed
 * workflow code: import only from workflow code.
 */
import { checkFormContent, type InputResponse, type PendingInput } from '../contract/task-contract';

/** The answer to `input` that `response` gives, as the task takes it (with who gave it and when); undefined when none. */
export function ownAnswerOf(input: PendingInput, response: InputResponse): InputResponse | undefined {
  const { request } = input;
  const origin = {
    ...(response.answeredBy && { answeredBy: response.answeredBy }),
    ...(response.answeredAt && { answeredAt: response.answeredAt }),
  };
  if (response.action === 'decline') return { key: input.key, action: 'decline', ...origin };
  if (response.action === 'accept' && request.mode === 'url') return { key: input.key, action: 'accept', ...origin };
  if (
    response.action === 'accept' &&
    request.mode === 'form' &&
    checkFormContent(request.requestedSchema, response.content) === undefined
  ) {
    return { key: input.key, action: 'accept', content: response.content, ...origin };
  }
  return undefined;
}

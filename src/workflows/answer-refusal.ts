/**
 * Why an answer to an addressed question cannot be taken now, judged on the identity it carries and the question's
 * state: the answer Update's validator asks it, and asks again once the seal is checked. Pure; sandboxed workflow code:
 * import only from workflow code.
 */
import { checkFormContent, type DecidedQuestion, type InputResponse } from '../contract/task-contract';
import { answerRefusal, defaultPersonOf, delegationRefusal, REFUSALS, type AddressedInput } from '../contract/approvals';

const MAX_COMMENT_LENGTH = 2_000;

/**
 * Why `response` cannot be taken now; undefined when it can. `open` is the open question it answers (undefined when
 * none of its key is open), `decided` the closed questions the task keeps, which tell a repeated answer it was answered.
 */
export function refusalOf(
  response: InputResponse | undefined,
  open: AddressedInput | undefined,
  decided: readonly DecidedQuestion[],
): string | undefined {
  const by = response?.answeredBy;
  if (!response || !open) {
    const closed = decided.find((question) => question.key === response?.key);
    const person =
      typeof by?.person === 'string' ? by.person : typeof by?.principal === 'string' ? defaultPersonOf(by.principal) : undefined;
    if (closed && person !== undefined && closed.people.includes(person)) return REFUSALS.answered;
    return `no question "${String(response?.key)}" is open on this task`;
  }
  if (typeof by?.principal !== 'string') return 'the answer does not say who gave it';
  const who = { principal: by.principal, roles: by.roles ?? [], ...(typeof by.person === 'string' && { person: by.person }) };
  const refusal = answerRefusal(open, who);
  if (refusal) return refusal;
  if (response.action !== 'accept' && response.action !== 'decline' && response.action !== 'delegate') {
    return 'the action must be accept, decline or delegate';
  }
  if (response.action === 'delegate') {
    const toRoles = Array.isArray(response.delegateRoles) ? response.delegateRoles.filter((role) => typeof role === 'string') : undefined;
    return delegationRefusal(open, who, response.content?.to, toRoles);
  }
  if (response.action === 'accept') {
    const problem = checkFormContent(open.request.requestedSchema, response.content);
    if (problem) return `the answer does not fit the question: ${problem}`;
  }
  if (response.comment !== undefined && (typeof response.comment !== 'string' || response.comment.length > MAX_COMMENT_LENGTH)) {
    return `the comment must be text of at most ${MAX_COMMENT_LENGTH} characters`;
  }
  return undefined;
}

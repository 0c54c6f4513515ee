/**
 * One person's decision on an addressed question, as it comes in and as it is sealed: what it decides, and the checks
 * it passes first (a hand-over to someone eligible, an answer that fits the question's form).
 */
import { checkFormContent, type AnswerOrigin, type InputContent } from '../contract/task-contract';
import { AnswerRefusedError, formFieldsOf } from '../core';
import { delegationRefusal, type AddressedInput } from '../contract/approvals';
import type { ApproverSignature } from '../records/approver-signatures';

/** One person's decision on a question: an answer (accept, decline) or a hand-over to someone else. */
export interface DecisionResponse {
  action: 'accept' | 'decline' | 'delegate';
  content?: InputContent;
  comment?: string;
  /** The person's own signature of their decision (see `records/approver-signatures.ts`), checked before it is recorded. */
  signature?: ApproverSignature;
}

/** Who decides: the caller's principal, their roles at this moment, and the way the decision came. */
export type Decider = AnswerOrigin & { roles: string[] };

/** What a response decides, as its record says it: the decision, and for a hand-over to whom. */
export function decisionOf(response: DecisionResponse): {
  decision: 'approve' | 'reject' | 'decline' | 'delegate';
  delegatedTo?: string;
} {
  if (response.action === 'delegate') return { decision: 'delegate', delegatedTo: String(response.content?.to) };
  if (response.action === 'decline') return { decision: 'decline' };
  return { decision: response.content?.decision === 'reject' ? 'reject' : 'approve' };
}

/**
 * The response as it is sealed: a hand-over names only whom to (someone eligible for the question, with the roles the
 * deployment knows they hold), an answer only the form's fields, checked. Throws {@link AnswerRefusedError} saying
 * what does not fit.
 */
export function checkedResponse(
  input: AddressedInput,
  response: DecisionResponse,
  from: { principal: string; person: string },
  requesterPerson: string,
  rolesOf: (principal: string) => string[] | undefined,
): DecisionResponse & { delegateRoles?: string[] } {
  if (response.action === 'delegate') {
    const to = response.content?.to;
    const toRoles = typeof to === 'string' ? rolesOf(to) : undefined;
    const problem = delegationRefusal(input, from, to, toRoles, requesterPerson);
    if (problem) throw new AnswerRefusedError(`${problem[0].toUpperCase()}${problem.slice(1)}`);
    return { ...response, content: { to: to! }, ...(toRoles && { delegateRoles: toRoles }) };
  }
  if (response.action === 'accept') {
    const content = formFieldsOf(input.request.requestedSchema, response.content ?? {});
    const problem = checkFormContent(input.request.requestedSchema, content);
    if (problem) throw new AnswerRefusedError(`The answer does not fit the question: ${problem}`);
    return { ...response, content: content as InputContent };
  }
  return response;
}

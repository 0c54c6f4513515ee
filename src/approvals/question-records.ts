/**
 * What the decision store records of an addressed question: one person's decision, the close their answer made, and
 * what a person is told of a decision on record that the workflow did not take. Pure: `DecisionLog` signs and appends.
 */
import type { AddressedInput } from '../contract/approvals';
import { CLOSE_VIA, type DecisionRecordBody } from '../contract/decision-records';
import type { DecisionDraft } from './decision-log';
import { decisionOf, type Decider, type DecisionResponse } from './decision-response';

/** Who made a record: the deciding caller, the person behind them, and how they were authenticated. */
type Recorder = Decider & { person: string; auth: string };

/** Decisions a void may withdraw, when the workflow refused them: never a rejection, a decline or an expiry. */
export const VOIDABLE = new Set<string>(['approve', 'delegate']);

/** What every record of a question begins with: its task and run, its place in the chain, the question, what was shown. */
function recordHead(taskId: string, input: AddressedInput, run: string, seq: number, prev: string | null) {
  return {
    v: 1 as const,
    taskId,
    run,
    seq,
    prev,
    question: { key: input.key, message: input.request.message },
    shown: input.subject ?? null,
  };
}

/** The decision record of one person's answer (see `contract/decision-records.ts`). */
export function recordBody(
  taskId: string,
  input: AddressedInput,
  response: DecisionResponse & { delegateRoles?: string[] },
  by: Recorder,
  run: string,
  seq: number,
  prev: string | null,
): Omit<DecisionRecordBody, 'subject'> {
  const actingAs = input.audience.principals?.some((name) => name === by.principal || name === by.person)
    ? 'named'
    : by.roles.find((role) => input.audience.roles?.includes(role));
  return {
    ...recordHead(taskId, input, run, seq, prev),
    ...decisionOf(response),
    ...(response.signature && { approverSignature: response.signature }),
    by: { principal: by.principal, person: by.person, auth: by.auth, roles: [...by.roles], ...(actingAs && { actingAs }) },
    ...(response.action === 'accept' && response.content && { content: response.content }),
    ...(response.comment !== undefined && { comment: response.comment }),
    at: new Date().toISOString(),
    via: by.via ?? 'approvals_answer',
  };
}

/** The close record of a question `by`'s answer closed: its outcome and the approvals it required. */
export function closeRecordBody(
  taskId: string,
  input: AddressedInput,
  run: string,
  outcome: 'accepted' | 'declined',
  by: Recorder,
  seq: number,
  prev: string | null,
): DecisionDraft {
  return {
    ...recordHead(taskId, input, run, seq, prev),
    decision: 'close',
    outcome,
    required: input.audience.required ?? 1,
    by: { principal: by.principal, person: by.person, auth: by.auth, roles: [...by.roles] },
    at: new Date().toISOString(),
    via: CLOSE_VIA.answer,
  };
}

/** What the person is told of their decision's record when the workflow did not take it (and no void took it back). */
export function stillOnRecord(decision: DecisionRecordBody['decision']): string {
  switch (decision) {
    case 'reject':
      return 'Your rejection stays on record all the same (signed, in the decision store): nothing that needs this approval is carried out.';
    case 'decline':
      return 'Your refusal stays on record all the same (signed, in the decision store): nothing that needs this approval is carried out.';
    default:
      return 'Your decision is in the decision store, signed; it counts only if the workflow takes it.';
  }
}

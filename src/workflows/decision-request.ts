/**
 * A question a workflow addresses to people other than the task's principal, as workflow code asks it
 * ({@link DecisionRequest}) and as it ends ({@link Decision}), and the question as the task publishes it once asked.
 * Pure; sandboxed workflow code: import only from workflow code.
 */
import type { FormInputRequest } from '../contract/task-contract';
import type { AddressedInput, AnswerRecord, InputAudience } from '../contract/approvals';

/** A question for people other than the task's principal (see {@link WorkflowTask.requestDecision}). */
export interface DecisionRequest extends Omit<FormInputRequest, 'mode'> {
  audience: InputAudience;
  /**
   * When the question is due: past it, the question escalates (with `escalation`) or the wait ends with outcome
   * `overdue` and the question is withdrawn.
   */
  dueAt?: Date;
  /** When the audience is reminded (a {@link NOTIFY_ACTIVITY} notification) if the question is still open. */
  followUpAt?: Date;
  /** Who is added at `dueAt` (those asked first may still answer), and when the escalated question is due. */
  escalation?: { principals?: string[]; roles?: string[]; dueAt?: Date };
  /** Roles or counts, never names: how the requester's status message names who is asked (default the roles). */
  describedAs?: string;
  /**
   * What the question is about, as plain JSON shown beside the message (e.g. an invoice's vendor, lines and amounts).
   * Every decision record carries its digest, so that the effect can be checked against what was approved.
   */
  subject?: unknown;
}

/** How an addressed question ended, with every answer it took (who, their roles, when, through what, what). */
export interface Decision {
  key: string;
  /** `accepted`: the required number accepted; `declined`: someone declined or `closesOn` said so; `overdue`. */
  outcome: 'accepted' | 'declined' | 'overdue';
  /** Every answer and hand-over, oldest first. */
  answers: AnswerRecord[];
  /** Whether the question was escalated at its due time. */
  escalated: boolean;
}

/** Throws for a request that cannot be asked: a quorum that is not a whole number of 1 or more, nobody named, an escalation without a due time. */
export function checkDecisionRequest(request: DecisionRequest): void {
  const { audience, dueAt, escalation } = request;
  const required = audience.required ?? 1;
  if (!Number.isInteger(required) || required < 1) throw new Error(`audience.required must be a whole number of 1 or more`);
  if (!audience.principals?.length && !audience.roles?.length) throw new Error('a decision must name principals or roles');
  if (escalation && !dueAt) throw new Error('an escalation happens at dueAt: give dueAt too');
}

/** The question `key` of `requester`'s task as it is published once asked now (see `PublishedTaskState.awaiting`). */
export function askedInput(key: string, request: DecisionRequest, requester: string): AddressedInput {
  const { audience, dueAt, followUpAt, escalation, describedAs: _describedAs, subject, ...form } = request;
  const required = audience.required ?? 1;
  return {
    key,
    request: { mode: 'form', ...form },
    audience: { ...audience, required, exclude: [...(audience.exclude ?? [])] },
    requester,
    ...(subject !== undefined && { subject }),
    answers: [],
    askedAt: new Date().toISOString(),
    ...(dueAt && { dueAt: dueAt.toISOString() }),
    ...(followUpAt && { followUpAt: followUpAt.toISOString() }),
    ...(escalation && {
      escalation: {
        ...(escalation.principals && { principals: [...escalation.principals] }),
        ...(escalation.roles && { roles: [...escalation.roles] }),
        ...(escalation.dueAt && { dueAt: escalation.dueAt.toISOString() }),
      },
    }),
  };
}

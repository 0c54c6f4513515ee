/**
 * The Update that carries an answer to an addressed question, one typed definition for both sides: the bridge sends
 * it, the workflow validates it, checks the bridge's seal and returns the answer as recorded. Safe in the workflow
 * sandbox, as the task contract's signals.
 */
import { ApplicationFailure } from '@temporalio/common';
import { defineUpdate } from '@temporalio/workflow';
import type { InputResponse } from './task-contract';
import { ANSWER_UPDATE_NAME, type AnswerRecord } from './approvals';

export const answerUpdate = defineUpdate<AnswerRecord, [InputResponse]>(ANSWER_UPDATE_NAME);

/** The failure type of an answer the workflow refused (its validator or its handler). */
export const ANSWER_REFUSED = 'AnswerRefused';

/**
 * The failure a workflow refuses an answer with: the reason, a sentence the person is told, is its first detail (the
 * message says it too, for the Web UI and the logs). Workflows of other SDKs do the same: an `ApplicationError` of type
 * {@link ANSWER_REFUSED} whose first detail is the reason.
 */
export function answerRefusedFailure(reason: string): ApplicationFailure {
  return ApplicationFailure.create({ message: `Answer refused: ${reason}`, type: ANSWER_REFUSED, nonRetryable: true, details: [reason] });
}

/** The reason of a refusal made with {@link answerRefusedFailure}; undefined for any other failure. */
export function answerRefusalReason(failure: unknown): string | undefined {
  if (!(failure instanceof ApplicationFailure) || failure.type !== ANSWER_REFUSED) return undefined;
  const reason = failure.details?.[0];
  return typeof reason === 'string' ? reason : undefined;
}

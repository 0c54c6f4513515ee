/**
 * How an approver's answer, sent as a Temporal Update, fares against Temporal's answers: which failures are sent again
 * with the same Update id (nothing was recorded), and what a failure for good means to the person who answered.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { answerRefusalReason } from '../contract/answer-update';
import { AnswerRefusedError, describeServiceError, GrpcStatus, grpcStatusOf, isRunEnded, isTemporalUnavailable } from '../core';

/** Temporal refused for now (too busy, or the workflow's state was being reloaded): the same call may succeed shortly. */
function isTemporalBusy(error: unknown): boolean {
  const code = grpcStatusOf(error);
  return code === GrpcStatus.RESOURCE_EXHAUSTED || code === GrpcStatus.ABORTED;
}

function isDeadlineExceeded(error: unknown): boolean {
  return grpcStatusOf(error) === GrpcStatus.DEADLINE_EXCEEDED;
}

/**
 * Whether an answer's Update that failed with `error` is sent again (with the same Update id) before `deadline`:
 * Temporal unreachable or busy (RESOURCE_EXHAUSTED also while the workflow attempts to close), a request of the Update
 * that ran out of time early (DEADLINE_EXCEEDED before the answer's own deadline), or a workflow not ready for it
 * (FAILED_PRECONDITION, Temporal's WorkflowNotReady: the workflow task that carried the Update failed, for instance
 * because an event came in while it ran and its completion was refused, or the workflow task is being retried). None of
 * these recorded anything: the Update was not accepted.
 */
export function isUpdateRetryable(error: unknown, deadline: number): boolean {
  if (isTemporalUnavailable(error) || isTemporalBusy(error)) return true;
  if (grpcStatusOf(error) === GrpcStatus.FAILED_PRECONDITION) return true;
  return error instanceof WorkflowUpdateRPCTimeoutOrCancelledError && isDeadlineExceeded(error.cause) && Date.now() < deadline;
}

/** True when the workflow itself refused the answer (its validator or handler), not Temporal and not the clock. */
export function isWorkflowRefusal(error: unknown): boolean {
  return error instanceof WorkflowUpdateFailedError && !isRunEnded(error);
}

/**
 * What an answer's Update that failed for good means to the person who gave it: an {@link AnswerRefusedError} saying
 * why nothing was recorded (the workflow refused it, the task ended first, the workflow could not take it in time), or
 * `error` itself when Temporal stayed unreachable (the retryable "Temporal is unavailable" the front-ends send).
 */
export function updateRefusal(error: unknown, taskId: string, patienceMs: number): unknown {
  if (error instanceof WorkflowUpdateFailedError) {
    const cause = error.cause;
    if (isRunEnded(error)) {
      return new AnswerRefusedError(`Task ${taskId} ended before its workflow took the answer`);
    }
    // The workflow's words are the contract's refusals, as the bridge says them when it refuses first: one spelling.
    // A workflow that gives no reason as its refusal's detail is told in its own message.
    const reason = answerRefusalReason(cause) ?? (cause ?? error).message;
    return new AnswerRefusedError(`${reason.charAt(0).toUpperCase()}${reason.slice(1)}`);
  }
  // Closed before the Update was admitted (or aborted by the close): Temporal answers NOT_FOUND.
  if (error instanceof WorkflowNotFoundError) return new AnswerRefusedError(`Task ${taskId} ended before its workflow took the answer`);
  const seconds = Math.round(patienceMs / 1000);
  if (grpcStatusOf(error) === GrpcStatus.FAILED_PRECONDITION) {
    return new AnswerRefusedError(
      `The workflow was not ready to take the answer within ${seconds} s (${describeServiceError(error)}); answer again later`,
    );
  }
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError || isDeadlineExceeded(error) || isTemporalBusy(error)) {
    return new AnswerRefusedError(
      `The workflow did not take the answer within ${seconds} s (is its worker running?); it may be recorded later: see the inbox`,
    );
  }
  return error;
}

/**
 * The record of an addressed question that ended unanswered at its deadline, appended to the decision store through
 * {@link RECORD_DECISION_ACTIVITY}. Sandboxed workflow code: import only from workflow code.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { AddressedInput } from '../contract/approvals';
import { RECORD_DECISION_ACTIVITY, type RecordDecisionInput, type SignedDecisionRecord } from '../contract/decision-records';

// The record of an expiry is kept until the store takes it: the question's end waits for nothing else. The activity
// heartbeats while it waits on the store, so an attempt lost with its worker is retried within the heartbeat timeout.
const recorder = proxyActivities<Record<typeof RECORD_DECISION_ACTIVITY, (input: RecordDecisionInput) => Promise<SignedDecisionRecord>>>({
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/**
 * Appends the question's expiry to the decision store: a reset that reopens it finds it closed there. Fails the
 * workflow with a non-retryable `DamagedDecisionRecords` failure when the store's records of the task are damaged.
 */
export async function recordExpiry(input: AddressedInput): Promise<void> {
  const { workflowId, originalExecutionRunId } = workflowInfo();
  try {
    await recorder[RECORD_DECISION_ACTIVITY]({
      taskId: workflowId,
      run: originalExecutionRunId,
      question: { key: input.key, message: input.request.message },
      shown: input.subject,
      decision: 'expire',
      at: new Date().toISOString(),
    });
  } catch (error) {
    // The store's records of this task are damaged: the task fails saying so, with nothing more done on it.
    const cause = error instanceof ActivityFailure ? error.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === 'DamagedDecisionRecords') {
      throw ApplicationFailure.nonRetryable(cause.message, cause.type);
    }
    throw error;
  }
}

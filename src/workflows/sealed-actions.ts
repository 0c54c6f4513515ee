/**
 * Updates a person asks a workflow for through the bridge (an action the workflow offers in its published `actions`,
 * such as the release of a scheduled payment): the bridge seals who asked, for which run, which Update and what for;
 * the workflow takes the Update only once that seal opens for it and the worker has checked its proof.
 */
import { proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import {
  openSealedAction,
  VERIFY_ANSWER_ACTIVITY,
  type ActionSealFields,
  type SealedAction,
  type VerifyAnswerInput,
  type VerifyAnswerResult,
} from '../contract/task-contract';
import { oneSealCheckAtATime } from './seal-checks';

const sealCheck = proxyLocalActivities<Record<typeof VERIFY_ANSWER_ACTIVITY, (input: VerifyAnswerInput) => Promise<VerifyAnswerResult>>>({
  startToCloseTimeout: '10 seconds',
});

/**
 * The action an Update's argument carries (`sealed`, `proof`), when its seal was made by a bridge for this run, for
 * the Update `update` and for exactly `subject` (the Update's own arguments, without the seal); otherwise why not, in
 * words to keep with the refusal. Checks the proof with the worker's `mcpVerifyAnswer` local activity (registered by
 * `createTaskActivities()`), one seal check of the run at a time. Call it from the Update's handler, then act on the
 * returned action's `requestedBy` (who asked), never on the Update's plain fields. Never throws.
 */
export async function checkSealedAction(
  fields: ActionSealFields,
  update: string,
  subject: Record<string, string | number | boolean>,
): Promise<SealedAction | string> {
  const { workflowId, originalExecutionRunId } = workflowInfo();
  const opened = openSealedAction(fields.sealed, { workflowId, originalRunId: originalExecutionRunId }, update, subject);
  if (typeof opened === 'string') return opened;
  try {
    const verdict = await oneSealCheckAtATime(() =>
      sealCheck[VERIFY_ANSWER_ACTIVITY]({ sealed: fields.sealed!, proof: String(fields.proof) }),
    );
    return verdict.ok ? opened : `its seal does not hold (${verdict.reason ?? 'no reason given'})`;
  } catch (error) {
    return `its seal could not be checked: ${(error as Error).message}`;
  }
}

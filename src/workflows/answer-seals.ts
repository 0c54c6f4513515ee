/**
 * The seal of an answer that comes into a workflow run: opened for this run, and its proof checked by the worker with
 * the local activity {@link VERIFY_ANSWER_ACTIVITY}, one check at a time (`seal-checks.ts`). Sandboxed workflow code:
 * import only from workflow code.
 */
import { proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import {
  openSealedAnswer,
  VERIFY_ANSWER_ACTIVITY,
  type InputResponse,
  type SealedAnswer,
  type VerifyAnswerInput,
  type VerifyAnswerResult,
} from '../contract/task-contract';
import { oneSealCheckAtATime } from './seal-checks';

const answerCheck = proxyLocalActivities<Record<typeof VERIFY_ANSWER_ACTIVITY, (input: VerifyAnswerInput) => Promise<VerifyAnswerResult>>>({
  startToCloseTimeout: '10 seconds',
});

/**
 * The sealed answer `incoming` carries, once the worker has checked its seal; why not otherwise. A check that fails
 * (its activity failed) throws.
 */
export async function checkAnswerSeal(incoming: InputResponse): Promise<SealedAnswer | string> {
  const { workflowId, originalExecutionRunId } = workflowInfo();
  const opened = openSealedAnswer(incoming.sealed, { workflowId, originalRunId: originalExecutionRunId });
  if (typeof opened === 'string') return opened;
  const verdict = await oneSealCheckAtATime(() =>
    answerCheck[VERIFY_ANSWER_ACTIVITY]({ sealed: incoming.sealed!, proof: String(incoming.proof) }),
  );
  return verdict.ok ? opened : `its seal does not hold (${verdict.reason})`;
}

/**
 * The answer `response` to one of the task's own questions as the bridge sealed it, once the worker has checked the
 * seal; otherwise what `refuse` makes of the reason (a check that fails is a reason too).
 */
export async function unsealAnswer(
  response: InputResponse,
  refuse: (key: unknown, reason: string) => undefined,
): Promise<InputResponse | undefined> {
  const { workflowId, originalExecutionRunId } = workflowInfo();
  const opened = openSealedAnswer(response.sealed, { workflowId, originalRunId: originalExecutionRunId });
  if (typeof opened === 'string') return refuse(response.key, opened);
  let verdict: VerifyAnswerResult;
  try {
    verdict = await oneSealCheckAtATime(() =>
      answerCheck[VERIFY_ANSWER_ACTIVITY]({ sealed: response.sealed!, proof: String(response.proof) }),
    );
  } catch (error) {
    return refuse(response.key, `its seal could not be checked: ${(error as Error).message}`);
  }
  if (!verdict.ok) return refuse(response.key, `its seal does not hold (${verdict.reason ?? 'no reason given'})`);
  const { key, action, content, answeredBy, answeredAt } = opened;
  return { key, action, ...(content !== undefined && { content }), answeredBy, answeredAt };
}

/**
 * The check a workflow makes before the effect of an approval (a payment, an order placed): the worker's
 * `mcpVerifyDecisions` activity reads the question's decision records, checks their chain and signatures with the
 * bridge's public key, and judges them against what the workflow is about to do.
 */
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import { VERIFY_DECISIONS_ACTIVITY, type ApprovalJudgement, type VerifyDecisionsInput } from '../contract/decision-records';
import type { InputAudience } from '../contract/approvals';
import { askedAudienceOf, taskPrincipal } from './workflow-task';

// The store outside Temporal may be down for a while: the effect waits for it, it is never made unchecked. The check
// heartbeats while it reads, so an attempt lost with its worker is retried within the heartbeat timeout.
const decisions = proxyActivities<Record<typeof VERIFY_DECISIONS_ACTIVITY, (input: VerifyDecisionsInput) => Promise<ApprovalJudgement>>>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/**
 * Whether the decision records on file allow the effect of question `key`, asked with `requestDecision(key, { …,
 * subject })`: approvals of exactly `subject` by `required` distinct people other than the task's requester, every
 * record signed by the bridge and in one unbroken chain, and no rejection, refusal or expiry on record. Call it right
 * before each effect, with the subject the effect is about (a changed amount fails the check). With an approvers
 * directory at the worker, an approval counts only from a person it lists whom the question addresses: the audience
 * this run asked it with (escalation and hand-overs in), or `expectation.audience` for a question of an earlier run.
 * Needs a worker that registers `createTaskActivities()` (or `createDecisionActivities`). Retries while the decision
 * store cannot be read.
 */
export function verifyDecisions(
  key: string,
  expectation: { subject: unknown; required: number; audience?: InputAudience },
): Promise<ApprovalJudgement> {
  const { workflowId, originalExecutionRunId } = workflowInfo();
  const audience = expectation.audience ?? askedAudienceOf(key);
  return decisions[VERIFY_DECISIONS_ACTIVITY]({
    taskId: workflowId,
    run: originalExecutionRunId,
    key,
    subject: expectation.subject,
    required: expectation.required,
    requester: taskPrincipal(),
    ...(audience && { audience }),
  });
}

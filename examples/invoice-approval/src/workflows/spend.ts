import type { SpendApprover, SpendOutcome, SpendRequest } from '../spend';
import { FOUR_EYES_THRESHOLD, SPEND_APPROVER_ROLE } from '../spend';
import { approvalDecisionOf, formatAmount, startWorkflowTask } from 'temporal-mcp-tasks/workflow';

/**
 * A request that people other than the requester approve: one holder of the approver role, two distinct ones above
 * the four-eyes threshold; the requester never approves their own. Any rejection ends it. The result says who decided.
 */
export async function spendApprovalWorkflow(request: SpendRequest): Promise<SpendOutcome> {
  const task = startWorkflowTask(`Received the request for ${formatAmount(request.amount, request.currency)}`);
  const required = request.amount > FOUR_EYES_THRESHOLD ? 2 : 1;
  const decision = await task.requestDecision(
    'approval',
    {
      message: `Approve ${formatAmount(request.amount, request.currency)} for "${request.purpose}"?`,
      requestedSchema: {
        type: 'object',
        properties: { decision: { type: 'string', title: 'Decision', enum: ['approve', 'reject'] } },
        required: ['decision'],
      },
      audience: { roles: [SPEND_APPROVER_ROLE], required },
    },
    (answer) => answer.content?.decision === 'reject',
  );
  const approvers: SpendApprover[] = decision.answers.map((answer) => ({
    principal: answer.principal,
    roles: answer.roles,
    decision: approvalDecisionOf(answer),
    ...(answer.delegatedTo !== undefined && { delegatedTo: answer.delegatedTo }),
    ...(answer.comment !== undefined && { comment: answer.comment }),
    at: answer.at,
  }));
  // Accepted means the required number of people approved and nobody rejected: a hand-over is neither.
  const approved = decision.outcome === 'accepted';
  const outcome = decision.outcome === 'overdue' ? 'overdue' : approved ? 'approved' : 'rejected';
  task.setStatus(approved ? 'Approved' : `Not approved (${outcome}); nothing was spent`);
  return { purpose: request.purpose, amount: request.amount, currency: request.currency, approved, outcome, approvers };
}

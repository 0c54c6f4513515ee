import { SPEND_WORKFLOW_TYPE, SpendRequestSchema, type SpendOutcome, type SpendRequest } from '../spend';
import { formatAmount } from 'temporal-mcp-tasks/workflow';
import { defineWorkflowTool } from 'temporal-mcp-tasks';

/** `request_spend_approval`: the sample of approvals by others (roles, four eyes, no self-approval). */
export const requestSpendApprovalTool = defineWorkflowTool<SpendRequest, SpendOutcome>({
  name: 'request_spend_approval',
  title: 'Request a spend approval',
  description:
    'Asks the spend approvers (role spend-approver; two of them above 1,000) to approve spending an amount for a ' +
    'purpose. You cannot approve your own request: the task stays working until they decide, and its result lists ' +
    'who approved or rejected.',
  workflowType: SPEND_WORKFLOW_TYPE,
  inputSchema: SpendRequestSchema,
  idPrefix: 'spend',
  annotations: { destructiveHint: false, openWorldHint: true },
  // Not approved: the spending did not happen, a tool error (SEP-2848: a final denial says the work did not run).
  toResult: (outcome) => ({
    content: [
      {
        type: 'text',
        text: outcome.approved
          ? `Approved: ${formatAmount(outcome.amount, outcome.currency)} for "${outcome.purpose}", by ${outcome.approvers.length} approver(s).`
          : `Not approved (${outcome.outcome}): ${formatAmount(outcome.amount, outcome.currency)} for "${outcome.purpose}"; nothing was spent.`,
      },
    ],
    structuredContent: outcome as unknown as Record<string, unknown>,
    isError: !outcome.approved,
  }),
});

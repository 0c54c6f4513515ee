/** The spend approval sample's shapes: a request someone makes and others approve. */
import { z } from 'zod';

/** Workflow type name; stored in histories, never rename. */
export const SPEND_WORKFLOW_TYPE = 'spendApprovalWorkflow';

/** The role whose holders approve spend requests. */
export const SPEND_APPROVER_ROLE = 'spend-approver';

/** Above this amount two distinct approvers are needed, below it one. */
export const FOUR_EYES_THRESHOLD = 1_000;

export const SpendRequestSchema = z.object({
  purpose: z.string().min(1).max(200).describe('What the money is for.'),
  amount: z.number().positive().max(1_000_000).describe(`The amount; above ${FOUR_EYES_THRESHOLD} two approvers must agree.`),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .describe('ISO 4217 code, e.g. EUR.'),
});

export type SpendRequest = z.infer<typeof SpendRequestSchema>;

/** Who decided, as the workflow recorded it. */
export interface SpendApprover {
  principal: string;
  roles: string[];
  /** `delegate`: they handed the question to `delegatedTo`, whose own decision follows. */
  decision: 'approve' | 'reject' | 'decline' | 'delegate';
  delegatedTo?: string;
  comment?: string;
  at: string;
}

export interface SpendOutcome {
  purpose: string;
  amount: number;
  currency: string;
  approved: boolean;
  /** `approved`, `rejected`, or `overdue` (nobody decided in time). */
  outcome: 'approved' | 'rejected' | 'overdue';
  approvers: SpendApprover[];
}

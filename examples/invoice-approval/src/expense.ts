/**
 * Definitions the expense workflow shares with the MCP tool that starts it: the workflow type, the cost centers, and
 * the report's schema and outcome.
 */
import { z } from 'zod';

/** Workflow type name of the expense sample; stored in histories, never rename. */
export const EXPENSE_WORKFLOW_TYPE = 'expenseReportWorkflow';

/** Cost centers finance may book an expense report to. */
export const COST_CENTERS = ['CC-100 Engineering', 'CC-200 Sales', 'CC-300 Operations'] as const;

/** The `submit_expense_report` tool's arguments and the expense workflow's input: who spent what. */
export const ExpenseReportSchema = z.object({
  employee: z.string().min(1).max(100).describe('Who spent the money.'),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, 'use an ISO 4217 code such as "EUR"')
    .describe('ISO 4217 currency of every amount.'),
  items: z
    .array(
      z.object({
        description: z.string().min(1).max(200).describe('What was bought.'),
        amount: z.number().positive().multipleOf(0.01).describe('Amount spent; greater than 0, at most 2 decimals.'),
      }),
    )
    .min(1)
    .max(50)
    .describe('The receipts.'),
});
export type ExpenseReport = z.infer<typeof ExpenseReportSchema>;

/** What became of an expense report. */
export interface ExpenseOutcome {
  status: 'reimbursed' | 'rejected';
  employee: string;
  total: number;
  currency: string;
  costCenter?: string;
  approverComment?: string;
}

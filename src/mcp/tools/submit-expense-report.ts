import { z } from 'zod';
import { EXPENSE_WORKFLOW_TYPE, type ExpenseOutcome, type ExpenseReport } from '../../workflows/expense';
import { defineWorkflowTool } from './define';

const ExpenseReportSchema = z.object({
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

/** `submit_expense_report`: the second sample, declared with the TypeScript API; its result uses the default mapping. */
export const submitExpenseReportTool = defineWorkflowTool<ExpenseReport, ExpenseOutcome>({
  name: 'submit_expense_report',
  title: 'Submit an expense report',
  description:
    "Checks an employee's receipts, asks the manager to approve the total, then asks finance which cost center pays, " +
    'and reimburses. Runs as a task with two questions in sequence and progress as receipts are checked.',
  workflowType: EXPENSE_WORKFLOW_TYPE,
  inputSchema: ExpenseReportSchema,
  idPrefix: 'expense',
  annotations: { destructiveHint: false, openWorldHint: true },
});

import { EXPENSE_WORKFLOW_TYPE, ExpenseReportSchema, type ExpenseOutcome, type ExpenseReport } from '../expense';
import { defineWorkflowTool } from 'temporal-mcp-tasks';

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

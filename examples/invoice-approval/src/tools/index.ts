import { processInvoiceTool } from './process-invoice';
import { releaseScheduledPaymentTool } from './release-scheduled-payment';
import { requestSpendApprovalTool } from './request-spend-approval';
import { submitExpenseReportTool } from './submit-expense-report';
import type { ToolDefinition } from 'temporal-mcp-tasks';

/**
 * The sample tools: `process_invoice`, `release_scheduled_payment`, `submit_expense_report` and
 * `request_spend_approval`. Opt-in, beside the default tools (`tools: [...DEFAULT_TOOLS, ...SAMPLE_TOOLS]`); their
 * workflows and activities run on the sample worker (`temporal-mcp-tasks worker`; `npm run worker` in a checkout),
 * which must poll the bridge's task queue, or their tasks never start.
 */
export const SAMPLE_TOOLS: readonly ToolDefinition[] = [
  processInvoiceTool,
  releaseScheduledPaymentTool,
  submitExpenseReportTool,
  requestSpendApprovalTool,
];

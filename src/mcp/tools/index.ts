import { COMPANION_TOOLS } from './companions';
import { processInvoiceTool } from './process-invoice';
import { releaseScheduledPaymentTool } from './release-scheduled-payment';
import { submitExpenseReportTool } from './submit-expense-report';
import type { ToolDefinition, WorkflowTool } from './types';

/** The tools this server offers unless told otherwise. */
export const DEFAULT_TOOLS: readonly ToolDefinition[] = [
  processInvoiceTool,
  releaseScheduledPaymentTool,
  submitExpenseReportTool,
  ...COMPANION_TOOLS,
];

/** The workflow tools of `tools`, by name. */
export function workflowToolsByName(tools: readonly ToolDefinition[]): Map<string, WorkflowTool<any, any>> {
  return new Map(tools.filter((tool): tool is WorkflowTool<any, any> => tool.kind === 'workflow').map((tool) => [tool.name, tool]));
}

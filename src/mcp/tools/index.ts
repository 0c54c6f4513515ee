import { processInvoiceTool } from './process-invoice';
import { releaseScheduledPaymentTool } from './release-scheduled-payment';
import { submitExpenseReportTool } from './submit-expense-report';
import { taskCancelTool } from './task-cancel';
import { taskRespondTool } from './task-respond';
import { taskResultTool } from './task-result';
import { taskStatusTool } from './task-status';
import type { ToolDefinition, WorkflowTool } from './types';

/** The companion tools that let any client, and the model itself, finish a task. */
export const COMPANION_TOOLS = [taskStatusTool, taskResultTool, taskRespondTool, taskCancelTool];

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

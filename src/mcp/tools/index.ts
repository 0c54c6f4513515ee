import { approvalsAnswerTool, approvalsInboxTool } from './approvals';
import { processInvoiceTool } from './process-invoice';
import { requestSpendApprovalTool } from './request-spend-approval';
import { releaseScheduledPaymentTool } from './release-scheduled-payment';
import { submitExpenseReportTool } from './submit-expense-report';
import { taskCancelTool } from './task-cancel';
import { taskRespondTool } from './task-respond';
import { taskResultTool } from './task-result';
import { taskStatusTool } from './task-status';
import type { ToolDefinition, WorkflowTool } from './types';

/** The companion tools that let any client, and the model itself, finish a task. */
export const COMPANION_TOOLS = [taskStatusTool, taskResultTool, taskRespondTool, taskCancelTool];

/** The approver's tools: questions addressed to the caller by principal or role, across every task. */
export const APPROVAL_TOOLS = [approvalsInboxTool, approvalsAnswerTool];

/** The tools this server offers unless told otherwise. */
export const DEFAULT_TOOLS: readonly ToolDefinition[] = [
  processInvoiceTool,
  releaseScheduledPaymentTool,
  submitExpenseReportTool,
  requestSpendApprovalTool,
  ...COMPANION_TOOLS,
  ...APPROVAL_TOOLS,
];

/** The tools by name, and the workflow tools among them: built once per tool list, however often asked. */
export function toolTables(tools: readonly ToolDefinition[]): ToolTables {
  let tables = tablesOf.get(tools);
  if (!tables) {
    tables = { byName: new Map(tools.map((tool) => [tool.name, tool])), workflowTools: workflowToolsByName(tools) };
    tablesOf.set(tools, tables);
  }
  return tables;
}

/** What {@link toolTables} answers. */
export interface ToolTables {
  byName: ReadonlyMap<string, ToolDefinition>;
  workflowTools: ReadonlyMap<string, WorkflowTool<any, any>>;
}

const tablesOf = new WeakMap<readonly ToolDefinition[], ToolTables>();

/** The workflow tools of `tools`, by name. */
export function workflowToolsByName(tools: readonly ToolDefinition[]): Map<string, WorkflowTool<any, any>> {
  return new Map(tools.filter((tool): tool is WorkflowTool<any, any> => tool.kind === 'workflow').map((tool) => [tool.name, tool]));
}

import { processInvoiceTool } from './process-invoice';
import { releaseScheduledPaymentTool } from './release-scheduled-payment';
import type { ToolDefinition, WorkflowTool } from './types';

/** The tools this server offers. */
export const DEFAULT_TOOLS: readonly ToolDefinition[] = [processInvoiceTool, releaseScheduledPaymentTool];

/** The workflow tools of `tools`, by name. */
export function workflowToolsByName(tools: readonly ToolDefinition[]): Map<string, WorkflowTool<any, any>> {
  return new Map(tools.filter((tool): tool is WorkflowTool<any, any> => tool.kind === 'workflow').map((tool) => [tool.name, tool]));
}

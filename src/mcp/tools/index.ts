import { approvalsAnswerTool, approvalsInboxTool } from './approvals';
import { taskCancelTool } from './task-cancel';
import { taskFindTool } from './task-find';
import { taskRespondTool } from './task-respond';
import { taskResultTool } from './task-result';
import { taskStatusTool } from './task-status';
import type { ToolDefinition, WorkflowTool } from './types';
import { InvalidParamHeaderError, paramHeadersOf, type ParamHeader } from '../protocol/param-headers';

/**
 * The companion tools that let any client, and the model itself, finish a task; and `task_find`, with which the task
 * view finds the task of a call it knows only by its arguments (called by Apps only).
 */
export const COMPANION_TOOLS: readonly ToolDefinition[] = [taskStatusTool, taskResultTool, taskRespondTool, taskCancelTool, taskFindTool];

/** The approver's tools: questions addressed to the caller by principal or role, across every task. */
export const APPROVAL_TOOLS: readonly ToolDefinition[] = [approvalsInboxTool, approvalsAnswerTool];

/**
 * The tools a bridge offers unless told otherwise: the companion tools and the approver's tools, which serve the
 * tasks of any workflow. No sample is among them.
 */
export const DEFAULT_TOOLS: readonly ToolDefinition[] = [...COMPANION_TOOLS, ...APPROVAL_TOOLS];

/**
 * The tools by name, the workflow tools among them, and the arguments each mirrors into headers: built once per tool
 * list, however often asked. Throws {@link InvalidParamHeaderError}, naming the tool, for an invalid `x-mcp-header`.
 */
export function toolTables(tools: readonly ToolDefinition[]): ToolTables {
  let tables = tablesOf.get(tools);
  if (!tables) {
    tables = {
      byName: new Map(tools.map((tool) => [tool.name, tool])),
      workflowTools: workflowToolsByName(tools),
      paramHeaders: paramHeadersByName(tools),
    };
    tablesOf.set(tools, tables);
  }
  return tables;
}

/** What {@link toolTables} answers. */
export interface ToolTables {
  byName: ReadonlyMap<string, ToolDefinition>;
  workflowTools: ReadonlyMap<string, WorkflowTool<any, any>>;
  /** The `Mcp-Param-*` headers a 2026-07-28 call of each tool carries over HTTP (SEP-2243); tools without any left out. */
  paramHeaders: ReadonlyMap<string, readonly ParamHeader[]>;
}

function paramHeadersByName(tools: readonly ToolDefinition[]): Map<string, readonly ParamHeader[]> {
  const byName = new Map<string, readonly ParamHeader[]>();
  for (const tool of tools) {
    let found: ParamHeader[];
    try {
      found = paramHeadersOf(tool.input.jsonSchema);
    } catch (error) {
      if (error instanceof InvalidParamHeaderError) throw new InvalidParamHeaderError(`tool "${tool.name}": inputSchema: ${error.message}`);
      throw error;
    }
    if (found.length > 0) byName.set(tool.name, found);
  }
  return byName;
}

const tablesOf = new WeakMap<readonly ToolDefinition[], ToolTables>();

/** The workflow tools of `tools`, by name. */
export function workflowToolsByName(tools: readonly ToolDefinition[]): Map<string, WorkflowTool<any, any>> {
  return new Map(tools.filter((tool): tool is WorkflowTool<any, any> => tool.kind === 'workflow').map((tool) => [tool.name, tool]));
}

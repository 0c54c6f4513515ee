import type { Client } from '@temporalio/client';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';

/** A tool whose call starts a workflow; the workflow id is the task id. */
export interface WorkflowTool<Input = unknown, Output = unknown> {
  kind: 'workflow';
  name: string;
  title: string;
  description: string;
  inputSchema: z.ZodType<Input>;
  outputSchema?: z.ZodType<Output>;
  /** `required`: only task-augmented calls; `optional`: a plain call runs the task and waits for its result. */
  taskSupport: 'optional' | 'required';
  annotations?: ToolAnnotations;
  workflowType: string;
  /** Prefix of generated task ids, e.g. "invoice". */
  idPrefix: string;
  /** Turns the workflow's return value into the tool result. */
  toResult(output: Output): CallToolResult;
  /** A short line a host may hand the model as soon as the task exists. */
  immediateResponse?(input: Input, taskId: string): string;
}

/** What a direct tool's handler may use. */
export interface DirectToolContext {
  client: Client;
  principal: string;
  /** Resolves a task id the caller owns to its workflow id; throws the tasks/* "not found" error otherwise. */
  ownedWorkflowId(taskId: string): Promise<string>;
}

/** A tool that runs at once, without a task. */
export interface DirectTool<Input = unknown> {
  kind: 'direct';
  name: string;
  title: string;
  description: string;
  inputSchema: z.ZodType<Input>;
  annotations?: ToolAnnotations;
  handler(input: Input, context: DirectToolContext): Promise<CallToolResult>;
}

/** Any tool the server can list. */
export type ToolDefinition = WorkflowTool<any, any> | DirectTool<any>;

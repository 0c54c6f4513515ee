import { CallToolResultSchema, type CallToolResult, type ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { zodSchema, type ToolSchema } from './schema';
import { InvalidParamHeaderError, paramHeadersOf } from '../protocol/param-headers';
import type { StartConfirmation } from '../protocol/confirmation';
import type { WorkflowTool } from './types';

const TOOL_NAME = /^[a-zA-Z0-9_.-]{1,128}$/;

/** What `defineWorkflowTool` takes: everything but the name, description and workflow type has a default. */
export interface WorkflowToolDeclaration<Input, Output> {
  name: string;
  title?: string;
  description: string;
  workflowType: string;
  /** A zod schema, or a {@link ToolSchema} (e.g. from `jsonSchema`). */
  inputSchema: z.ZodType<Input> | ToolSchema<Input>;
  outputSchema?: z.ZodType<Output> | ToolSchema<Output>;
  /** Default `optional`. */
  taskSupport?: 'optional' | 'required' | 'forbidden';
  taskQueue?: string;
  ttlMs?: number;
  pollIntervalMs?: number;
  annotations?: ToolAnnotations;
  /** Prefix of task ids; default: the tool name in kebab-case. */
  idPrefix?: string;
  /** Default: {@link defaultToolResult}. */
  toResult?(output: Output): CallToolResult;
  immediateResponse?(input: Input, taskId: string): string;
  /** A question asked on the call itself before the workflow starts (see {@link StartConfirmation}). */
  confirm?: StartConfirmation;
}

/** Thrown for a declaration that cannot work; the message names the field. */
export class ToolDeclarationError extends Error {}

function isToolSchema<T>(schema: z.ZodType<T> | ToolSchema<T>): schema is ToolSchema<T> {
  return typeof (schema as ToolSchema<T>).check === 'function' && 'jsonSchema' in schema;
}

/** Declares an MCP tool that starts `workflowType`; the workflow id becomes the task id. */
export function defineWorkflowTool<Input, Output = unknown>(
  declaration: WorkflowToolDeclaration<Input, Output>,
): WorkflowTool<Input, Output> {
  if (!TOOL_NAME.test(declaration.name))
    throw new ToolDeclarationError(`name "${declaration.name}" must be 1-128 letters, digits, "_", "-" or "."`);
  if (!declaration.workflowType) throw new ToolDeclarationError(`${declaration.name}: workflowType is required`);
  const idPrefix =
    declaration.idPrefix ??
    declaration.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '');
  if (!/^[a-z][a-z0-9-]{0,40}$/.test(idPrefix))
    throw new ToolDeclarationError(
      `${declaration.name}: idPrefix "${idPrefix}" must be 1-41 lower-case letters, digits or "-", starting with a letter`,
    );
  const input = isToolSchema(declaration.inputSchema) ? declaration.inputSchema : zodSchema(declaration.inputSchema, 'input');
  const output =
    declaration.outputSchema === undefined
      ? undefined
      : isToolSchema(declaration.outputSchema)
        ? declaration.outputSchema
        : zodSchema(declaration.outputSchema, 'output');
  if (input.jsonSchema.type !== 'object') throw new ToolDeclarationError(`${declaration.name}: inputSchema must describe an object`);
  try {
    paramHeadersOf(input.jsonSchema);
  } catch (error) {
    // A client over HTTP would drop the tool from its list (SEP-2243): refused here, where the declaration is read.
    if (error instanceof InvalidParamHeaderError) throw new ToolDeclarationError(`${declaration.name}: inputSchema: ${error.message}`);
    throw error;
  }
  const confirm = declaration.confirm;
  if (confirm !== undefined) {
    if (typeof confirm.message !== 'string' || confirm.message.trim() === '') {
      throw new ToolDeclarationError(`${declaration.name}: confirm.message must be the question to ask`);
    }
    const schema = confirm.requestedSchema;
    if (schema !== undefined && (schema.type !== 'object' || typeof schema.properties !== 'object' || schema.properties === null)) {
      throw new ToolDeclarationError(`${declaration.name}: confirm.requestedSchema must be { type: "object", properties: {...} }`);
    }
  }
  return {
    kind: 'workflow',
    name: declaration.name,
    ...(declaration.title !== undefined && { title: declaration.title }),
    description: declaration.description,
    input,
    ...(output && { output }),
    taskSupport: declaration.taskSupport ?? 'optional',
    ...(declaration.annotations && { annotations: declaration.annotations }),
    workflowType: declaration.workflowType,
    ...(declaration.taskQueue !== undefined && { taskQueue: declaration.taskQueue }),
    ...(declaration.ttlMs !== undefined && { ttlMs: declaration.ttlMs }),
    ...(declaration.pollIntervalMs !== undefined && { pollIntervalMs: declaration.pollIntervalMs }),
    idPrefix,
    toResult: declaration.toResult ?? defaultToolResult,
    ...(declaration.immediateResponse && { immediateResponse: declaration.immediateResponse }),
    ...(declaration.confirm && { confirm: declaration.confirm }),
  };
}

/**
 * A workflow's return value as a tool result: a value that already is a `CallToolResult` passes through; an object
 * becomes `structuredContent` with a JSON text rendering; anything else becomes text.
 */
export function defaultToolResult(output: unknown): CallToolResult {
  if (typeof output === 'object' && output !== null && Array.isArray((output as { content?: unknown }).content)) {
    const parsed = CallToolResultSchema.safeParse(output);
    if (parsed.success) return parsed.data;
  }
  if (typeof output === 'object' && output !== null && !Array.isArray(output)) {
    return { content: [{ type: 'text', text: JSON.stringify(output, null, 2) }], structuredContent: output as Record<string, unknown> };
  }
  return {
    content: [{ type: 'text', text: output === undefined ? 'Done.' : typeof output === 'string' ? output : JSON.stringify(output) }],
  };
}

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { defineWorkflowTool, ToolDeclarationError } from './define';
import { InvalidJsonSchemaError, jsonSchema } from './schema';
import type { StartConfirmation } from '../protocol/confirmation';
import type { WorkflowTool } from './types';

/** Thrown for a tools file that cannot be used; the message names the file and the field. */
export class ToolsFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolsFileError';
  }
}

const JsonSchemaObject = z.record(z.string(), z.unknown());

/** The schema of a tools file's entry (see {@link ToolEntry}). */
export const ToolEntrySchema = z.strictObject({
  name: z.string().regex(/^[a-zA-Z0-9_.-]{1,128}$/, 'use 1-128 letters, digits, "_", "-" or "."'),
  title: z.string().optional(),
  description: z.string().min(1),
  workflowType: z.string().min(1),
  taskQueue: z.string().min(1).optional(),
  taskSupport: z.enum(['optional', 'required', 'forbidden']).optional(),
  inputSchema: JsonSchemaObject,
  outputSchema: JsonSchemaObject.optional(),
  ttlMs: z.number().int().positive().optional(),
  pollIntervalMs: z.number().int().positive().optional(),
  idPrefix: z.string().optional(),
  confirm: z
    .strictObject({
      message: z.string().min(1),
      requestedSchema: z
        .strictObject({
          type: z.literal('object'),
          properties: z.record(z.string(), z.record(z.string(), z.unknown())),
          required: z.array(z.string()).optional(),
        })
        .optional(),
      into: z.string().min(1).optional(),
    })
    .optional(),
  annotations: z
    .strictObject({
      title: z.string().optional(),
      readOnlyHint: z.boolean().optional(),
      destructiveHint: z.boolean().optional(),
      idempotentHint: z.boolean().optional(),
      openWorldHint: z.boolean().optional(),
    })
    .optional(),
});

const ToolsFileSchema = z.strictObject({ tools: z.array(ToolEntrySchema).min(1, 'list at least one tool') });

/** A tools file's entry: a workflow the server has no code for, described by JSON Schemas. */
export type ToolEntry = z.infer<typeof ToolEntrySchema>;

function fieldPath(issuePath: PropertyKey[]): string {
  return (
    issuePath.map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index ? '.' : ''}${String(part)}`)).join('') || '(file)'
  );
}

/**
 * Reads tool declarations from a JSON or YAML file (by extension; .yaml/.yml are YAML, anything else JSON):
 * `{ tools: [{ name, description, workflowType, inputSchema, ... }] }`. Throws {@link ToolsFileError} naming the field.
 */
export function loadToolsFile(file: string): WorkflowTool<unknown, unknown>[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ToolsFileError(`${file}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = /\.ya?ml$/i.test(path.extname(file)) ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    throw new ToolsFileError(`${file}: not valid ${/\.ya?ml$/i.test(file) ? 'YAML' : 'JSON'}: ${(error as Error).message}`);
  }
  const parsed = ToolsFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ToolsFileError(`${file}: ${fieldPath(issue.path)}: ${issue.message}`);
  }
  const seen = new Set<string>();
  return parsed.data.tools.map((entry, index) => {
    const where = `${file}: tools[${index}]`;
    if (seen.has(entry.name)) throw new ToolsFileError(`${where}.name: "${entry.name}" is declared twice`);
    seen.add(entry.name);
    const schema = (field: 'inputSchema' | 'outputSchema') => {
      try {
        return jsonSchema(entry[field]!);
      } catch (error) {
        if (error instanceof InvalidJsonSchemaError) throw new ToolsFileError(`${where}.${field}: ${error.message}`);
        throw error;
      }
    };
    try {
      const { inputSchema: _input, outputSchema, confirm, ...rest } = entry;
      return defineWorkflowTool<unknown, unknown>({
        ...rest,
        ...(confirm && { confirm: confirm as StartConfirmation }),
        inputSchema: schema('inputSchema'),
        ...(outputSchema && { outputSchema: schema('outputSchema') }),
      });
    } catch (error) {
      if (error instanceof ToolDeclarationError) throw new ToolsFileError(`${where}: ${error.message}`);
      throw error;
    }
  });
}

import Ajv, { type ErrorObject } from 'ajv';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** JSON Schema of an object, as tools/list carries it. */
export type ObjectJsonSchema = Tool['inputSchema'];

/** The result of checking a value against a {@link ToolSchema}. */
export type Checked<T> = { ok: true; value: T } | { ok: false; problems: string[] };

/** A schema a tool declares: its JSON Schema for clients, and a check of values against it. */
export interface ToolSchema<T> {
  jsonSchema: ObjectJsonSchema;
  check(value: unknown): Checked<T>;
}

/** A tool schema from a zod object schema; `io` picks the input or output view of transforms and defaults. */
export function zodSchema<T>(schema: z.ZodType<T>, io: 'input' | 'output' = 'input'): ToolSchema<T> {
  const { $schema: _ignored, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    jsonSchema: json as ObjectJsonSchema,
    check(value) {
      const parsed = schema.safeParse(value);
      if (parsed.success) return { ok: true, value: parsed.data };
      return {
        ok: false,
        problems: parsed.error.issues.map((issue) => `${issue.path.length ? issue.path.join('.') : '(arguments)'}: ${issue.message}`),
      };
    },
  };
}

const ajv = new Ajv({ allErrors: true, strict: false });

/** Thrown when a JSON Schema cannot be compiled; the message says why. */
export class InvalidJsonSchemaError extends Error {}

/** A tool schema from a JSON Schema object (for workflows declared in a configuration file). */
export function jsonSchema(schema: Record<string, unknown>): ToolSchema<unknown> {
  if (schema.type !== 'object') throw new InvalidJsonSchemaError('must be a JSON Schema of "type": "object"');
  let validate: ReturnType<typeof ajv.compile>;
  try {
    validate = ajv.compile(schema);
  } catch (error) {
    throw new InvalidJsonSchemaError((error as Error).message);
  }
  return {
    jsonSchema: schema as ObjectJsonSchema,
    check(value) {
      if (validate(value)) return { ok: true, value };
      return { ok: false, problems: (validate.errors ?? []).map(describeAjvError) };
    },
  };
}

function describeAjvError(error: ErrorObject): string {
  const where = error.instancePath ? error.instancePath.slice(1).replace(/\//g, '.') : '(arguments)';
  const extra =
    error.keyword === 'additionalProperties' ? ` ("${(error.params as { additionalProperty: string }).additionalProperty}")` : '';
  return `${where}: ${error.message ?? 'is not valid'}${extra}`;
}

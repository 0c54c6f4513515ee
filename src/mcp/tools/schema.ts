import Ajv, { type ErrorObject } from 'ajv';
import safeRegex from 'safe-regex2';
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

// The first problem only (a value with thousands of faults gets one line, not thousands); properties a schema does
// not declare are removed before the value goes anywhere (see closeObjects).
const ajv = new Ajv({ allErrors: false, strict: false, removeAdditional: true });

/** Thrown when a JSON Schema cannot be compiled; the message says why. */
export class InvalidJsonSchemaError extends Error {}

/**
 * A tool schema from a JSON Schema object (for workflows declared in a configuration file). Objects that list their
 * properties and say nothing of others get `additionalProperties: false`, so unknown properties are stripped from a
 * value before it is stored; regular expressions that could backtrack for seconds are refused.
 */
export function jsonSchema(declared: Record<string, unknown>): ToolSchema<unknown> {
  if (declared.type !== 'object') throw new InvalidJsonSchemaError('must be a JSON Schema of "type": "object"');
  const schema = closeObjects(structuredClone(declared)) as Record<string, unknown>;
  for (const pattern of patternsOf(schema)) {
    let unsafe: boolean;
    try {
      unsafe = !safeRegex(pattern);
    } catch {
      unsafe = true;
    }
    if (unsafe) {
      throw new InvalidJsonSchemaError(
        `pattern ${JSON.stringify(pattern)} can take exponential time on some inputs (nested or overlapping repetition); rewrite it`,
      );
    }
  }
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

/** Gives every object schema with `properties` and no word on other properties `additionalProperties: false`. */
function closeObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (node === null || typeof node !== 'object') return node;
  const schema = node as Record<string, unknown>;
  for (const [key, value] of Object.entries(schema)) {
    // `properties` maps names to schemas; `enum`, `const` and `default` hold values, not schemas.
    if (key === 'properties' && value && typeof value === 'object') {
      for (const [name, property] of Object.entries(value)) (value as Record<string, unknown>)[name] = closeObjects(property);
    } else if (!['enum', 'const', 'default', 'examples'].includes(key)) schema[key] = closeObjects(value);
  }
  if (
    schema.properties &&
    typeof schema.properties === 'object' &&
    !('additionalProperties' in schema) &&
    !('patternProperties' in schema)
  ) {
    schema.additionalProperties = false;
  }
  return schema;
}

/** Every regular expression in a schema: `pattern` values and `patternProperties` keys. */
function patternsOf(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((item) => patternsOf(item, found));
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'pattern' && typeof value === 'string') found.push(value);
      else if (key === 'patternProperties' && value && typeof value === 'object') {
        found.push(...Object.keys(value));
        Object.values(value).forEach((item) => patternsOf(item, found));
      } else if (!['enum', 'const', 'default', 'examples'].includes(key)) patternsOf(value, found);
    }
  }
  return found;
}

function describeAjvError(error: ErrorObject): string {
  const where = error.instancePath ? error.instancePath.slice(1).replace(/\//g, '.') : '(arguments)';
  const extra =
    error.keyword === 'additionalProperties' ? ` ("${(error.params as { additionalProperty: string }).additionalProperty}")` : '';
  return `${where}: ${error.message ?? 'is not valid'}${extra}`;
}

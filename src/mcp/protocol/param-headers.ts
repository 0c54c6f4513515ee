/**
 * Tool arguments mirrored into HTTP headers (MCP 2026-07-28, SEP-2243 "Custom Headers from Tool Parameters"): a
 * property of a tool's `inputSchema` marked `"x-mcp-header": "{Name}"` is sent by a 2026-07-28 client over Streamable
 * HTTP as `Mcp-Param-{Name}`, so that a balancer can route on it without reading the body; the server checks that the
 * header says what the body says. Pure functions: reading the marks of a schema, encoding and decoding a value, and
 * comparing a request's headers with its arguments.
 */

/** The prefix of every mirrored argument's header name. */
export const PARAM_HEADER_PREFIX = 'Mcp-Param-';

/** The JSON Schema keyword that marks a property for mirroring. */
export const X_MCP_HEADER = 'x-mcp-header';

/** One argument a tool has mirrored into a header. */
export interface ParamHeader {
  /** The full header name, `Mcp-Param-{Name}` as declared (header names compare case-insensitively). */
  header: string;
  /** The chain of `properties` keys from the arguments' root to the property. */
  path: readonly string[];
  /** The property's JSON Schema type: only these three may be mirrored. */
  type: 'string' | 'integer' | 'boolean';
}

/** Thrown when a schema marks a property with `x-mcp-header` against the spec's constraints; the message says which. */
export class InvalidParamHeaderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidParamHeaderError';
  }
}

/** RFC 9110 §5.1 `token`: what the `{Name}` of `Mcp-Param-{Name}` may be made of. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const MIRRORABLE_TYPES = new Set(['string', 'integer', 'boolean']);

/**
 * Keywords a chain of `properties` keys must not pass through (arrays, composition, conditionals, references,
 * definitions): a mark under any of them makes the tool definition invalid (SEP-2243, "statically reachable").
 */
const UNREACHABLE_KEYWORDS = [
  'items',
  'prefixItems',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'patternProperties',
  'dependentSchemas',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
];

/** Keywords whose value maps names to subschemas, rather than being a subschema or a list of them. */
const SCHEMA_MAPS = new Set(['patternProperties', 'dependentSchemas', '$defs', 'definitions']);

/**
 * The arguments an `inputSchema` marks with `x-mcp-header`, in schema order. Throws {@link InvalidParamHeaderError}
 * for a mark a client must refuse the tool for (SEP-2243): empty or not a token, on a property that is not a string,
 * integer or boolean (`number` is not allowed), not reachable from the root through `properties` alone, or a name that
 * another mark already uses, compared case-insensitively.
 */
export function paramHeadersOf(inputSchema: unknown): ParamHeader[] {
  const found: ParamHeader[] = [];
  const names = new Map<string, string>();
  const visit = (node: unknown, path: readonly string[], reachable: boolean): void => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
    const schema = node as Record<string, unknown>;
    const where = path.length === 0 ? 'the schema root' : path.join('.');
    if (X_MCP_HEADER in schema) {
      const name = schema[X_MCP_HEADER];
      if (!reachable || path.length === 0) {
        throw new InvalidParamHeaderError(
          `${where}: ${X_MCP_HEADER} may only mark a property reached from the root through "properties" alone`,
        );
      }
      if (typeof name !== 'string' || !TOKEN.test(name)) {
        throw new InvalidParamHeaderError(
          `${where}: ${X_MCP_HEADER} must be a header name token (letters, digits, !#$%&'*+-.^_\`|~), got ${JSON.stringify(name)}`,
        );
      }
      if (typeof schema.type !== 'string' || !MIRRORABLE_TYPES.has(schema.type)) {
        throw new InvalidParamHeaderError(
          `${where}: ${X_MCP_HEADER} may only mark a string, integer or boolean property, not ${JSON.stringify(schema.type ?? 'untyped')}`,
        );
      }
      const taken = names.get(name.toLowerCase());
      if (taken !== undefined)
        throw new InvalidParamHeaderError(
          `${where}: ${X_MCP_HEADER} "${name}" is already used by ${taken} (names compare case-insensitively)`,
        );
      names.set(name.toLowerCase(), where);
      found.push({ header: `${PARAM_HEADER_PREFIX}${name}`, path, type: schema.type as ParamHeader['type'] });
    }
    const properties = schema.properties;
    if (properties !== null && typeof properties === 'object' && !Array.isArray(properties)) {
      for (const [key, child] of Object.entries(properties)) visit(child, [...path, key], reachable);
    }
    for (const keyword of UNREACHABLE_KEYWORDS) {
      const sub = schema[keyword];
      if (sub === null || typeof sub !== 'object') continue;
      const branches = Array.isArray(sub) ? sub : SCHEMA_MAPS.has(keyword) ? Object.values(sub) : [sub];
      for (const branch of branches) visit(branch, [...path, `(${keyword})`], false);
    }
  };
  visit(inputSchema, [], true);
  return found;
}

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
/** RFC 4648 base64 with its padding: the only form a sentinel may carry. */
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** A header's decimal integer, compared numerically with the argument (SEP-2243: `42.0` equals `42`). */
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

/** True when a field value consists only of what RFC 9110 allows: visible ASCII, space and tab. */
function plainFieldValue(value: string): boolean {
  return /^[\x20-\x7e\t]*$/.test(value);
}

/** Whether a value is a sentinel-wrapped base64 value: `=?base64?…?=`. */
function isSentinel(value: string): boolean {
  return (
    value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX) && value.length >= SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length
  );
}

/** An argument's header form before encoding (SEP-2243 "type conversion"); undefined for what cannot be mirrored. */
function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/**
 * An argument as its `Mcp-Param-*` header carries it: as it is when it is plain ASCII with no space at either end,
 * otherwise (non-ASCII, control characters, spaces at an end, or text that looks like the sentinel itself) the
 * base64 of its UTF-8 in `=?base64?…?=`.
 */
export function encodeParamValue(value: string | number | boolean): string {
  const text = headerText(value)!;
  const plain = text.length > 0 && /^[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?$/.test(text) && !isSentinel(text);
  return plain ? text : `${SENTINEL_PREFIX}${Buffer.from(text, 'utf8').toString('base64')}${SENTINEL_SUFFIX}`;
}

/** A header's value as text: decoded from its sentinel when it has one; undefined when it is not valid. */
export function decodeParamValue(value: string): string | undefined {
  if (!plainFieldValue(value)) return undefined;
  if (!isSentinel(value)) return value;
  const encoded = value.slice(SENTINEL_PREFIX.length, value.length - SENTINEL_SUFFIX.length);
  if (!CANONICAL_BASE64.test(encoded)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64'));
  } catch {
    return undefined;
  }
}

/** Why a request's `Mcp-Param-*` headers do not fit its arguments. */
export interface ParamHeaderMismatch {
  /** The header at fault, as declared. */
  header: string;
  /** What is wrong, in a sentence for the client. */
  message: string;
}

/**
 * Compares the mirrored headers of one `tools/call` with its arguments (SEP-2243, server behavior): where the
 * arguments hold a value at a marked path, its header must be there, carry only characters a field value may, and
 * decode to that value (integers compared as numbers); where they hold none (absent or `null`), the header is not
 * expected. A value that is an object or an array is left to the arguments' own validation. `headerOf` reads a
 * request header by name, case-insensitively. Undefined when everything agrees.
 */
export function paramHeaderMismatch(
  declared: readonly ParamHeader[],
  args: unknown,
  headerOf: (name: string) => string | undefined,
): ParamHeaderMismatch | undefined {
  for (const { header, path, type } of declared) {
    const value = valueAt(args, path);
    const raw = headerOf(header);
    const argument = path.join('.');
    if (raw !== undefined && !plainFieldValue(raw)) {
      return { header, message: `the ${header} header carries characters a header value may not (encode the value as =?base64?…?=)` };
    }
    if (value === undefined || value === null) continue;
    const text = headerText(value);
    if (text === undefined) continue;
    if (raw === undefined) {
      return {
        header,
        message: `the arguments carry ${argument} but the ${header} header is absent; send it with the value of ${argument}`,
      };
    }
    const decoded = decodeParamValue(raw);
    if (decoded === undefined) return { header, message: `the ${header} header is not valid base64 of UTF-8 inside =?base64?…?=` };
    const equal = type === 'integer' && typeof value === 'number' && DECIMAL.test(decoded) ? Number(decoded) === value : decoded === text;
    if (!equal) {
      return {
        header,
        message: `the ${header} header says ${JSON.stringify(decoded)} but the arguments carry ${argument} = ${JSON.stringify(value)}`,
      };
    }
  }
  return undefined;
}

/** The value at a chain of property names; undefined where the chain breaks. */
function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || Array.isArray(node) || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * Canonical JSON: the one text a decision record's signature and digest, and an approver's statement, are made over.
 * Pure, with no Node module: the pages that sign in the browser compute it too.
 */

/** Thrown when a value has no canonical JSON: undefined in an array or at the top, a non-finite number, a function. */
export class CanonicalJsonError extends Error {
  constructor(
    message: string,
    /** Where in the value, e.g. `$.lines[2].amount`. */
    readonly at: string,
  ) {
    super(`${message} at ${at}`);
    this.name = 'CanonicalJsonError';
  }
}

/**
 * JSON with object keys sorted recursively (by UTF-16 code units, as JSON Canonicalization Scheme does), no spaces,
 * and object members that are undefined left out, as `JSON.stringify` leaves them out: a value and its JSON round
 * trip have the same text. Values with `toJSON` (a Date) are taken as they serialise. Throws
 * {@link CanonicalJsonError} for undefined in an array or at the top, NaN and infinities, functions, symbols and bigints.
 */
export function canonicalJson(value: unknown): string {
  return canonical(value, '$');
}

function canonical(value: unknown, at: string): string {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return canonical((value as { toJSON(): unknown }).toJSON(), at);
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalJsonError(`${value} has no JSON form`, at);
      return JSON.stringify(value);
    case 'undefined':
      throw new CanonicalJsonError('undefined has no JSON form', at);
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) return `[${value.map((item, index) => canonical(item, `${at}[${index}]`)).join(',')}]`;
      const keys = Object.keys(value)
        .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
        .sort();
      return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key], `${at}.${key}`)}`).join(',')}}`;
    }
    default:
      throw new CanonicalJsonError(`a ${typeof value} has no JSON form`, at);
  }
}

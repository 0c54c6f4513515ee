/**
 * The digest that tells one call's arguments from another's, whatever order their keys came in: how the server tells a
 * retried call from another with the same idempotency key, and how the client's `call` finds an earlier call of the
 * same tool with the same arguments in its store. Pure functions.
 */
import { createHash } from 'node:crypto';

/** SHA-256 (hex) of a value's canonical JSON: equal arguments give equal digests whatever order their keys came in. */
export function argumentsDigest(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** JSON with object keys sorted and undefined members left out, so that equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Idempotent task creation: the workflow id a call with an idempotency key maps to, and the digest of its arguments
 * that tells a retried call from another call with the same key. Pure functions.
 */
import { createHash } from 'node:crypto';

/** A UUID v4-shaped id from a digest of principal, tool and key: the same call always maps to the same task id. */
export function derivedUuid(principal: string, tool: string, key: string): string {
  const bytes = createHash('sha256').update(`${principal}\0${tool}\0${key}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** SHA-256 (hex) of a value's canonical JSON: equal arguments give equal digests whatever order their keys came in. */
export function argumentsDigest(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** JSON with object keys sorted, so equal arguments give equal text whatever order they were sent in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Idempotent task creation: the workflow id a call with an idempotency key maps to (the digest of its arguments, which
 * tells a retried call from another call with the same key, is in util/arguments-digest). Pure functions.
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

/**
 * Idempotent task creation: the shape of the task ids of calls with an idempotency key (made by the marker, under the
 * task key: `TaskMarker.keyedUuid`), and the ids versions before that derived with a plain digest, by which tasks of
 * theirs are still found (the digest of a call's arguments, which tells a retried call from another call with the same
 * key, is in util/arguments-digest). Pure functions.
 */
import { createHash } from 'node:crypto';

/** A UUID v4-shaped id of the first 16 bytes of `digest`. */
export function uuidShaped(digest: Buffer): string {
  const bytes = Buffer.from(digest.subarray(0, 16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The UUID versions before keyed ids gave the task of a call with an idempotency key: a plain SHA-256 of principal, tool
 * and key, which anyone can compute. Only looked up, so that a call repeated across the upgrade finds the task the
 * first one made; new tasks never get it.
 */
export function legacyDerivedUuid(principal: string, tool: string, key: string): string {
  return uuidShaped(createHash('sha256').update(`${principal}\0${tool}\0${key}`).digest());
}

/**
 * Canonical JSON and digests of decision records: the one text a record's signature and digest are made over, the
 * same whatever order its keys came in and however it was stored (a file, a jsonb column, a workflow history). Pure.
 */
import { createHash } from 'node:crypto';

export { CanonicalJsonError, canonicalJson } from '../util/canonical-json';
import { canonicalJson } from '../util/canonical-json';

/** `sha256:` and the base64url SHA-256 of the value's {@link canonicalJson}. Throws as canonicalJson does. */
export function digestOf(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value)).digest('base64url')}`;
}

/**
 * The body of a codec server's `/encode` and `/decode` as Temporal's Web UI and CLI send it: `{"payloads": [...]}`,
 * each payload in proto3 JSON (`metadata` values and `data` in base64). Pure functions.
 */
import type { Payload } from '@temporalio/common';

/** Thrown for a body that is not `{"payloads": [...]}` of proto3 JSON payloads; the message says what is wrong. */
export class PayloadsBodyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PayloadsBodyError';
  }
}

/** Most payloads one request may carry. */
export const MAX_PAYLOADS = 10_000;

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** The payloads of a request body's text. Throws {@link PayloadsBodyError}. */
export function payloadsOfBody(text: string): Payload[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new PayloadsBodyError('the body is not JSON: send {"payloads": [...]}');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new PayloadsBodyError('the body must be an object {"payloads": [...]}');
  const { payloads } = body as { payloads?: unknown };
  // proto3 JSON leaves an empty list out.
  if (payloads === undefined) return [];
  if (!Array.isArray(payloads)) throw new PayloadsBodyError('"payloads" must be an array');
  if (payloads.length > MAX_PAYLOADS) throw new PayloadsBodyError(`at most ${MAX_PAYLOADS} payloads per request`);
  return payloads.map((payload, index) => payloadOf(payload, index));
}

function payloadOf(value: unknown, index: number): Payload {
  const where = `payloads[${index}]`;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new PayloadsBodyError(`${where} must be an object`);
  const { metadata, data } = value as { metadata?: unknown; data?: unknown };
  const fields: Record<string, Uint8Array> = {};
  if (metadata !== undefined) {
    if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata))
      throw new PayloadsBodyError(`${where}.metadata must be an object of base64 strings`);
    for (const [name, encoded] of Object.entries(metadata)) fields[name] = bytesOf(encoded, `${where}.metadata.${name}`);
  }
  return { metadata: fields, data: data === undefined ? new Uint8Array() : bytesOf(data, `${where}.data`) };
}

function bytesOf(value: unknown, where: string): Uint8Array {
  if (typeof value !== 'string' || !BASE64.test(value)) throw new PayloadsBodyError(`${where} must be a base64 string`);
  return Buffer.from(value, value.includes('-') || value.includes('_') ? 'base64url' : 'base64');
}

/** The response body of `payloads`, in the shape {@link payloadsOfBody} reads. */
export function bodyOfPayloads(payloads: readonly Payload[]): string {
  return JSON.stringify({
    payloads: payloads.map((payload) => ({
      metadata: Object.fromEntries(
        Object.entries(payload.metadata ?? {}).map(([name, bytes]) => [name, Buffer.from(bytes).toString('base64')]),
      ),
      data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
    })),
  });
}

/**
 * The payload codec that encrypts what Temporal stores of a task (inputs, results, memo, queries, Updates, signals,
 * activity arguments): AES-256-GCM over the serialized payload, in the shape of Temporal's encryption samples
 * (`encoding: binary/encrypted`, `encryption-key-id: <id>`), so Temporal's tools and codec servers of other languages
 * read it. Every client and worker that touches the payloads needs the same keys: {@link dataConverterFromEnv}. Node
 * only.
 */
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { payloadKeysFromEnv, type PayloadKeys } from './payload-keys';

/** The metadata `encoding` of an encrypted payload. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** The metadata field that names the key of an encrypted payload. */
export const KEY_ID_METADATA = 'encryption-key-id';

const ENCODING_METADATA = 'encoding';
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Encrypts each payload under the first of `keys` and decrypts under the key it names. A payload that is not
 * encrypted (written before the keys were set) is passed through as it is. Decoding throws
 * `UnknownPayloadKeyError` for a key the keys do not hold and `PayloadDecryptionError` for a payload that does not
 * decrypt; a worker's workflow task then fails with that message, and a read of the bridge answers it.
 */
export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly keys: PayloadKeys) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const sealed = this.keys.seal(temporal.api.common.v1.Payload.encode(payload).finish());
      return {
        metadata: { [ENCODING_METADATA]: encoder.encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: encoder.encode(sealed.keyId) },
        data: sealed.data,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const keyId = encryptedWith(payload);
      if (keyId === undefined) return payload;
      const plaintext = this.keys.open({ keyId, data: payload.data ?? new Uint8Array() });
      return temporal.api.common.v1.Payload.decode(plaintext);
    });
  }
}

/** The key id of an encrypted payload; undefined for one that is not encrypted. */
export function encryptedWith(payload: Payload): string | undefined {
  const encoding = payload.metadata?.[ENCODING_METADATA];
  if (!encoding || decoder.decode(encoding) !== ENCRYPTED_ENCODING) return undefined;
  const keyId = payload.metadata?.[KEY_ID_METADATA];
  // An encrypted payload that names no key is read as naming the empty id, which no keys file holds.
  return keyId ? decoder.decode(keyId) : '';
}

/** A data converter that encrypts every payload under `keys` (Temporal's default payload converter inside). */
export function encryptingDataConverter(keys: PayloadKeys): DataConverter {
  return { payloadCodecs: [new EncryptionCodec(keys)] };
}

/**
 * The data converter of the environment: one that encrypts under the keys MCP_PAYLOAD_KEYS names, or undefined
 * (Temporal's default) when it is unset. Throws `PayloadKeysError` for a keys file that cannot be used.
 */
export function dataConverterFromEnv(env: NodeJS.ProcessEnv = process.env): DataConverter | undefined {
  const keys = payloadKeysFromEnv(env);
  return keys && encryptingDataConverter(keys);
}

/**
 * The keys that encrypt what the bridge's processes write about a task: the payloads of Temporal's history and the
 * decision records. One file, named by MCP_PAYLOAD_KEYS, holds `keyId base64key` lines of 32-byte AES-256 keys; the
 * first line's key encrypts, every line's key decrypts, so a key is rotated by adding a new first line and dropped once
 * nothing encrypted under it is still read. Node only.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** Environment variable: the path of the keys file. Unset (or empty): nothing is encrypted. */
export const PAYLOAD_KEYS_ENV = 'MCP_PAYLOAD_KEYS';

/** A key id: what a payload's metadata names, so it is kept short and plain. */
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Thrown when the keys file cannot be used: missing, malformed, a key of the wrong length, readable by others. */
export class PayloadKeysError extends Error {
  constructor(
    message: string,
    /** The file, as given. */
    readonly file: string,
  ) {
    super(message);
    this.name = 'PayloadKeysError';
  }
}

/** Thrown when data names a key the keys file does not hold. */
export class UnknownPayloadKeyError extends Error {
  constructor(
    /** The key id the data names. */
    readonly keyId: string,
    /** Where the keys came from, for the message. */
    source: string,
  ) {
    super(
      `data encrypted with key "${keyId}" cannot be read: ${source} does not hold that key; add its "${keyId} <base64 key>" line to the file (after the first line, which encrypts)`,
    );
    this.name = 'UnknownPayloadKeyError';
  }
}

/** Thrown when data does not decrypt under the key it names: another key under that id, or the data was altered. */
export class PayloadDecryptionError extends Error {
  constructor(readonly keyId: string) {
    super(
      `data encrypted with key "${keyId}" does not decrypt: the key under that id is not the one that encrypted it, or the data was altered`,
    );
    this.name = 'PayloadDecryptionError';
  }
}

/** Ciphertext with the id of the key it was made with. */
export interface Sealed {
  keyId: string;
  /** The 12-byte IV, the ciphertext and the 16-byte GCM tag, in that order (as Temporal's encryption samples lay it out). */
  data: Uint8Array;
}

/** A set of AES-256-GCM keys by id, the first of which encrypts. */
export class PayloadKeys {
  private readonly keys: ReadonlyMap<string, Buffer>;
  /** The key that encrypts. */
  readonly encryptingKeyId: string;

  /** `keys` in file order, the first encrypting; `source` names where they came from in errors. */
  constructor(
    keys: ReadonlyArray<readonly [string, Uint8Array]>,
    readonly source = 'the payload keys',
  ) {
    if (keys.length === 0) throw new Error('PayloadKeys needs at least one key');
    const byId = new Map<string, Buffer>();
    for (const [id, key] of keys) {
      if (!KEY_ID.test(id)) throw new Error(`payload key id "${id}" is not 1-64 letters, digits, ".", "_" or "-"`);
      if (key.length !== KEY_BYTES) throw new Error(`payload key "${id}" has ${key.length} bytes; AES-256 needs ${KEY_BYTES}`);
      if (byId.has(id)) throw new Error(`payload key id "${id}" is given twice`);
      byId.set(id, Buffer.from(key));
    }
    this.keys = byId;
    this.encryptingKeyId = keys[0][0];
  }

  /** The key ids, the encrypting one first. */
  get keyIds(): string[] {
    return [...this.keys.keys()];
  }

  /** Encrypts `plaintext` under the first key; `aad` (authenticated, not encrypted) must be given again to decrypt. */
  seal(plaintext: Uint8Array, aad?: Uint8Array): Sealed {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key(this.encryptingKeyId), iv);
    if (aad) cipher.setAAD(aad);
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return { keyId: this.encryptingKeyId, data: Buffer.concat([iv, body, cipher.getAuthTag()]) };
  }

  /**
   * Decrypts what {@link seal} made, under the key it names. Throws {@link UnknownPayloadKeyError} for a key this set
   * does not hold, {@link PayloadDecryptionError} when it does not decrypt (or `aad` differs).
   */
  open(sealed: Sealed, aad?: Uint8Array): Buffer {
    const key = this.key(sealed.keyId);
    const data = Buffer.from(sealed.data);
    if (data.length < IV_BYTES + TAG_BYTES) throw new PayloadDecryptionError(sealed.keyId);
    const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    if (aad) decipher.setAAD(aad);
    try {
      return Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadDecryptionError(sealed.keyId);
    }
  }

  private key(id: string): Buffer {
    const key = this.keys.get(id);
    if (!key) throw new UnknownPayloadKeyError(id, this.source);
    return key;
  }
}

/**
 * Parses a keys file's text: one `keyId base64key` line per key (standard or URL-safe base64 of 32 bytes), blank
 * lines and `#` comments allowed. Throws {@link PayloadKeysError} naming the line that does not hold.
 */
export function parsePayloadKeys(text: string, file: string): PayloadKeys {
  const keys: Array<[string, Buffer]> = [];
  const seen = new Set<string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '' || line.startsWith('#')) continue;
    const where = `${file} line ${i + 1}`;
    const parts = line.split(/\s+/);
    if (parts.length !== 2) throw new PayloadKeysError(`${where}: expected "keyId base64key", found ${parts.length} field(s)`, file);
    const [id, encoded] = parts;
    if (!KEY_ID.test(id)) throw new PayloadKeysError(`${where}: the key id "${id}" is not 1-64 letters, digits, ".", "_" or "-"`, file);
    if (seen.has(id)) throw new PayloadKeysError(`${where}: the key id "${id}" is given twice`, file);
    if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)) throw new PayloadKeysError(`${where}: the key of "${id}" is not base64`, file);
    const key = Buffer.from(encoded, encoded.includes('-') || encoded.includes('_') ? 'base64url' : 'base64');
    if (key.length !== KEY_BYTES) {
      throw new PayloadKeysError(
        `${where}: the key of "${id}" is ${key.length} bytes; AES-256 needs ${KEY_BYTES} (make one with: openssl rand -base64 32)`,
        file,
      );
    }
    seen.add(id);
    keys.push([id, key]);
  }
  if (keys.length === 0) throw new PayloadKeysError(`${file} holds no key: write a "keyId base64key" line (openssl rand -base64 32)`, file);
  return new PayloadKeys(keys, `the keys file ${file} (${PAYLOAD_KEYS_ENV})`);
}

/**
 * Reads the keys file at `file`. Refuses a file that others than its owner may read or write (its mode must grant
 * group and others nothing, as for an SSH key), and anything {@link parsePayloadKeys} refuses.
 * Throws {@link PayloadKeysError}.
 */
export function readPayloadKeys(file: string): PayloadKeys {
  const absolute = path.resolve(file);
  let text: string;
  try {
    const stats = statSync(absolute);
    if (!stats.isFile()) throw new PayloadKeysError(`${file} is not a file`, file);
    if (process.platform !== 'win32' && (stats.mode & 0o077) !== 0) {
      throw new PayloadKeysError(
        `${file} may be read or written by others (mode ${(stats.mode & 0o777).toString(8)}): it holds the keys of every task's data; chmod 600 ${file}`,
        file,
      );
    }
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    if (error instanceof PayloadKeysError) throw error;
    throw new PayloadKeysError(`cannot read the keys file ${file}: ${(error as Error).message}`, file);
  }
  return parsePayloadKeys(text, file);
}

/** The keys MCP_PAYLOAD_KEYS names, or undefined when it is unset or empty. Throws {@link PayloadKeysError}. */
export function payloadKeysFromEnv(env: NodeJS.ProcessEnv = process.env): PayloadKeys | undefined {
  const file = env[PAYLOAD_KEYS_ENV]?.trim();
  if (!file) return undefined;
  try {
    return readPayloadKeys(file);
  } catch (error) {
    if (error instanceof PayloadKeysError) throw new PayloadKeysError(`${PAYLOAD_KEYS_ENV}: ${error.message}`, file);
    throw error;
  }
}

/** Says in a start-up log line how payloads are written: encrypted under which key, or in the clear. */
export function describePayloadKeys(keys: PayloadKeys | undefined): string {
  if (!keys) return `payloads in the clear (${PAYLOAD_KEYS_ENV} unset)`;
  const others = keys.keyIds.length - 1;
  return `payloads encrypted with key ${keys.encryptingKeyId}${others > 0 ? ` (${others} more key(s) decrypt)` : ''}`;
}

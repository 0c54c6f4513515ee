/**
 * The keys of decision records: the bridge signs each record with its Ed25519 private key; workers and auditors hold
 * only the public key (several during a rotation) and check records with it. Node only.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign as signBytes,
  verify as verifyBytes,
  type KeyObject,
} from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { replaceFileDurably } from '../util/durable-files';
import { canonicalJson, digestOf } from './canonical';
import type { DecisionRecordBody, SignedDecisionRecord } from '../contract/decision-records';

/** Environment variable: the path of the bridge's PKCS#8 PEM Ed25519 private key. */
export const DECISION_SIGNING_KEY_ENV = 'MCP_DECISION_SIGNING_KEY';
/** Environment variable: the path(s) of SPKI PEM public keys records are checked with, comma-separated. */
export const DECISION_PUBLIC_KEY_ENV = 'MCP_DECISION_PUBLIC_KEY';

/** Thrown when a decision key cannot be had or is not an Ed25519 key; the message says what to set or do. */
export class DecisionKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DecisionKeyError';
  }
}

/** Signs decision records with one private key. */
export interface DecisionSigner {
  /** The first 16 characters of the base64url SHA-256 of the raw public key. */
  keyId: string;
  /** The public key, SPKI PEM: what workers and auditors are given. */
  publicKeyPem: string;
  /** The record of `body`: its digest, its signature over the canonical JSON of `body`, and this key's id. */
  sign(body: DecisionRecordBody): SignedDecisionRecord;
  /** The base64url signature of the canonical JSON of `value` (a receipt's seal). */
  signValue(value: unknown): string;
}

/** The public keys records are checked with. */
export interface DecisionPublicKeys {
  keyIds: string[];
  /** True when `record.signature` is a valid signature of its body's canonical JSON under the key `record.keyId` names. */
  verify(record: SignedDecisionRecord): boolean;
  /** True when `signature` is a valid signature of the canonical JSON of `value` under the key `keyId` names. */
  verifyValue(value: unknown, keyId: string, signature: string): boolean;
}

/** The id of an Ed25519 public key (see {@link DecisionSigner.keyId}). */
export function keyIdOf(publicKey: KeyObject): string {
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
  return createHash('sha256').update(raw).digest('base64url').slice(0, 16);
}

/** A signer of the PKCS#8 PEM Ed25519 private key `privateKeyPem`. Throws {@link DecisionKeyError} for another key. */
export function createDecisionSigner(privateKeyPem: string): DecisionSigner {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: privateKeyPem, format: 'pem' });
  } catch (error) {
    throw new DecisionKeyError(`the decision signing key is not a PEM private key: ${(error as Error).message}`);
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') {
    throw new DecisionKeyError(
      `the decision signing key is a ${privateKey.asymmetricKeyType} key; use an Ed25519 key (openssl genpkey -algorithm ed25519)`,
    );
  }
  const publicKey = createPublicKey(privateKey);
  const keyId = keyIdOf(publicKey);
  return {
    keyId,
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }) as string,
    sign(body) {
      return { body, digest: digestOf(body), signature: this.signValue(body), keyId };
    },
    signValue(value) {
      return signBytes(null, Buffer.from(canonicalJson(value)), privateKey).toString('base64url');
    },
  };
}

/** The public keys of the SPKI PEM texts `pems`. Throws {@link DecisionKeyError} for a text that is not an Ed25519 public key. */
export function publicKeysFromPem(pems: string[]): DecisionPublicKeys {
  const byId = new Map<string, KeyObject>();
  pems.forEach((pem, index) => {
    let key: KeyObject;
    try {
      key = createPublicKey({ key: pem, format: 'pem' });
    } catch (error) {
      throw new DecisionKeyError(`decision public key ${index + 1} is not a PEM public key: ${(error as Error).message}`);
    }
    if (key.asymmetricKeyType !== 'ed25519') {
      throw new DecisionKeyError(
        `decision public key ${index + 1} is a ${key.asymmetricKeyType} key; decision records are signed with Ed25519`,
      );
    }
    byId.set(keyIdOf(key), key);
  });
  function verifyValue(value: unknown, keyId: string, signature: string): boolean {
    const key = byId.get(keyId);
    if (!key || typeof signature !== 'string') return false;
    try {
      return verifyBytes(null, Buffer.from(canonicalJson(value)), key, Buffer.from(signature, 'base64url'));
    } catch {
      return false;
    }
  }
  return {
    keyIds: [...byId.keys()],
    verify: (record: SignedDecisionRecord) =>
      record.keyId !== undefined && typeof record.signature === 'string' && verifyValue(record.body, record.keyId, record.signature),
    verifyValue,
  };
}

/** The default key pair's folder: `$XDG_CONFIG_HOME/temporal-mcp-tasks`, else `~/.config/temporal-mcp-tasks`. */
function configDir(env: NodeJS.ProcessEnv): string {
  return path.join(env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'temporal-mcp-tasks');
}

/** Where the bridge's private key is kept when MCP_DECISION_SIGNING_KEY is not set. */
export function defaultSigningKeyFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(configDir(env), 'decision-signing-key.pem');
}

/** The public half of the default key pair, beside it. */
export function defaultPublicKeyFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(configDir(env), 'decision-signing-key.pub.pem');
}

/**
 * The bridge's signer: the PKCS#8 PEM Ed25519 private key in the file MCP_DECISION_SIGNING_KEY names, else the
 * machine's default key (see {@link defaultSigningKeyFile}), generated once (mode 0600 in a 0700 folder) with its
 * public key beside it (`decision-signing-key.pub.pem`), which every local process shares. A file that is named
 * but missing is an error, never replaced by a new key. Throws {@link DecisionKeyError} saying what to set.
 */
export function decisionSignerFromEnv(env: NodeJS.ProcessEnv = process.env): DecisionSigner {
  const named = env[DECISION_SIGNING_KEY_ENV]?.trim();
  if (named) {
    let pem: string;
    try {
      pem = readFileSync(named, 'utf8');
    } catch (error) {
      throw new DecisionKeyError(
        `cannot read the decision signing key ${named}: ${(error as Error).message}; set ${DECISION_SIGNING_KEY_ENV} to the path of a PKCS#8 PEM Ed25519 private key`,
      );
    }
    return withContext(named, () => createDecisionSigner(pem));
  }
  const file = defaultSigningKeyFile(env);
  const signer = withContext(file, () => createDecisionSigner(readOrCreateKey(file)));
  writePublicKeyBeside(defaultPublicKeyFile(env), signer.publicKeyPem);
  return signer;
}

/**
 * The bridge's signer when this machine holds its key (MCP_DECISION_SIGNING_KEY, else the default key file), never
 * making one: undefined when neither is there. Throws {@link DecisionKeyError} for a key that is there and unusable.
 */
export function existingDecisionSigner(env: NodeJS.ProcessEnv = process.env): DecisionSigner | undefined {
  if (!env[DECISION_SIGNING_KEY_ENV]?.trim() && !existsSync(defaultSigningKeyFile(env))) return undefined;
  return decisionSignerFromEnv(env);
}

/**
 * The public keys in the files MCP_DECISION_PUBLIC_KEY names (comma-separated: during a rotation, the old key and the
 * new), else the public half of the machine's default key pair. Throws {@link DecisionKeyError} saying what to set;
 * when the machine has no default key pair yet, the keys are read on first use, which throws until the server has
 * made the pair (a worker may start before the server does).
 */
export function decisionPublicKeysFromEnv(env: NodeJS.ProcessEnv = process.env): DecisionPublicKeys {
  const named = env[DECISION_PUBLIC_KEY_ENV]?.trim();
  if (named)
    return publicKeysFromFiles(
      named
        .split(',')
        .map((file) => file.trim())
        .filter(Boolean),
    );
  const load = () => defaultPublicKeys(env);
  if (existsSync(defaultPublicKeyFile(env)) || existsSync(defaultSigningKeyFile(env))) return load();
  // No key pair on this machine yet: the server makes it when it first starts, maybe after this worker. The keys are
  // read when first needed; until the pair is there, each use throws the error saying what to do (an activity retries).
  let loaded: DecisionPublicKeys | undefined;
  const keys = () => (loaded ??= load());
  return {
    get keyIds() {
      return keys().keyIds;
    },
    verify: (record) => keys().verify(record),
    verifyValue: (value, keyId, signature) => keys().verifyValue(value, keyId, signature),
  };
}

/**
 * Where {@link decisionPublicKeysFromEnv} takes its keys from, in words, without reading them: a worker says so when it
 * starts, which may be before the server has made the machine's key pair.
 */
export function describeDecisionPublicKeys(env: NodeJS.ProcessEnv = process.env): string {
  const named = env[DECISION_PUBLIC_KEY_ENV]?.trim();
  if (named) return `the public key(s) in ${named}`;
  const file = defaultPublicKeyFile(env);
  if (existsSync(file) || existsSync(defaultSigningKeyFile(env))) return `the public key in ${file}`;
  return `the public key in ${file}, read when first needed (the server makes the key pair when it first starts)`;
}

/** The public half of the machine's default key pair; derived from its private key when only that is there. */
function defaultPublicKeys(env: NodeJS.ProcessEnv): DecisionPublicKeys {
  const file = defaultPublicKeyFile(env);
  if (!existsSync(file)) {
    // The private key of this machine is there but its public half is not (a copy of the folder, say): derive it.
    const privateFile = defaultSigningKeyFile(env);
    if (existsSync(privateFile)) {
      try {
        writePublicKeyBeside(file, createDecisionSigner(readFileSync(privateFile, 'utf8')).publicKeyPem);
      } catch {
        // Reported below as a missing public key.
      }
    }
    if (!existsSync(file)) {
      throw new DecisionKeyError(
        `no decision public key: set ${DECISION_PUBLIC_KEY_ENV} to the bridge's public key file(s) (SPKI PEM, comma-separated), ` +
          `or start the server once on this machine to create its key pair (${file})`,
      );
    }
  }
  return publicKeysFromFiles([file]);
}

/** The public keys in `files` (SPKI PEM). Throws {@link DecisionKeyError} naming a file that cannot be read or used. */
export function publicKeysFromFiles(files: string[]): DecisionPublicKeys {
  if (files.length === 0) throw new DecisionKeyError(`no decision public key file given; set ${DECISION_PUBLIC_KEY_ENV}`);
  const pems = files.map((file) => {
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      throw new DecisionKeyError(
        `cannot read the decision public key ${file}: ${(error as Error).message}; set ${DECISION_PUBLIC_KEY_ENV} to the bridge's public key file(s)`,
      );
    }
  });
  return withContext(files.join(', '), () => publicKeysFromPem(pems));
}

function withContext<T>(file: string, make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof DecisionKeyError) throw new DecisionKeyError(`${file}: ${error.message}`);
    throw error;
  }
}

/** The private key PEM in `file`, generated there first if there is none (exclusively: one process writes it). */
function readOrCreateKey(file: string): string {
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const fd = openSync(file, 'wx', 0o600);
    try {
      const { privateKey } = generateKeyPairSync('ed25519');
      writeSync(fd, privateKey.export({ format: 'pem', type: 'pkcs8' }) as string);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new DecisionKeyError(
        `cannot create the decision signing key ${file}: ${(error as Error).message}; set ${DECISION_SIGNING_KEY_ENV}`,
      );
    }
  }
  const read = () => {
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      throw new DecisionKeyError(
        `cannot read the decision signing key ${file}: ${(error as Error).message}; set ${DECISION_SIGNING_KEY_ENV}`,
      );
    }
  };
  let pem = read();
  // A file being written by another process right now reads short: its key is the one to use, so wait for it.
  for (let attempt = 0; !pem.includes('-----END') && attempt < 50; attempt++) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    pem = read();
  }
  if (!pem.includes('-----END')) {
    throw new DecisionKeyError(`the decision signing key in ${file} is incomplete; delete it or set ${DECISION_SIGNING_KEY_ENV}`);
  }
  return pem;
}

/** Writes the public key file unless it holds this key already; whole or not at all (a rename), never half. */
function writePublicKeyBeside(file: string, pem: string): void {
  try {
    if (readFileSync(file, 'utf8') === pem) return;
  } catch {
    // Not there yet.
  }
  try {
    replaceFileDurably(file, `${file}.${process.pid}.${Date.now()}.tmp`, pem);
  } catch (error) {
    throw new DecisionKeyError(
      `cannot write the decision public key ${file}: ${(error as Error).message}; set ${DECISION_SIGNING_KEY_ENV}`,
    );
  }
}

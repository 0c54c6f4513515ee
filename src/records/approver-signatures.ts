/**
 * Approvers' own signatures: a person signs their decision with a key of their own, over a statement naming the task,
 * the question, the digest of exactly what they were shown and what they decided. The bridge puts that signature into
 * the decision record it signs; the worker's check before an effect and `approvals verify` check it against the keys
 * the approvers directory lists, so an approval of someone who must sign cannot be made with the bridge's key alone.
 * Node only (the hashing and Ed25519).
 */
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign as signBytes,
  verify as verifyBytes,
  type KeyObject,
} from 'node:crypto';
import type { InputAudience } from '../contract/approvals';
import { canonicalJson } from './canonical';
import { keyIdOf } from './keys';
import { passkeyProblem, type PasskeyEntry } from './passkeys';
import { CHALLENGE_PATTERN } from '../contract/decision-records';
import type {
  ApproverSignature,
  ApproverStatement,
  DecisionRecordBody,
  PasskeyApproverSignature,
  SignableDecision,
} from '../contract/decision-records';

export type {
  ApproverSignature,
  ApproverStatement,
  Ed25519ApproverSignature,
  PasskeyApproverSignature,
  SignableDecision,
} from '../contract/decision-records';

/** The `format` of an approver's statement. */
export const APPROVER_STATEMENT_FORMAT: ApproverStatement['format'] = 'temporal-mcp-tasks/approver-statement';

/**
 * The statement a record's approver signature must be over: version 2, naming the record's run (and `challenge`, when
 * the signature names one), as signatures are made now; version 1 (`version: 1`) for signatures made before.
 */
export function statementOf(
  body: Pick<DecisionRecordBody, 'taskId' | 'subject' | 'decision' | 'delegatedTo'> & { question: { key: string }; run?: string },
  signed: { version?: 1 | 2; challenge?: string } = {},
): ApproverStatement {
  const version = signed.version ?? 2;
  return {
    format: APPROVER_STATEMENT_FORMAT,
    v: version,
    taskId: body.taskId,
    ...(version === 2 && { run: body.run ?? '' }),
    key: body.question.key,
    subject: body.subject,
    decision: body.decision as SignableDecision,
    ...(body.delegatedTo !== undefined && { delegatedTo: body.delegatedTo }),
    ...(version === 2 && signed.challenge !== undefined && { challenge: signed.challenge }),
  };
}

/** The statement `signature` says it is over, for `body` (see {@link statementOf}). */
export function signedStatementOf(body: Parameters<typeof statementOf>[0], signature: ApproverSignature): ApproverStatement {
  return statementOf(
    body,
    signature.v === 2 ? { version: 2, ...(signature.challenge !== undefined && { challenge: signature.challenge }) } : { version: 1 },
  );
}

/** Thrown for an approver's key that cannot be used; the message says what is wrong and what to do. */
export class ApproverKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ApproverKeyError';
  }
}

/** Raw Ed25519 public keys are 32 bytes: 43 base64url characters. */
const RAW_ED25519 = /^[A-Za-z0-9_-]{43}$/;

/** The Ed25519 public key of its raw 32 bytes in base64url, as the directory lists it. Throws {@link ApproverKeyError}. */
export function ed25519PublicKey(raw: string): KeyObject {
  if (!RAW_ED25519.test(raw)) throw new ApproverKeyError('an Ed25519 public key is its 32 bytes in base64url (43 characters)');
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw }, format: 'jwk' });
  } catch (error) {
    throw new ApproverKeyError(`not an Ed25519 public key: ${(error as Error).message}`);
  }
}

/** A new approver key pair: the private key as PKCS#8 PEM (keep it), the public key as the directory lists it, and its id. */
export function generateApproverKey(): { privateKeyPem: string; publicKey: string; keyId: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }) as string,
    publicKey: publicKey.export({ format: 'jwk' }).x as string,
    keyId: keyIdOf(publicKey),
  };
}

/** The public key of an approver's PKCS#8 PEM private key, as the directory lists it. Throws {@link ApproverKeyError}. */
export function approverPublicKeyOf(privateKeyPem: string): { publicKey: string; keyId: string } {
  const key = approverPrivateKey(privateKeyPem);
  const publicKey = createPublicKey(key);
  return { publicKey: publicKey.export({ format: 'jwk' }).x as string, keyId: keyIdOf(publicKey) };
}

function approverPrivateKey(privateKeyPem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: privateKeyPem, format: 'pem' });
  } catch (error) {
    throw new ApproverKeyError(`not a PEM private key: ${(error as Error).message}`);
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new ApproverKeyError(`a ${key.asymmetricKeyType} key; approvers sign with Ed25519 (temporal-mcp-tasks approvals keygen)`);
  }
  return key;
}

/** Signs `statement` with the approver's PKCS#8 PEM Ed25519 private key. Throws {@link ApproverKeyError}. */
export function signStatement(statement: ApproverStatement, privateKeyPem: string): ApproverSignature {
  const key = approverPrivateKey(privateKeyPem);
  const signature = signBytes(null, Buffer.from(canonicalJson(statement)), key).toString('base64url');
  return {
    alg: 'ed25519',
    keyId: keyIdOf(createPublicKey(key)),
    signature,
    ...(statement.v === 2 && { v: 2 as const }),
    ...(statement.challenge !== undefined && { challenge: statement.challenge }),
  };
}

/** The keys people sign with, and who must sign: what the approvers directory says (see `ApproversDirectory.signatures`). */
export interface ApproverKeyring {
  /** The person a principal stands for, when the directory lists it (a check then counts that person). */
  personOf(principal: string): string | undefined;
  /** The public keys of `person`, by key id (a passkey's: its credential id; none: an empty map). */
  keysOf(person: string): ReadonlyMap<string, ApproverPublicKey>;
  /**
   * Whether an approval by `person` counts only with their own signature: everyone must sign, or the person must, or
   * they hold (in the directory, or as the record says) a role whose approvals must be signed.
   */
  mustSign(person: string, roles: readonly string[]): boolean;
  /**
   * Whether an approval by `principal` may count for a question: the directory lists the person it stands for, and,
   * when the question's audience is known, that audience addresses them (named among its principals, or holding one
   * of its roles in the directory). A principal the audience names itself counts without a listing. What the record
   * says of the approver's roles is never asked.
   */
  mayCount(principal: string, audience?: InputAudience): boolean;
}

/** A person's public key: an Ed25519 key, or a passkey with where it signs. */
export type ApproverPublicKey = { kind: 'ed25519'; key: KeyObject } | ({ kind: 'passkey'; key: KeyObject } & PasskeyEntry);

/** What checking the approver's signature of one record found. */
export type ApproverSignatureCheck =
  /** Valid; `version` 1: over a statement that names no run (made before statements named it). */
  | { status: 'valid'; keyId: string; version: 1 | 2 }
  /** There is none. */
  | { status: 'absent' }
  /** It names a key the directory does not list for the person (or no directory was given). */
  | { status: 'unknown-key'; keyId: string }
  /** It is malformed, or not valid under the key it names: the record was altered or forged. */
  | { status: 'invalid'; problem: string };

/** Checks the approver's signature `body` carries against `keyring`'s keys of `person`. Never throws. */
export function checkApproverSignature(
  body: DecisionRecordBody,
  person: string,
  keyring: ApproverKeyring | undefined,
): ApproverSignatureCheck {
  const given = body.approverSignature as unknown;
  if (given === undefined) return { status: 'absent' };
  if (!isSignature(given)) {
    return {
      status: 'invalid',
      problem:
        'its approver signature is malformed (alg "ed25519" with keyId and signature, or "webauthn" with keyId, authenticatorData, clientDataJSON and signature)',
    };
  }
  const listed = keyring?.keysOf(person).get(given.keyId);
  if (!listed || (listed.kind === 'passkey') !== (given.alg === 'webauthn')) return { status: 'unknown-key', keyId: given.keyId };
  const statement = signedStatementOf(body, given);
  let problem: string | undefined;
  if (listed.kind === 'passkey') {
    problem = passkeyProblem(statement, given as PasskeyApproverSignature, listed);
  } else {
    let valid: boolean;
    try {
      valid = verifyBytes(null, Buffer.from(canonicalJson(statement)), listed.key, Buffer.from(given.signature, 'base64url'));
    } catch {
      valid = false;
    }
    problem = valid ? undefined : 'it does not verify';
  }
  return problem === undefined
    ? { status: 'valid', keyId: given.keyId, version: statement.v }
    : {
        status: 'invalid',
        problem: `its approver signature is not valid under ${person}'s key ${given.keyId} (${problem}): it was altered or forged`,
      };
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

function isSignature(value: unknown): value is ApproverSignature {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const candidate = value as Record<string, unknown>;
  const text = (name: string, max: number) =>
    typeof candidate[name] === 'string' && (candidate[name] as string).length <= max && BASE64URL.test(candidate[name] as string);
  // Version 2 adds `v` and, when the statement names one, `challenge`; a challenge belongs to version 2 only.
  if (candidate.v !== undefined && candidate.v !== 2) return false;
  if (candidate.challenge !== undefined && (candidate.v !== 2 || !isChallengeText(candidate.challenge))) return false;
  const extra = (candidate.v === undefined ? 0 : 1) + (candidate.challenge === undefined ? 0 : 1);
  if (candidate.alg === 'ed25519') {
    return (
      text('keyId', 100) &&
      typeof candidate.signature === 'string' &&
      /^[A-Za-z0-9_-]{86}$/.test(candidate.signature) &&
      Object.keys(candidate).length === 3 + extra
    );
  }
  if (candidate.alg === 'webauthn') {
    return (
      text('keyId', 1_400) &&
      text('authenticatorData', 4_000) &&
      text('clientDataJSON', 4_000) &&
      text('signature', 1_000) &&
      Object.keys(candidate).length === 5 + extra
    );
  }
  return false;
}

/** True when `value` has the shape of an {@link ApproverSignature} (as an argument may give it). */
export function isApproverSignature(value: unknown): value is ApproverSignature {
  return isSignature(value);
}

/** A challenge as the bridge issues them: base64url with one dot, at most 1,000 characters. */
function isChallengeText(value: unknown): boolean {
  return typeof value === 'string' && value.length <= 1_000 && CHALLENGE_PATTERN.test(value);
}

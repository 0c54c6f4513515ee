/**
 * Passkeys as approvers' own keys: a WebAuthn assertion whose challenge is the digest of the approver's statement is
 * their signature of it. Checked here with Node's crypto alone (no trust in the browser or the bridge): the client
 * data says `webauthn.get`, the challenge and the origin the directory lists; the authenticator data names the relying
 * party's id and says the person was present and verified; the signature verifies under the listed public key.
 * Node only.
 */
import { createHash, createPublicKey, verify as verifyBytes, type KeyObject } from 'node:crypto';
import { canonicalJson } from './canonical';
import type { ApproverStatement, PasskeyApproverSignature } from '../contract/decision-records';

/** A passkey as the approvers directory lists it: its credential id, its public key, where it was registered. */
export interface PasskeyEntry {
  /** The credential id, base64url. */
  id: string;
  /** The credential's public key, SPKI DER in base64url (an ES256 or Ed25519 key). */
  publicKey: string;
  /** The relying party id it was registered for (the host name, e.g. approvals.example.com). */
  rpId: string;
  /** The origin of the page it signs on, e.g. https://approvals.example.com. */
  origin: string;
}

/** The WebAuthn challenge of a statement: the SHA-256 of its canonical JSON, base64url (as client data carries it). */
export function passkeyChallengeOf(statement: ApproverStatement): string {
  return createHash('sha256').update(canonicalJson(statement)).digest('base64url');
}

/** The public key of a directory entry. Throws for one that is not an SPKI ES256 (P-256) or Ed25519 key. */
export function passkeyPublicKey(spki: string): KeyObject {
  const key = createPublicKey({ key: Buffer.from(spki, 'base64url'), format: 'der', type: 'spki' });
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (key.asymmetricKeyType === 'ed25519' || (key.asymmetricKeyType === 'ec' && curve === 'prime256v1')) return key;
  throw new Error(`a ${key.asymmetricKeyType}${curve ? ` (${curve})` : ''} key; passkeys here are ES256 (P-256) or Ed25519`);
}

/** Authenticator data flags: the user was present, and verified (PIN, biometrics). */
const USER_PRESENT = 0x01;
const USER_VERIFIED = 0x04;

/**
 * Why `signature` is not a passkey signature of `statement` under `entry` (undefined: it is). Never throws.
 */
export function passkeyProblem(
  statement: ApproverStatement,
  signature: PasskeyApproverSignature,
  entry: PasskeyEntry & { key: KeyObject },
): string | undefined {
  let clientData: { type?: unknown; challenge?: unknown; origin?: unknown; crossOrigin?: unknown };
  const clientDataBytes = Buffer.from(signature.clientDataJSON, 'base64url');
  try {
    clientData = JSON.parse(clientDataBytes.toString('utf8')) as typeof clientData;
  } catch {
    return 'its client data is not JSON';
  }
  if (clientData.type !== 'webauthn.get') return `its client data is of type ${String(clientData.type)}, not webauthn.get`;
  if (clientData.challenge !== passkeyChallengeOf(statement)) return 'it was made over another statement (the challenge differs)';
  if (clientData.origin !== entry.origin) return `it was made on ${String(clientData.origin)}, not on ${entry.origin}`;
  if (clientData.crossOrigin === true) return 'it was made in a frame of another origin';
  const authenticatorData = Buffer.from(signature.authenticatorData, 'base64url');
  if (authenticatorData.length < 37) return 'its authenticator data is too short';
  const rpIdHash = createHash('sha256').update(entry.rpId).digest();
  if (!authenticatorData.subarray(0, 32).equals(rpIdHash)) return `it was made for another relying party than ${entry.rpId}`;
  const flags = authenticatorData[32];
  if ((flags & USER_PRESENT) === 0 || (flags & USER_VERIFIED) === 0)
    return 'the authenticator did not verify the person (user verification)';
  const signed = Buffer.concat([authenticatorData, createHash('sha256').update(clientDataBytes).digest()]);
  let valid: boolean;
  try {
    const algorithm = entry.key.asymmetricKeyType === 'ed25519' ? null : 'sha256';
    valid = verifyBytes(algorithm, signed, entry.key, Buffer.from(signature.signature, 'base64url'));
  } catch {
    valid = false;
  }
  return valid ? undefined : 'its signature is not valid under the passkey';
}

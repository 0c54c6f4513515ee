/**
 * Sign-in with a passkey the approvers directory lists: the page asks for options (a challenge that carries its own
 * expiry, signed, so any replica checks it), the browser makes an assertion with a discoverable credential (user
 * verification required), and the assertion is verified with `@simplewebauthn/server` against the credential's public
 * key as the directory lists it. A challenge signs in once. The person is whoever the directory lists the credential
 * for; a credential nobody lists is refused with the same sentence as a bad assertion.
 */
import { randomBytes } from 'node:crypto';
import { generateAuthenticationOptions, verifyAuthenticationResponse, type AuthenticationResponseJSON } from '@simplewebauthn/server';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { passkeyPublicKey } from '../../records/passkeys';
import type { ApproversDirectory } from '../../records/directory';
import type { Person } from '../../records/directory-file';
import { SignedTokens, type TokenClaims } from '../../shared/signed-tokens';
import type { OneTimeUses } from '../../approvals/one-time-uses';

/** How long a sign-in may take from its options to its assertion. */
const CHALLENGE_MS = 5 * 60_000;

/** The one sentence every refused passkey sign-in gets: it tells no listed credential from a bad one. */
export const PASSKEY_REFUSED =
  'That passkey could not sign you in here. Use a passkey your approvers directory entry lists, or another way to sign in.';

interface ChallengeClaims extends TokenClaims {
  n: string;
}

/** Thrown for a sign-in that does not check out; its message is {@link PASSKEY_REFUSED} or says to try again. */
export class PasskeySignInError extends Error {
  constructor(message: string = PASSKEY_REFUSED) {
    super(message);
    this.name = 'PasskeySignInError';
  }
}

/** Passkey sign-in (see the module's comment). */
export class PasskeySignIn {
  private readonly challenges: SignedTokens;

  constructor(
    taskKey: Buffer,
    private readonly rp: { rpId: string; origin: string },
    private readonly directory: ApproversDirectory,
    private readonly uses: OneTimeUses,
  ) {
    this.challenges = new SignedTokens(taskKey, 'passkey sign-in challenge');
  }

  /** Whether anyone in the directory has a passkey of this page's relying party and origin. */
  get offered(): boolean {
    return this.directory.people.some((person) => this.listsPasskeyOf(person));
  }

  /** Whether the directory lists a passkey of this page's relying party and origin for `person`. */
  listsPasskeyOf(person: Person): boolean {
    return person.keys.some((key) => this.usable(key.passkey));
  }

  /** The options of a sign-in: a fresh challenge, any credential of this relying party, user verification required. */
  options(now = Date.now()): Promise<unknown> {
    const token = this.challenges.sign<ChallengeClaims>({ n: randomBytes(16).toString('base64url'), exp: now + CHALLENGE_MS });
    return generateAuthenticationOptions({
      rpID: this.rp.rpId,
      challenge: new Uint8Array(Buffer.from(token, 'utf8')),
      userVerification: 'required',
      timeout: CHALLENGE_MS,
    });
  }

  /** The person the assertion `response` signs in, checked; throws {@link PasskeySignInError}. */
  async verify(response: unknown, now = Date.now()): Promise<Person> {
    const assertion = response as AuthenticationResponseJSON;
    if (assertion === null || typeof assertion !== 'object' || typeof assertion.id !== 'string') throw new PasskeySignInError();
    const owner = this.directory.people.find((person) =>
      person.keys.some((key) => key.passkey?.id === assertion.id && this.usable(key.passkey)),
    );
    const entry = owner?.keys.find((key) => key.passkey?.id === assertion.id)?.passkey;
    if (!owner || !entry) throw new PasskeySignInError();
    let nonce: ChallengeClaims | undefined;
    let verified;
    try {
      verified = await verifyAuthenticationResponse({
        response: assertion,
        expectedChallenge: (challenge) => {
          nonce = this.challenges.read<ChallengeClaims>(Buffer.from(challenge, 'base64url').toString('utf8'), now);
          return nonce !== undefined;
        },
        expectedOrigin: this.rp.origin,
        expectedRPID: this.rp.rpId,
        credential: { id: entry.id, publicKey: coseOf(entry.publicKey), counter: 0 },
        requireUserVerification: true,
      });
    } catch {
      throw new PasskeySignInError();
    }
    if (!verified.verified || !nonce) throw new PasskeySignInError();
    if (!(await this.uses.take(`passkey-challenge:${nonce.n}`, nonce.exp))) {
      throw new PasskeySignInError('That sign-in was used already. Sign in again.');
    }
    return owner;
  }

  private usable(passkey: Person['keys'][number]['passkey']): boolean {
    return passkey !== undefined && passkey.rpId === this.rp.rpId && passkey.origin === this.rp.origin;
  }
}

/** A directory passkey's SPKI public key (ES256 or Ed25519) as the COSE key WebAuthn verification takes. */
export function coseOf(spki: string): Uint8Array<ArrayBuffer> {
  const jwk = passkeyPublicKey(spki).export({ format: 'jwk' });
  const bytes = (value: string | undefined) => new Uint8Array(Buffer.from(value ?? '', 'base64url'));
  // COSE key parameters (RFC 9053): 1 kty, 3 alg, -1 crv, -2 x, -3 y.
  const key =
    jwk.kty === 'OKP'
      ? new Map<number, number | Uint8Array>([
          [1, 1],
          [3, -8],
          [-1, 6],
          [-2, bytes(jwk.x)],
        ])
      : new Map<number, number | Uint8Array>([
          [1, 2],
          [3, -7],
          [-1, 1],
          [-2, bytes(jwk.x)],
          [-3, bytes(jwk.y)],
        ]);
  return new Uint8Array(isoCBOR.encode(key as never));
}

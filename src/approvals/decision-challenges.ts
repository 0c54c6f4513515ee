/**
 * The one-time challenges an approver's own signature names (statement version 2): issued by the bridge for one
 * person's decision on one question of one run, signed with a key derived from the task key (any replica checks what
 * another issued), valid for a while, and taken once (across the replicas with their shared state). A passkey always
 * signs one; an Ed25519 key signs one when the approver was given one. A signature whose challenge is replayed, or was
 * issued for another person, question or run, is refused before anything is recorded.
 */
import { randomBytes } from 'node:crypto';
import { SignedTokens, type TokenClaims } from '../shared/signed-tokens';

/** How long a challenge may be signed and answered with, from when it was issued. */
export const DECISION_CHALLENGE_MS = 30 * 60_000;

/** What a challenge is for: the task, its original run, the question and the person who signs. */
export interface ChallengeScope {
  taskId: string;
  run: string;
  key: string;
  person: string;
}

interface ChallengeClaims extends TokenClaims {
  n: string;
  t: string;
  r: string;
  k: string;
  p: string;
}

/** Issues and takes challenges (see the module's comment). */
export class DecisionChallenges {
  private readonly tokens: SignedTokens;

  /**
   * `key`: a secret every replica shares (derived from the task key); `useOnce`: marks a challenge used until it
   * expires, true the first time (a `OneTimeUses`).
   */
  constructor(
    key: Buffer,
    private readonly useOnce: (id: string, expiresAt: number) => Promise<boolean>,
  ) {
    this.tokens = new SignedTokens(key, 'approver decision challenge');
  }

  /** A fresh challenge for `scope`. */
  issue(scope: ChallengeScope, now = Date.now()): string {
    return this.tokens.sign<ChallengeClaims>({
      n: randomBytes(16).toString('base64url'),
      exp: now + DECISION_CHALLENGE_MS,
      t: scope.taskId,
      r: scope.run,
      k: scope.key,
      p: scope.person,
    });
  }

  /**
   * Takes `challenge` for `scope`: undefined once taken, else why it cannot be (not one this bridge issued, expired,
   * for another decision, or used already). Throws what `useOnce` throws when that cannot be told now.
   */
  async take(challenge: string, scope: ChallengeScope, now = Date.now()): Promise<string | undefined> {
    const claims = this.tokens.read<ChallengeClaims>(challenge, now);
    if (!claims) return 'its challenge is not one this server issued, or it expired: sign again with a fresh one';
    if (claims.t !== scope.taskId || claims.r !== scope.run || claims.k !== scope.key || claims.p !== scope.person) {
      return 'its challenge was issued for another decision (another task, run, question or person)';
    }
    if (!(await this.useOnce(`approver-challenge:${claims.n}`, claims.exp)))
      return 'its challenge was used already: sign again with a fresh one';
    return undefined;
  }
}

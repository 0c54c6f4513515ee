/**
 * Sign-in attempts, counted per remote address, and links asked per name (from one address, and from all): each may try
 * a few times a minute, and past that waits. Across replicas through their shared state's token buckets where there is one (in this process while it
 * cannot be reached), else in this process. A refused attempt looks the same whoever it names.
 */
import type { ReplicaSharedState } from '../../core';

/** How many attempts a key may make at once, and how fast they come back. */
export interface AttemptLimit {
  burst: number;
  perMinute: number;
}

/** Attempts of one remote address: a person mistyping, or a page reloaded, but no guessing. */
export const PER_ADDRESS: AttemptLimit = { burst: 20, perMinute: 10 };

/** Links asked for one person from one address: a few, then one every two minutes. */
export const PER_NAME_AND_ADDRESS: AttemptLimit = { burst: 5, perMinute: 0.5 };

/**
 * Links asked for one person from anywhere: enough that nobody elsewhere can use up the person's own, few enough that
 * nobody can fill their mailbox.
 */
export const PER_NAME: AttemptLimit = { burst: 20, perMinute: 2 };

/** Most buckets kept in memory. */
const MAX_BUCKETS = 50_000;

/** Counts attempts (see the module's comment). */
export class SignInAttempts {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly shared?: ReplicaSharedState) {}

  /** Takes one attempt of each key under its limit: true when every one had one left (then each is spent), else false. */
  async allow(keys: { key: string; limit: AttemptLimit }[], now = Date.now()): Promise<boolean> {
    for (const { key, limit } of keys) if (!(await this.take(`sign-in:${key}`, limit, now))) return false;
    return true;
  }

  private async take(key: string, limit: AttemptLimit, now: number): Promise<boolean> {
    const rate = limit.perMinute / 60;
    if (this.shared) {
      try {
        return 'taken' in (await this.shared.takeTokens(key, rate, limit.burst, 1));
      } catch {
        // Counted here while the shared state is out of reach.
      }
    }
    const bucket = this.buckets.get(key) ?? { tokens: limit.burst, at: now };
    const tokens = Math.min(limit.burst, bucket.tokens + ((now - bucket.at) / 1000) * rate);
    this.buckets.delete(key);
    if (this.buckets.size >= MAX_BUCKETS) this.buckets.delete(this.buckets.keys().next().value!);
    this.buckets.set(key, { tokens: tokens >= 1 ? tokens - 1 : tokens, at: now });
    return tokens >= 1;
  }
}

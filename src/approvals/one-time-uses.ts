/**
 * What may be used once only (a one-time sign-in link, a passkey sign-in's challenge): the first use is taken, every
 * later one refused while the mark lasts. Across replicas through their shared state (MCP_SHARED_STATE); a single
 * server in its own memory. When the shared state cannot be reached, uses are refused rather than counted locally: a
 * sign-in that fails can be tried again, a link that works twice cannot be taken back.
 */
import type { ReplicaSharedState } from '../core';

/** Thrown when a use cannot be checked now (the shared state is out of reach); the person tries again shortly. */
export class OneTimeUseUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OneTimeUseUnavailableError';
  }
}

/** Most marks kept in memory: past it the oldest expiring go first (they are the least likely to come back). */
const MAX_LOCAL_MARKS = 100_000;

/** One-time uses (see the module's comment). */
export class OneTimeUses {
  private readonly local = new Map<string, number>();

  constructor(private readonly shared?: ReplicaSharedState) {}

  /**
   * Takes `id`'s one use, marked until `expiresAt` (milliseconds since the epoch): true the first time, false after.
   * Throws {@link OneTimeUseUnavailableError} when the shared state cannot say.
   */
  async take(id: string, expiresAt: number, now = Date.now()): Promise<boolean> {
    if (this.shared) {
      try {
        return await this.shared.useOnce(id, expiresAt);
      } catch (error) {
        throw new OneTimeUseUnavailableError(`the replicas' shared state cannot be reached (${(error as Error).message})`);
      }
    }
    for (const [mark, until] of this.local) if (until <= now) this.local.delete(mark);
    if (this.local.has(id)) return false;
    if (this.local.size >= MAX_LOCAL_MARKS) this.local.delete(this.local.keys().next().value!);
    this.local.set(id, expiresAt);
    return true;
  }
}

/**
 * What one principal may hold at once: open tasks, and requests waiting on tasks (blocked `tasks/result`, plain calls
 * waiting inline, status subscriptions); and how fast it may ask: task operations per second. A caller over a quota
 * gets an error that names it; nothing else changes.
 */
import type { Client } from '@temporalio/client';
import { TooManyRequestsError, TooManyTasksError } from './errors';
import { PRINCIPAL_SEARCH_ATTRIBUTE } from '../contract/task-contract';
import { setBounded } from '../util/bounded';
import { log } from '../util/log';
import { SharedStateUnavailableError, type ReplicaSharedState } from './shared-state';

/** The quotas; 0 turns one off. */
export interface QuotaOptions {
  /** Running tasks per principal (`MCP_MAX_OPEN_TASKS_PER_PRINCIPAL`, default 1000). */
  maxOpenTasks: number;
  /** Concurrent waits per principal (`MCP_MAX_WAITS_PER_PRINCIPAL`, default 64): per process, or across the replicas that share their state. */
  maxWaits: number;
  /**
   * Task operations (tools/call, tasks/*, subscriptions) per principal per second (per process, or across the replicas
   * that share their state), sustained
   * (`MCP_TASK_OPS_PER_SECOND`, default 50; 0 turns it off); a burst of twice as many is let through.
   */
  operationsPerSecond: number;
}

/** The defaults of {@link QuotaOptions}. */
export const DEFAULT_QUOTAS: QuotaOptions = { maxOpenTasks: 1000, maxWaits: 64, operationsPerSecond: 50 };

/** How long this process spends the tokens it took ahead from the replicas' shared bucket. */
const HELD_TOKENS_MS = 1000;

/** How long a count of open tasks is trusted before it is asked again (tasks started meanwhile are added). */
const COUNT_FRESH_MS = 5000;

/** Enforces {@link QuotaOptions} for a process. */
export class Quotas {
  private readonly waits = new Map<string, number>();
  private readonly counts = new Map<string, { open: number; at: number }>();
  /** Counts under way, shared by every create of the principal that needs one. */
  private readonly counting = new Map<string, Promise<{ open: number; at: number }>>();
  /** Token buckets of task operations: tokens left and when they were counted. */
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  /** Tokens of the shared buckets this process took ahead, per principal, and until when it spends them. */
  private readonly heldTokens = new Map<string, { tokens: number; until: number }>();
  /** Principals the shared bucket refused, and until when it has no token for them. */
  private readonly refusedUntil = new Map<string, number>();
  /** The question of the shared bucket under way, per principal. */
  private readonly askingShared = new Map<string, Promise<number | undefined>>();
  readonly options: QuotaOptions;

  constructor(
    private readonly client: Client,
    options: Partial<QuotaOptions> = {},
    /** The replicas' shared state: the rate holds across them; without it, per process. */
    private readonly shared?: ReplicaSharedState,
  ) {
    this.options = { ...DEFAULT_QUOTAS, ...options };
  }

  /**
   * Counts one task operation of `principal`. Throws {@link TooManyRequestsError} (with `retryAfterMs`) once the
   * principal asks faster than `operationsPerSecond` (after a burst of twice that): a client polling in a tight loop
   * is slowed to the rate instead of costing Temporal a read per poll. With the replicas' shared state the rate holds
   * across them; while that state cannot be reached, each process counts on its own.
   */
  async takeOperation(principal: string): Promise<void> {
    const rate = this.options.operationsPerSecond;
    if (rate <= 0) return;
    const burst = rate * 2;
    let retryAfterMs: number | undefined;
    try {
      retryAfterMs = this.shared ? await this.takeSharedToken(principal, rate, burst) : this.takeLocalToken(principal, rate, burst);
    } catch (error) {
      this.warnShared(error);
      retryAfterMs = this.takeLocalToken(principal, rate, burst);
    }
    if (retryAfterMs === undefined) return;
    throw new TooManyRequestsError(
      `Too many task requests: this caller may make ${rate} per second (bursts of ${burst}); retry in ${retryAfterMs} ms, ` +
        "and poll tasks/get no faster than the task's pollInterval",
      { retryable: true, retryAfterMs, limit: rate },
    );
  }

  /**
   * A token of `principal`'s shared bucket: from the tokens this process took ahead (a tenth of a second's worth at
   * most, kept a second), else from the shared state, taking that many at once. Undefined when taken, else the
   * milliseconds until one is there.
   */
  private async takeSharedToken(principal: string, rate: number, burst: number): Promise<number | undefined> {
    for (;;) {
      const now = Date.now();
      // Refused a moment ago: refused again here, until the bucket has a token, without asking the database.
      const refusedUntil = this.refusedUntil.get(principal);
      if (refusedUntil !== undefined && now < refusedUntil) return Math.ceil(refusedUntil - now);
      const held = this.heldTokens.get(principal);
      if (held && held.tokens > 0 && now < held.until) {
        held.tokens--;
        return undefined;
      }
      // One question of the database per principal at a time: the others wait for its answer, so that no caller,
      // however many requests it sends at once, holds more than one of the pool's connections.
      const asking = this.askingShared.get(principal);
      if (asking) {
        await asking.catch(() => undefined);
        continue;
      }
      const ask = this.askShared(principal, rate, burst, now);
      this.askingShared.set(principal, ask);
      try {
        return await ask;
      } finally {
        this.askingShared.delete(principal);
      }
    }
  }

  /** Takes a tenth of a second's worth of tokens from the shared bucket: undefined when one is taken, else the wait. */
  private async askShared(principal: string, rate: number, burst: number, now: number): Promise<number | undefined> {
    const want = Math.max(1, Math.floor(rate / 10));
    const took = await this.shared!.takeTokens(principal, rate, burst, want);
    if ('waitMs' in took) {
      this.heldTokens.delete(principal);
      setBounded(this.refusedUntil, principal, Date.now() + took.waitMs, 10_000);
      return took.waitMs;
    }
    this.refusedUntil.delete(principal);
    if (took.taken > 1) setBounded(this.heldTokens, principal, { tokens: took.taken - 1, until: now + HELD_TOKENS_MS }, 10_000);
    else this.heldTokens.delete(principal);
    return undefined;
  }

  /** A token of this process's bucket of `principal`: undefined when taken, else the milliseconds until one is there. */
  private takeLocalToken(principal: string, rate: number, burst: number): number | undefined {
    const now = Date.now();
    const bucket = this.buckets.get(principal) ?? { tokens: burst, at: now };
    const tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) / 1000) * rate);
    if (tokens < 1) {
      setBounded(this.buckets, principal, { tokens, at: now }, 10_000);
      return Math.ceil(((1 - tokens) / rate) * 1000);
    }
    setBounded(this.buckets, principal, { tokens: tokens - 1, at: now }, 10_000);
    return undefined;
  }

  private lastWarning = 0;

  /** Says, at most once a minute, that the shared state could not be reached and this process counts on its own. */
  private warnShared(error: unknown): void {
    if (Date.now() - this.lastWarning < 60_000) return;
    this.lastWarning = Date.now();
    log.warn(
      `the rate limit, the waits and the open tasks count in this process alone: ${this.shared?.location()} cannot be reached (${(error as Error).message})`,
    );
  }

  /**
   * Takes one wait slot of `principal`; call the returned function when the wait ends. Throws {@link TooManyRequestsError}
   * once the principal has `maxWaits` waits open: across the replicas with their shared state (while it cannot be
   * reached, in this process), else in this process.
   */
  async beginWait(principal: string): Promise<() => void> {
    if (this.shared && this.options.maxWaits > 0) {
      let wait: { end(): void } | undefined;
      try {
        wait = await this.shared.beginWait(principal, this.options.maxWaits);
      } catch (error) {
        this.warnShared(error);
        return this.beginLocalWait(principal);
      }
      if (!wait) throw this.tooManyWaits(`${this.options.maxWaits} requests of this caller are already waiting on tasks`);
      return () => wait.end();
    }
    return this.beginLocalWait(principal);
  }

  private beginLocalWait(principal: string): () => void {
    const open = this.waits.get(principal) ?? 0;
    if (this.options.maxWaits > 0 && open >= this.options.maxWaits) {
      throw this.tooManyWaits(`${open} requests of this caller are already waiting on tasks`);
    }
    this.waits.set(principal, open + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.waits.get(principal) ?? 1) - 1;
      if (left > 0) this.waits.set(principal, left);
      else this.waits.delete(principal);
    };
  }

  private tooManyWaits(held: string): TooManyRequestsError {
    return new TooManyRequestsError(
      `Too many waits: ${held} (at most ${this.options.maxWaits}); ` +
        'end some (close tasks/result calls or subscriptions, or poll tasks/get) and try again',
      { retryable: true, limit: this.options.maxWaits },
    );
  }

  /**
   * Reserves a place for one more running task of `principal`, or throws {@link TooManyTasksError} when it already has `maxOpenTasks`.
   * Call the returned function if the task was not started after all. Atomic: concurrent calls share one count from
   * Temporal and then check and reserve without a pause between, so a burst cannot pass the quota.
   */
  async beginTask(principal: string): Promise<() => void> {
    if (this.options.maxOpenTasks <= 0) return () => undefined;
    if (this.shared) {
      let reserved: { release(): void } | { open: number } | undefined;
      try {
        reserved = await this.shared.reserveTask(
          principal,
          this.options.maxOpenTasks,
          async () => (await this.countOpen(principal)).open,
          COUNT_FRESH_MS,
        );
      } catch (error) {
        // Temporal's failure to count is the create's; the shared state's is made up for in this process.
        if (!(error instanceof SharedStateUnavailableError)) throw error;
        this.warnShared(error);
      }
      if (reserved && 'open' in reserved) throw this.tooManyTasks(reserved.open);
      if (reserved) return () => reserved.release();
    }
    return this.beginLocalTask(principal);
  }

  private tooManyTasks(open: number): TooManyTasksError {
    return new TooManyTasksError(
      `Too many open tasks: this caller has ${open} running (at most ${this.options.maxOpenTasks}); ` +
        'finish or cancel some before starting more',
      { limit: this.options.maxOpenTasks },
    );
  }

  private async beginLocalTask(principal: string): Promise<() => void> {
    let known = this.counts.get(principal);
    if (!known || Date.now() - known.at > COUNT_FRESH_MS) {
      let counting = this.counting.get(principal);
      if (!counting) {
        counting = this.countOpen(principal).finally(() => this.counting.delete(principal));
        this.counting.set(principal, counting);
      }
      const fresh = await counting;
      // Everyone who waited on the same count shares one record; only a newer count replaces it.
      known = this.counts.get(principal);
      if (!known || known.at < fresh.at) {
        known = fresh;
        setBounded(this.counts, principal, known, 10_000);
      }
    }
    if (known.open >= this.options.maxOpenTasks) throw this.tooManyTasks(known.open);
    const record = known;
    record.open++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      record.open = Math.max(0, record.open - 1);
    };
  }

  /** Running tasks of `principal`, as Temporal's visibility counts them now. */
  private async countOpen(principal: string): Promise<{ open: number; at: number }> {
    const { count } = await this.client.workflowService.countWorkflowExecutions({
      namespace: this.client.options.namespace,
      query: `${PRINCIPAL_SEARCH_ATTRIBUTE} = '${principal}' AND ExecutionStatus = 'Running'`,
    });
    return { open: Number(count ?? 0), at: Date.now() };
  }
}

/**
 * What the server replicas of one deployment share beside Temporal: each principal's rate of task operations, its
 * waits under way, its places under the open-task quota, the tasks created lately, which `tasks/list` shows through
 * any replica before Temporal's visibility store catches up, and the tasks written lately, whose reads kept for the
 * change feed no replica serves any more. A
 * single server keeps both in its process; replicas keep them in PostgreSQL (`MCP_SHARED_STATE`), which a cluster on
 * PostgreSQL already runs.
 */
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { log } from '../util/log';
import { withoutPassword } from '../util/postgres-url';
import { OPEN_TABLE, RECENT_TABLE, SCHEMA, USED_TABLE, WAITS_TABLE, WRITES_TABLE } from './shared-state-schema';

/** State the replicas share (see the module's comment). */
export interface ReplicaSharedState {
  /**
   * Takes up to `want` tokens (at least one) of `principal`'s bucket, which fills at `rate` a second up to `burst`: how
   * many were taken, or, when none was there, how many milliseconds until one is (`{ waitMs }`).
   */
  takeTokens(principal: string, rate: number, burst: number, want: number): Promise<{ taken: number } | { waitMs: number }>;
  /**
   * Takes one of `principal`'s `most` waits across the replicas, held (and renewed) until `end()`; a replica that
   * stops without ending its waits frees them when their lease runs out. Undefined when all are taken.
   */
  beginWait(principal: string, most: number): Promise<{ end(): void } | undefined>;
  /**
   * Reserves a place for one more running task of `principal` under `most`, across the replicas: the count is
   * Temporal's (`count()`, asked again once it is older than `freshMs`), plus what every replica reserved since.
   * Returns the release of the place (for a task not started after all), or the count that stands in the way.
   */
  reserveTask(
    principal: string,
    most: number,
    count: () => Promise<number>,
    freshMs: number,
  ): Promise<{ release(): void } | { open: number }>;
  /** Notes a task created just now for `principal`. */
  noteCreated(principal: string, taskId: string): Promise<void>;
  /** `principal`'s tasks created within `withinMs`, newest first, at most `limit`. */
  createdWithin(principal: string, withinMs: number, limit: number): Promise<string[]>;
  /**
   * Marks `id` used until `expiresAt` (milliseconds since the epoch) across the replicas: true the first time, false
   * for every later call while the mark lasts (a one-time sign-in link, a passkey sign-in's challenge).
   */
  useOnce(id: string, expiresAt: number): Promise<boolean>;
  /**
   * Notes that a replica wrote to the task just now (a cancel, an answer): the reads other replicas keep for the change
   * feed are not served past it (see {@link writtenSince}).
   */
  noteWrite(taskId: string): Promise<void>;
  /** Whether a replica noted a write to the task after `sinceMs` (milliseconds since the epoch, the database's clock). */
  writtenSince(taskId: string, sinceMs: number): Promise<boolean>;
  /** Where it is kept, for logs: the database without its password. */
  location(): string;
  close(): Promise<void>;
}

/** Thrown when the shared state cannot be reached (or was not, a moment ago): callers count in their own process. */
export class SharedStateUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SharedStateUnavailableError';
  }
}

/** A failure of the count a reservation asked for (Temporal's), carried through the shared state's bracket. */
class CountFailure extends Error {
  constructor(override readonly cause: unknown) {
    super('the count failed');
  }
}

/** Thrown for a `MCP_SHARED_STATE` that cannot be used; the message says what to set. */
export class SharedStateConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SharedStateConfigError';
  }
}

/** The shared state `MCP_SHARED_STATE` names (a `postgres://` URL), or undefined when it is unset: each process keeps its own. */
export function sharedStateFromEnv(env: NodeJS.ProcessEnv = process.env): ReplicaSharedState | undefined {
  const url = env.MCP_SHARED_STATE?.trim();
  if (!url) return undefined;
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new SharedStateConfigError('MCP_SHARED_STATE must be a postgres:// URL (the database the replicas share), or unset');
  }
  return new PostgresSharedState(url);
}

/** How long a wait is held without its replica renewing it; renewed every third of that. */
const WAIT_LEASE_MS = 60_000;

/** How long a noted write is kept: longer than any read the change feed keeps (five minutes). */
const WRITES_KEPT = '10 minutes';

/** How long the shared state is not asked after a failure. */
const PAUSE_AFTER_FAILURE_MS = 10_000;

/** How long one query or connection attempt may take before it counts as a failure. */
const QUERY_TIMEOUT_MS = 2_000;

/** How long a noted creation is kept: far longer than visibility lags. */
const RECENT_KEPT = '5 minutes';

/** Notes between two clean-ups of old creations, per process. */
const CLEAN_EVERY = 200;

/** {@link ReplicaSharedState} in PostgreSQL: a token bucket per principal, and a table of recent creations. */
export class PostgresSharedState implements ReplicaSharedState {
  private readonly pool: Pool;
  private readonly where: string;
  private ready: Promise<void> | undefined;
  private notes = 0;
  private writes = 0;
  private pausedUntil = 0;
  private lastFailure = '';
  /** The waits this process holds, renewed while held. */
  private readonly waits = new Set<string>();
  private readonly renewal: NodeJS.Timeout;

  constructor(url: string) {
    this.where = `the shared state of ${withoutPassword(url, '***')}`;
    this.pool = new Pool({
      connectionString: url,
      max: 8,
      connectionTimeoutMillis: QUERY_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
    });
    this.pool.on('error', (error) => log.warn(`a connection to ${this.where} failed: ${error.message}`));
    this.renewal = setInterval(() => void this.renewWaits(), WAIT_LEASE_MS / 3);
    this.renewal.unref();
  }

  async beginWait(principal: string, most: number): Promise<{ end(): void } | undefined> {
    return this.run(async () => {
      const id = randomUUID();
      const { rows } = await this.pool.query<{ taken: boolean }>('SELECT mcp_begin_wait($1, $2, $3, $4) AS taken', [
        id,
        principal,
        most,
        WAIT_LEASE_MS / 1000,
      ]);
      if (!rows[0]?.taken) return undefined;
      this.waits.add(id);
      let ended = false;
      return {
        end: () => {
          if (ended) return;
          ended = true;
          this.waits.delete(id);
          // Its lease frees it anyway when this fails.
          this.pool.query(`DELETE FROM ${WAITS_TABLE} WHERE id = $1`, [id]).catch((error: Error) => {
            log.warn(`a wait stays counted in ${this.where} until its lease runs out: ${error.message}`);
          });
        },
      };
    });
  }

  private async renewWaits(): Promise<void> {
    if (this.waits.size === 0) return;
    await this.pool
      .query(`UPDATE ${WAITS_TABLE} SET expires_at = clock_timestamp() + make_interval(secs => $2) WHERE id = ANY($1::uuid[])`, [
        [...this.waits],
        WAIT_LEASE_MS / 1000,
      ])
      .catch((error: Error) => log.warn(`the waits of this process could not be renewed in ${this.where}: ${error.message}`));
  }

  async takeTokens(principal: string, rate: number, burst: number, want: number): Promise<{ taken: number } | { waitMs: number }> {
    return this.run(async () => {
      const { rows } = await this.pool.query<{ got: number }>('SELECT mcp_take_tokens($1, $2, $3, $4) AS got', [
        principal,
        rate,
        burst,
        want,
      ]);
      const got = Number(rows[0]?.got ?? 0);
      return got >= 1 ? { taken: got } : { waitMs: Math.max(1, Math.ceil(-got)) };
    });
  }

  async reserveTask(
    principal: string,
    most: number,
    count: () => Promise<number>,
    freshMs: number,
  ): Promise<{ release(): void } | { open: number }> {
    return this.run(async () => {
      // A place under the quota, with a count fresh enough, or with any count once this call has counted.
      const take = (fresh: boolean) =>
        this.pool.query<{ open: number }>(
          `UPDATE ${OPEN_TABLE} SET open = open + 1
           WHERE principal = $1 AND open < $2${fresh ? ' AND counted_at >= clock_timestamp() - make_interval(secs => $3)' : ''}
           RETURNING open`,
          fresh ? [principal, most, freshMs / 1000] : [principal, most],
        );
      const current = async () =>
        (
          await this.pool.query<{ open: number; stale: boolean }>(
            `SELECT open, counted_at < clock_timestamp() - make_interval(secs => $2) AS stale FROM ${OPEN_TABLE} WHERE principal = $1`,
            [principal, freshMs / 1000],
          )
        ).rows[0];
      // Most creations: one statement.
      let taken = await take(true);
      if (taken.rows.length === 0) {
        const known = await current();
        if (known && !known.stale) {
          // Fresh: refused for the quota, or another replica counted between the two statements; asked again.
          taken = await take(false);
          if (taken.rows.length === 0) return { open: Math.max(most, (await current())?.open ?? most) };
        } else {
          // No count, or an old one: counted by Temporal now; a count taken later by another replica is not overwritten.
          const started = new Date();
          let open: number;
          try {
            open = await count();
          } catch (error) {
            // Temporal's failure, not the shared state's: passed on as it is.
            throw new CountFailure(error);
          }
          await this.pool.query(
            `INSERT INTO ${OPEN_TABLE} AS counts (principal, open, counted_at) VALUES ($1, $2, $3)
             ON CONFLICT (principal) DO UPDATE SET open = $2, counted_at = $3 WHERE counts.counted_at < $3`,
            [principal, open, started],
          );
          // As fresh as a count can be, however long it took (a slow link to Temporal): only the quota refuses now.
          taken = await take(false);
          if (taken.rows.length === 0) return { open: Math.max(most, (await current())?.open ?? most) };
        }
      }
      let released = false;
      return {
        release: () => {
          if (released) return;
          released = true;
          this.pool
            .query(`UPDATE ${OPEN_TABLE} SET open = GREATEST(0, open - 1) WHERE principal = $1`, [principal])
            .catch((error: Error) =>
              log.warn(`a place under the open-task quota stays taken in ${this.where} until the next count: ${error.message}`),
            );
        },
      };
    });
  }

  async noteCreated(principal: string, taskId: string): Promise<void> {
    return this.run(async () => {
      await this.pool.query(`INSERT INTO ${RECENT_TABLE} (principal, task_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [principal, taskId]);
      if (++this.notes % CLEAN_EVERY === 0) {
        await this.pool.query(`DELETE FROM ${RECENT_TABLE} WHERE created_at < clock_timestamp() - interval '${RECENT_KEPT}'`);
      }
    });
  }

  async createdWithin(principal: string, withinMs: number, limit: number): Promise<string[]> {
    return this.run(async () => {
      const { rows } = await this.pool.query<{ task_id: string }>(
        `SELECT task_id FROM ${RECENT_TABLE} WHERE principal = $1 AND created_at > clock_timestamp() - make_interval(secs => $2)
         ORDER BY created_at DESC LIMIT $3`,
        [principal, withinMs / 1000, limit],
      );
      return rows.map((row) => row.task_id);
    });
  }

  async useOnce(id: string, expiresAt: number): Promise<boolean> {
    return this.run(async () => {
      await this.pool.query(`DELETE FROM ${USED_TABLE} WHERE expires_at < clock_timestamp()`);
      const { rowCount } = await this.pool.query(
        `INSERT INTO ${USED_TABLE} (id, expires_at) VALUES ($1, to_timestamp($2 / 1000.0)) ON CONFLICT (id) DO NOTHING`,
        [id, expiresAt],
      );
      return rowCount === 1;
    });
  }

  async noteWrite(taskId: string): Promise<void> {
    return this.run(async () => {
      await this.pool.query(
        `INSERT INTO ${WRITES_TABLE} (task_id, written_at) VALUES ($1, clock_timestamp())
         ON CONFLICT (task_id) DO UPDATE SET written_at = EXCLUDED.written_at`,
        [taskId],
      );
      if (++this.writes % CLEAN_EVERY === 0) {
        await this.pool.query(`DELETE FROM ${WRITES_TABLE} WHERE written_at < clock_timestamp() - interval '${WRITES_KEPT}'`);
      }
    });
  }

  async writtenSince(taskId: string, sinceMs: number): Promise<boolean> {
    return this.run(async () => {
      const { rowCount } = await this.pool.query(
        `SELECT 1 FROM ${WRITES_TABLE} WHERE task_id = $1 AND written_at > to_timestamp($2 / 1000.0)`,
        [taskId, sinceMs],
      );
      return (rowCount ?? 0) > 0;
    });
  }

  location(): string {
    return this.where;
  }

  async close(): Promise<void> {
    clearInterval(this.renewal);
    if (this.waits.size > 0) {
      await this.pool.query(`DELETE FROM ${WAITS_TABLE} WHERE id = ANY($1::uuid[])`, [[...this.waits]]).catch(() => undefined);
      this.waits.clear();
    }
    await this.pool.end();
  }

  /**
   * Runs `work` once the tables are there. After a failure the state is not asked for {@link PAUSE_AFTER_FAILURE_MS}:
   * each call fails at once, and its caller counts in its own process meanwhile, rather than every request waiting
   * out a connection timeout while the database is down.
   */
  private async run<T>(work: () => Promise<T>): Promise<T> {
    if (Date.now() < this.pausedUntil) {
      throw new SharedStateUnavailableError(`${this.where} is not asked for a few seconds after it failed (${this.lastFailure})`);
    }
    try {
      await this.prepare();
      return await work();
    } catch (error) {
      if (error instanceof CountFailure) throw error.cause;
      this.pausedUntil = Date.now() + PAUSE_AFTER_FAILURE_MS;
      this.lastFailure = (error as Error).message;
      throw new SharedStateUnavailableError(`${this.where} cannot be reached: ${(error as Error).message}`);
    }
  }

  /** Creates the tables and the function once per process; a failure is not kept, so the next call tries again. */
  private prepare(): Promise<void> {
    this.ready ??= this.pool.query(SCHEMA).then(
      () => undefined,
      (error: Error) => {
        this.ready = undefined;
        throw error;
      },
    );
    return this.ready;
  }
}

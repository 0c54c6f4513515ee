/**
 * The decision store of a cluster: a PostgreSQL table every bridge replica and worker shares, append-only by a
 * trigger. Node only.
 */
import { Pool } from 'pg';
import { log } from '../util/log';
import { withoutPassword } from '../util/postgres-url';
import type { AppendOutcome, DecisionStore, SignedDecisionRecord } from '../contract/decision-records';
import { DecisionStoreError } from './store-error';

/** The table of decision records. */
export const DECISION_TABLE = 'mcp_decision_records';

/** How many connections a store holds at most. */
const POOL_SIZE = 4;

// One transaction, under an advisory lock, so that processes starting together do not race to create the same objects.
const SCHEMA = `
SELECT pg_advisory_xact_lock(hashtext('${DECISION_TABLE}'));
CREATE TABLE IF NOT EXISTS ${DECISION_TABLE} (
  task_id text NOT NULL,
  seq integer NOT NULL CHECK (seq >= 1),
  digest text NOT NULL,
  record jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (task_id, seq)
);
CREATE OR REPLACE FUNCTION ${DECISION_TABLE}_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: decision records are never changed or removed', TG_TABLE_NAME
    USING ERRCODE = 'insufficient_privilege';
END $$;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = '${DECISION_TABLE}_no_change') THEN
    CREATE TRIGGER ${DECISION_TABLE}_no_change BEFORE UPDATE OR DELETE ON ${DECISION_TABLE}
      FOR EACH ROW EXECUTE FUNCTION ${DECISION_TABLE}_append_only();
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = '${DECISION_TABLE}_no_truncate') THEN
    CREATE TRIGGER ${DECISION_TABLE}_no_truncate BEFORE TRUNCATE ON ${DECISION_TABLE}
      FOR EACH STATEMENT EXECUTE FUNCTION ${DECISION_TABLE}_append_only();
  END IF;
END $$;
`;

/**
 * Decision records in the PostgreSQL table {@link DECISION_TABLE} (created with its triggers when missing): one row
 * per record, keyed by task and seq, so two writers never take one seq; triggers refuse UPDATE, DELETE and TRUNCATE.
 * Holds a pool of a few connections until {@link close}.
 */
export class PostgresDecisionStore implements DecisionStore {
  private readonly pool: Pool;
  private readonly where: string;
  private ready: Promise<void> | undefined;

  constructor(url: string) {
    this.where = `the decision records table ${DECISION_TABLE} of ${withoutPassword(url)}`;
    this.pool = new Pool({ connectionString: url, max: POOL_SIZE, connectionTimeoutMillis: 10_000, idleTimeoutMillis: 30_000 });
    // An idle connection the server dropped (a restart) is replaced on the next query; nothing to throw to.
    this.pool.on('error', (error) => log.warn(`a connection to ${this.where} failed: ${error.message}`));
  }

  async records(taskId: string): Promise<SignedDecisionRecord[]> {
    await this.prepare();
    const result = await this.query<{ record: SignedDecisionRecord }>(
      `reading the decision records of ${taskId}`,
      `SELECT record FROM ${DECISION_TABLE} WHERE task_id = $1 ORDER BY seq`,
      [taskId],
    );
    return result.rows.map((row) => row.record);
  }

  async append(record: SignedDecisionRecord): Promise<AppendOutcome> {
    const { taskId, seq } = record.body;
    if (!Number.isInteger(seq) || seq < 1 || seq > 2 ** 31 - 1) {
      throw new DecisionStoreError(`a decision record's seq must be a whole number from 1, not ${seq}`, this.where);
    }
    await this.prepare();
    // Inserted only where the place before it is taken, so that the chain never has a gap.
    const inserted = await this.query(
      `appending record ${seq} of ${taskId}`,
      `INSERT INTO ${DECISION_TABLE} (task_id, seq, digest, record)
         SELECT $1, $2, $3, $4::jsonb
         WHERE $2 = 1 OR EXISTS (SELECT 1 FROM ${DECISION_TABLE} WHERE task_id = $1 AND seq = $2 - 1)
       ON CONFLICT (task_id, seq) DO NOTHING
       RETURNING seq`,
      [taskId, seq, record.digest, JSON.stringify(record)],
    );
    if (inserted.rowCount === 1) return 'appended';
    const held = await this.query<{ digest: string }>(
      `reading record ${seq} of ${taskId}`,
      `SELECT digest FROM ${DECISION_TABLE} WHERE task_id = $1 AND seq = $2`,
      [taskId, seq],
    );
    if (held.rows.length === 0) {
      throw new DecisionStoreError(`record ${seq} of ${taskId} would leave a gap: record ${seq - 1} is not in the store`, this.where);
    }
    return held.rows[0].digest === record.digest ? 'duplicate' : 'conflict';
  }

  location(): string {
    return this.where;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /** Creates the table and its triggers once; tried again on the next call if the database could not be reached. */
  private prepare(): Promise<void> {
    this.ready ??= (async () => {
      const client = await this.pool.connect().catch((error: Error) => {
        throw new DecisionStoreError(`cannot connect to ${this.where}: ${error.message}`, this.where);
      });
      try {
        // Made already: nothing to create, so a role that may only read (an auditor's) needs no right to create.
        const made = await client.query<{ made: boolean }>(
          `SELECT to_regclass($1) IS NOT NULL AND (SELECT count(*) FROM pg_trigger WHERE tgrelid = to_regclass($1)) >= 2 AS made`,
          [DECISION_TABLE],
        );
        if (made.rows[0]?.made) return;
        await client.query('BEGIN');
        await client.query(SCHEMA);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new DecisionStoreError(`cannot create ${this.where}: ${(error as Error).message}`, this.where);
      } finally {
        client.release();
      }
    })().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  private async query<R extends object = Record<string, unknown>>(what: string, sql: string, values: unknown[]) {
    try {
      return await this.pool.query<R>(sql, values);
    } catch (error) {
      throw new DecisionStoreError(`${what} in ${this.where} failed: ${(error as Error).message}`, this.where);
    }
  }
}

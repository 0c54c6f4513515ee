/**
 * The PostgreSQL objects of the shared state (`MCP_SHARED_STATE`): its tables, and the functions that take a wait and
 * a principal's tokens atomically, as one script each process runs once, before its first query.
 */

/** Each principal's token bucket of task operations. */
const RATE_TABLE = 'mcp_rate_buckets';
/** The waits under way, each with its principal and the end of its lease. */
export const WAITS_TABLE = 'mcp_waits';
/** Each principal's count of open tasks (Temporal's, when it was counted, plus the places reserved since). */
export const OPEN_TABLE = 'mcp_open_tasks';
/** The tasks created lately, by principal. */
export const RECENT_TABLE = 'mcp_recent_tasks';
/** The ids used once, until they expire. */
export const USED_TABLE = 'mcp_used_once';
/** The tasks written lately, and when. */
export const WRITES_TABLE = 'mcp_task_writes';

/**
 * The tables, and the functions that take a wait (`mcp_begin_wait`) and tokens (`mcp_take_tokens`) in one statement,
 * created where they are not there yet. One transaction, under an advisory lock, so that replicas starting together do
 * not race to create the same objects.
 */
export const SCHEMA = `
SELECT pg_advisory_xact_lock(hashtext('${RECENT_TABLE}'));
CREATE TABLE IF NOT EXISTS ${RATE_TABLE} (
  principal text PRIMARY KEY,
  tokens double precision NOT NULL,
  at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS ${RECENT_TABLE} (
  principal text NOT NULL,
  task_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (principal, task_id)
);
CREATE INDEX IF NOT EXISTS ${RECENT_TABLE}_created_at ON ${RECENT_TABLE} (created_at);
CREATE TABLE IF NOT EXISTS ${OPEN_TABLE} (
  principal text PRIMARY KEY,
  open integer NOT NULL,
  counted_at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS ${USED_TABLE} (
  id text PRIMARY KEY,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ${USED_TABLE}_expires_at ON ${USED_TABLE} (expires_at);
CREATE TABLE IF NOT EXISTS ${WRITES_TABLE} (
  task_id text PRIMARY KEY,
  written_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ${WRITES_TABLE}_written_at ON ${WRITES_TABLE} (written_at);
CREATE TABLE IF NOT EXISTS ${WAITS_TABLE} (
  id uuid PRIMARY KEY,
  principal text NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ${WAITS_TABLE}_principal ON ${WAITS_TABLE} (principal);
CREATE OR REPLACE FUNCTION mcp_begin_wait(wait uuid, who text, most integer, lease double precision)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  held integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('${WAITS_TABLE}:' || who));
  DELETE FROM ${WAITS_TABLE} WHERE principal = who AND expires_at < clock_timestamp();
  SELECT count(*) INTO held FROM ${WAITS_TABLE} WHERE principal = who;
  IF held >= most THEN
    RETURN false;
  END IF;
  INSERT INTO ${WAITS_TABLE} (id, principal, expires_at) VALUES (wait, who, clock_timestamp() + make_interval(secs => lease));
  RETURN true;
END $$;
CREATE OR REPLACE FUNCTION mcp_take_tokens(who text, rate double precision, burst double precision, want integer)
RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE
  now_at timestamptz := clock_timestamp();
  available double precision;
  taken integer;
BEGIN
  INSERT INTO ${RATE_TABLE} (principal, tokens, at) VALUES (who, burst, now_at) ON CONFLICT (principal) DO NOTHING;
  SELECT LEAST(burst, tokens + GREATEST(0, EXTRACT(EPOCH FROM now_at - at)) * rate) INTO available
    FROM ${RATE_TABLE} WHERE principal = who FOR UPDATE;
  taken := LEAST(want, floor(available)::integer);
  UPDATE ${RATE_TABLE} SET tokens = available - GREATEST(taken, 0), at = now_at WHERE principal = who;
  -- Positive: tokens taken; negative: minus the milliseconds until one is there.
  IF taken >= 1 THEN
    RETURN taken;
  END IF;
  RETURN -((1 - available) / rate * 1000);
END $$;
`;

/**
 * Decision stores: where the bridge appends signed decision records outside Temporal, one chain per task, and where
 * workers and auditors read them. A directory on a dev stack ({@link FileDecisionStore}), a PostgreSQL table on a
 * cluster ({@link PostgresDecisionStore}). Node only.
 */
import path from 'node:path';
import { sleep } from '../util/wait';
import { FileDecisionStore } from './file-store';
import { PostgresDecisionStore } from './pg-store';
import { DecisionStoreError } from './store-error';
import { EncryptedDecisionStore } from './encrypted-store';
import { payloadKeysFromEnv, type PayloadKeys } from '../shared/payload-keys';
import type { DecisionStore, SignedDecisionRecord } from '../contract/decision-records';

export type { AppendOutcome, DecisionStore } from '../contract/decision-records';
export { DecisionStoreError } from './store-error';

/** Environment variable: a directory path, or a `postgres://` / `postgresql://` URL. */
export const DECISION_STORE_ENV = 'MCP_DECISION_STORE';

/** How many times {@link appendChained} tries when other writers keep taking the next place. */
const APPEND_ATTEMPTS = 20;

/** True for a location that is a PostgreSQL URL rather than a directory. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/**
 * The store at `location`: a `postgres://` or `postgresql://` URL, else a directory (made absolute; created on the
 * first append). With `keys` it writes the records' bodies encrypted ({@link EncryptedDecisionStore}); it reads
 * records in the clear either way, and encrypted ones with the keys that made them.
 */
export function openDecisionStore(location: string, keys?: PayloadKeys): DecisionStore {
  const given = location.trim();
  if (given === '') throw new DecisionStoreError(`no decision store given: a directory or a postgres:// URL`, '(none)');
  const store = isPostgresUrl(given) ? new PostgresDecisionStore(given) : new FileDecisionStore(path.resolve(given));
  return new EncryptedDecisionStore(store, keys);
}

/**
 * Where MCP_DECISION_STORE puts the decision store: a `postgres://` URL as given, a directory made absolute; default
 * `.data/decisions` in the current folder.
 */
export function decisionStoreLocation(env: NodeJS.ProcessEnv = process.env): string {
  const given = env[DECISION_STORE_ENV]?.trim();
  if (!given) return path.resolve('.data', 'decisions');
  return isPostgresUrl(given) ? given : path.resolve(given);
}

/**
 * The store MCP_DECISION_STORE names (see {@link openDecisionStore}, {@link decisionStoreLocation}), encrypting under
 * the keys MCP_PAYLOAD_KEYS names when it is set. Throws `PayloadKeysError` for a keys file that cannot be used.
 */
export function decisionStoreFromEnv(env: NodeJS.ProcessEnv = process.env): DecisionStore {
  return openDecisionStore(decisionStoreLocation(env), payloadKeysFromEnv(env));
}

/**
 * Appends the next record of `taskId`'s chain: reads the chain's head, makes the record for the next seq (`make`,
 * given that seq and the head's digest, or null for the first), appends it. When another writer took that place
 * meanwhile, reads the head again and makes the record anew, up to 20 times, then throws {@link DecisionStoreError}.
 * With `onFile`, each reading first looks for a record that stands for this one (written by another process meanwhile).
 * Appends within one process are taken one at a time per store and task, so they do not race each other.
 */
export function appendChained(
  store: DecisionStore,
  taskId: string,
  make: (seq: number, prev: string | null) => SignedDecisionRecord,
  /** A record already on file that stands for the one to append, if any: then nothing is appended, and it is returned. */
  onFile?: (records: readonly SignedDecisionRecord[]) => SignedDecisionRecord | undefined,
): Promise<SignedDecisionRecord> {
  let queues = appendQueues.get(store);
  if (!queues) appendQueues.set(store, (queues = new Map()));
  const before = queues.get(taskId) ?? Promise.resolve();
  const mine = before.then(() => appendNext(store, taskId, make, onFile));
  const settled = mine.then(
    () => undefined,
    () => undefined,
  );
  queues.set(taskId, settled);
  void settled.then(() => {
    if (queues.get(taskId) === settled) queues.delete(taskId);
  });
  return mine;
}

/** The tail of the appends under way per store and task. */
const appendQueues = new WeakMap<DecisionStore, Map<string, Promise<void>>>();

async function appendNext(
  store: DecisionStore,
  taskId: string,
  make: (seq: number, prev: string | null) => SignedDecisionRecord,
  onFile?: (records: readonly SignedDecisionRecord[]) => SignedDecisionRecord | undefined,
): Promise<SignedDecisionRecord> {
  for (let attempt = 1; attempt <= APPEND_ATTEMPTS; attempt++) {
    const records = await store.records(taskId);
    const found = onFile?.(records);
    if (found) return found;
    const head = records.at(-1);
    const record = make((head?.body.seq ?? 0) + 1, head?.digest ?? null);
    if (record.body.taskId !== taskId) {
      throw new DecisionStoreError(`a record of task ${record.body.taskId} cannot be appended to the chain of ${taskId}`, store.location());
    }
    const outcome = await store.append(record);
    if (outcome !== 'conflict') return record;
    // Another process took the place: let the writers spread out before reading the head again.
    await sleep(Math.floor(Math.random() * 5 * attempt));
  }
  throw new DecisionStoreError(
    `could not append to the decision records of ${taskId} in ${store.location()}: other writers took the next place ${APPEND_ATTEMPTS} times in a row; try again`,
    store.location(),
  );
}

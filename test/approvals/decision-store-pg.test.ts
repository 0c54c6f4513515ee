/**
 * The PostgreSQL decision store against a real PostgreSQL server this file starts in a temporary folder and stops:
 * the table made when missing, appends from many writers at once, and the rows no one may change or remove.
 */
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { appendChained, DecisionStoreError, openDecisionStore, type DecisionStore } from '../../src/records/store';
import { verifyChain } from '../../src/records/verify';
import { LocalPostgres } from '../../scripts/lib/postgres';
import { freePort, ROOT } from '../../scripts/lib/processes';
import { bodyOf, chainOf, testSigner } from '../helpers/decision-records';

const { signer, keys } = testSigner();
const PASSWORD = 'pw-not-to-be-shown';

let dir: string;
let postgres: LocalPostgres;
let url: string;
const stores: DecisionStore[] = [];

/** A store of its own (a pool of its own), closed after the tests. */
function newStore(): DecisionStore {
  const store = openDecisionStore(url);
  stores.push(store);
  return store;
}

const taskId = () => `process-invoice-${randomUUID()}`;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'decision-store-pg-'));
  postgres = new LocalPostgres({ dataDir: path.join(dir, 'postgres'), port: await freePort() });
  postgres.start();
  postgres.psql(`CREATE ROLE recorder LOGIN PASSWORD '${PASSWORD}'`);
  postgres.psql('CREATE DATABASE records OWNER recorder');
  url = `postgresql://recorder:${PASSWORD}@127.0.0.1:${postgres.port}/records`;
}, 60_000);

afterAll(async () => {
  await Promise.all(stores.map((store) => store.close().catch(() => undefined)));
  try {
    postgres?.stop('fast');
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
});

test('pg store: makes its table, appends in order, tells a conflict from a duplicate, refuses a gap', async () => {
  const store = newStore();
  // A postgres:// URL opens the table (no payload keys: records in the clear).
  expect(store.location()).toBe(
    `the decision records table mcp_decision_records of postgresql://recorder@127.0.0.1:${postgres.port}/records`,
  );
  const task = taskId();
  expect(await store.records(task)).toEqual([]);
  const [first, second] = chainOf(task, signer, [
    { decision: 'approve', by: 'carol' },
    { decision: 'approve', by: 'dave' },
  ]);
  expect(await store.append(first)).toBe('appended');
  expect(await store.append(second)).toBe('appended');
  expect(await store.append(first)).toBe('duplicate');
  expect(await store.append(signer.sign(bodyOf(task, 2, first.digest, { decision: 'reject', by: 'ann' })))).toBe('conflict');
  await expect(store.append(signer.sign(bodyOf(task, 4, second.digest, { decision: 'approve', by: 'ann' })))).rejects.toThrow(
    /would leave a gap/,
  );
  const records = await store.records(task);
  expect(records).toEqual([first, second]);
  expect(postgres.psql(`SELECT seq, digest FROM mcp_decision_records WHERE task_id = '${task}' ORDER BY seq`, 'records').trim()).toBe(
    `1|${first.digest}\n2|${second.digest}`,
  );
});

test('pg store: what jsonb keeps still has the digest and signature it was signed with', async () => {
  const store = newStore();
  const task = taskId();
  const shown = { total: 0.1 + 0.2, big: 1e21, small: 5e-7, text: 'Zoë → ✓ "quoted"\n', b: { z: 1, a: [true, null] } };
  const records = chainOf(task, signer, [{ decision: 'approve', by: 'carol', shown, comment: 'fine' }]);
  await store.append(records[0]);
  const [back] = await store.records(task);
  expect(back).toEqual(records[0]);
  expect(verifyChain(task, [back], keys)).toEqual({ ok: true });
});

test('pg store: many writers through several pools make one contiguous chain', async () => {
  // Fresh stores at once: each makes sure of the table as it starts.
  const writers = [newStore(), newStore(), newStore(), newStore()];
  const task = taskId();
  const people = Array.from({ length: 40 }, (_, index) => `approver-${index}`);
  await Promise.all(
    people.map((person, index) =>
      appendChained(writers[index % writers.length], task, (seq, prev) =>
        signer.sign(bodyOf(task, seq, prev, { decision: 'approve', by: person })),
      ),
    ),
  );
  const records = await writers[0].records(task);
  expect(records.map((record) => record.body.seq)).toEqual(people.map((_, index) => index + 1));
  expect(new Set(records.map((record) => record.body.by.principal))).toEqual(new Set(people));
  expect(verifyChain(task, records, keys)).toEqual({ ok: true });

  // Ten writers of one place at once: exactly one takes it.
  const race = taskId();
  const outcomes = await Promise.all(
    Array.from({ length: 10 }, (_, index) =>
      writers[index % writers.length].append(signer.sign(bodyOf(race, 1, null, { decision: 'approve', by: `racer-${index}` }))),
    ),
  );
  expect(outcomes.filter((outcome) => outcome === 'appended')).toHaveLength(1);
  expect(outcomes.filter((outcome) => outcome === 'conflict')).toHaveLength(9);
});

test('pg store: UPDATE, DELETE and TRUNCATE are refused, even to the table owner', async () => {
  const store = newStore();
  const task = taskId();
  const [record] = chainOf(task, signer, [{ decision: 'reject', by: 'carol' }]);
  await store.append(record);
  const asOwner = (sql: string) => () => postgres.psql(`SET ROLE recorder; ${sql}`, 'records');
  expect(asOwner(`UPDATE mcp_decision_records SET digest = 'x' WHERE task_id = '${task}'`)).toThrow(/append-only/);
  expect(
    asOwner(`UPDATE mcp_decision_records SET record = jsonb_set(record, '{body,decision}', '"approve"') WHERE task_id = '${task}'`),
  ).toThrow(/append-only/);
  expect(asOwner(`DELETE FROM mcp_decision_records WHERE task_id = '${task}'`)).toThrow(/append-only/);
  expect(asOwner('TRUNCATE mcp_decision_records')).toThrow(/append-only/);
  expect(await store.records(task)).toEqual([record]);
});

test('pg store: a role that may only read reads the records, and cannot append', async () => {
  const task = taskId();
  const [record] = chainOf(task, signer, [{ decision: 'approve', by: 'carol' }]);
  await newStore().append(record);
  postgres.psql('CREATE ROLE auditor LOGIN; GRANT SELECT ON mcp_decision_records TO auditor', 'records');
  const reader = openDecisionStore(`postgresql://auditor@127.0.0.1:${postgres.port}/records`);
  stores.push(reader);
  expect(await reader.records(task)).toEqual([record]);
  const second = signer.sign(bodyOf(task, 2, record.digest, { decision: 'approve', by: 'dave' }));
  await expect(reader.append(second)).rejects.toThrow(/permission denied/);
});

test('approvals verify reads a task from the PostgreSQL store as it does from a directory', async () => {
  const task = taskId();
  for (const step of [
    { decision: 'approve', by: 'carol' },
    { decision: 'approve', by: 'dave' },
    { decision: 'close', outcome: 'accepted', required: 2, by: 'dave' },
  ] as const) {
    await appendChained(newStore(), task, (seq, prev) => signer.sign(bodyOf(task, seq, prev, step)));
  }
  const publicKey = path.join(dir, 'decision.pub.pem');
  writeFileSync(publicKey, signer.publicKeyPem);
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/cli.ts', 'approvals', 'verify', task, '--store', url, '--public-key', publicKey],
    {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  expect(run.stdout).toContain(
    `Task ${task}: 3 decision records in the decision records table mcp_decision_records of postgresql://recorder@`,
  );
  expect(run.stdout).toContain('Verdict: approved by 2 distinct people');
  expect(run.stdout).not.toContain(PASSWORD);
});

test('pg store: a database that cannot be reached throws, and the store works again once it is back', async () => {
  const store = newStore();
  const task = taskId();
  const [first, second] = chainOf(task, signer, [
    { decision: 'approve', by: 'carol' },
    { decision: 'approve', by: 'dave' },
  ]);
  await store.append(first);
  postgres.stop('fast');
  try {
    await expect(store.records(task)).rejects.toThrow(DecisionStoreError);
    const failure = await store.append(second).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(DecisionStoreError);
    expect((failure as Error).message).toMatch(/mcp_decision_records of postgresql:\/\/recorder@/);
    expect((failure as Error).message).not.toContain(PASSWORD);
  } finally {
    postgres.start();
  }
  expect(await store.append(second)).toBe('appended');
  expect(await store.records(task)).toEqual([first, second]);
});

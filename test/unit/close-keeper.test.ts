/**
 * The close keeper over a task core of its own (what visibility lists, what a read of each task says) and a real file
 * store: it signs the closes tasks publish where none is on record, once, only as the task itself confirms them, leaves
 * an answered question's close to its bridge for the grace period, and keeps each close's trouble to that close.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CloseKeeper } from '../../src/approvals/close-keeper';
import { DecisionLog } from '../../src/approvals/decision-log';
import { verifyChain } from '../../src/records/verify';
import { FileDecisionStore } from '../../src/records/file-store';
import { DecisionStoreError } from '../../src/records/store-error';
import { TaskNotFoundError } from '../../src/core/errors';
import { CLOSE_VIA, type DecisionStore, type SignedDecisionRecord } from '../../src/contract/decision-records';
import type { PublishedTaskState, QuestionClose } from '../../src/contract/task-contract';
import { chainOf, testSigner, type Step } from '../helpers/decision-records';

const { signer, keys } = testSigner();
const TASK = 'process-invoice-5c1e0a7b-2f3d-4e5f-8a9b-0c1d2e3f4a5b';
const OTHER = 'process-invoice-6d2f1b8c-3a4e-4f50-9b0c-1d2e3f4a5b6c';
const WORKFLOW = { principal: 'workflow', person: 'workflow', auth: 'workflow', roles: [] };
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

const unavailable = () =>
  Object.assign(new Error('14 UNAVAILABLE: connection refused'), { code: 14, details: 'connection refused', metadata: {} });

/** A core whose visibility lists `listed`, and whose read of a task gives `published` (or throws `readFails`). */
class Tasks {
  readonly listed = new Map<string, PublishedTaskState>();
  readonly published = new Map<string, PublishedTaskState>();
  readonly readFails = new Map<string, unknown>();
  originalRun = 'run-1';
  listFails: unknown;
  reads = 0;

  /** `taskId` lists and reads as publishing `state`. */
  set(taskId: string, state: PublishedTaskState): this {
    this.listed.set(taskId, state);
    this.published.set(taskId, state);
    return this;
  }

  core(): ConstructorParameters<typeof CloseKeeper>[0] {
    return {
      visibleStates: async () => {
        if (this.listFails) throw this.listFails;
        return { runs: [...this.listed].map(([workflowId, published]) => ({ workflowId, runId: 'run-9', published })) };
      },
      run: async (taskId: string) => {
        this.reads++;
        if (this.readFails.has(taskId)) throw this.readFails.get(taskId);
        if (!this.published.has(taskId)) throw new TaskNotFoundError(taskId);
        return { workflowId: taskId, runId: 'run-9', historyLength: 5, running: false, published: this.published.get(taskId) };
      },
      originalRunIdOf: async () => this.originalRun,
    };
  }
}

function stateClosing(close: Partial<QuestionClose> = {}): PublishedTaskState {
  return {
    status: 'working',
    updatedAt: new Date().toISOString(),
    decided: [
      { key: 'approval', people: [], close: { run: 'run-1', outcome: 'expired', required: 1, at: new Date().toISOString(), ...close } },
    ],
  };
}

/** A file store with `steps` on record for each task of `chains`. */
async function storeWith(chains: Record<string, Step[]>): Promise<FileDecisionStore> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'close-keeper-'));
  dirs.push(dir);
  const store = new FileDecisionStore(dir);
  for (const [taskId, steps] of Object.entries(chains)) for (const record of chainOf(taskId, signer, steps)) await store.append(record);
  return store;
}

const EXPIRED: Step[] = [{ decision: 'expire', by: WORKFLOW, unsigned: true }];
const APPROVED: Step[] = [{ decision: 'approve', by: 'carol' }];
const decisionsOf = async (store: DecisionStore, taskId = TASK) => (await store.records(taskId)).map((record) => record.body.decision);
const keeperOf = (tasks: Tasks, store: DecisionStore) =>
  new CloseKeeper(tasks.core(), new DecisionLog(signer, store), { intervalMs: 1_000, graceMs: 30_000 });
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

test('an expiry on record gets its signed close once; another replica adds none; the chain checks out', async () => {
  const store = await storeWith({ [TASK]: EXPIRED });
  const tasks = new Tasks().set(TASK, stateClosing());
  const written = await keeperOf(tasks, store).look();
  expect(written).toHaveLength(1);
  expect(written[0].body).toMatchObject({
    decision: 'close',
    outcome: 'expired',
    required: 1,
    by: WORKFLOW,
    via: CLOSE_VIA.expiry,
    seq: 2,
  });
  expect(written[0].signature).toBeDefined();
  expect(await keeperOf(tasks, store).look()).toEqual([]);
  const records = await store.records(TASK);
  expect(records.map((record) => record.body.decision)).toEqual(['expire', 'close']);
  expect(verifyChain(TASK, records, keys)).toEqual({ ok: true });
});

test("an answer's close is left to its bridge for the grace period, then written late by repair, with the workflow's time", async () => {
  const store = await storeWith({ [TASK]: APPROVED });
  const closedAt = ago(1_000);
  const tasks = new Tasks().set(TASK, stateClosing({ outcome: 'accepted', required: 1, at: closedAt }));
  const keeper = keeperOf(tasks, store);
  expect(await keeper.look()).toEqual([]);
  expect(tasks.reads).toBe(0);
  // Past the grace, the next look writes it, although visibility no longer lists the task.
  tasks.listed.clear();
  const [repair] = await keeper.look(Date.now() + 31_000);
  expect(repair.body).toMatchObject({ outcome: 'accepted', required: 1, via: CLOSE_VIA.repair, closedAt, by: WORKFLOW });
});

test("the answering bridge's own close, on record, is taken as is: the keeper adds nothing", async () => {
  const store = await storeWith({
    [TASK]: [...APPROVED, { decision: 'close', outcome: 'accepted', required: 1, by: 'carol', via: CLOSE_VIA.answer }],
  });
  const tasks = new Tasks().set(TASK, stateClosing({ outcome: 'accepted', at: ago(60_000) }));
  expect(await keeperOf(tasks, store).look()).toEqual([]);
  expect(await decisionsOf(store)).toEqual(['approve', 'close']);
});

test("an approval the workflow refused and voided after the question's close does not reopen it: no repair", async () => {
  const closed = chainOf(TASK, signer, [
    { decision: 'approve', by: 'bob' },
    { decision: 'close', outcome: 'accepted', required: 1, by: 'bob', via: CLOSE_VIA.answer },
    { decision: 'approve', by: 'carol' },
  ]);
  const store = await storeWith({
    [TASK]: [
      { decision: 'approve', by: 'bob' },
      { decision: 'close', outcome: 'accepted', required: 1, by: 'bob', via: CLOSE_VIA.answer },
      { decision: 'approve', by: 'carol' },
      { decision: 'void', voids: closed[2].digest, by: 'carol', reason: 'the question was closed' },
    ],
  });
  const tasks = new Tasks().set(TASK, stateClosing({ outcome: 'accepted', at: ago(60_000) }));
  expect(await keeperOf(tasks, store).look()).toEqual([]);
  expect(await decisionsOf(store)).toEqual(['approve', 'close', 'approve', 'void']);
});

test('what a listed memo says is signed only as the task itself confirms it: same close, same run, a task of this bridge', async () => {
  const listed = stateClosing({ outcome: 'accepted', required: 1, at: ago(60_000) });
  const cases: Array<[string, (tasks: Tasks) => void]> = [
    ['the task publishes another outcome', (tasks) => tasks.published.set(TASK, stateClosing({ outcome: 'declined' }))],
    ['the task publishes no close', (tasks) => tasks.published.set(TASK, { status: 'working', updatedAt: new Date().toISOString() })],
    ['the run is of another chain', (tasks) => (tasks.originalRun = 'run-2')],
    ['not a task of this bridge', (tasks) => tasks.published.delete(TASK)],
  ];
  for (const [what, arrange] of cases) {
    const tasks = new Tasks().set(TASK, listed);
    arrange(tasks);
    const store = await storeWith({ [TASK]: APPROVED });
    expect([what, await keeperOf(tasks, store).look()]).toEqual([what, []]);
    expect([what, await decisionsOf(store)]).toEqual([what, ['approve']]);
  }
  // A run whose id is none the bridge makes is not even read.
  const tasks = new Tasks().set('not-a-task', listed);
  expect(await keeperOf(tasks, await storeWith({})).look()).toEqual([]);
  expect(tasks.reads).toBe(0);
});

test('a task that cannot be read stops nothing else: the other task is closed, and it is closed once it reads', async () => {
  const store = await storeWith({ [TASK]: EXPIRED, [OTHER]: EXPIRED });
  const tasks = new Tasks().set(TASK, stateClosing()).set(OTHER, stateClosing());
  tasks.readFails.set(TASK, new Error('data encrypted with key "k2" cannot be read'));
  const keeper = keeperOf(tasks, store);
  expect((await keeper.look()).map((record) => record.body.taskId)).toEqual([OTHER]);
  tasks.readFails.delete(TASK);
  tasks.listed.clear();
  // Tried again after its pause, not before.
  expect(await keeper.look()).toEqual([]);
  expect((await keeper.look(Date.now() + 5_000)).map((record) => record.body.taskId)).toEqual([TASK]);
});

test('a close the store refused is tried again on a later look, although the task publishes nothing new', async () => {
  const inner = await storeWith({ [TASK]: EXPIRED });
  let refuse = true;
  const store: DecisionStore = {
    records: (taskId) => inner.records(taskId),
    append: (record) => (refuse ? Promise.reject(new DecisionStoreError('disk full', 'test')) : inner.append(record)),
    location: () => 'test',
    close: () => inner.close(),
  };
  const tasks = new Tasks().set(TASK, stateClosing());
  const keeper = keeperOf(tasks, store);
  expect(await keeper.look()).toEqual([]);
  refuse = false;
  tasks.listed.clear();
  expect((await keeper.look(Date.now() + 5_000)).map((record) => record.body.outcome)).toEqual(['expired']);
});

test('a close published long after the question closed (its expiry took long to record) is still written', async () => {
  const store = await storeWith({ [TASK]: EXPIRED });
  const tasks = new Tasks();
  const keeper = new CloseKeeper(tasks.core(), new DecisionLog(signer, store), { intervalMs: 1_000, lookbackMs: 1_000 });
  expect(await keeper.look()).toEqual([]);
  tasks.set(TASK, stateClosing({ at: ago(10 * 60_000) }));
  expect((await keeper.look()).map((record) => record.body.outcome)).toEqual(['expired']);
});

test('nothing on record gets no close; a close dated ahead is left alone; Temporal out of reach ends the look, not the close', async () => {
  const empty = await storeWith({});
  expect(await keeperOf(new Tasks().set(TASK, stateClosing({ outcome: 'cancelled', required: 2 })), empty).look()).toEqual([]);
  expect(await empty.records(TASK)).toEqual([]);

  const ahead = await storeWith({ [TASK]: APPROVED });
  const early = new Tasks().set(TASK, stateClosing({ outcome: 'accepted', at: new Date(Date.now() + 3_600_000).toISOString() }));
  expect(await keeperOf(early, ahead).look()).toEqual([]);
  expect(early.reads).toBe(0);

  const store = await storeWith({ [TASK]: APPROVED });
  const tasks = new Tasks().set(TASK, stateClosing({ outcome: 'cancelled', required: 2 }));
  const keeper = keeperOf(tasks, store);
  tasks.listFails = unavailable();
  expect(await keeper.look()).toEqual([]);
  tasks.listFails = undefined;
  tasks.readFails.set(TASK, unavailable());
  expect(await keeper.look()).toEqual([]);
  tasks.readFails.delete(TASK);
  tasks.listed.clear();
  const written: SignedDecisionRecord[] = await keeper.look();
  expect(written.map((record) => record.body)).toMatchObject([{ outcome: 'cancelled', required: 2, via: CLOSE_VIA.cancellation }]);
});

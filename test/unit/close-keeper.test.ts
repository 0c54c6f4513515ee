/**
 * The close keeper over a task core of its own (what visibility lists, what a read of the task says) and a real file
 * store: it signs the closes tasks publish where none is on record, once, only as the task itself confirms them, and
 * leaves an answered question's close to its bridge for the grace period.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CloseKeeper } from '../../src/approvals/close-keeper';
import { DecisionLog } from '../../src/approvals/decision-log';
import { verifyChain } from '../../src/approvals/records/verify';
import { FileDecisionStore } from '../../src/approvals/records/file-store';
import { TaskNotFoundError } from '../../src/mcp/tasks/errors';
import type { TaskCore } from '../../src/mcp/tasks/task-core';
import { CLOSE_VIA, type SignedDecisionRecord } from '../../src/contract/decision-records';
import type { PublishedTaskState, QuestionClose } from '../../src/contract/task-contract';
import { chainOf, testSigner } from '../helpers/decision-records';

const { signer, keys } = testSigner();
const TASK = 'process-invoice-5c1e0a7b-2f3d-4e5f-8a9b-0c1d2e3f4a5b';
const WORKFLOW = { principal: 'workflow', person: 'workflow', auth: 'workflow', roles: [] };
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A core whose visibility lists `listed` and whose read of the task publishes `published` (or throws `readFails`). */
class Tasks {
  listed: PublishedTaskState | undefined;
  published: PublishedTaskState | undefined;
  originalRun = 'run-1';
  readFails: unknown;
  listFails: unknown;
  reads = 0;

  core(): TaskCore {
    return {
      visibleStates: async () => {
        if (this.listFails) throw this.listFails;
        return { runs: this.listed ? [{ workflowId: TASK, runId: 'run-9', published: this.listed }] : [] };
      },
      describe: async (taskId: string) => {
        this.reads++;
        if (this.readFails) throw this.readFails;
        return { workflowId: taskId, runId: 'run-9', memo: { mcpTask: this.published } };
      },
      originalRunIdOf: async () => this.originalRun,
    } as unknown as TaskCore;
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

async function storeWith(steps: Parameters<typeof chainOf>[2]): Promise<FileDecisionStore> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'close-keeper-'));
  dirs.push(dir);
  const store = new FileDecisionStore(dir);
  for (const record of chainOf(TASK, signer, steps)) await store.append(record);
  return store;
}

const keeperOf = (tasks: Tasks, store: FileDecisionStore) =>
  new CloseKeeper(tasks.core(), new DecisionLog(signer, store), { intervalMs: 60_000, graceMs: 30_000 });

test('an expiry on record gets its signed close once; another replica adds none; the chain checks out', async () => {
  const store = await storeWith([{ decision: 'expire', by: WORKFLOW, unsigned: true }]);
  const tasks = new Tasks();
  tasks.listed = tasks.published = stateClosing();
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
  const store = await storeWith([{ decision: 'approve', by: 'carol' }]);
  const tasks = new Tasks();
  const closedAt = new Date(Date.now() - 1_000).toISOString();
  tasks.listed = tasks.published = stateClosing({ outcome: 'accepted', required: 1, at: closedAt });
  const keeper = keeperOf(tasks, store);
  expect(await keeper.look()).toEqual([]);
  expect(tasks.reads).toBe(0);
  // Past the grace, the next look writes it, although visibility no longer lists the task.
  tasks.listed = undefined;
  const [repair] = await keeper.look(Date.now() + 31_000);
  expect(repair.body).toMatchObject({ outcome: 'accepted', required: 1, via: CLOSE_VIA.repair, closedAt, by: WORKFLOW });
});

test('a close the bridge wrote within the grace is taken as is: the keeper adds nothing', async () => {
  const store = await storeWith([
    { decision: 'approve', by: 'carol' },
    { decision: 'close', outcome: 'accepted', required: 1, by: 'carol', via: CLOSE_VIA.answer },
  ]);
  const tasks = new Tasks();
  tasks.listed = tasks.published = stateClosing({ outcome: 'accepted', at: new Date(Date.now() - 60_000).toISOString() });
  expect(await keeperOf(tasks, store).look()).toEqual([]);
  expect((await store.records(TASK)).length).toBe(2);
});

test('what a listed memo says is signed only as the task itself confirms it: same close, same run, a task of this bridge', async () => {
  const tasks = new Tasks();
  tasks.listed = stateClosing({ outcome: 'accepted', required: 1, at: new Date(Date.now() - 60_000).toISOString() });
  const cases: Array<[string, () => void]> = [
    ['the task publishes another outcome', () => (tasks.published = stateClosing({ outcome: 'declined' }))],
    ['the task publishes no close', () => (tasks.published = { status: 'working', updatedAt: new Date().toISOString() })],
    ['the run is another chain', () => ((tasks.published = tasks.listed), (tasks.originalRun = 'run-2'))],
    ['not a task of this bridge', () => ((tasks.originalRun = 'run-1'), (tasks.readFails = new TaskNotFoundError(TASK)))],
  ];
  for (const [what, arrange] of cases) {
    arrange();
    const store = await storeWith([{ decision: 'approve', by: 'carol' }]);
    expect([what, await keeperOf(tasks, store).look()]).toEqual([what, []]);
    expect([what, (await store.records(TASK)).length]).toEqual([what, 1]);
  }
});

test('a question with nothing on record gets no close; a look that cannot list keeps its closes for the next', async () => {
  const tasks = new Tasks();
  tasks.listed = tasks.published = stateClosing({ outcome: 'cancelled', required: 2 });
  const empty = await storeWith([]);
  expect(await keeperOf(tasks, empty).look()).toEqual([]);
  expect(await empty.records(TASK)).toEqual([]);

  const store = await storeWith([{ decision: 'approve', by: 'carol' }]);
  const keeper = keeperOf(tasks, store);
  tasks.readFails = Object.assign(new Error('14 UNAVAILABLE: connection refused'), {
    code: 14,
    details: 'connection refused',
    metadata: {},
  });
  expect(await keeper.look()).toEqual([]);
  tasks.readFails = undefined;
  tasks.listed = undefined;
  const written: SignedDecisionRecord[] = await keeper.look();
  expect(written.map((record) => record.body.outcome)).toEqual(['cancelled']);
  expect(written[0].body).toMatchObject({ required: 2, via: CLOSE_VIA.cancellation });
});

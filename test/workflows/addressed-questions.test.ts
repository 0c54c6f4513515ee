/**
 * Addressed questions on durable timers, under Temporal's time-skipping test server: a reminder, an escalation and a
 * deadline days apart, checked at the workflow time each happened, in seconds of real time.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { AWAITING_SEARCH_ATTRIBUTE, NOTIFY_ACTIVITY, type DecisionNotification } from '../../src/contract/approvals';
import { CHANGED_AT_SEARCH_ATTRIBUTE, PRINCIPAL_SEARCH_ATTRIBUTE } from '../../src/contract/task-contract';
import type { askOnce } from './fixtures/addressed';
import { answerUpdate } from '../../src/contract/answer-update';
import { AnswerSeal, createAnswerActivities } from '../../src/shared/answer-proof';
import { timeSkippingServer } from '../helpers/time-skipping';

const DAY = 24 * 3600_000;

let env: TestWorkflowEnvironment;

beforeAll(async () => {
  env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: await timeSkippingServer() } },
  });
  // The task's search attributes, as temporal-dev.sh registers them on the dev server.
  const { INDEXED_VALUE_TYPE_DATETIME, INDEXED_VALUE_TYPE_KEYWORD, INDEXED_VALUE_TYPE_KEYWORD_LIST } =
    temporal.api.enums.v1.IndexedValueType;
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: {
      [PRINCIPAL_SEARCH_ATTRIBUTE]: INDEXED_VALUE_TYPE_KEYWORD,
      [AWAITING_SEARCH_ATTRIBUTE]: INDEXED_VALUE_TYPE_KEYWORD_LIST,
      [CHANGED_AT_SEARCH_ATTRIBUTE]: INDEXED_VALUE_TYPE_DATETIME,
    },
  });
}, 10 * 60_000);

afterAll(() => env?.teardown());

/** The bridge's answer seal, as a test holds it: workers check the answers with it. */
const seal = new AnswerSeal(Buffer.alloc(32, 7));

/**
 * Runs `askOnce` with `times` to its end, with a worker whose notifications are recorded at the workflow time they came;
 * `meanwhile` acts on the running workflow first (time skips while it awaits `env.sleep`).
 */
async function ask(
  times: Parameters<typeof askOnce>[0],
  meanwhile: (handle: {
    workflowId: string;
    runId: string;
    answer(by: { principal: string; roles: string[] }): Promise<unknown>;
  }) => Promise<void> = async () => undefined,
) {
  const taskQueue = `addressed-${randomUUID()}`;
  const sent: Array<{ kind: DecisionNotification['kind']; atMs: number; audience: DecisionNotification['audience'] }> = [];
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowsPath: path.join(__dirname, 'fixtures', 'addressed.ts'),
    activities: {
      ...createAnswerActivities(seal),
      [NOTIFY_ACTIVITY]: async (notification: DecisionNotification) => {
        sent.push({ kind: notification.kind, atMs: await env.currentTimeMs(), audience: notification.audience });
      },
    },
  });
  const startedAt = await env.currentTimeMs();
  const decision = await worker.runUntil(async () => {
    const handle = await env.client.workflow.start('askOnce', { taskQueue, workflowId: `addressed-${randomUUID()}`, args: [times] });
    const runId = handle.firstExecutionRunId;
    await meanwhile({
      workflowId: handle.workflowId,
      runId,
      answer: (by) =>
        handle.executeUpdate(answerUpdate, {
          args: [
            seal.seal(
              { workflowId: handle.workflowId, originalRunId: runId },
              { key: 'approval', action: 'accept', content: { decision: 'approve' } },
              { ...by, person: by.principal, via: 'test' },
            ),
          ],
        }),
    });
    return (await handle.result()) as Awaited<ReturnType<typeof askOnce>>;
  });
  return { decision, sent: sent.map((note) => ({ ...note, day: Math.round(((note.atMs - startedAt) / DAY) * 100) / 100 })) };
}

test('unanswered: reminded at its follow-up, escalated at its due time, overdue at the escalation’s, each on its day', async () => {
  const { decision, sent } = await ask({ followUpMs: 1 * DAY, dueMs: 3 * DAY, escalation: { roles: ['manager'], dueMs: 5 * DAY } });
  expect(decision).toMatchObject({ key: 'approval', outcome: 'overdue', escalated: true, answers: [] });
  expect(sent.map(({ kind, day }) => [kind, day])).toEqual([
    ['asked', 0],
    ['reminder', 1],
    ['escalated', 3],
    ['decided', 5],
  ]);
  expect(sent[0].audience.roles).toEqual(['approver']);
  expect(sent[2].audience.roles).toEqual(['approver', 'manager']);
});

test('without an escalation the question ends overdue at its due time, reminded once', async () => {
  const { decision, sent } = await ask({ followUpMs: 2 * DAY, dueMs: 7 * DAY });
  expect(decision).toMatchObject({ outcome: 'overdue', escalated: false });
  expect(sent.map(({ kind, day }) => [kind, day])).toEqual([
    ['asked', 0],
    ['reminder', 2],
    ['decided', 7],
  ]);
});

test('answered by someone the escalation added, after it: accepted, and no deadline passes', async () => {
  const { decision, sent } = await ask(
    { followUpMs: 1 * DAY, dueMs: 3 * DAY, escalation: { roles: ['manager'], dueMs: 5 * DAY } },
    async (run) => {
      // Before the escalation a manager is not asked; after it, they may answer.
      await env.sleep(2 * DAY);
      await expect(run.answer({ principal: 'mia', roles: ['manager'] })).rejects.toThrow();
      await env.sleep(2 * DAY);
      await run.answer({ principal: 'mia', roles: ['manager'] });
    },
  );
  expect(decision).toMatchObject({ outcome: 'accepted', escalated: true, answers: [{ principal: 'mia', action: 'accept' }] });
  expect(sent.map(({ kind, day }) => [kind, day])).toEqual([
    ['asked', 0],
    ['reminder', 1],
    ['escalated', 3],
    ['decided', 4],
  ]);
});

/**
 * Answers that arrive together, taken in one workflow task: two approvals of a decision that needs two (Updates), and
 * two answers to a task's own question (signals), sent while no worker polls, so that the worker that comes back gets
 * them at once. Their seal checks (local activities the handlers await) must leave a history that replays: a worker
 * that restarts after them, or any later worker, goes on with the task.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { openDecisionStore } from '../../src/records/store';
import type { Bridge } from '../../src/mcp/bridge';
import { TASK_STATE_MEMO, type PublishedTaskState } from '../../src/contract/task-contract';
import { pollUntil } from '../../src/util/wait';
import { answer, textOf } from '../helpers/approvals';
import { taskResult } from '../helpers/mcp';
import { fixtureWorkflowBundle, sendAnswer } from '../helpers/temporal';
import { startStack } from '../helpers/test-stack';
import {
  QUESTION_KEY,
  RAW_ASK_WORKFLOW_TYPE,
  REVIEW_NOTE_KEY,
  REVIEW_WORKFLOW_TYPE,
  type DecisionResult,
  type ReviewInput,
} from '../fixtures/definitions';
import { decisionAwaiting, effectsCarriedOut, FIXTURES, type FixtureStack } from '../fixtures/stack';

const ROLE = 'ap-approver';
let stack: FixtureStack;
let requesterBridge: Bridge;
let annBridge: Bridge;
let bobBridge: Bridge;

beforeAll(async () => {
  stack = await startStack({
    name: 'concurrent-answers',
    app: FIXTURES,
  });
  [requesterBridge, annBridge, bobBridge] = await Promise.all([
    stack.addBridge({ principal: 'sam-concurrent', roles: [] }),
    stack.addBridge({ principal: 'ann-concurrent', roles: [ROLE] }),
    stack.addBridge({ principal: 'bob-concurrent', roles: [ROLE] }),
  ]);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

test('two approvals accepted in one workflow task replay, and the effect is carried out once after a worker restart', async () => {
  const [sam, ann, bob] = await Promise.all([
    stack.tasksClient('concurrent-answers', requesterBridge),
    stack.tasksClient('concurrent-answers', annBridge),
    stack.tasksClient('concurrent-answers', bobBridge),
  ]);
  const taskId = await decisionAwaiting(
    sam,
    { subject: 'two at once', roles: [ROLE], required: 2, details: { currency: 'EUR', amount: 200.75 } },
    annBridge,
    { principal: 'ann-concurrent', roles: [ROLE] },
  );

  // Nothing polls: both Updates wait on the server and are handed over together to the next worker.
  await stack.stopWorker();
  const answering = [answer(ann, taskId, 'approve'), answer(bob, taskId, 'approve')];
  // Each bridge appends its decision record just before it sends its Update.
  const store = openDecisionStore(stack.activities.decisionStore!);
  await pollUntil(async () => ((await store.records(taskId)).length >= 2 ? true : undefined), {
    timeoutMs: 30_000,
    what: 'both decision records',
  });
  await stack.startWorker();
  const answered = await Promise.all(answering);
  for (const result of answered) {
    expect(result.isError).toBeFalsy();
    expect(textOf(result as CallToolResult)).toBe(`Your answer to "approval" on task ${taskId} is recorded.`);
  }

  // A worker that starts now replays the history of both answers.
  await stack.stopWorker();
  const handle = stack.temporal.workflow.getHandle(taskId);
  await Worker.runReplayHistory({ workflowBundle: fixtureWorkflowBundle() }, await handle.fetchHistory(), taskId);
  await stack.startWorker();
  // The worker stopped as it polled may have taken an activity attempt with it: Temporal retries it after its
  // heartbeat timeout.
  const result = (await taskResult(sam, taskId, 150_000)).structuredContent as unknown as DecisionResult;
  expect(result).toMatchObject({ outcome: 'approved' });
  expect(result.approvers.map((approver) => approver.principal).sort()).toEqual(['ann-concurrent', 'bob-concurrent']);
  expect(await effectsCarriedOut(stack.temporal, taskId)).toBe(1);
}, 180_000);

/** The keys of the questions a task state (of `startWorkflowTask()` or of a raw-contract workflow) has open. */
function openKeys(memo: Record<string, unknown> | undefined): string[] {
  const state = memo?.[TASK_STATE_MEMO] as PublishedTaskState | undefined;
  return [...(state?.inputs ?? []), ...(state?.input ? [state.input] : [])].map((input) => input.key);
}

/**
 * Starts `workflowType` with `args` straight on Temporal, waits for its question `key`, and sends two answers to it
 * (sealed as a bridge seals them) while no worker polls; returns the handle once a worker has taken them.
 */
async function twoAnswersAtOnce(
  workflowType: string,
  args: unknown,
  key: string,
  answers: [Record<string, unknown>, Record<string, unknown>],
): Promise<WorkflowHandle> {
  const handle = await stack.temporal.workflow.start(workflowType, {
    taskQueue: stack.taskQueue,
    workflowId: `concurrent-${randomUUID()}`,
    args: [args],
  });
  await pollUntil(async () => (openKeys((await handle.describe()).memo).includes(key) ? true : undefined), {
    timeoutMs: 60_000,
    what: `the question "${key}"`,
  });
  await stack.stopWorker();
  // Signals are in the history as soon as they are sent: the next worker takes both in one workflow task.
  for (const [index, content] of answers.entries()) {
    await sendAnswer(handle, { key, action: 'accept', content: content as never }, `test:answerer-${index}`);
  }
  await stack.startWorker();
  return handle;
}

test('two answers to a question of the task itself in one workflow task replay, and the first one counts', async () => {
  const review: ReviewInput = { subject: 'a train ticket', checks: 0 };
  // An approval, then a rejection: had the second counted, the review would end rejected without its note.
  const handle = await twoAnswersAtOnce(REVIEW_WORKFLOW_TYPE, review, QUESTION_KEY, [
    { decision: 'approve', comment: 'first' },
    { decision: 'reject', comment: 'second' },
  ]);
  await pollUntil(async () => (openKeys((await handle.describe()).memo).includes(REVIEW_NOTE_KEY) ? true : undefined), {
    timeoutMs: 60_000,
    what: `the question "${REVIEW_NOTE_KEY}"`,
  });
  await sendAnswer(handle, { key: REVIEW_NOTE_KEY, action: 'accept', content: { note: 'booked' } });
  expect(await handle.result()).toEqual({ subject: review.subject, outcome: 'approved', note: 'booked' });
  await Worker.runReplayHistory({ workflowBundle: fixtureWorkflowBundle() }, await handle.fetchHistory(), handle.workflowId);
}, 180_000);

test('a workflow on the raw contract takes one of two answers that arrive together, and its history replays', async () => {
  const handle = await twoAnswersAtOnce(RAW_ASK_WORKFLOW_TYPE, { subject: 'two days off' }, QUESTION_KEY, [
    { decision: 'approve', comment: 'first' },
    { decision: 'reject', comment: 'second' },
  ]);
  expect(await handle.result()).toEqual({ subject: 'two days off', approved: true, comment: 'first' });
  await Worker.runReplayHistory({ workflowBundle: fixtureWorkflowBundle() }, await handle.fetchHistory(), handle.workflowId);
}, 180_000);

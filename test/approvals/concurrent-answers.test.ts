/**
 * Answers that arrive together, taken in one workflow task: two approvals of an invoice that needs two (Updates), and
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
import { COST_CENTERS, EXPENSE_WORKFLOW_TYPE } from '../../examples/invoice-approval/src/expense';
import type { InvoiceResult } from '../../examples/invoice-approval/src/invoice';
import { TASK_STATE_MEMO, type PublishedTaskState } from '../../src/contract/task-contract';
import { TIME_OFF_WORKFLOW_TYPE } from '../../examples/invoice-approval/src/workflows/raw-contract';
import { pollUntil } from '../../src/util/wait';
import { answer, textOf } from '../helpers/approvals';
import { invoiceAwaitingApproval, sampleInvoice } from '../helpers/example';
import { taskResult } from '../helpers/mcp';
import { sendAnswer, testWorkflowBundle } from '../helpers/temporal';
import { startStack, type TestStack } from '../helpers/test-stack';

const ROLE = 'ap-approver';
let stack: TestStack;
let requesterBridge: Bridge;
let annBridge: Bridge;
let bobBridge: Bridge;

beforeAll(async () => {
  stack = await startStack({
    name: 'concurrent-answers',
    activities: { invoiceApproval: { approvers: 'role', role: ROLE, secondApproverAbove: 100 } },
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

test('two approvals accepted in one workflow task replay, and the invoice is paid once after a worker restart', async () => {
  const [sam, ann, bob] = await Promise.all([
    stack.tasksClient('concurrent-answers', requesterBridge),
    stack.tasksClient('concurrent-answers', annBridge),
    stack.tasksClient('concurrent-answers', bobBridge),
  ]);
  const taskId = await invoiceAwaitingApproval(sam, sampleInvoice(), annBridge, { principal: 'ann-concurrent', roles: [ROLE] });

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
  await Worker.runReplayHistory({ workflowBundle: testWorkflowBundle() }, await handle.fetchHistory(), taskId);
  await stack.startWorker();
  // The worker stopped as it polled may have taken an activity attempt with it: Temporal retries it after its
  // heartbeat timeout.
  const result = (await taskResult(sam, taskId, 150_000)).structuredContent as unknown as InvoiceResult;
  expect(result).toMatchObject({ outcome: 'paid' });
  expect(result.approval?.approvers?.map((approver) => approver.principal).sort()).toEqual(['ann-concurrent', 'bob-concurrent']);
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
  const report = { employee: 'Ada', currency: 'EUR', items: [{ description: 'Train ticket', amount: 42 }] };
  const handle = await twoAnswersAtOnce(EXPENSE_WORKFLOW_TYPE, report, 'manager-approval', [
    { approve: true, comment: 'first' },
    { approve: false, comment: 'second' },
  ]);
  await pollUntil(async () => (openKeys((await handle.describe()).memo).includes('cost-center') ? true : undefined), {
    timeoutMs: 60_000,
    what: 'the question "cost-center"',
  });
  await sendAnswer(handle, { key: 'cost-center', action: 'accept', content: { costCenter: COST_CENTERS[1] } });
  expect(await handle.result()).toMatchObject({ status: 'reimbursed', approverComment: 'first', costCenter: COST_CENTERS[1] });
  await Worker.runReplayHistory({ workflowBundle: testWorkflowBundle() }, await handle.fetchHistory(), handle.workflowId);
}, 180_000);

test('a workflow on the raw contract takes one of two answers that arrive together, and its history replays', async () => {
  const handle = await twoAnswersAtOnce(TIME_OFF_WORKFLOW_TYPE, { employee: 'Ada', days: 2 }, 'manager', [
    { approve: true, note: 'first' },
    { approve: false, note: 'second' },
  ]);
  expect(await handle.result()).toEqual({ approved: true, days: 2, note: 'first' });
  await Worker.runReplayHistory({ workflowBundle: testWorkflowBundle() }, await handle.fetchHistory(), handle.workflowId);
}, 180_000);

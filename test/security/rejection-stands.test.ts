/**
 * A rejection on record is never taken back. Someone who can write to the namespace resets the run while an approver
 * rejects: her answer, sent to the run she read, finds it ended; it goes to the task's current run, and nothing voids
 * her signed rejection. An answer that runs out of patience while no worker polls is not voided either: the workflow
 * may take it later, and it blocks the effect whatever becomes of the run.
 */
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { temporal } from '@temporalio/proto';
import { openDecisionStore } from '../../src/records/store';
import { AnswerRefusedError } from '../../src/core/errors';
import type { Bridge } from '../../src/mcp/bridge';
import { pollUntil } from '../../src/util/wait';
import type { DecisionInput, DecisionResult } from '../fixtures/definitions';
import { decisionAwaiting, effectsCarriedOut, FIXTURES, type FixtureStack } from '../fixtures/stack';
import { taskResult } from '../helpers/mcp';
import { startStack } from '../helpers/test-stack';

const SAM = 'sam-rejection-stands';
const APPROVERS = { carol: 'carol-rejection-stands', dave: 'dave-rejection-stands' };
const ROLES = ['ap-approver'];

let stack: FixtureStack;
let submitter: Bridge;
let approver: Bridge;

beforeAll(async () => {
  stack = await startStack({ name: 'rejection-stands', app: FIXTURES });
  [submitter, approver] = await Promise.all([stack.addBridge({ principal: SAM, roles: [] }), stack.addBridge({ roles: ROLES })]);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

const by = (principal: string) => ({ principal, roles: ROLES });

/** sam's client, on sam's bridge. */
async function samClient(): Promise<McpClient> {
  const client = new McpClient({ name: 'rejection-stands', version: '1.0.0' }, { capabilities: { tasks: { list: {}, cancel: {} } } });
  await stack.connect(client, submitter);
  return client;
}

/** A decision one approval settles, checked against its records before the effect. */
function decisionInput(): DecisionInput {
  return { subject: 'Order 17', roles: ROLES, details: { order: 'Order 17', amount: 1_200 } };
}

/** Starts a decision and waits until `principal` may answer it; its task id. */
function decisionOpenTo(sam: McpClient, principal: string): Promise<string> {
  return decisionAwaiting(sam, decisionInput(), approver, by(principal));
}

/** The decision's result once a run that did not end rejected has ended: results of a run a reset replaced are read past. */
function resultAfterReset(sam: McpClient, taskId: string): Promise<DecisionResult> {
  return pollUntil(
    async () => {
      const now = (await taskResult(sam, taskId)).structuredContent as unknown as DecisionResult;
      return now.outcome === 'rejected' ? undefined : now;
    },
    { timeoutMs: 60_000, intervalMs: 500, what: 'the reset run to end' },
  );
}

/**
 * Resets the task's run to its last completed workflow task (before the event at index `before`, when given), leaving
 * Updates and signals out of the reapply.
 */
async function resetDroppingAnswers(taskId: string, before?: number): Promise<string> {
  const { events } = await stack.temporal.workflow.getHandle(taskId).fetchHistory();
  const completed = events!.slice(0, before).filter((event) => event.workflowTaskCompletedEventAttributes);
  const { ResetReapplyExcludeType } = temporal.api.enums.v1;
  const { runId } = await stack.temporal.workflowService.resetWorkflowExecution({
    namespace: 'default',
    workflowExecution: { workflowId: taskId },
    reason: 'a namespace writer resets the run while an approver answers',
    workflowTaskFinishEventId: completed[completed.length - 1].eventId,
    requestId: `reset-${taskId}-${Date.now()}`,
    resetReapplyExcludeTypes: [
      ResetReapplyExcludeType.RESET_REAPPLY_EXCLUDE_TYPE_UPDATE,
      ResetReapplyExcludeType.RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL,
    ],
  });
  return runId!;
}

async function recordsOf(taskId: string) {
  const store = openDecisionStore(stack.activities.decisionStore);
  try {
    return (await store.records(taskId)).map((record) => ({ decision: record.body.decision, by: record.body.by.principal }));
  } finally {
    await store.close();
  }
}

const effects = (taskId: string) => effectsCarriedOut(stack.temporal, taskId);

test('a rejection sent to a run a reset ended goes to the current run: recorded there, never voided, nothing done', async () => {
  const sam = await samClient();
  const taskId = await decisionOpenTo(sam, APPROVERS.carol);
  // carol reads the question (the run she will answer) ...
  const question = await approver.approvals.question(taskId, 'approval', by(APPROVERS.carol));
  // ... a namespace writer resets the run meanwhile ...
  const current = await resetDroppingAnswers(taskId);
  expect(current).not.toBe(question.run.runId);
  // ... and her rejection, sent to the run she read, is taken by the run that replaced it.
  const taken = await approver.approvals.decide(question, { action: 'accept', content: { decision: 'reject' } }, by(APPROVERS.carol));
  expect(taken).toMatchObject({ action: 'accept', principal: APPROVERS.carol });

  const result = (await taskResult(sam, taskId)).structuredContent as unknown as DecisionResult;
  expect(result.outcome).toBe('rejected');
  // Her rejection, and the bridge's close of the question it declined.
  expect(await recordsOf(taskId)).toEqual([
    { decision: 'reject', by: APPROVERS.carol },
    { decision: 'close', by: APPROVERS.carol },
  ]);
  expect(await effects(taskId)).toBe(0);
  await sam.close();
});

test('an answer that runs out of patience is not voided: the workflow takes it later, and a reset that drops it still does nothing', async () => {
  const sam = await samClient();
  const taskId = await decisionOpenTo(sam, APPROVERS.carol);
  await stack.stopWorker();
  try {
    const refused = await approver.approvals
      .decide({ taskId, key: 'approval' }, { action: 'accept', content: { decision: 'reject' } }, by(APPROVERS.carol), 3_000)
      .then(
        () => undefined,
        (error: Error) => error,
      );
    expect(refused).toBeInstanceOf(AnswerRefusedError);
    expect(refused?.message).toMatch(/may be recorded later/);
    // She is not told that nothing was recorded: her signed rejection stands.
    expect((refused as AnswerRefusedError).onRecord).toBe(
      'Your rejection stays on record all the same (signed, in the decision store): nothing that needs this approval is carried out.',
    );
    expect(await recordsOf(taskId)).toEqual([{ decision: 'reject', by: APPROVERS.carol }]);
  } finally {
    await stack.startWorker();
  }
  // Whether or not the workflow took her answer meanwhile, a reset to before it leaves it out; dave approves alone.
  const { events } = await stack.temporal.workflow.getHandle(taskId).fetchHistory();
  const answered = events!.findIndex((event) => event.workflowExecutionUpdateAcceptedEventAttributes);
  await resetDroppingAnswers(taskId, answered < 0 ? undefined : answered);
  const open = await pollUntil(
    () =>
      approver.approvals.question(taskId, 'approval', by(APPROVERS.dave)).then(
        (question) => question,
        () => undefined,
      ),
    { timeoutMs: 30_000, intervalMs: 200, what: `the question of ${taskId} open to dave again` },
  );
  await approver.approvals.decide(open, { action: 'accept', content: { decision: 'approve' } }, by(APPROVERS.dave));
  const result = await resultAfterReset(sam, taskId);
  expect(result.outcome).toBe('unapproved');
  expect(result.reason).toContain(APPROVERS.carol);
  expect((await recordsOf(taskId)).map((record) => record.decision)).not.toContain('void');
  expect(await effects(taskId)).toBe(0);
  await sam.close();
});

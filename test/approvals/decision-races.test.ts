/**
 * An approver's answer (a workflow Update) caught in what a busy moment brings: the workflow task that carries it fails
 * because an event arrived meanwhile, or the workflow ends while the answer is under way. The approver is never shown
 * an internal error: the answer is taken on the workflow's next task, or refused with a sentence saying why.
 *
 * The moment is made, not waited for: the worker's seal check (the local activity the Update handler awaits, inside the
 * workflow task that carries the Update) is held by the test until the event is in.
 */
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createTaskActivities } from '../../src/activities/task-activities';
import type { Bridge } from '../../src/mcp/bridge';
import { createAnswerActivities } from '../../src/shared/answer-proof';
import { respondSignal, VERIFY_ANSWER_ACTIVITY, type VerifyAnswerInput } from '../../src/contract/task-contract';
import { pollUntil } from '../../src/util/wait';
import { textOf } from '../helpers/approvals';
import { startStack } from '../helpers/test-stack';
import { taskResult } from '../helpers/mcp';
import { fixtureWorkflowBundle, quietTemporalLogs, testAddress } from '../helpers/temporal';
import { createFixtureActivities } from '../fixtures/activities';
import { FIXTURES, startDecisionTask, type FixtureStack } from '../fixtures/stack';

const REQUESTER = 'alice-decision-races';
const APPROVER = 'carol-decision-races';

/** The worker's seal checks, held while `held` is set; each one that starts is counted. */
class SealChecks {
  started = 0;
  private release: (() => void) | undefined;
  private held: Promise<void> | undefined;
  private waiting: (() => void) | undefined;

  /** Holds the next checks until {@link open}. */
  hold(): void {
    this.held = new Promise<void>((resolve) => (this.release = resolve));
  }

  /** Lets the held checks (and every later one) go on. */
  open(): void {
    this.held = undefined;
    this.release?.();
  }

  /** Resolves once a check has started (a workflow task is running an Update's handler). */
  async startedOne(): Promise<void> {
    if (this.started > 0) return;
    await new Promise<void>((resolve) => (this.waiting = resolve));
  }

  async gate(): Promise<void> {
    this.started++;
    this.waiting?.();
    await this.held;
  }
}

const checks = new SealChecks();
let stack: FixtureStack;
let connection: NativeConnection;
let worker: Worker;
let running: Promise<void>;
let requesterBridge: Bridge;
let approverBridge: Bridge;

beforeAll(async () => {
  quietTemporalLogs();
  // The stack brings no worker: this file runs its own, whose seal checks it holds.
  stack = await startStack({ name: 'decision-races', app: FIXTURES, worker: false });
  connection = await NativeConnection.connect({ address: testAddress() });
  const answers = createAnswerActivities();
  worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue: stack.taskQueue,
    workflowBundle: fixtureWorkflowBundle(),
    activities: {
      ...createTaskActivities({ decisionStore: stack.activities.decisionStore, notificationOutbox: stack.activities.notificationOutbox }),
      ...createFixtureActivities(),
      ...answers,
      async [VERIFY_ANSWER_ACTIVITY](input: VerifyAnswerInput) {
        await checks.gate();
        return answers[VERIFY_ANSWER_ACTIVITY](input);
      },
    },
  });
  running = worker.run();
  [requesterBridge, approverBridge] = await Promise.all([
    stack.addBridge({ principal: REQUESTER, roles: [] }),
    stack.addBridge({ principal: APPROVER, roles: ['spend-approver'] }),
  ]);
}, 60_000);

afterAll(async () => {
  checks.open();
  await stack?.stop();
  worker?.shutdown();
  await running;
  await connection?.close();
});

const connect = async (bridge: Bridge): Promise<McpClient> => (await stack.person('decision-races', { bridge })).client;

/** A decision of `requester` that one spend-approver makes, once its question is open to the approver. */
async function openRequest(requester: McpClient): Promise<string> {
  const taskId = await startDecisionTask(requester, { subject: 'a race', roles: ['spend-approver'] });
  await pollUntil(
    () =>
      approverBridge.approvals.question(taskId, 'approval', { principal: APPROVER, roles: ['spend-approver'] }).then(
        () => true,
        () => undefined,
      ),
    { timeoutMs: 30_000, intervalMs: 100, what: `the question of ${taskId} to open` },
  );
  return taskId;
}

function answer(approver: McpClient, taskId: string, decision: 'approve' | 'reject'): Promise<CallToolResult> {
  return approver.callTool({
    name: 'approvals_answer',
    arguments: { taskId, key: 'approval', action: 'accept', content: { decision } },
  }) as Promise<CallToolResult>;
}

test('approvals_answer: a workflow task that fails under the Update (an event came in meanwhile) does not fail the answer; it is taken on the next task', async () => {
  const [requester, approver] = await Promise.all([connect(requesterBridge), connect(approverBridge)]);
  const taskId = await openRequest(requester);
  checks.hold();
  checks.started = 0;
  const answering = answer(approver, taskId, 'reject').catch((error: Error) => error);
  await checks.startedOne();
  // An event while the Update's workflow task runs: that task's completion (which ends the workflow) is refused by
  // Temporal with UNHANDLED_COMMAND, and an Update it carried is aborted with FAILED_PRECONDITION.
  await stack.temporal.workflow.getHandle(taskId).signal(respondSignal, { key: 'not-asked', action: 'decline' });
  checks.open();

  const answered = await answering;
  expect(answered).not.toBeInstanceOf(Error);
  expect((answered as CallToolResult).isError).toBeFalsy();
  expect(textOf(answered as CallToolResult)).toBe(`Your answer to "approval" on task ${taskId} is recorded.`);
  const result = await taskResult(requester, taskId);
  expect(result.structuredContent).toMatchObject({ approved: false, outcome: 'rejected', approvers: [{ principal: APPROVER }] });
  expect((result.structuredContent as { approvers: unknown[] }).approvers).toHaveLength(1);
});

test('approvals_answer: a workflow that ends while the answer is under way refuses it with a sentence, not an internal error', async () => {
  const [requester, approver] = await Promise.all([connect(requesterBridge), connect(approverBridge)]);
  const taskId = await openRequest(requester);
  checks.hold();
  checks.started = 0;
  const answering = answer(approver, taskId, 'approve').catch((error: Error) => error);
  await checks.startedOne();
  await stack.temporal.workflow.getHandle(taskId).terminate('ended by an operator while an answer was under way');
  checks.open();

  const answered = await answering;
  expect(answered).not.toBeInstanceOf(Error);
  expect((answered as CallToolResult).isError).toBe(true);
  expect(textOf(answered as CallToolResult)).toBe(
    `Task ${taskId} ended before its workflow took the answer. Your decision is in the decision store, signed; it counts only if the workflow takes it.`,
  );
});

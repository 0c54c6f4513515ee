/**
 * An activity attempt that Temporal counts as started but that no worker runs: the worker died under it, or a poll cut
 * short by a worker's shutdown took it. The decision check before an effect and the notifications of a question
 * heartbeat, so such an attempt is retried after their heartbeat timeout, not after their whole start-to-close
 * timeout: an effect waits seconds for it, not a minute.
 *
 * The worker here drops the first attempt of each: it takes it and never answers or heartbeats.
 */
import { temporal } from '@temporalio/proto';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { NOTIFY_ACTIVITY } from '../../src/contract/approvals';
import { VERIFY_DECISIONS_ACTIVITY } from '../../src/contract/decision-records';
import type { Bridge } from '../../src/mcp/bridge';
import type { Telemetry } from '../../src/shared/telemetry';
import { pollUntil } from '../../src/util/wait';
import { answer } from '../helpers/approvals';
import { taskResult } from '../helpers/mcp';
import { startStack } from '../helpers/test-stack';
import type { DecisionResult } from '../fixtures/definitions';
import { decisionAwaiting, effectsCarriedOut, FIXTURES, type FixtureStack } from '../fixtures/stack';

const ROLE = 'ap-approver';
const DROPPED = [VERIFY_DECISIONS_ACTIVITY, NOTIFY_ACTIVITY];
const { EventType, TimeoutType } = temporal.api.enums.v1;

/** The first attempt of each activity of {@link DROPPED}, per workflow: never run, never answered (until shutdown). */
const dropFirstAttempts: ActivityInterceptorsFactory = (context) => ({
  inbound: {
    execute: (input, next) => {
      const { activityType, attempt } = context.info;
      if (!DROPPED.includes(activityType) || attempt > 1) return next(input);
      return new Promise((_, reject) => context.cancelled.catch(reject));
    },
  },
});

let stack: FixtureStack;
let requesterBridge: Bridge;
let approverBridge: Bridge;

beforeAll(async () => {
  stack = await startStack({
    name: 'lost-attempts',
    app: FIXTURES,
    // The worker's interceptors ride on its tracing option; there are no sinks to give.
    worker: { telemetry: { interceptors: { activity: [dropFirstAttempts] }, sinks: {} } as unknown as Telemetry['worker'] },
  });
  [requesterBridge, approverBridge] = await Promise.all([
    stack.addBridge({ principal: 'sam-lost-attempts', roles: [] }),
    stack.addBridge({ principal: 'ann-lost-attempts', roles: [ROLE] }),
  ]);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

/** The attempts of the activities of {@link DROPPED} of `taskId` that ended, as its history records their start. */
async function retriedAttempts(taskId: string): Promise<{ activity?: string; attempt?: number | null; timedOut?: number | null }[]> {
  const { events } = await stack.temporal.workflow.getHandle(taskId).fetchHistory();
  const typeOf = new Map(
    (events ?? [])
      .filter((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
      .map((event) => [String(event.eventId), event.activityTaskScheduledEventAttributes!.activityType!.name!]),
  );
  return (events ?? [])
    .filter((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)
    .map((event) => event.activityTaskStartedEventAttributes!)
    .filter((started) => DROPPED.includes(typeOf.get(String(started.scheduledEventId))!))
    .map((started) => ({
      activity: typeOf.get(String(started.scheduledEventId)),
      attempt: started.attempt,
      timedOut: started.lastFailure?.timeoutFailureInfo?.timeoutType,
    }));
}

test('a decision check and a notification whose first attempts are lost are retried after the heartbeat timeout', async () => {
  const [sam, ann] = await Promise.all([
    stack.tasksClient('lost-attempts', requesterBridge),
    stack.tasksClient('lost-attempts', approverBridge),
  ]);
  const taskId = await decisionAwaiting(
    sam,
    { subject: 'lost attempts', roles: [ROLE], details: { currency: 'EUR', amount: 200.75 } },
    approverBridge,
    { principal: 'ann-lost-attempts', roles: [ROLE] },
  );
  // The notification that the question was asked, retried (its start is in the history once the retry ends).
  await pollUntil(
    async () => ((await retriedAttempts(taskId)).some((started) => started.activity === NOTIFY_ACTIVITY) ? true : undefined),
    {
      timeoutMs: 120_000,
      what: `a second attempt of ${NOTIFY_ACTIVITY} for ${taskId}`,
    },
  );
  expect((await answer(ann, taskId, 'approve')).isError).toBeFalsy();
  // Retried after a start-to-close timeout instead, the check alone would take a minute: the deadline leaves room for
  // both, and the verdict is the kind of timeout that ended each first attempt, not the time taken.
  const result = (await taskResult(sam, taskId, 170_000)).structuredContent as unknown as DecisionResult;
  expect(result.outcome).toBe('approved');
  expect(await effectsCarriedOut(stack.temporal, taskId)).toBe(1);

  const retried = await retriedAttempts(taskId);
  for (const activity of DROPPED) expect(retried.filter((started) => started.activity === activity).length).toBeGreaterThan(0);
  for (const started of retried) expect(started).toEqual({ ...started, attempt: 2, timedOut: TimeoutType.TIMEOUT_TYPE_HEARTBEAT });
}, 240_000);

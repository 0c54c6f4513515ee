/**
 * The notifications an addressed question sends through {@link NOTIFY_ACTIVITY} (asked, reminded, escalated, handed
 * on, decided), each with an id retries dedupe on, and the wait for them to be carried out before the workflow goes
 * on. Sandboxed workflow code: import only from workflow code.
 */
import { CancellationScope, log, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import {
  deadlineOf,
  escalatesAt,
  NOTIFY_ACTIVITY,
  personOfAnswer,
  type AddressedInput,
  type DecisionNotification,
} from '../contract/approvals';

// Notifications never hold an answer, and each is given up on (and logged) after 20 attempts; a question's end waits
// for its notifications (NOTICES_DELIVERED_PATCH) up to NOTICES_WAIT_MS, then the workflow goes on.
// The activity heartbeats while it waits on the world outside, so an attempt lost with its worker is retried within
// the heartbeat timeout.
const notifier = proxyActivities<Record<typeof NOTIFY_ACTIVITY, (notification: DecisionNotification) => Promise<void>>>({
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 20 },
});

/**
 * How long the end of a question waits for its notifications before the workflow goes on. Each has started by then (one
 * scheduled in the workflow task that completes the workflow never would), and goes on being retried while the
 * workflow runs; the outbox holds every one whatever became of its delivery.
 */
const NOTICES_WAIT_MS = 2 * 60_000;

/** Resolves once every notification of `sent` is settled, or after {@link NOTICES_WAIT_MS}, whichever comes first. */
export async function carriedOut(sent: Promise<void>[]): Promise<void> {
  const timer = new CancellationScope();
  const elapsed = timer.run(() => sleep(NOTICES_WAIT_MS)).catch(() => undefined);
  await Promise.race([Promise.all(sent), elapsed]);
  timer.cancel();
}

/** How a question ended, as its `decided` notification says. */
export type Ending = NonNullable<DecisionNotification['outcome']>;

/**
 * Sends notifications about `input` without waiting for them, each into `underway` (settled whether delivered or
 * not); each kind counts its own ids so retries dedupe.
 */
export function notificationsOf(
  input: AddressedInput,
  underway: Promise<void>[],
): (kind: DecisionNotification['kind'], outcome?: Ending) => void {
  const sent = new Map<string, number>();
  const { workflowId } = workflowInfo();
  return (kind, outcome) => {
    const n = (sent.get(kind) ?? 0) + 1;
    sent.set(kind, n);
    const accepted = input.answers.filter((answer) => answer.action === 'accept').length;
    const last = input.answers[input.answers.length - 1];
    const escalates = escalatesAt(input);
    const due = deadlineOf(input);
    const notification: DecisionNotification = {
      id: `${workflowId}/${input.key}/${kind}/${n}`,
      kind,
      taskId: workflowId,
      key: input.key,
      message: input.request.message,
      audience: { ...input.audience },
      requester: input.requester,
      answeredBy: [...new Set(input.answers.map(personOfAnswer))],
      ...(input.subject !== undefined && { subject: input.subject }),
      accepted,
      required: input.audience.required ?? 1,
      ...(escalates && { escalatesAt: escalates }),
      ...(due && { dueAt: due }),
      ...(kind === 'delegated' && last?.delegatedTo !== undefined && { delegatedBy: last.principal, delegatedTo: last.delegatedTo }),
      ...(outcome && { outcome }),
      at: new Date().toISOString(),
    };
    underway.push(
      notifier[NOTIFY_ACTIVITY](notification).catch((error: unknown) =>
        log.warn('a notification was not delivered', { id: notification.id, error: (error as Error).message }),
      ),
    );
  };
}

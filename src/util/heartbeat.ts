/**
 * Heartbeats for activities that wait on something outside the worker (a store, a mail server, a webhook receiver,
 * the ERP). A workflow schedules them with a heartbeat timeout, so that an attempt whose worker died, or that never
 * reached a worker (a poll cut short by a worker's shutdown), is retried within that timeout rather than after the
 * whole start-to-close timeout.
 */
import { Context } from '@temporalio/activity';

/** How often a waiting activity heartbeats; well under the shortest heartbeat timeout its workflows give it. */
const HEARTBEAT_EVERY_MS = 1_000;

/** The running activity's context; none when the activity's function is called directly (a unit test). */
function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/** Runs `work`, heartbeating while it runs; called outside an activity, runs `work` alone. */
export async function heartbeating<T>(work: () => Promise<T>): Promise<T> {
  const context = activityContext();
  if (!context) return work();
  context.heartbeat();
  const timer = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/** Waits `ms`, heartbeating; a cancelled activity stops waiting with a `CancelledFailure`. */
export function heartbeatingSleep(ms: number): Promise<void> {
  return heartbeating(() => Context.current().sleep(ms));
}

/**
 * Where an answer goes when a reset ended the run it was sent to: the task's current run, when it is the same task and
 * asks the very question the person answered; nowhere otherwise.
 */
import { retryWithBackoff, sleep } from '../util/wait';
import { isTemporalUnavailable, type ApprovalsPort } from '../core';
import type { AddressedInput } from '../contract/approvals';
import { digestOf } from '../records/canonical';

/** How often the run that replaced another is read while its questions are not shown yet. */
const QUESTION_READ_INTERVAL_MS = 200;

/**
 * The run of `taskId` running now, when it is not `tried`, belongs to the same task (its original run is
 * `originalRunId`: a reset of it) and asks the very question `input` the person answered: the same key open, the same
 * message, subject and quorum. Undefined otherwise, and when it cannot be read by `deadline`: an answer never goes to a
 * question it was not given for.
 */
export async function currentRunOf(
  core: ApprovalsPort,
  taskId: string,
  input: AddressedInput,
  originalRunId: string,
  tried: string,
  deadline: number,
): Promise<string | undefined> {
  try {
    // A run a reset just made shows its questions once its first workflow task ran: it is read again until then.
    for (;;) {
      const current = await retryWithBackoff(() => core.run(taskId), {
        isRetryable: isTemporalUnavailable,
        deadline,
      });
      if (!current.running || current.runId === tried) return undefined;
      const original = await core.originalRunIdOf(current);
      if (original !== originalRunId) return undefined;
      const open = (current.published?.awaiting ?? []).find((candidate) => candidate.key === input.key);
      if (open !== undefined) {
        const same =
          open.request.message === input.request.message &&
          (open.audience.required ?? 1) === (input.audience.required ?? 1) &&
          digestOf(open.subject ?? null) === digestOf(input.subject ?? null);
        return same ? current.runId : undefined;
      }
      if (Date.now() + QUESTION_READ_INTERVAL_MS >= deadline) return undefined;
      await sleep(QUESTION_READ_INTERVAL_MS);
    }
  } catch {
    return undefined;
  }
}

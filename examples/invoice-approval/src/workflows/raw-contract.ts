/**
 * A workflow that speaks the bridge's task contract with plain Temporal primitives only, as a Go, Java or Python
 * workflow would: it writes its state to the memo key "mcpTask" and takes answers from the signal "mcp.respond", each
 * only once the local activity "mcpVerifyAnswer" has found its seal to be the bridge's.
 * It deliberately imports nothing of temporal-mcp-tasks.
 */
import {
  ApplicationFailure,
  condition,
  defineSignal,
  log,
  patched,
  proxyLocalActivities,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';

/** Workflow type name; stored in histories, never rename. */
export const TIME_OFF_WORKFLOW_TYPE = 'timeOffRequestWorkflow';

interface Answer {
  key: string;
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
  /** JSON text of the answer as the bridge sealed it, with the run it is for, and the MAC over that text. */
  sealed?: string;
  proof?: string;
}

const respond = defineSignal<[Answer]>('mcp.respond');

// Registered by every worker of bridge-served workflows (in TypeScript, createAnswerActivities()).
const { mcpVerifyAnswer } = proxyLocalActivities<{
  mcpVerifyAnswer(input: { sealed: string; proof: string }): Promise<{ ok: boolean; reason?: string }>;
}>({ startToCloseTimeout: '10 seconds' });

/** The answer the seal carries, when it is made for this run and a worker holding the bridge's key vouches for it. */
async function unsealed(incoming: Answer): Promise<Answer | undefined> {
  let answer: (Answer & { workflowId?: string; originalRunId?: string }) | undefined;
  try {
    answer = typeof incoming.sealed === 'string' ? JSON.parse(incoming.sealed) : undefined;
  } catch {
    answer = undefined;
  }
  // The original run id is the run's own, kept across resets (so a reset run takes the answers it took before).
  const { workflowId, originalExecutionRunId } = workflowInfo();
  if (answer?.workflowId !== workflowId || answer.originalRunId !== originalExecutionRunId) {
    log.warn('refused an answer that carries no seal of this run', { key: incoming.key });
    return undefined;
  }
  const verdict = await mcpVerifyAnswer({ sealed: incoming.sealed!, proof: String(incoming.proof) }).catch(() => ({ ok: false }));
  if (!verdict.ok) {
    log.warn('refused an answer whose seal does not hold', { key: incoming.key });
    return undefined;
  }
  return answer;
}

/** Asks a manager to approve days off; refuses more than 20 days as an application error (a tool error). */
export async function timeOffRequestWorkflow(request: {
  employee: string;
  days: number;
}): Promise<{ approved: boolean; days: number; note?: string }> {
  if (request.days > 20) {
    throw ApplicationFailure.nonRetryable(`${request.days} days is more than the 20 days one request may take; split it`, 'TooManyDays');
  }
  let answer: Answer | undefined;
  let checking = false;
  setHandler(respond, async (incoming) => {
    if (incoming?.key !== 'manager' || answer) return;
    // Runs that started before answers were sealed took them as they came, and replay that way.
    if (!patched('mcp-sealed-answers')) {
      if (incoming.action !== 'cancel') answer = incoming;
      return;
    }
    // One seal check at a time: local activities under way together are resolved on replay in the order they were
    // scheduled, not the order they finished in. Asked only when a check must wait: other histories replay as before.
    while (checking && patched('mcp-serial-seal-checks')) await condition(() => !checking);
    if (answer) return;
    checking = true;
    let taken: Answer | undefined;
    try {
      taken = await unsealed(incoming);
    } finally {
      checking = false;
    }
    if (taken?.key === 'manager' && taken.action !== 'cancel' && !answer) answer = taken;
  });
  upsertMemo({
    mcpTask: {
      status: 'input_required',
      statusMessage: `Waiting for a manager to approve ${request.days} day(s) off for ${request.employee}`,
      updatedAt: new Date().toISOString(),
      input: {
        key: 'manager',
        request: {
          mode: 'form',
          message: `Approve ${request.days} day(s) off for ${request.employee}?`,
          requestedSchema: {
            type: 'object',
            properties: { approve: { type: 'boolean', title: 'Approve' }, note: { type: 'string', title: 'Note' } },
            required: ['approve'],
          },
        },
      },
    },
  });
  await condition(() => answer !== undefined);
  upsertMemo({ mcpTask: { status: 'working', statusMessage: 'Recording the decision', updatedAt: new Date().toISOString() } });
  const approved = answer!.action === 'accept' && answer!.content?.approve === true;
  const note = typeof answer!.content?.note === 'string' ? answer!.content.note : undefined;
  return { approved, days: request.days, ...(note && { note }) };
}

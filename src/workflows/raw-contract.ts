/**
 * A workflow that speaks the bridge's task contract with plain Temporal primitives only, as a Go, Java or Python
 * workflow would: it writes its state to the memo key "mcpTask" and takes answers from the signal "mcp.respond".
 * It deliberately imports nothing from ../shared/task-contract or ./workflow-task.
 */
import { ApplicationFailure, condition, defineSignal, setHandler, upsertMemo } from '@temporalio/workflow';

/** Workflow type name; stored in histories, never rename. */
export const TIME_OFF_WORKFLOW_TYPE = 'timeOffRequestWorkflow';

interface Answer {
  key: string;
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}

const respond = defineSignal<[Answer]>('mcp.respond');

/** Asks a manager to approve days off; refuses more than 20 days as an application error (a tool error). */
export async function timeOffRequestWorkflow(request: {
  employee: string;
  days: number;
}): Promise<{ approved: boolean; days: number; note?: string }> {
  if (request.days > 20) {
    throw ApplicationFailure.nonRetryable(`${request.days} days is more than the 20 days one request may take; split it`, 'TooManyDays');
  }
  let answer: Answer | undefined;
  setHandler(respond, (incoming) => {
    if (incoming.key === 'manager' && incoming.action !== 'cancel' && !answer) answer = incoming;
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

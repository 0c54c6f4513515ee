/**
 * Answers to a task's own questions (its elicitations), handed to the workflow as the signal `mcp.respond`: durable
 * as soon as the signal returns, even with no worker running, and sealed with who gave them (see answer-proof).
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { checkFormContent, respondSignal, type AnswerOrigin, type FormInputRequest, type InputResponse } from '../contract/task-contract';
import { setBounded } from '../util/bounded';
import { log } from '../util/log';
import { retryWithBackoff } from '../util/wait';
import { InvalidTaskRequestError, isRunEnded, isTemporalUnavailable } from './errors';
import type { ActionOutcome, TaskAction } from './actions';
import { WRITE_PATIENCE_MS } from './options';
import type { TaskReads } from './reads';
import type { TaskView } from './task-view';
import type { TemporalAccess } from './temporal-access';

/** Original run ids kept per process. */
const ORIGINAL_RUN_IDS_KEPT = 10_000;

/** An answer that is passed on: accepted or declined (a cancelled elicitation leaves the question open). */
export type PassedResponse = InputResponse & { action: 'accept' | 'decline' };

/** Hands answers to workflows (see the module's comment). */
export class TaskAnswers {
  /** The original run id (kept across resets) of each run answered lately: what answers are sealed for. */
  private readonly originalRunIds = new Map<string, string>();

  constructor(
    private readonly temporal: TemporalAccess,
    private readonly reads: TaskReads,
  ) {}

  /**
   * Hands an answer to the workflow, sealed with who gave it. While Temporal is unreachable it keeps trying for
   * `patienceMs`, so an answer the user gave is not dropped by an outage. A run that ended first is refused
   * ({@link InvalidTaskRequestError}): nothing was recorded.
   */
  async respond(view: TaskView, response: PassedResponse, answeredBy: AnswerOrigin, patienceMs = WRITE_PATIENCE_MS): Promise<void> {
    try {
      await this.signal(view, response, answeredBy, patienceMs);
    } catch (error) {
      // The run ended between the read and the answer: nothing takes answers any more.
      if (error instanceof WorkflowNotFoundError) {
        throw new InvalidTaskRequestError(`Task ${view.task.taskId} ended before the answer reached it; nothing was recorded`);
      }
      throw error;
    }
  }

  /**
   * Hands answers to outstanding input requests to the workflow, all or nothing: an answer that does not fit its
   * request refuses the whole call ({@link InvalidTaskRequestError}) and nothing is sent. Answers to keys that are not
   * outstanding (never asked, already answered, or answered meanwhile) are ignored. `cancel` answers are ignored too:
   * the request stays. Returns the keys handed over.
   */
  async answer(view: TaskView, responses: Record<string, unknown>, answeredBy: AnswerOrigin): Promise<string[]> {
    const accepted: PassedResponse[] = [];
    const problems: string[] = [];
    for (const [key, raw] of Object.entries(responses)) {
      const input = view.inputs.find((candidate) => candidate.key === key);
      if (!input) continue;
      const response = raw as { action?: unknown; content?: unknown } | null;
      const action = response?.action;
      if (action !== 'accept' && action !== 'decline' && action !== 'cancel') {
        problems.push(`"${key}": action must be accept, decline or cancel`);
        continue;
      }
      if (action === 'cancel') continue;
      if (action === 'accept' && input.request.mode === 'form') {
        // Fields the form does not ask for are left out rather than refused.
        const content = formFieldsOf(input.request.requestedSchema, response?.content);
        const problem = checkFormContent(input.request.requestedSchema, content);
        if (problem) {
          problems.push(`"${key}": ${problem}`);
          continue;
        }
        accepted.push({ key, action, content: content as InputResponse['content'] });
      } else accepted.push({ key, action });
    }
    if (problems.length > 0) {
      throw new InvalidTaskRequestError(`Answers that do not fit the request: ${problems.join('; ')}. Nothing was passed on.`);
    }
    const handed: string[] = [];
    for (const response of accepted) {
      try {
        await this.signal(view, response, answeredBy, WRITE_PATIENCE_MS);
        handed.push(response.key);
      } catch (error) {
        // The task ended meanwhile: its keys are no longer outstanding, and answers to those are ignored.
        if (!(error instanceof WorkflowNotFoundError)) throw error;
      }
    }
    return handed;
  }

  /**
   * Sends the task's workflow an action `requestedBy` asks for (see {@link TaskAction}): the Update `action.update` with
   * the subject's fields and the seal of who asked, for the run `view` shows, under an Update id that is the same for
   * every request of that action on that run (a retried request is applied once and answered alike). Temporal's other
   * errors (unreachable) come as they are.
   */
  async sendAction<Result>(view: TaskView, action: TaskAction, requestedBy: AnswerOrigin): Promise<ActionOutcome<Result>> {
    const { update, subject } = action;
    const run = { workflowId: view.workflowId, originalRunId: await this.originalRunIdOf(view) };
    const seal = this.temporal.options.answerSeal;
    const updateId = `${action.updateIdPrefix ?? `${update}/`}${seal.actionId(run, update, subject)}`;
    const handle = this.temporal.client.workflow.getHandle(view.workflowId);
    try {
      const args: [Record<string, unknown>] = [{ ...subject, ...seal.sealAction(run, update, subject, requestedBy) }];
      return { kind: 'applied', result: await handle.executeUpdate<Result, typeof args>(update, { args, updateId }) };
    } catch (error) {
      if (isRunEnded(error)) {
        // The action may have been the run's last step: a repeated request reads what the run returned.
        const result: unknown = await handle.result().catch(() => undefined);
        return { kind: 'closed', ...(result !== undefined && { result }) };
      }
      if (error instanceof WorkflowUpdateFailedError) return { kind: 'refused', reason: (error.cause ?? error).message };
      throw error;
    }
  }

  /** The run's original run id, from its start event (a reset run's is the run it was reset from first); cached. */
  async originalRunIdOf(run: { workflowId: string; runId: string }): Promise<string> {
    const cached = this.originalRunIds.get(run.runId);
    if (cached) return cached;
    const event = await this.temporal.rpc(() => this.temporal.startEvent(run.workflowId, run.runId));
    const original = event?.workflowExecutionStartedEventAttributes?.originalExecutionRunId || run.runId;
    setBounded(this.originalRunIds, run.runId, original, ORIGINAL_RUN_IDS_KEPT);
    return original;
  }

  /** {@link respond}, with Temporal's own errors (a run that ended: WorkflowNotFoundError). */
  private async signal(view: TaskView, response: PassedResponse, answeredBy: AnswerOrigin, patienceMs: number): Promise<void> {
    const { reads, temporal } = this;
    await reads.writing(view.workflowId, view, async () => {
      await retryWithBackoff(
        async () => {
          const originalRunId = await this.originalRunIdOf(view);
          const sealed = temporal.options.answerSeal.seal({ workflowId: view.workflowId, originalRunId }, response, answeredBy);
          await temporal.rpc(() => temporal.client.workflow.getHandle(view.workflowId, view.runId).signal(respondSignal, sealed));
        },
        {
          isRetryable: isTemporalUnavailable,
          deadline: Date.now() + patienceMs,
          onRetry: (error, attempt) => {
            if (attempt === 0)
              log.warn(`answer waits for Temporal: ${(error as Error).message}`, { taskId: view.task.taskId, key: response.key });
          },
        },
      );
      return { value: undefined, onBasis: true };
    });
    log.info('answer handed to the workflow', {
      taskId: view.task.taskId,
      key: response.key,
      action: response.action,
      principal: answeredBy.principal,
    });
  }
}

/** The content's values for the form's own fields; anything that is not an object is passed on for the check to refuse. */
export function formFieldsOf(schema: FormInputRequest['requestedSchema'], content: unknown): unknown {
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return content ?? {};
  return Object.fromEntries(Object.entries(content).filter(([name]) => Object.hasOwn(schema.properties, name)));
}

/**
 * Workflow-side helpers that speak the task contract of ../shared/task-contract: publish status, ask for input.
 * Import only from workflow code.
 */
import { condition, setHandler, upsertMemo } from '@temporalio/workflow';
import {
  checkFormContent,
  respondSignal,
  TASK_STATE_MEMO,
  type FormInputRequest,
  type InputResponse,
  type PendingInput,
  type PublishedAction,
  type PublishedProgress,
  type PublishedTaskState,
  type UrlInputRequest,
} from '../shared/task-contract';

/** The task as seen from inside one workflow run. */
export interface WorkflowTask {
  /**
   * Publishes a new status message; the task stays (or goes back to) `working`. With `actions`, also replaces what
   * is on offer to the user (an empty list withdraws every action); in the same memo update.
   */
  setStatus(message: string, actions?: PublishedAction[]): void;
  /** Publishes progress (MCP semantics: `progress` only grows; `total` when known), with an optional message. */
  setProgress(progress: number, total?: number, message?: string): void;
  /**
   * Asks the user for input and waits for an `accept` or `decline`. A form (`requestedSchema`) comes back with
   * content; a URL request (`mode: 'url'`) with the user's action only. The task shows `input_required` while any
   * request waits. Several requests may wait at once (start them without awaiting each, e.g. with `Promise.all`);
   * each is answered on its own, in any order. `cancel` answers, answers to keys not pending and form content that
   * does not fit the schema are ignored, so the request stays pending and is asked again. `key` must never be reused
   * within the workflow.
   */
  requestInput(key: string, request: Omit<FormInputRequest, 'mode'> | UrlInputRequest): Promise<InputResponse>;
  /**
   * Says what the work did before it was cancelled; the bridge shows it as the cancelled task's status message and in
   * its `tasks/result` error. Call it only once the workflow is cancelled, from a non-cancellable scope, before
   * rethrowing the cancellation. Withdraws every question and action.
   */
  reportCancelled(message: string): void;
}

/** Installs the answer handler and publishes `working`. Call once, at the top of the workflow function. */
export function startWorkflowTask(initialMessage?: string): WorkflowTask {
  const answers = new Map<string, InputResponse>();
  const used = new Set<string>();
  // Outstanding requests in the order they were asked; the first is the one a one-at-a-time client sees.
  const pending: PendingInput[] = [];
  let statusMessage = initialMessage;
  let progress: PublishedProgress | undefined;
  let actions: PublishedAction[] = [];
  let cancelledStatusMessage: string | undefined;

  const publish = (): void => {
    const waiting = pending.length > 0 && cancelledStatusMessage === undefined;
    const state: PublishedTaskState = {
      status: waiting ? 'input_required' : 'working',
      updatedAt: new Date().toISOString(),
      ...(statusMessage !== undefined && { statusMessage }),
      ...(waiting && { inputs: [...pending], input: pending[0] }),
      ...(progress && { progress }),
      ...(actions.length > 0 && cancelledStatusMessage === undefined && { actions }),
      ...(cancelledStatusMessage !== undefined && { cancelledStatusMessage }),
    };
    upsertMemo({ [TASK_STATE_MEMO]: state });
  };

  setHandler(respondSignal, (response) => {
    const input = pending.find((candidate) => candidate.key === response?.key);
    if (!input || answers.has(input.key)) return;
    const { request } = input;
    if (response.action === 'decline') {
      answers.set(input.key, { key: input.key, action: 'decline' });
    } else if (response.action === 'accept' && request.mode === 'url') {
      answers.set(input.key, { key: input.key, action: 'accept' });
    } else if (
      response.action === 'accept' &&
      request.mode === 'form' &&
      checkFormContent(request.requestedSchema, response.content) === undefined
    ) {
      answers.set(input.key, { key: input.key, action: 'accept', content: response.content });
    }
  });

  publish();
  return {
    setStatus(message, offered) {
      statusMessage = message;
      if (offered) actions = [...offered];
      publish();
    },
    setProgress(value, total, message) {
      if (progress && value < progress.progress) throw new Error(`progress must not go back (from ${progress.progress} to ${value})`);
      progress = { progress: value, ...(total !== undefined && { total }), ...(message !== undefined && { message }) };
      if (message !== undefined) statusMessage = message;
      publish();
    },
    async requestInput(key, request) {
      if (used.has(key)) throw new Error(`input key "${key}" was used before; keys are never reused`);
      used.add(key);
      const input: PendingInput = { key, request: 'url' in request ? request : { mode: 'form', ...request } };
      pending.push(input);
      statusMessage = request.message;
      publish();
      await condition(() => answers.has(key));
      // Clear the request in the same workflow task that took the answer, so the bridge never shows it as pending.
      pending.splice(pending.indexOf(input), 1);
      if (pending.length > 0) statusMessage = pending[0].request.message;
      publish();
      return answers.get(key)!;
    },
    reportCancelled(message) {
      cancelledStatusMessage = message;
      statusMessage = message;
      publish();
    },
  };
}

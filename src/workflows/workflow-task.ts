/**
 * Workflow-side helpers that speak the task contract of ../contract/task-contract: publish status, ask for input (the
 * task's own questions here; questions addressed to others in ./approvals). Import only from workflow code.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { condition, log, patched, setHandler, upsertMemo, workflowInfo } from '@temporalio/workflow';
import {
  bindSignal,
  PRINCIPAL_SEARCH_ATTRIBUTE,
  respondSignal,
  SEALED_ANSWERS_PATCH,
  TASK_STATE_MEMO,
  type FormInputRequest,
  type InputResponse,
  type PendingInput,
  type PublishedAction,
  type UrlInputRequest,
} from '../contract/task-contract';
import type { AnswerRecord, InputAudience } from '../contract/approvals';
import { AddressedQuestions } from './approvals';
import type { Decision, DecisionRequest } from './decision-request';
import { checkAnswerSeal, unsealAnswer } from './answer-seals';
import { ownAnswerOf } from './own-answer';
import { publishedState, type OwnTaskState } from './published-state';
import { TaskSearchAttributes } from './task-search-attributes';

export type { Decision, DecisionRequest };

/** How many refused answers the published state keeps. */
const REFUSED_ANSWERS_KEPT = 5;

const PRINCIPAL = defineSearchAttributeKey(PRINCIPAL_SEARCH_ATTRIBUTE, SearchAttributeType.KEYWORD);

/** The principal whose task this workflow is (its `McpPrincipal` search attribute), or '' when it has none. */
export function taskPrincipal(): string {
  return workflowInfo().typedSearchAttributes.get(PRINCIPAL) ?? '';
}

/** The addressed questions of this run's task, once {@link startWorkflowTask} made it (each workflow has its own). */
let questionsOfRun: AddressedQuestions | undefined;

/** Whom question `key` of this run's task addresses now (see `AddressedQuestions.audienceOf`); undefined if not asked. */
export function askedAudienceOf(key: string): InputAudience | undefined {
  return questionsOfRun?.audienceOf(key);
}

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
   * does not fit the schema are ignored, so the request stays pending and is asked again. So is an answer without a
   * valid seal of the bridge (the worker checks it with the activity of `createAnswerActivities()`): it is kept in the
   * published `refusedAnswers`. The answer says who gave it and when. `key` must never be reused within the workflow.
   */
  requestInput(key: string, request: Omit<FormInputRequest, 'mode'> | UrlInputRequest): Promise<InputResponse>;
  /**
   * Asks people other than the task's principal: those `request.audience` names by principal or role, never the
   * requester unless `allowRequester`. Each answers through the bridge (their inbox), once; an answer is validated
   * against this state (open, in the audience, not excluded, not answered before, content fits the form) and taken
   * only with the bridge's seal. Ends when `audience.required` (default 1) distinct people accepted, at the first
   * decline or answer for which `closesOn` is true, or at `dueAt` (unless it escalates then). Meanwhile the task stays
   * `working` with a status message in roles and counts. Someone asked may hand the question to another person
   * (`delegate`), who is then asked in their place; the hand-over is recorded like an answer. The audience is told
   * through {@link NOTIFY_ACTIVITY} when it is asked, reminded at `followUpAt`, escalated, or handed a question.
   */
  requestDecision(key: string, request: DecisionRequest, closesOn?: (answer: AnswerRecord) => boolean): Promise<Decision>;
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
  const own: OwnTaskState = { pending: [], statusMessage: initialMessage, actions: [], refusedAnswers: [] };
  const { pending } = own;
  const attributes = new TaskSearchAttributes();

  const publish = (): void => {
    upsertMemo({ [TASK_STATE_MEMO]: publishedState(own, questions) });
    attributes.publish(questions.keywords());
  };

  const openInput = (key: unknown): PendingInput | undefined =>
    answers.has(key as string) ? undefined : pending.find((candidate) => candidate.key === key);

  const refuse = (key: unknown, reason: string): undefined => {
    log.warn('refused an answer', { key, reason });
    const at = new Date().toISOString();
    own.refusedAnswers = [...own.refusedAnswers, { key: String(key).slice(0, 200), reason, at }].slice(-REFUSED_ANSWERS_KEPT);
    publish();
    return undefined;
  };

  // The bridge's binding of this run is for the bridge to read in the history; handled so that it is not buffered.
  setHandler(bindSignal, () => undefined);

  setHandler(respondSignal, async (incoming) => {
    if (!openInput(incoming?.key)) return;
    let response: InputResponse | undefined = incoming;
    // Histories from before seals took answers as they came; they replay that way.
    if (patched(SEALED_ANSWERS_PATCH)) response = await unsealAnswer(incoming, refuse);
    const input = openInput(response?.key);
    if (!response || !input) return;
    const answer = ownAnswerOf(input, response);
    if (answer) answers.set(input.key, answer);
  });

  // Questions addressed to others: their answers come through the Update this installs.
  const questions = (questionsOfRun = new AddressedQuestions({
    usedKeys: used,
    requester: taskPrincipal,
    checkSeal: checkAnswerSeal,
    // The requester's status names what addressed questions still wait for, unless a question of their own is open.
    showWaiting: (text, always) => {
      if (always || pending.length === 0) own.statusMessage = `Waiting for ${text}`;
    },
    publish,
  }));

  publish();
  return {
    setStatus(message, offered) {
      own.statusMessage = message;
      if (offered) own.actions = [...offered];
      publish();
    },
    setProgress(value, total, message) {
      const { progress } = own;
      if (progress && value < progress.progress) throw new Error(`progress must not go back (from ${progress.progress} to ${value})`);
      own.progress = { progress: value, ...(total !== undefined && { total }), ...(message !== undefined && { message }) };
      if (message !== undefined) own.statusMessage = message;
      publish();
    },
    async requestInput(key, request) {
      if (used.has(key)) throw new Error(`input key "${key}" was used before; keys are never reused`);
      used.add(key);
      const input: PendingInput = { key, request: 'url' in request ? request : { mode: 'form', ...request } };
      pending.push(input);
      own.statusMessage = request.message;
      publish();
      await condition(() => answers.has(key));
      // Clear the request in the same workflow task that took the answer, so the bridge never shows it as pending.
      pending.splice(pending.indexOf(input), 1);
      if (pending.length > 0) own.statusMessage = pending[0].request.message;
      publish();
      return answers.get(key)!;
    },
    requestDecision(key, request, closesOn) {
      return questions.request(key, request, closesOn);
    },
    reportCancelled(message) {
      own.cancelledStatusMessage = message;
      own.statusMessage = message;
      publish();
    },
  };
}

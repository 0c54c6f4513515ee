/**
 * Workflow-side helpers that speak the task contract of ../contract/task-contract: publish status, ask for input (the
 * task's own questions here; questions addressed to others in ./approvals). Import only from workflow code.
 */
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributeUpdatePair } from '@temporalio/common';
import {
  condition,
  log,
  patched,
  proxyLocalActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
  bindSignal,
  CHANGE_STAMPS_PATCH,
  CHANGED_AT_SEARCH_ATTRIBUTE,
  checkFormContent,
  openSealedAnswer,
  PRINCIPAL_SEARCH_ATTRIBUTE,
  respondSignal,
  SEALED_ANSWERS_PATCH,
  TASK_STATE_MEMO,
  VERIFY_ANSWER_ACTIVITY,
  type FormInputRequest,
  type InputResponse,
  type PendingInput,
  type PublishedAction,
  type PublishedProgress,
  type PublishedTaskState,
  type RefusedAnswer,
  type UrlInputRequest,
  type VerifyAnswerInput,
  type VerifyAnswerResult,
} from '../contract/task-contract';
import { AWAITING_SEARCH_ATTRIBUTE, type AnswerRecord, type InputAudience } from '../contract/approvals';
import { AddressedQuestions, type Decision, type DecisionRequest } from './approvals';
import { oneSealCheckAtATime } from './seal-checks';

export type { Decision, DecisionRequest };

const answerCheck = proxyLocalActivities<Record<typeof VERIFY_ANSWER_ACTIVITY, (input: VerifyAnswerInput) => Promise<VerifyAnswerResult>>>({
  startToCloseTimeout: '10 seconds',
});

/** How many refused answers the published state keeps. */
const REFUSED_ANSWERS_KEPT = 5;

const PRINCIPAL = defineSearchAttributeKey(PRINCIPAL_SEARCH_ATTRIBUTE, SearchAttributeType.KEYWORD);

/** The principal whose task this workflow is (its `McpPrincipal` search attribute), or '' when it has none. */
export function taskPrincipal(): string {
  return workflowInfo().typedSearchAttributes.get(PRINCIPAL) ?? '';
}
const AWAITING = defineSearchAttributeKey(AWAITING_SEARCH_ATTRIBUTE, SearchAttributeType.KEYWORD_LIST);
const CHANGED_AT = defineSearchAttributeKey(CHANGED_AT_SEARCH_ATTRIBUTE, SearchAttributeType.DATETIME);

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
// eslint-disable-next-line max-lines-per-function -- longer than a function should be; split next
export function startWorkflowTask(initialMessage?: string): WorkflowTask {
  const answers = new Map<string, InputResponse>();
  const used = new Set<string>();
  // Outstanding requests in the order they were asked; the first is the one a one-at-a-time client sees.
  const pending: PendingInput[] = [];
  let statusMessage = initialMessage;
  let progress: PublishedProgress | undefined;
  let actions: PublishedAction[] = [];
  let cancelledStatusMessage: string | undefined;
  let refusedAnswers: RefusedAnswer[] = [];
  let awaitingPublished: string[] = [];
  /** The last change stamp set: each publish gets a later one, even two in the same workflow task. */
  let stampedAt = 0;

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
      ...(refusedAnswers.length > 0 && { refusedAnswers }),
      ...(questions.published.length > 0 && { awaiting: questions.published }),
      ...(questions.decided.length > 0 && { decided: questions.decided }),
    };
    upsertMemo({ [TASK_STATE_MEMO]: state });
    const attributes: SearchAttributeUpdatePair[] = [];
    const keywords = questions.keywords();
    if (keywords.join('\n') !== awaitingPublished.join('\n')) {
      attributes.push({ key: AWAITING, value: keywords.length > 0 ? keywords : null });
      awaitingPublished = keywords;
    }
    // Histories from before change stamps published without them; they replay that way.
    if (patched(CHANGE_STAMPS_PATCH)) {
      stampedAt = Math.max(Date.now(), stampedAt + 1);
      attributes.push({ key: CHANGED_AT, value: new Date(stampedAt) });
    }
    if (attributes.length > 0) upsertSearchAttributes(attributes);
  };

  const openInput = (key: unknown): PendingInput | undefined =>
    answers.has(key as string) ? undefined : pending.find((candidate) => candidate.key === key);

  const refuse = (key: unknown, reason: string): undefined => {
    log.warn('refused an answer', { key, reason });
    const at = new Date().toISOString();
    refusedAnswers = [...refusedAnswers, { key: String(key).slice(0, 200), reason, at }].slice(-REFUSED_ANSWERS_KEPT);
    publish();
    return undefined;
  };

  // The answer as the bridge sealed it, once the worker has checked the seal; undefined (and recorded) otherwise.
  const unseal = async (response: InputResponse): Promise<InputResponse | undefined> => {
    const { workflowId, originalExecutionRunId } = workflowInfo();
    const opened = openSealedAnswer(response.sealed, { workflowId, originalRunId: originalExecutionRunId });
    if (typeof opened === 'string') return refuse(response.key, opened);
    let verdict: VerifyAnswerResult;
    try {
      verdict = await oneSealCheckAtATime(() =>
        answerCheck[VERIFY_ANSWER_ACTIVITY]({ sealed: response.sealed!, proof: String(response.proof) }),
      );
    } catch (error) {
      return refuse(response.key, `its seal could not be checked: ${(error as Error).message}`);
    }
    if (!verdict.ok) return refuse(response.key, `its seal does not hold (${verdict.reason ?? 'no reason given'})`);
    const { key, action, content, answeredBy, answeredAt } = opened;
    return { key, action, ...(content !== undefined && { content }), answeredBy, answeredAt };
  };

  // The bridge's binding of this run is for the bridge to read in the history; handled so that it is not buffered.
  setHandler(bindSignal, () => undefined);

  setHandler(respondSignal, async (incoming) => {
    if (!openInput(incoming?.key)) return;
    let response: InputResponse | undefined = incoming;
    // Histories from before seals took answers as they came; they replay that way.
    if (patched(SEALED_ANSWERS_PATCH)) response = await unseal(incoming);
    const input = openInput(response?.key);
    if (!response || !input) return;
    const { request } = input;
    const origin = {
      ...(response.answeredBy && { answeredBy: response.answeredBy }),
      ...(response.answeredAt && { answeredAt: response.answeredAt }),
    };
    if (response.action === 'decline') {
      answers.set(input.key, { key: input.key, action: 'decline', ...origin });
    } else if (response.action === 'accept' && request.mode === 'url') {
      answers.set(input.key, { key: input.key, action: 'accept', ...origin });
    } else if (
      response.action === 'accept' &&
      request.mode === 'form' &&
      checkFormContent(request.requestedSchema, response.content) === undefined
    ) {
      answers.set(input.key, { key: input.key, action: 'accept', content: response.content, ...origin });
    }
  });

  // Questions addressed to others: their answers come through the Update this installs.
  const questions = (questionsOfRun = new AddressedQuestions({
    usedKeys: used,
    requester: taskPrincipal,
    checkSeal: async (incoming) => {
      const { workflowId, originalExecutionRunId } = workflowInfo();
      const opened = openSealedAnswer(incoming.sealed, { workflowId, originalRunId: originalExecutionRunId });
      if (typeof opened === 'string') return opened;
      const verdict = await oneSealCheckAtATime(() =>
        answerCheck[VERIFY_ANSWER_ACTIVITY]({ sealed: incoming.sealed!, proof: String(incoming.proof) }),
      );
      return verdict.ok ? opened : `its seal does not hold (${verdict.reason})`;
    },
    // The requester's status names what addressed questions still wait for, unless a question of their own is open.
    showWaiting: (text, always) => {
      if (always || pending.length === 0) statusMessage = `Waiting for ${text}`;
    },
    publish,
  }));

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
    requestDecision(key, request, closesOn) {
      return questions.request(key, request, closesOn);
    },
    reportCancelled(message) {
      cancelledStatusMessage = message;
      statusMessage = message;
      publish();
    },
  };
}

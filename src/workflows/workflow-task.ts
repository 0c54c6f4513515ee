/**
 * Workflow-side helpers that speak the task contract of ../shared/task-contract: publish status, ask for input.
 * Import only from workflow code.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import {
  ApplicationFailure,
  condition,
  defineUpdate,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import {
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
} from '../shared/task-contract';
import {
  ANSWER_UPDATE_NAME,
  answerRefusal,
  AWAITING_SEARCH_ATTRIBUTE,
  awaitingKeywords,
  DECISION_NOTIFICATIONS_PATCH,
  delegationRefusal,
  NOTIFY_ACTIVITY,
  type AddressedInput,
  type AnswerRecord,
  type DecisionNotification,
  type InputAudience,
} from '../approvals/contract';

const answerCheck = proxyLocalActivities<Record<typeof VERIFY_ANSWER_ACTIVITY, (input: VerifyAnswerInput) => Promise<VerifyAnswerResult>>>({
  startToCloseTimeout: '10 seconds',
});

// Notifications are best effort: a worker without the activity, or an outbox that stays down, never holds the question.
const notifier = proxyActivities<Record<typeof NOTIFY_ACTIVITY, (notification: DecisionNotification) => Promise<void>>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 20 },
});

/** How many refused answers the published state keeps. */
const REFUSED_ANSWERS_KEPT = 5;

const PRINCIPAL = defineSearchAttributeKey(PRINCIPAL_SEARCH_ATTRIBUTE, SearchAttributeType.KEYWORD);
const AWAITING = defineSearchAttributeKey(AWAITING_SEARCH_ATTRIBUTE, SearchAttributeType.KEYWORD_LIST);
const MAX_COMMENT_LENGTH = 2_000;

/** The answer to an addressed question, sent by the bridge: validated, then checked for the bridge's seal. */
export const answerUpdate = defineUpdate<AnswerRecord, [InputResponse]>(ANSWER_UPDATE_NAME);

/** A question for people other than the task's principal (see {@link WorkflowTask.requestDecision}). */
export interface DecisionRequest extends Omit<FormInputRequest, 'mode'> {
  audience: InputAudience;
  /**
   * When the question is due: past it, the question escalates (with `escalation`) or the wait ends with outcome
   * `overdue` and the question is withdrawn.
   */
  dueAt?: Date;
  /** When the audience is reminded (a {@link NOTIFY_ACTIVITY} notification) if the question is still open. */
  followUpAt?: Date;
  /** Who is added at `dueAt` (those asked first may still answer), and when the escalated question is due. */
  escalation?: { principals?: string[]; roles?: string[]; dueAt?: Date };
  /** Roles or counts, never names: how the requester's status message names who is asked (default the roles). */
  describedAs?: string;
}

/** How an addressed question ended, with every answer it took (who, their roles, when, through what, what). */
export interface Decision {
  key: string;
  /** `accepted`: the required number accepted; `declined`: someone declined or `closesOn` said so; `overdue`. */
  outcome: 'accepted' | 'declined' | 'overdue';
  /** Every answer and hand-over, oldest first. */
  answers: AnswerRecord[];
  /** Whether the question was escalated at its due time. */
  escalated: boolean;
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

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "25 Nov 14:00 UTC": a due time as the requester's status message shows it. */
function dueText(iso: string): string {
  const at = new Date(iso);
  return `${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]} ${iso.slice(11, 16)} UTC`;
}

/** How the requester's status message names an audience: its roles, or a count, never names. */
function describeAudience(audience: { principals?: string[]; roles?: string[] }): string {
  return audience.roles?.length ? audience.roles.join(' or ') : 'the named approvers';
}

/** Adds the escalation's people to the question's audience and moves its due time to the escalation's. */
function escalate(entry: { input: AddressedInput; describedAs: string }): void {
  const { input } = entry;
  const escalation = input.escalation!;
  const union = (a: string[] | undefined, b: string[] | undefined) => (a || b ? [...new Set([...(a ?? []), ...(b ?? [])])] : undefined);
  const principals = union(input.audience.principals, escalation.principals);
  const roles = union(input.audience.roles, escalation.roles);
  input.audience = { ...input.audience, ...(principals && { principals }), ...(roles && { roles }) };
  input.escalated = true;
  if (escalation.dueAt) input.dueAt = escalation.dueAt;
  else delete input.dueAt;
  entry.describedAs = describeAudience(input.audience);
}

/** Sends notifications about `input` without waiting for them; each kind counts its own ids so retries dedupe. */
function notificationsOf(input: AddressedInput): (kind: DecisionNotification['kind']) => void {
  const sent = new Map<string, number>();
  const { workflowId } = workflowInfo();
  return (kind) => {
    const n = (sent.get(kind) ?? 0) + 1;
    sent.set(kind, n);
    const accepted = input.answers.filter((answer) => answer.action === 'accept').length;
    const notification: DecisionNotification = {
      id: `${workflowId}/${input.key}/${kind}/${n}`,
      kind,
      taskId: workflowId,
      key: input.key,
      message: input.request.message,
      audience: { ...input.audience },
      accepted,
      required: input.audience.required ?? 1,
      ...(input.dueAt && { dueAt: input.dueAt }),
      at: new Date().toISOString(),
    };
    notifier[NOTIFY_ACTIVITY](notification).catch((error: unknown) =>
      log.warn('a notification was not delivered', { id: notification.id, error: (error as Error).message }),
    );
  };
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
  let refusedAnswers: RefusedAnswer[] = [];
  // Questions addressed to others, open, in the order asked; with how each is described to the requester.
  const addressed: {
    input: AddressedInput;
    describedAs: string;
    closesOn?: (answer: AnswerRecord) => boolean;
    closed?: Decision['outcome'];
    notify?: (kind: DecisionNotification['kind']) => void;
  }[] = [];
  let awaitingPublished: string[] = [];

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
      ...(addressed.length > 0 && { awaiting: addressed.map((entry) => entry.input) }),
    };
    upsertMemo({ [TASK_STATE_MEMO]: state });
    const keywords = [...new Set(addressed.flatMap((entry) => awaitingKeywords(entry.input.audience)))].sort();
    if (keywords.join('\n') !== awaitingPublished.join('\n')) {
      upsertSearchAttributes([{ key: AWAITING, value: keywords.length > 0 ? keywords : null }]);
      awaitingPublished = keywords;
    }
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
      verdict = await answerCheck[VERIFY_ANSWER_ACTIVITY]({ sealed: response.sealed!, proof: String(response.proof) });
    } catch (error) {
      return refuse(response.key, `its seal could not be checked: ${(error as Error).message}`);
    }
    if (!verdict.ok) return refuse(response.key, `its seal does not hold (${verdict.reason ?? 'no reason given'})`);
    const { key, action, content, answeredBy, answeredAt } = opened;
    return { key, action, ...(content !== undefined && { content }), answeredBy, answeredAt };
  };

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

  const openAddressed = (key: unknown) => addressed.find((entry) => entry.input.key === key && entry.closed === undefined);

  /** Why this answer cannot be taken now, judged by the identity it carries; undefined when it can. */
  const decisionRefusal = (response: InputResponse | undefined): string | undefined => {
    const entry = openAddressed(response?.key);
    if (!response || !entry) return `no question "${String(response?.key)}" is open on this task`;
    const by = response.answeredBy;
    if (typeof by?.principal !== 'string') return 'the answer does not say who gave it';
    const refusal = answerRefusal(entry.input, by.principal, by.roles ?? []);
    if (refusal) return refusal;
    if (response.action !== 'accept' && response.action !== 'decline' && response.action !== 'delegate') {
      return 'the action must be accept, decline or delegate';
    }
    if (response.action === 'delegate') return delegationRefusal(entry.input, by.principal, response.content?.to);
    if (response.action === 'accept') {
      const problem = checkFormContent(entry.input.request.requestedSchema, response.content);
      if (problem) return `the answer does not fit the question: ${problem}`;
    }
    if (response.comment !== undefined && (typeof response.comment !== 'string' || response.comment.length > MAX_COMMENT_LENGTH)) {
      return `the comment must be text of at most ${MAX_COMMENT_LENGTH} characters`;
    }
    return undefined;
  };

  setHandler(
    answerUpdate,
    async (incoming) => {
      const { workflowId, originalExecutionRunId } = workflowInfo();
      const opened = openSealedAnswer(incoming.sealed, { workflowId, originalRunId: originalExecutionRunId });
      if (typeof opened === 'string') throw ApplicationFailure.nonRetryable(`Answer refused: ${opened}`, 'AnswerRefused');
      const verdict = await answerCheck[VERIFY_ANSWER_ACTIVITY]({ sealed: incoming.sealed!, proof: String(incoming.proof) });
      if (!verdict.ok) throw ApplicationFailure.nonRetryable(`Answer refused: its seal does not hold (${verdict.reason})`, 'AnswerRefused');
      // Judged again on the sealed identity, and on the state now (another answer may have come while the seal was checked).
      const refusal = decisionRefusal(opened);
      if (refusal) throw ApplicationFailure.nonRetryable(`Answer refused: ${refusal}`, 'AnswerRefused');
      const entry = openAddressed(opened.key)!;
      const record: AnswerRecord = {
        principal: opened.answeredBy.principal,
        roles: [...(opened.answeredBy.roles ?? [])],
        action: opened.action,
        ...(opened.content !== undefined && { content: opened.content }),
        ...(opened.comment !== undefined && { comment: opened.comment }),
        at: opened.answeredAt,
        ...(opened.answeredBy.via !== undefined && { via: opened.answeredBy.via }),
      };
      if (opened.action === 'delegate') {
        const to = String(opened.content!.to);
        delete record.content;
        record.delegatedTo = to;
        const { audience } = entry.input;
        audience.principals = [...new Set([...(audience.principals ?? []), to])];
      }
      entry.input.answers.push(record);
      const accepted = entry.input.answers.filter((taken) => taken.action === 'accept').length;
      if (record.action === 'delegate') entry.notify?.('delegated');
      else if (record.action === 'decline' || entry.closesOn?.(record)) entry.closed = 'declined';
      else if (accepted >= (entry.input.audience.required ?? 1)) entry.closed = 'accepted';
      refreshWaiting();
      publish();
      return record;
    },
    {
      validator: (response) => {
        const refusal = decisionRefusal(response);
        if (refusal) throw new Error(refusal);
      },
    },
  );

  const waitingFor = (): string | undefined => {
    const open = addressed.filter((entry) => entry.closed === undefined);
    if (open.length === 0) return undefined;
    return open
      .map(({ input, describedAs }) => {
        const required = input.audience.required ?? 1;
        const accepted = input.answers.filter((answer) => answer.action === 'accept').length;
        const count = required === 1 ? '1 approval' : `${required - accepted} of ${required} approvals`;
        return `${count} by ${describedAs}${input.dueAt ? `, due ${dueText(input.dueAt)}` : ''}`;
      })
      .join('; ');
  };

  // The requester's status names what addressed questions still wait for, unless a question of their own is open.
  const refreshWaiting = (): void => {
    const still = waitingFor();
    if (still && pending.length === 0) statusMessage = `Waiting for ${still}`;
  };

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
    async requestDecision(key, request, closesOn) {
      if (used.has(key)) throw new Error(`input key "${key}" was used before; keys are never reused`);
      const { audience, dueAt, followUpAt, escalation, describedAs, ...form } = request;
      const required = audience.required ?? 1;
      if (!Number.isInteger(required) || required < 1) throw new Error(`audience.required must be a whole number of 1 or more`);
      if (!audience.principals?.length && !audience.roles?.length) throw new Error('a decision must name principals or roles');
      if (escalation && !dueAt) throw new Error('an escalation happens at dueAt: give dueAt too');
      used.add(key);
      const requester = workflowInfo().typedSearchAttributes.get(PRINCIPAL) ?? '';
      const entry: (typeof addressed)[number] = {
        input: {
          key,
          request: { mode: 'form', ...form },
          audience: { ...audience, required, exclude: [...(audience.exclude ?? [])] },
          requester,
          answers: [],
          askedAt: new Date().toISOString(),
          ...(dueAt && { dueAt: dueAt.toISOString() }),
          ...(followUpAt && { followUpAt: followUpAt.toISOString() }),
          ...(escalation && {
            escalation: {
              ...(escalation.principals && { principals: [...escalation.principals] }),
              ...(escalation.roles && { roles: [...escalation.roles] }),
              ...(escalation.dueAt && { dueAt: escalation.dueAt.toISOString() }),
            },
          }),
        },
        describedAs: describedAs ?? describeAudience(audience),
        ...(closesOn && { closesOn }),
      };
      // Histories from before notifications never called the activity; they replay without it.
      if (patched(DECISION_NOTIFICATIONS_PATCH)) entry.notify = notificationsOf(entry.input);
      addressed.push(entry);
      statusMessage = `Waiting for ${waitingFor()}`;
      publish();
      entry.notify?.('asked');

      const isClosed = () => entry.closed !== undefined;
      let reminded = false;
      for (;;) {
        const { input } = entry;
        const next = [!reminded && input.followUpAt, input.dueAt].filter((at): at is string => typeof at === 'string').map(Date.parse);
        if (next.length === 0) {
          await condition(isClosed);
          break;
        }
        if (await condition(isClosed, Math.max(Math.min(...next) - Date.now(), 1))) break;
        if (!reminded && input.followUpAt && Date.parse(input.followUpAt) <= Date.now()) {
          reminded = true;
          entry.notify?.('reminder');
        }
        if (input.dueAt && Date.parse(input.dueAt) <= Date.now()) {
          if (!input.escalation || input.escalated) {
            entry.closed = 'overdue';
            break;
          }
          escalate(entry);
          refreshWaiting();
          publish();
          entry.notify?.('escalated');
        }
      }
      addressed.splice(addressed.indexOf(entry), 1);
      const still = waitingFor();
      if (still) statusMessage = `Waiting for ${still}`;
      publish();
      return { key, outcome: entry.closed!, answers: [...entry.input.answers], escalated: entry.input.escalated === true };
    },
    reportCancelled(message) {
      cancelledStatusMessage = message;
      statusMessage = message;
      publish();
    },
  };
}

/**
 * The workflow side of addressed questions: asking principals and roles other than the task's own
 * (`WorkflowTask.requestDecision`), taking their answers through the validated Update `mcp.answer`, reminding,
 * escalating and notifying on durable timers. Sandboxed workflow code: import only from workflow code (through
 * `workflow-task.ts`).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import {
  checkFormContent,
  type DecidedQuestion,
  type FormInputRequest,
  type InputResponse,
  type QuestionClose,
  type SealedAnswer,
} from '../contract/task-contract';
import {
  answerRefusal,
  awaitingKeywords,
  DECISION_NOTIFICATIONS_PATCH,
  delegationRefusal,
  escalatesAt,
  deadlineOf,
  defaultPersonOf,
  NOTIFY_ACTIVITY,
  REFUSALS,
  personOfAnswer,
  type AddressedInput,
  type AnswerRecord,
  type DecisionNotification,
  type InputAudience,
} from '../contract/approvals';
import { answerRefusedFailure, answerUpdate } from '../contract/answer-update';
import { RECORD_DECISION_ACTIVITY, type RecordDecisionInput, type SignedDecisionRecord } from '../contract/decision-records';

// Notifications never hold an answer, and each is given up on (and logged) after 20 attempts; a question's end waits
// for its notifications (NOTICES_DELIVERED_PATCH) up to NOTICES_WAIT_MS, then the workflow goes on.
// Both activities heartbeat while they wait on the world outside, so an attempt lost with its worker is retried
// within the heartbeat timeout.
const notifier = proxyActivities<Record<typeof NOTIFY_ACTIVITY, (notification: DecisionNotification) => Promise<void>>>({
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 20 },
});

// The record of an expiry is kept until the store takes it: the question's end waits for nothing else.
const recorder = proxyActivities<Record<typeof RECORD_DECISION_ACTIVITY, (input: RecordDecisionInput) => Promise<SignedDecisionRecord>>>({
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute' },
});

/**
 * Patch id under which a question that has a subject records its expiry in the decision store and says how it ended
 * in a `decided` notification. Histories from before it did neither.
 */
export const DECISION_RECORDS_PATCH = 'mcp-decision-records';

const MAX_COMMENT_LENGTH = 2_000;

/** Closed questions whose answerers a task keeps publishing, so that a repeated answer is told it was answered. */
const DECIDED_KEPT = 20;

/**
 * Patch id under which a question's notifications are carried out before it returns, and before a cancelled task
 * ends: an activity scheduled in the workflow task that completes the workflow never starts, so a `decided` sent as
 * the workflow returns was lost. Under it every question says how it ended (with or without a subject), a cancelled
 * one too. Histories from before it sent `decided` for questions with a subject only and waited for none.
 */
export const NOTICES_DELIVERED_PATCH = 'mcp-notices-delivered';

/** Patch id under which a workflow publishes `done:<person>` in its awaiting search attribute (see `keywords`). */
export const AWAITING_DONE_PATCH = 'mcp-awaiting-done';

/**
 * `done:<person>` for each person who may answer none of `open`: in every question, they answered or handed it on,
 * are excluded, or are the requester where the question does not allow the requester. Pure.
 */
export function doneKeywords(open: readonly AddressedInput[]): string[] {
  const blocked = open.map(
    (input) =>
      new Set([
        ...input.answers.map(personOfAnswer),
        ...(input.audience.exclude ?? []),
        ...(input.audience.allowRequester ? [] : [defaultPersonOf(input.requester)]),
      ]),
  );
  const [first, ...rest] = blocked;
  return [...(first ?? [])].filter((person) => rest.every((others) => others.has(person))).map((person) => `done:${person}`);
}

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
  /**
   * What the question is about, as plain JSON shown beside the message (e.g. an invoice's vendor, lines and amounts).
   * Every decision record carries its digest, so that the effect can be checked against what was approved.
   */
  subject?: unknown;
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

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "25 Nov 14:00 UTC": a time as the requester's status message shows it. */
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

/**
 * How long the end of a question waits for its notifications before the workflow goes on. Each has started by then (one
 * scheduled in the workflow task that completes the workflow never would), and goes on being retried while the
 * workflow runs; the outbox holds every one whatever became of its delivery.
 */
const NOTICES_WAIT_MS = 2 * 60_000;

/** Resolves once every notification of `sent` is settled, or after {@link NOTICES_WAIT_MS}, whichever comes first. */
async function carriedOut(sent: Promise<void>[]): Promise<void> {
  const timer = new CancellationScope();
  const elapsed = timer.run(() => sleep(NOTICES_WAIT_MS)).catch(() => undefined);
  await Promise.race([Promise.all(sent), elapsed]);
  timer.cancel();
}

/** How a question ended, as its `decided` notification says. */
type Ending = NonNullable<DecisionNotification['outcome']>;

/**
 * Sends notifications about `input` without waiting for them, each into `underway` (settled whether delivered or
 * not); each kind counts its own ids so retries dedupe.
 */
function notificationsOf(input: AddressedInput, underway: Promise<void>[]): (kind: DecisionNotification['kind'], outcome?: Ending) => void {
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

/** What the addressed questions need of the task they belong to. */
export interface DecisionHost {
  /** Input keys used so far in this workflow: a key is never reused. */
  readonly usedKeys: Set<string>;
  /** The principal whose task this is. */
  requester(): string;
  /** The sealed answer an Update carries, once the worker has checked its seal; why not otherwise. */
  checkSeal(incoming: InputResponse): Promise<SealedAnswer | string>;
  /**
   * Says what the open questions still wait for in the requester's status message: `always`, or only while no question
   * of the task's own is open.
   */
  showWaiting(text: string, always: boolean): void;
  /** Publishes the task's state. */
  publish(): void;
}

/** One open question, with how it is described to the requester. */
interface Entry {
  input: AddressedInput;
  describedAs: string;
  closesOn?: (answer: AnswerRecord) => boolean;
  closed?: Decision['outcome'];
  notify?: (kind: DecisionNotification['kind'], outcome?: Ending) => void;
  /** The notifications sent about it, settled once each was delivered or given up on. */
  sent: Promise<void>[];
}

/** The questions a workflow addresses to others (see the module's comment). Make one per workflow run. */
export class AddressedQuestions {
  /** Open questions, in the order asked. */
  private readonly entries: Entry[] = [];
  /** The most recent closed questions, who answered them, and how they closed (see `PublishedTaskState.decided`). */
  readonly decided: DecidedQuestion[] = [];
  /** Every question asked in this run, open or closed, by key: whom it addresses now (escalations and hand-overs in). */
  private readonly asked = new Map<string, AddressedInput>();

  /** Installs the Update handler that takes answers. */
  constructor(private readonly host: DecisionHost) {
    setHandler(answerUpdate, (incoming) => this.take(incoming), {
      validator: (response) => {
        const refusal = this.refusal(response);
        if (refusal) throw answerRefusedFailure(refusal);
      },
    });
  }

  /**
   * Whom question `key` of this run addresses: its principals and roles as asked, with those its escalation added and
   * those it was handed to. Undefined for a key this run did not ask.
   */
  audienceOf(key: string): InputAudience | undefined {
    const audience = this.asked.get(key)?.audience;
    if (!audience) return undefined;
    const { principals, roles, exclude } = audience;
    return {
      ...audience,
      ...(principals && { principals: [...principals] }),
      ...(roles && { roles: [...roles] }),
      ...(exclude && { exclude: [...exclude] }),
    };
  }

  /** The open questions, as published in the task state's `awaiting`. */
  get published(): AddressedInput[] {
    return this.entries.map((entry) => entry.input);
  }

  /**
   * The search attribute values of the open questions' audiences, and `done:<person>` for each person who may answer
   * none of them (answered or handed each on, excluded from it, or its requester where it does not allow the
   * requester), sorted: an inbox query leaves out the tasks its caller is done with. Runs from before the patch
   * publish the audiences alone.
   */
  keywords(): string[] {
    const audiences = this.entries.flatMap((entry) => awaitingKeywords(entry.input.audience));
    const done = this.entries.length > 0 && patched(AWAITING_DONE_PATCH) ? doneKeywords(this.entries.map((entry) => entry.input)) : [];
    return [...new Set([...audiences, ...done])].sort();
  }

  /** See `WorkflowTask.requestDecision`. */
  async request(key: string, request: DecisionRequest, closesOn?: (answer: AnswerRecord) => boolean): Promise<Decision> {
    const { host } = this;
    if (host.usedKeys.has(key)) throw new Error(`input key "${key}" was used before; keys are never reused`);
    const { audience, dueAt, followUpAt, escalation, describedAs, subject, ...form } = request;
    const required = audience.required ?? 1;
    if (!Number.isInteger(required) || required < 1) throw new Error(`audience.required must be a whole number of 1 or more`);
    if (!audience.principals?.length && !audience.roles?.length) throw new Error('a decision must name principals or roles');
    if (escalation && !dueAt) throw new Error('an escalation happens at dueAt: give dueAt too');
    host.usedKeys.add(key);
    const entry: Entry = {
      input: {
        key,
        request: { mode: 'form', ...form },
        audience: { ...audience, required, exclude: [...(audience.exclude ?? [])] },
        requester: host.requester(),
        ...(subject !== undefined && { subject }),
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
      sent: [],
    };
    // Histories from before notifications never called the activity; they replay without it.
    if (patched(DECISION_NOTIFICATIONS_PATCH)) entry.notify = notificationsOf(entry.input, entry.sent);
    this.entries.push(entry);
    this.asked.set(key, entry.input);
    host.showWaiting(this.waitingFor()!, true);
    host.publish();
    entry.notify?.('asked');

    try {
      await this.untilClosed(entry);
    } catch (error) {
      // Cancelled while it waited: the people asked and the requester are told before the task ends.
      if (isCancellation(error) && entry.notify && patched(NOTICES_DELIVERED_PATCH)) {
        this.entries.splice(this.entries.indexOf(entry), 1);
        this.noteDecided(entry, 'cancelled');
        this.refreshWaiting();
        host.publish();
        await CancellationScope.nonCancellable(async () => {
          entry.notify?.('decided', 'cancelled');
          await carriedOut(entry.sent);
        });
      }
      throw error;
    }
    this.entries.splice(this.entries.indexOf(entry), 1);
    const recorded = entry.input.subject !== undefined && patched(DECISION_RECORDS_PATCH);
    this.noteDecided(entry, entry.closed === 'overdue' ? 'expired' : entry.closed!);
    const delivered = entry.notify !== undefined && patched(NOTICES_DELIVERED_PATCH);
    // The end is told, and an expiry recorded, whatever cancel comes meanwhile.
    const end = async () => {
      if (recorded || delivered) entry.notify?.('decided', entry.closed);
      if (recorded && entry.closed === 'overdue') await this.recordExpiry(entry.input);
    };
    await (delivered ? CancellationScope.nonCancellable(end) : end());
    const still = this.waitingFor();
    if (still) host.showWaiting(still, true);
    host.publish();
    // The notifications about the question are carried out before the workflow goes on, and so before it can end.
    if (delivered) await CancellationScope.nonCancellable(() => carriedOut(entry.sent));
    return { key, outcome: entry.closed!, answers: [...entry.input.answers], escalated: entry.input.escalated === true };
  }

  /** Waits until `entry` is closed by its answers or its deadline, reminding and escalating on the way. */
  private async untilClosed(entry: Entry): Promise<void> {
    const isClosed = () => entry.closed !== undefined;
    let reminded = false;
    for (;;) {
      const { input } = entry;
      const next = [!reminded && input.followUpAt, input.dueAt].filter((at): at is string => typeof at === 'string').map(Date.parse);
      if (next.length === 0) {
        await condition(isClosed);
        return;
      }
      if (await condition(isClosed, Math.max(Math.min(...next) - Date.now(), 1))) return;
      if (!reminded && input.followUpAt && Date.parse(input.followUpAt) <= Date.now()) {
        reminded = true;
        entry.notify?.('reminder');
      }
      if (input.dueAt && Date.parse(input.dueAt) <= Date.now()) {
        if (!input.escalation || input.escalated) {
          entry.closed = 'overdue';
          return;
        }
        escalate(entry);
        this.refreshWaiting();
        this.host.publish();
        entry.notify?.('escalated');
      }
    }
  }

  /**
   * Keeps `entry` among the closed questions the task publishes: who answered it and, when its decisions go on record
   * (it has a subject), how it closed, for the bridge to sign that close where no answer of its own did.
   */
  private noteDecided(entry: Entry, outcome: QuestionClose['outcome']): void {
    const { input } = entry;
    const close: QuestionClose | undefined =
      input.subject !== undefined
        ? { run: workflowInfo().originalExecutionRunId, outcome, required: input.audience.required ?? 1, at: new Date().toISOString() }
        : undefined;
    this.decided.push({ key: input.key, people: [...new Set(input.answers.map(personOfAnswer))], ...(close && { close }) });
    if (this.decided.length > DECIDED_KEPT) this.decided.shift();
  }

  /** Appends the question's expiry to the decision store: a reset that reopens it finds it closed there. */
  private async recordExpiry(input: AddressedInput): Promise<void> {
    const { workflowId, originalExecutionRunId } = workflowInfo();
    try {
      await recorder[RECORD_DECISION_ACTIVITY]({
        taskId: workflowId,
        run: originalExecutionRunId,
        question: { key: input.key, message: input.request.message },
        shown: input.subject,
        decision: 'expire',
        at: new Date().toISOString(),
      });
    } catch (error) {
      // The store's records of this task are damaged: the task fails saying so, with nothing more done on it.
      const cause = error instanceof ActivityFailure ? error.cause : undefined;
      if (cause instanceof ApplicationFailure && cause.type === 'DamagedDecisionRecords') {
        throw ApplicationFailure.nonRetryable(cause.message, cause.type);
      }
      throw error;
    }
  }

  /** Takes an answer the validator let through, once its seal holds and the state still admits it. */
  private async take(incoming: InputResponse): Promise<AnswerRecord> {
    const opened = await this.host.checkSeal(incoming);
    if (typeof opened === 'string') throw answerRefusedFailure(opened);
    // Judged again on the sealed identity, and on the state now (another answer may have come while the seal was checked).
    const refusal = this.refusal(opened);
    if (refusal) throw answerRefusedFailure(refusal);
    const entry = this.openEntry(opened.key)!;
    const record: AnswerRecord = {
      principal: opened.answeredBy.principal,
      ...(opened.answeredBy.person !== undefined && { person: opened.answeredBy.person }),
      roles: [...(opened.answeredBy.roles ?? [])],
      action: opened.action,
      ...(opened.content !== undefined && { content: opened.content }),
      ...(opened.comment !== undefined && { comment: opened.comment }),
      at: opened.answeredAt,
      ...(opened.answeredBy.via !== undefined && { via: opened.answeredBy.via }),
      ...(opened.record !== undefined && { record: opened.record }),
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
    this.refreshWaiting();
    this.host.publish();
    // The bridge writes the question's close record when the answer it sent closed it.
    return entry.closed === 'accepted' || entry.closed === 'declined' ? { ...record, closes: entry.closed } : record;
  }

  private openEntry(key: unknown): Entry | undefined {
    return this.entries.find((entry) => entry.input.key === key && entry.closed === undefined);
  }

  /** Why this answer cannot be taken now, judged by the identity it carries; undefined when it can. */
  private refusal(response: InputResponse | undefined): string | undefined {
    const entry = this.openEntry(response?.key);
    const by = response?.answeredBy;
    if (!response || !entry) {
      const closed = this.decided.find((decided) => decided.key === response?.key);
      const person =
        typeof by?.person === 'string' ? by.person : typeof by?.principal === 'string' ? defaultPersonOf(by.principal) : undefined;
      if (closed && person !== undefined && closed.people.includes(person)) return REFUSALS.answered;
      return `no question "${String(response?.key)}" is open on this task`;
    }
    if (typeof by?.principal !== 'string') return 'the answer does not say who gave it';
    const who = { principal: by.principal, roles: by.roles ?? [], ...(typeof by.person === 'string' && { person: by.person }) };
    const refusal = answerRefusal(entry.input, who);
    if (refusal) return refusal;
    if (response.action !== 'accept' && response.action !== 'decline' && response.action !== 'delegate') {
      return 'the action must be accept, decline or delegate';
    }
    if (response.action === 'delegate') {
      const toRoles = Array.isArray(response.delegateRoles) ? response.delegateRoles.filter((role) => typeof role === 'string') : undefined;
      return delegationRefusal(entry.input, who, response.content?.to, toRoles);
    }
    if (response.action === 'accept') {
      const problem = checkFormContent(entry.input.request.requestedSchema, response.content);
      if (problem) return `the answer does not fit the question: ${problem}`;
    }
    if (response.comment !== undefined && (typeof response.comment !== 'string' || response.comment.length > MAX_COMMENT_LENGTH)) {
      return `the comment must be text of at most ${MAX_COMMENT_LENGTH} characters`;
    }
    return undefined;
  }

  /** What the open questions still wait for, in roles and counts; undefined when none is open. */
  private waitingFor(): string | undefined {
    const open = this.entries.filter((entry) => entry.closed === undefined);
    if (open.length === 0) return undefined;
    return open
      .map(({ input, describedAs }) => {
        const required = input.audience.required ?? 1;
        const accepted = input.answers.filter((answer) => answer.action === 'accept').length;
        const count = required === 1 ? '1 approval' : `${required - accepted} of ${required} approvals`;
        const escalates = escalatesAt(input);
        const due = deadlineOf(input);
        const when = [escalates && `escalates ${dueText(escalates)}`, due && `due ${dueText(due)}`].filter(Boolean).join(', ');
        return `${count} by ${describedAs}${when ? `, ${when}` : ''}`;
      })
      .join('; ');
  }

  /** The requester's status names what addressed questions still wait for, unless a question of their own is open. */
  private refreshWaiting(): void {
    const still = this.waitingFor();
    if (still) this.host.showWaiting(still, false);
  }
}

/**
 * The workflow side of addressed questions: asking principals and roles other than the task's own
 * (`WorkflowTask.requestDecision`), taking their answers through the validated Update `mcp.answer`, reminding,
 * escalating and notifying on durable timers. Sandboxed workflow code: import only from workflow code (through
 * `workflow-task.ts`).
 */
import { CancellationScope, condition, isCancellation, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import type { DecidedQuestion, InputResponse, QuestionClose, SealedAnswer } from '../contract/task-contract';
import {
  awaitingKeywords,
  DECISION_NOTIFICATIONS_PATCH,
  defaultPersonOf,
  personOfAnswer,
  type AddressedInput,
  type AnswerRecord,
  type DecisionNotification,
  type InputAudience,
} from '../contract/approvals';
import { answerRefusedFailure, answerUpdate } from '../contract/answer-update';
import { refusalOf } from './answer-refusal';
import { carriedOut, notificationsOf, type Ending } from './decision-notifications';
import { askedInput, checkDecisionRequest, type Decision, type DecisionRequest } from './decision-request';
import { recordExpiry } from './expiry-record';
import { describeAudience, waitingText } from './waiting-text';

/**
 * Patch id under which a question that has a subject records its expiry in the decision store and says how it ended
 * in a `decided` notification. Histories from before it did neither.
 */
export const DECISION_RECORDS_PATCH = 'mcp-decision-records';

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
    checkDecisionRequest(request);
    host.usedKeys.add(key);
    const entry: Entry = {
      input: askedInput(key, request, host.requester()),
      describedAs: request.describedAs ?? describeAudience(request.audience),
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
      if (recorded && entry.closed === 'overdue') await recordExpiry(entry.input);
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
    return refusalOf(response, this.openEntry(response?.key)?.input, this.decided);
  }

  /** What the open questions still wait for, in roles and counts; undefined when none is open. */
  private waitingFor(): string | undefined {
    return waitingText(this.entries.filter((entry) => entry.closed === undefined));
  }

  /** The requester's status names what addressed questions still wait for, unless a question of their own is open. */
  private refreshWaiting(): void {
    const still = this.waitingFor();
    if (still) this.host.showWaiting(still, false);
  }
}

/**
 * The approver's side of the bridge: questions workflows address to principals and roles other than the task's own
 * (`requestDecision`), found in one inbox across every task, and answered one person at a time with a Temporal Update
 * the workflow validates against its own state. Who may answer is the contract's rule (`answerRefusal`), checked here
 * to show and refuse early, and again by the workflow, which decides.
 */
import { randomUUID } from 'node:crypto';
import { log } from '../util/log';
import { retryWithBackoff } from '../util/wait';
import {
  AnswerRefusedError,
  assertValidPrincipal,
  decodeCursor,
  describeServiceError,
  encodeCursor,
  isRunEnded,
  isTemporalUnavailable,
  listBinding,
  type ApprovalsPort,
  TaskNotFoundError,
  TaskStateUnreadableError,
} from '../core';
import { answerRefusal, defaultPersonOf, REFUSALS, type AddressedInput, type AnswerRecord } from '../contract/approvals';
import { answerUpdate } from '../contract/answer-update';
import { DecisionLog } from './decision-log';
import type { ApproverKeyring } from '../records/approver-signatures';
import type { DecisionChallenges } from './decision-challenges';
import { isUpdateRetryable, isWorkflowRefusal, updateRefusal } from './update-refusal';
import { INBOX_FILL_MS, INBOX_FILL_PAGES, inboxItemOf, inboxQuery, passkeyLinkOf, type InboxItem } from './inbox';
import { checkedResponse, type Decider, type DecisionResponse } from './decision-response';
import { checkOwnSignature } from './own-signature';
import { closeRecordBody, recordBody, stillOnRecord, VOIDABLE } from './question-records';
import { currentRunOf } from './current-run';

/** The approvers' keys, as the bridge's approvals options name them. */
export type { ApproverKeyring };

/** A question as the caller may answer it now, read once: {@link Approvals.decide} takes it without reading again. */
export interface OpenQuestion {
  taskId: string;
  key: string;
  input: AddressedInput;
  /** The run it was read from: the answer goes to this run. */
  run: { workflowId: string; runId: string; historyLength: number };
}

/** Who is who: the person behind a principal, and the roles the deployment knows a principal or person holds. */
export interface PeopleDirectory {
  personOf(principal: string): string;
  /** The roles of someone who is not the caller (for hand-overs); undefined when nobody says. */
  rolesOf(principalOrPerson: string): string[] | undefined;
}

/** Options of {@link Approvals}. */
export interface ApprovalsOptions {
  /** Signs each decision and appends it to the decision store (see `records/`); without it nothing is recorded there. */
  decisions?: DecisionLog;
  /** Who is who; default: the default rule ({@link defaultPersonOf}) and no roles known for others. */
  people?: PeopleDirectory;
  /** The principal of requests without credentials: its decisions say they were not authenticated. */
  localPrincipal?: string;
  /**
   * The people's own keys and who must sign (the approvers directory): a signature given is checked against them, and
   * an approval of someone who must sign is refused without one. Without it signatures given are recorded unchecked.
   */
  signatures?: ApproverKeyring;
  /** The passkey page's address (`https://approvals.example.com/passkeys`), where approvers sign with passkeys. */
  passkeyPage?: string;
  /**
   * The one-time challenges approvers' signatures name (see `decision-challenges.ts`): given to whoever must sign, with
   * the question; a signature that names one is taken only if this bridge issued it for that decision, once.
   */
  challenges?: DecisionChallenges;
}

/**
 * Thrown for a question the caller may not answer because it is not open for them: closed, handed on, never theirs,
 * or no such question or task. One message for all of these (see {@link noQuestionFor}).
 */
export class QuestionNotOpenError extends AnswerRefusedError {}

/** The one answer for a question someone may not see or that does not exist: it tells a real task from none apart. */
export function noQuestionFor(taskId: string, key: string): QuestionNotOpenError {
  return new QuestionNotOpenError(`No question "${key}" of task ${taskId} awaits your answer`);
}

/** How long an approver's call keeps trying while Temporal is busy or unreachable, by default. */
const DECISION_PATIENCE_MS = 30_000;

/** Questions addressed to people, across tasks (see the module's comment). */
export class Approvals {
  private readonly people: PeopleDirectory;

  constructor(
    private readonly core: ApprovalsPort,
    private readonly options: ApprovalsOptions = {},
  ) {
    this.people = options.people ?? { personOf: defaultPersonOf, rolesOf: () => undefined };
  }

  /** The person behind `principal`, as this deployment says. */
  personOf(principal: string): string {
    return this.people.personOf(principal);
  }

  /**
   * The open questions addressed to `principal` or one of `roles` that they may answer now, across every task in the
   * namespace, newest first as the visibility store keeps them: a visibility query on the {@link AWAITING_SEARCH_ATTRIBUTE}
   * the workflows keep, which leaves out tasks that say the caller's person is done with them (`done:<person>`), then
   * each task read and checked as any task read is. A page that the checks empty (planted workflows, tasks whose state
   * cannot be read, older workflows that publish no `done:`) is filled from the next ones, up to
   * {@link INBOX_FILL_PAGES} pages and {@link INBOX_FILL_MS}: a page is empty only when nothing further is open.
   */
  async inbox(principal: string, roles: readonly string[], cursor?: string): Promise<{ items: InboxItem[]; nextCursor?: string }> {
    const page = await this.inboxQuestions(principal, roles, cursor);
    return { items: page.items.map(({ item }) => item), ...(page.nextCursor && { nextCursor: page.nextCursor }) };
  }

  /** {@link inbox}, each item with the question as the workflow published it (its answers so far, its reminder). */
  async inboxQuestions(
    principal: string,
    roles: readonly string[],
    cursor?: string,
  ): Promise<{ items: { item: InboxItem; input: AddressedInput }[]; nextCursor?: string }> {
    assertValidPrincipal(principal);
    const query = inboxQuery(principal, roles, this.personOf(principal));
    const binding = listBinding(`inbox:${principal}`, query);
    let token = cursor === undefined ? undefined : decodeCursor(cursor, binding);
    const items: { item: InboxItem; input: AddressedInput }[] = [];
    const until = Date.now() + INBOX_FILL_MS;
    for (let pages = 0; ; pages++) {
      const { ids, next } = await this.core.visiblePage(query, token);
      items.push(...(await this.inboxItemsOf(ids, principal, roles)));
      token = next;
      if (items.length > 0 || !token || pages + 1 >= INBOX_FILL_PAGES || Date.now() >= until) break;
    }
    return { items, ...(token && { nextCursor: encodeCursor(token, binding) }) };
  }

  /**
   * The questions of the tasks `ids` that the caller may answer now. A task that is not this bridge's, has ended or is
   * gone is left out; so is one whose published state cannot be read, with a warning: it is that task's problem, not
   * the inbox's.
   */
  private async inboxItemsOf(
    ids: readonly string[],
    principal: string,
    roles: readonly string[],
  ): Promise<{ item: InboxItem; input: AddressedInput }[]> {
    const found = await Promise.all(
      ids.map((id) =>
        this.core.run(id).catch((error: unknown) => {
          if (isTemporalUnavailable(error)) throw error;
          if (error instanceof TaskStateUnreadableError) log.warn(`approvals_inbox: left out: ${error.message}`, { taskId: id, principal });
          return undefined;
        }),
      ),
    );
    const items: { item: InboxItem; input: AddressedInput }[] = [];
    const mustSign = this.mustSign(principal, roles);
    for (const run of found) {
      if (!run?.running) continue;
      for (const input of run.published?.awaiting ?? []) {
        if (answerRefusal(input, this.answerer(principal, roles), this.personOf(input.requester)) !== undefined) continue;
        const item = inboxItemOf(run.workflowId, run.tool, input);
        if (mustSign) item.mustSign = true;
        if (mustSign || this.options.passkeyPage !== undefined) Object.assign(item, await this.signing(run, input.key, principal));
        if (this.options.passkeyPage !== undefined) item.passkeyLink = passkeyLinkOf(this.options.passkeyPage, item, input);
        items.push({ item, input });
      }
    }
    return items;
  }

  /**
   * What `principal` signs a decision on question `key` with: the task's original run id, and a fresh one-time
   * challenge for them (where this bridge issues them).
   */
  async signing(run: { workflowId: string; runId: string }, key: string, principal: string): Promise<{ run: string; challenge?: string }> {
    const originalRunId = await this.core.originalRunIdOf({ workflowId: run.workflowId, runId: run.runId });
    const challenge = this.options.challenges?.issue({ taskId: run.workflowId, run: originalRunId, key, person: this.personOf(principal) });
    return { run: originalRunId, ...(challenge && { challenge }) };
  }

  /** Whether an approval by `principal` holding `roles` counts only with their own signature (the approvers directory). */
  mustSign(principal: string, roles: readonly string[]): boolean {
    return this.options.signatures?.mustSign(this.personOf(principal), roles) === true;
  }

  /**
   * The question `key` of `taskId` as `by` may answer it now (one read of the task), or an {@link AnswerRefusedError}
   * saying why not. Who may not see the question at all (not in its audience, no such task, no such question, a task
   * that is not this bridge's) gets one answer for all of these ({@link noQuestionFor}); the submitter is told it is her
   * own request. While Temporal is busy or unreachable the read is tried again until `deadline`.
   */
  async question(
    taskId: string,
    key: string,
    by: { principal: string; roles: readonly string[] },
    deadline?: number,
  ): Promise<OpenQuestion> {
    const read = () => this.core.run(taskId);
    const run = await retryWithBackoff(read, {
      isRetryable: isTemporalUnavailable,
      deadline: deadline ?? Date.now() + DECISION_PATIENCE_MS,
    }).catch((error: unknown) => {
      if (error instanceof TaskNotFoundError) throw noQuestionFor(taskId, key);
      throw error;
    });
    const input = run.running ? (run.published?.awaiting ?? []).find((candidate) => candidate.key === key) : undefined;
    // A repeat after the question closed hears what a repeat while it is open hears.
    if (
      !input &&
      (run.published?.decided ?? []).some((closed) => closed.key === key && closed.people.includes(this.personOf(by.principal)))
    ) {
      throw new AnswerRefusedError(capitalized(REFUSALS.answered));
    }
    const refusal = input
      ? answerRefusal(input, this.answerer(by.principal, by.roles), this.personOf(input.requester))
      : REFUSALS.notAddressed;
    if (refusal === REFUSALS.notAddressed) throw noQuestionFor(taskId, key);
    if (refusal) throw new AnswerRefusedError(capitalized(refusal));
    const { workflowId, runId, historyLength } = run;
    return { taskId, key, input: input!, run: { workflowId, runId, historyLength } };
  }

  private answerer(principal: string, roles: readonly string[]): { principal: string; roles: readonly string[]; person: string } {
    return { principal, roles, person: this.personOf(principal) };
  }

  /**
   * Hands one person's decision on a question to the workflow, sealed with who they are (principal, roles at this
   * moment, the way it came) and their comment, as a Temporal Update the workflow validates against its own state.
   * `target` is a question already read ({@link question}, for a decision made on a form) or one to read now: either
   * way the question is read once. Resolves with what the workflow recorded, or rejects with
   * {@link AnswerRefusedError} saying why nothing was; a question the caller may not see at all is "not found".
   */
  async decide(
    target: OpenQuestion | { taskId: string; key: string },
    response: DecisionResponse,
    by: Decider,
    patienceMs = DECISION_PATIENCE_MS,
  ): Promise<AnswerRecord> {
    // The approver waits for this call anyway: a busy Temporal slows the answer down within the patience, it does not
    // fail it. Each request keeps its own deadline (MCP_TEMPORAL_RPC_TIMEOUT_MS) and is tried again past it.
    const deadline = Date.now() + patienceMs;
    const question = 'input' in target ? target : await this.question(target.taskId, target.key, by, deadline);
    const { taskId, key, input, run } = question;
    const person = this.personOf(by.principal);
    const requesterPerson = this.personOf(input.requester);
    const checked = checkedResponse(input, response, { principal: by.principal, person }, requesterPerson, (to) => this.people.rolesOf(to));
    const { core } = this;
    const originalRunId = await retryWithBackoff(() => core.originalRunIdOf(run), { isRetryable: isTemporalUnavailable, deadline });
    const auth =
      by.auth ?? (by.principal.startsWith('oauth:') ? 'oauth' : by.principal === this.options.localPrincipal ? 'local' : 'token');
    const origin = { ...by, person, auth } as const;
    await checkOwnSignature(this.options, taskId, originalRunId, input, checked, origin);
    // Signed and in the decision store before the workflow hears of it: a history that loses the answer later (a
    // reset that leaves it out) does not lose the record.
    const record = await this.options.decisions
      ?.append(taskId, (seq, prev) => recordBody(taskId, input, checked, origin, originalRunId, seq, prev))
      .catch((error: Error) => {
        // Without its record a decision is not taken at all: the workflow never hears of it.
        log.error(`a decision could not be recorded: ${error.message}`, { taskId, key, principal: by.principal });
        throw new AnswerRefusedError(`The decision store could not take your decision (${error.message}); answer again in a moment`);
      });
    // The workflow hears the answer; the person's own signature is in the record.
    const { signature: _signature, ...answered } = checked;
    const sealed = core.sealAnswer({ workflowId: run.workflowId, originalRunId }, { key, ...answered, ...(record && { record }) }, origin);
    try {
      const { closes, ...taken } = await this.send(question, sealed, originalRunId, deadline);
      log.info('decision recorded', { taskId, key, action: checked.action, principal: by.principal });
      if (record && closes) await this.recordClose(taskId, input, originalRunId, closes, origin);
      return taken;
    } catch (error) {
      const refusal = updateRefusal(error, taskId, patienceMs);
      // The workflow itself refused an approval or a hand-over: the record stays, and a signed void beside it says the
      // workflow did not take it. Nothing else is voided: a rejection, a decline or an expiry on record stands whatever
      // became of the run, and an answer that ran out of patience may still be taken.
      if (record && isWorkflowRefusal(error) && VOIDABLE.has(record.body.decision))
        await this.options.decisions!.void(record, (refusal as Error).message);
      else if (record && refusal instanceof AnswerRefusedError)
        throw new AnswerRefusedError(refusal.message, stillOnRecord(record.body.decision));
      throw refusal;
    }
  }

  /**
   * Sends the sealed answer to `question` as the answer Update, to the run it was read from, until `deadline`: sent again
   * with the same Update id while Temporal is busy or unreachable, and to the task's current run when a reset ended that
   * one ({@link currentRunOf}). Resolves with what the workflow recorded; rejects with the Update's failure.
   */
  private send(
    question: OpenQuestion,
    sealed: ReturnType<ApprovalsPort['sealAnswer']>,
    originalRunId: string,
    deadline: number,
  ): Promise<AnswerRecord> {
    const { core } = this;
    const { taskId, key, input, run } = question;
    // One Update id for every attempt: Temporal takes a repeated one as the same Update, so trying again is safe.
    const updateId = randomUUID();
    const send = (runId: string) =>
      retryWithBackoff(() => core.executeUpdate(taskId, runId, answerUpdate, { args: [sealed], updateId, deadline }), {
        isRetryable: (error) => isUpdateRetryable(error, deadline),
        deadline,
        onRetry: (error, attempt) => {
          if (attempt === 0) log.warn(`decision sent again: ${describeServiceError(error)}`, { taskId, key });
        },
      });
    // One write of this process on the run the question was read from, so the answer reads back at once here.
    return core.writing(taskId, run, async () => {
      let runId = run.runId;
      for (let moves = 0; ; moves++) {
        try {
          return { value: await send(runId), onBasis: runId === run.runId };
        } catch (error) {
          // A reset ended the run it was sent to: the answer goes to the task's current run (the same task: the
          // same original run, which the seal and the record name), never into a void.
          const current =
            moves < MAX_RUN_MOVES && isRunEnded(error)
              ? await currentRunOf(core, taskId, input, originalRunId, runId, deadline)
              : undefined;
          if (current === undefined) throw error;
          log.warn('decision sent to the run that replaced the one it was read from', { taskId, key, from: runId, to: current });
          runId = current;
        }
      }
    });
  }

  /**
   * Appends the signed close record of a question `by`'s answer closed: its outcome and the approvals it required; its
   * place in the chain commits to every record before it, so a receipt cut after its last decision shows no close and
   * is never read as approved. A close that cannot be written is logged: the answer was taken all the same, and the
   * bridge's close keeper writes it later, as a repair.
   */
  private async recordClose(
    taskId: string,
    input: AddressedInput,
    run: string,
    outcome: 'accepted' | 'declined',
    by: Decider & { person: string; auth: string },
  ): Promise<void> {
    await this.options
      .decisions!.appendClose(taskId, { run, key: input.key }, (seq, prev) => closeRecordBody(taskId, input, run, outcome, by, seq, prev))
      .catch((error: Error) => log.error(`a question's close could not be recorded: ${error.message}`, { taskId, key: input.key }));
  }
}

function capitalized(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}

/** How many times one answer follows its task to a run that replaced the one it was sent to. */
const MAX_RUN_MOVES = 5;

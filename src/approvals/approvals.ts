/**
 * The approver's side of the bridge: questions workflows address to principals and roles other than the task's own
 * (`requestDecision`), found in one inbox across every task, and answered one person at a time with a Temporal Update
 * the workflow validates against its own state. Who may answer is the contract's rule (`answerRefusal`), checked here
 * to show and refuse early, and again by the workflow, which decides.
 */
import { randomUUID } from 'node:crypto';
import { checkFormContent, type AnswerOrigin, type FormInputRequest, type InputContent } from '../contract/task-contract';
import { log } from '../util/log';
import { retryWithBackoff, sleep } from '../util/wait';
import {
  AnswerRefusedError,
  assertValidPrincipal,
  decodeCursor,
  describeServiceError,
  encodeCursor,
  formFieldsOf,
  isTemporalUnavailable,
  isValidRole,
  listBinding,
  type ApprovalsPort,
  TaskNotFoundError,
  TaskStateUnreadableError,
} from '../core';
import {
  answerRefusal,
  AWAITING_SEARCH_ATTRIBUTE,
  deadlineOf,
  defaultPersonOf,
  delegationRefusal,
  escalatesAt,
  REFUSALS,
  type AddressedInput,
  type AnswerRecord,
} from '../contract/approvals';
import { answerUpdate } from '../contract/answer-update';
import { DecisionLog } from './decision-log';
import { checkApproverSignature, statementOf, type ApproverKeyring, type ApproverSignature } from '../records/approver-signatures';
import type { DecisionChallenges } from './decision-challenges';
import { digestOf } from '../records/canonical';
import { CLOSE_VIA, type DecisionRecordBody } from '../contract/decision-records';
import { isRunEnded, isUpdateRetryable, isWorkflowRefusal, updateRefusal } from './update-refusal';

/** One open question in an approver's inbox: what the workflow chose to show, no more. */
export interface InboxItem {
  taskId: string;
  key: string;
  tool?: string;
  message: string;
  requestedSchema: FormInputRequest['requestedSchema'];
  /** What the question is about, as the workflow published it ({@link AddressedInput.subject}), when it did. */
  subject?: unknown;
  /** The digest of the subject's canonical JSON (of null without one): what an approver's own signature is over. */
  subjectDigest: string;
  /** True when the caller's approval counts only with their own signature (the approvers directory says so). */
  mustSign?: true;
  /** For a signature: the task's original run id, which the statement names (`approvals sign --run`). */
  run?: string;
  /** For a signature: a one-time challenge issued to the caller for this question (`approvals sign --challenge`). */
  challenge?: string;
  /**
   * The passkey page where the caller signs a decision on this question: add `decision` (approve, reject, decline)
   * to the link; present when the server serves the page (MCP_PASSKEY_ORIGIN).
   */
  passkeyLink?: string;
  /** Who submitted the request the question is about (the task's principal). */
  requester: string;
  /** Distinct acceptances the question needs, and how many it has. */
  required: number;
  accepted: number;
  askedAt: string;
  /** ISO 8601: when the question escalates to more people, if it will. */
  escalatesAt?: string;
  /** ISO 8601: the deadline, past which the question ends unanswered. */
  dueAt?: string;
}

/** A question as the caller may answer it now, read once: {@link Approvals.decide} takes it without reading again. */
export interface OpenQuestion {
  taskId: string;
  key: string;
  input: AddressedInput;
  /** The run it was read from: the answer goes to this run. */
  run: { workflowId: string; runId: string; historyLength: number };
}

/** One person's decision on a question: an answer (accept, decline) or a hand-over to someone else. */
export interface DecisionResponse {
  action: 'accept' | 'decline' | 'delegate';
  content?: InputContent;
  comment?: string;
  /** The person's own signature of their decision (see `records/approver-signatures.ts`), checked before it is recorded. */
  signature?: ApproverSignature;
}

/** Who decides: the caller's principal, their roles at this moment, and the way the decision came. */
export type Decider = AnswerOrigin & { roles: string[] };

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
        if (this.options.passkeyPage !== undefined) {
          const query = new URLSearchParams({
            task: item.taskId,
            key: item.key,
            subject: item.subjectDigest,
            // What the question shows: the page shows it, and signs only the digest it computes of it.
            shown: Buffer.from(JSON.stringify(input.subject ?? null), 'utf8').toString('base64url'),
            run: item.run!,
            ...(item.challenge && { challenge: item.challenge }),
          });
          item.passkeyLink = `${this.options.passkeyPage}?${query.toString()}`;
        }
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
    await this.checkOwnSignature(taskId, originalRunId, input, checked, origin);
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
    try {
      // One write of this process on the run the question was read from, so the answer reads back at once here.
      const { closes, ...taken } = await core.writing(taskId, run, async () => {
        let runId = run.runId;
        for (let moves = 0; ; moves++) {
          try {
            return { value: await send(runId), onBasis: runId === run.runId };
          } catch (error) {
            // A reset ended the run it was sent to: the answer goes to the task's current run (the same task: the
            // same original run, which the seal and the record name), never into a void.
            const current =
              moves < MAX_RUN_MOVES && isRunEnded(error)
                ? await this.currentRunOf(taskId, input, originalRunId, runId, deadline)
                : undefined;
            if (current === undefined) throw error;
            log.warn('decision sent to the run that replaced the one it was read from', { taskId, key, from: runId, to: current });
            runId = current;
          }
        }
      });
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
   * Refuses a decision whose own signature does not verify under a key the directory lists for the person, and an
   * approval without one by someone who must sign; nothing is recorded either way.
   */
  private async checkOwnSignature(
    taskId: string,
    run: string,
    input: AddressedInput,
    response: DecisionResponse,
    by: Decider & { person: string },
  ): Promise<void> {
    const { signatures, challenges } = this.options;
    const body = { taskId, run, question: { key: input.key }, subject: digestOf(input.subject ?? null), ...decisionOf(response) };
    const scope = { taskId, run, key: input.key, person: by.person };
    const statement = () => JSON.stringify(statementOf(body, { version: 2, ...(challenges && { challenge: challenges.issue(scope) }) }));
    if (response.signature === undefined) {
      if (body.decision === 'approve' && signatures?.mustSign(by.person, by.roles)) {
        throw new AnswerRefusedError(
          `You must sign your approval with your own key: sign the statement ${statement()} ` +
            '(temporal-mcp-tasks approvals sign) and answer again with it as signature',
        );
      }
      return;
    }
    if (!signatures) return;
    const check = checkApproverSignature({ ...body, approverSignature: response.signature } as DecisionRecordBody, by.person, signatures);
    if (check.status === 'unknown-key') {
      throw new AnswerRefusedError(
        `Your signature is made with key ${check.keyId}, which the approvers directory does not list for ${by.person}; ask its keeper to add your public key`,
      );
    }
    if (check.status === 'invalid') {
      throw new AnswerRefusedError(`Your signature does not verify: sign exactly the statement ${statement()}`);
    }
    // A statement that names no run would count for any run of this task id: only those made before are kept.
    if (check.status === 'valid' && check.version !== 2) {
      throw new AnswerRefusedError(`Your signature is over a statement that names no run (version 1): sign the statement ${statement()}`);
    }
    const { signature } = response;
    if (signature.alg === 'webauthn' && signature.challenge === undefined) {
      throw new AnswerRefusedError(`A passkey signs a challenge this server issued: sign the statement ${statement()}`);
    }
    if (signature.challenge !== undefined) {
      if (!challenges) throw new AnswerRefusedError('This server issues no challenges: sign the statement without one');
      let problem: string | undefined;
      try {
        problem = await challenges.take(signature.challenge, scope);
      } catch (error) {
        throw new AnswerRefusedError(
          `Your signature's challenge cannot be checked now (${(error as Error).message}); answer again in a moment`,
        );
      }
      if (problem) throw new AnswerRefusedError(`Your signature does not count: ${problem}. Sign the statement ${statement()}`);
    }
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
      .decisions!.appendClose(taskId, { run, key: input.key }, (seq, prev) => ({
        ...recordHead(taskId, input, run, seq, prev),
        decision: 'close',
        outcome,
        required: input.audience.required ?? 1,
        by: { principal: by.principal, person: by.person, auth: by.auth, roles: [...by.roles] },
        at: new Date().toISOString(),
        via: CLOSE_VIA.answer,
      }))
      .catch((error: Error) => log.error(`a question's close could not be recorded: ${error.message}`, { taskId, key: input.key }));
  }

  /**
   * The run of `taskId` running now, when it is not `tried`, belongs to the same task (its original run is
   * `originalRunId`: a reset of it) and asks the very question `input` the person answered: the same key open, the same
   * message, subject and quorum. Undefined otherwise: an answer never goes to a question it was not given for.
   */
  private async currentRunOf(
    taskId: string,
    input: AddressedInput,
    originalRunId: string,
    tried: string,
    deadline: number,
  ): Promise<string | undefined> {
    const { core } = this;
    try {
      // A run a reset just made shows its questions once its first workflow task ran: it is read again until then.
      for (;;) {
        const current = await retryWithBackoff(() => core.run(taskId), {
          isRetryable: isTemporalUnavailable,
          deadline,
        });
        if (!current.running || current.runId === tried) return undefined;
        const original = await core.originalRunIdOf(current);
        if (original !== originalRunId) return undefined;
        const open = (current.published?.awaiting ?? []).find((candidate) => candidate.key === input.key);
        if (open !== undefined) {
          const same =
            open.request.message === input.request.message &&
            (open.audience.required ?? 1) === (input.audience.required ?? 1) &&
            digestOf(open.subject ?? null) === digestOf(input.subject ?? null);
          return same ? current.runId : undefined;
        }
        if (Date.now() + QUESTION_READ_INTERVAL_MS >= deadline) return undefined;
        await sleep(QUESTION_READ_INTERVAL_MS);
      }
    } catch {
      return undefined;
    }
  }
}

/** What the person is told of their decision's record when the workflow did not take it (and no void took it back). */
function stillOnRecord(decision: DecisionRecordBody['decision']): string {
  switch (decision) {
    case 'reject':
      return 'Your rejection stays on record all the same (signed, in the decision store): nothing is paid on this question.';
    case 'decline':
      return 'Your refusal stays on record all the same (signed, in the decision store): nothing is paid on this question.';
    default:
      return 'Your decision is in the decision store, signed; it counts only if the workflow takes it.';
  }
}

/** How often the run that replaced another is read while its questions are not shown yet. */
const QUESTION_READ_INTERVAL_MS = 200;

/** How many times one answer follows its task to a run that replaced the one it was sent to. */
const MAX_RUN_MOVES = 5;

/** Decisions a void may withdraw, when the workflow refused them: never a rejection, a decline or an expiry. */
const VOIDABLE = new Set<string>(['approve', 'delegate']);

/** What every record of a question begins with: its task and run, its place in the chain, the question, what was shown. */
function recordHead(taskId: string, input: AddressedInput, run: string, seq: number, prev: string | null) {
  return {
    v: 1 as const,
    taskId,
    run,
    seq,
    prev,
    question: { key: input.key, message: input.request.message },
    shown: input.subject ?? null,
  };
}

/** The decision record of one person's answer (see `contract/decision-records.ts`). */
function recordBody(
  taskId: string,
  input: AddressedInput,
  response: DecisionResponse & { delegateRoles?: string[] },
  by: Decider & { person: string; auth: string },
  run: string,
  seq: number,
  prev: string | null,
): Omit<DecisionRecordBody, 'subject'> {
  const actingAs = input.audience.principals?.some((name) => name === by.principal || name === by.person)
    ? 'named'
    : by.roles.find((role) => input.audience.roles?.includes(role));
  return {
    ...recordHead(taskId, input, run, seq, prev),
    ...decisionOf(response),
    ...(response.signature && { approverSignature: response.signature }),
    by: { principal: by.principal, person: by.person, auth: by.auth, roles: [...by.roles], ...(actingAs && { actingAs }) },
    ...(response.action === 'accept' && response.content && { content: response.content }),
    ...(response.comment !== undefined && { comment: response.comment }),
    at: new Date().toISOString(),
    via: by.via ?? 'approvals_answer',
  };
}

/** What a response decides, as its record says it: the decision, and for a hand-over to whom. */
function decisionOf(response: DecisionResponse): { decision: 'approve' | 'reject' | 'decline' | 'delegate'; delegatedTo?: string } {
  if (response.action === 'delegate') return { decision: 'delegate', delegatedTo: String(response.content?.to) };
  if (response.action === 'decline') return { decision: 'decline' };
  return { decision: response.content?.decision === 'reject' ? 'reject' : 'approve' };
}

/**
 * The response as it is sealed: a hand-over names only whom to (someone eligible for the question, with the roles the
 * deployment knows they hold), an answer only the form's fields, checked.
 */
function checkedResponse(
  input: AddressedInput,
  response: DecisionResponse,
  from: { principal: string; person: string },
  requesterPerson: string,
  rolesOf: (principal: string) => string[] | undefined,
): DecisionResponse & { delegateRoles?: string[] } {
  if (response.action === 'delegate') {
    const to = response.content?.to;
    const toRoles = typeof to === 'string' ? rolesOf(to) : undefined;
    const problem = delegationRefusal(input, from, to, toRoles, requesterPerson);
    if (problem) throw new AnswerRefusedError(`${problem[0].toUpperCase()}${problem.slice(1)}`);
    return { ...response, content: { to: to! }, ...(toRoles && { delegateRoles: toRoles }) };
  }
  if (response.action === 'accept') {
    const content = formFieldsOf(input.request.requestedSchema, response.content ?? {});
    const problem = checkFormContent(input.request.requestedSchema, content);
    if (problem) throw new AnswerRefusedError(`The answer does not fit the question: ${problem}`);
    return { ...response, content: content as InputContent };
  }
  return response;
}

function capitalized(text: string): string {
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}

/** Visibility pages one inbox call reads at most to fill a page the checks emptied. */
const INBOX_FILL_PAGES = 10;

/** How long one inbox call reads further pages to fill one the checks emptied. */
const INBOX_FILL_MS = 5_000;

/** A person's name as it may stand in a visibility query's string literal. */
const QUERY_SAFE_NAME = /^[A-Za-z0-9._:@+ -]{1,200}$/;

/**
 * The visibility query of an inbox: running tasks awaiting the principal or one of the roles, that do not say the
 * person is done with every question they ask (`done:<person>`, see `AddressedQuestions.keywords`). A person's name
 * the query cannot carry safely leaves that clause out: the checks after the query still apply.
 */
export function inboxQuery(principal: string, roles: readonly string[], person: string): string {
  const keywords = [`principal:${principal}`, ...roles.filter(isValidRole).map((role) => `role:${role}`)];
  const addressed = `${AWAITING_SEARCH_ATTRIBUTE} IN (${keywords.map((keyword) => `'${keyword}'`).join(', ')})`;
  const notDone = QUERY_SAFE_NAME.test(person) ? ` AND ${AWAITING_SEARCH_ATTRIBUTE} NOT IN ('done:${person}')` : '';
  return `${addressed}${notDone} AND ExecutionStatus = 'Running'`;
}

/** What the inbox shows of the question `input` of task `taskId` (run by `tool`, where known). */
export function inboxItemOf(taskId: string, tool: string | undefined, input: AddressedInput): InboxItem {
  return {
    taskId,
    key: input.key,
    ...(tool && { tool }),
    message: input.request.message,
    requestedSchema: input.request.requestedSchema,
    ...(input.subject !== undefined && { subject: input.subject }),
    subjectDigest: digestOf(input.subject ?? null),
    requester: input.requester,
    required: input.audience.required ?? 1,
    accepted: input.answers.filter((answer) => answer.action === 'accept').length,
    askedAt: input.askedAt,
    ...(escalatesAt(input) && { escalatesAt: escalatesAt(input) }),
    ...(deadlineOf(input) && { dueAt: deadlineOf(input) }),
  };
}

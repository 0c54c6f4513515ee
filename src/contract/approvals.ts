/**
 * The approval half of the task contract: questions a workflow addresses to principals and roles other than the
 * task's own, who may answer them, how answers are recorded, and the notifications sent about them. Plain data and
 * pure rules, safe in the workflow sandbox: the workflow's Update validator and handler, and the bridge's inbox, use
 * the same rules. Wire names are stored in workflow histories: never rename them.
 */
import type { FormInputRequest, InputContent } from './elicitation';
import type { SignedDecisionRecord } from './decision-records';
import type { InputAudience } from './audience';

/**
 * KeywordList search attribute a workflow keeps while questions addressed to others are open: `principal:<name>` and
 * `role:<name>` for each audience, so an approver's inbox is one visibility query. Empty when nothing is open.
 */
export const AWAITING_SEARCH_ATTRIBUTE = 'McpAwaiting';

/** Update name carrying an answer to an addressed question ({@link AddressedInput}); validated, then sealed-checked. */
export const ANSWER_UPDATE_NAME = 'mcp.answer';

export type { InputAudience } from './audience';

/**
 * Who else is asked once an addressed question is due and still open: added to its audience (those asked first may
 * still answer), with a new due time or none.
 */
export interface InputEscalation {
  principals?: string[];
  roles?: string[];
  /** ISO 8601: when the escalated question is due; past it the question ends `overdue`. */
  dueAt?: string;
}

/** One person's answer to an addressed question, as the workflow recorded it. */
export interface AnswerRecord {
  principal: string;
  /**
   * The person behind the principal, as the bridge resolved it (the approvers directory, or {@link defaultPersonOf}):
   * four eyes count people, not credentials. Absent in answers recorded before people were resolved.
   */
  person?: string;
  roles: string[];
  /** `delegate`: the person handed the question to `delegatedTo`, who is asked in their place. */
  action: 'accept' | 'decline' | 'delegate';
  delegatedTo?: string;
  content?: InputContent;
  comment?: string;
  /** ISO 8601: when the bridge took it. */
  at: string;
  /** How it came (see {@link AnswerOrigin}). */
  via?: string;
  /** The bridge's signed decision record of this answer (see `records/`), as kept in the decision store. */
  record?: SignedDecisionRecord;
  /** In the answer of the Update that took it only (never kept in the task state): the question it closed, and how. */
  closes?: 'accepted' | 'declined';
}

/** A question the workflow addressed to others, as published in {@link PublishedTaskState.awaiting}. */
export interface AddressedInput {
  key: string;
  request: FormInputRequest;
  audience: InputAudience;
  /** The principal whose task this is (excluded unless `audience.allowRequester`). */
  requester: string;
  /**
   * What the question is about, as plain JSON the approver is shown beside the message (the invoice: vendor, lines,
   * amounts, the ERP check). Its digest goes into every signed decision record, and the effect (a payment) is checked
   * against it.
   */
  subject?: unknown;
  /** Answers taken so far, oldest first. */
  answers: AnswerRecord[];
  /** ISO 8601: when the question was asked. */
  askedAt: string;
  /**
   * ISO 8601: the deadline. Past it, the question is escalated when it has an escalation not yet made, and ends
   * `overdue` otherwise. See {@link escalatesAt} and {@link deadlineOf} for the words people are shown.
   */
  dueAt?: string;
  /** ISO 8601: when the audience is reminded (a notification), if nobody closed the question by then. */
  followUpAt?: string;
  /** Who is added when the question is due; once they are, `escalated` is true and `dueAt` is the escalation's. */
  escalation?: InputEscalation;
  escalated?: boolean;
}

/**
 * Name of the activity a workflow calls to tell people about an addressed question (asked, reminded, escalated,
 * delegated): input {@link DecisionNotification}. The worker decides where it goes (the sample writes JSON lines to an
 * outbox an operator wires to mail or chat). Delivery is at least once: `id` is the same on every retry.
 */
export const NOTIFY_ACTIVITY = 'mcpNotify';

/** Patch id under which a workflow sends {@link NOTIFY_ACTIVITY} notifications for its addressed questions. */
export const DECISION_NOTIFICATIONS_PATCH = 'mcp-decision-notifications';

/** One notification about an addressed question. */
export interface DecisionNotification {
  /** Stable across retries: `<taskId>/<key>/<kind>/<n>`. */
  id: string;
  kind: 'asked' | 'reminder' | 'escalated' | 'delegated' | 'decided';
  taskId: string;
  key: string;
  /** The question as the workflow asked it. */
  message: string;
  /** Who is asked now (after an escalation or delegation, with those added). */
  audience: InputAudience;
  /** The principal whose task this is: never notified as an approver. */
  requester?: string;
  /** People who answered or handed the question on: not asked again. */
  answeredBy?: string[];
  /** What the question is about ({@link AddressedInput.subject}). */
  subject?: unknown;
  accepted: number;
  required: number;
  /** ISO 8601: when the question escalates to more people, if it will. */
  escalatesAt?: string;
  /** ISO 8601: the deadline, past which the question ends unanswered. */
  dueAt?: string;
  /** `delegated`: who handed it, and to whom. */
  delegatedBy?: string;
  delegatedTo?: string;
  /** `decided`: how the question ended; `cancelled`: the task was cancelled while it waited. */
  outcome?: 'accepted' | 'declined' | 'overdue' | 'cancelled';
  /** ISO 8601, workflow time. */
  at: string;
}

/**
 * The person a principal stands for when no directory says otherwise: the principal without the `oauth:` prefix of
 * OAuth principals, so that the static `carol` and `oauth:carol` are one person. Pure.
 */
export function defaultPersonOf(principal: string): string {
  return principal.startsWith('oauth:') ? principal.slice('oauth:'.length) : principal;
}

/** The person who gave an answer: as the bridge resolved it, or by the default rule. */
export function personOfAnswer(answer: Pick<AnswerRecord, 'principal' | 'person'>): string {
  return answer.person ?? defaultPersonOf(answer.principal);
}

/**
 * What an answer to an approval form (a `decision` of `approve` or `reject`) decided: handed on, declined, approved,
 * or, for anything but `approve`, rejected.
 */
export function approvalDecisionOf(answer: Pick<AnswerRecord, 'action' | 'content'>): 'approve' | 'reject' | 'decline' | 'delegate' {
  if (answer.action === 'delegate' || answer.action === 'decline') return answer.action;
  return answer.content?.decision === 'approve' ? 'approve' : 'reject';
}

/** ISO 8601: when an open question escalates to more people, or undefined when it will not. */
export function escalatesAt(input: AddressedInput): string | undefined {
  return input.escalation && !input.escalated ? input.dueAt : undefined;
}

/** ISO 8601: the deadline past which an open question ends unanswered, or undefined when it has none. */
export function deadlineOf(input: AddressedInput): string | undefined {
  if (input.escalation && !input.escalated) return input.escalation.dueAt;
  return input.dueAt;
}

/** Who answers or is handed a question: a principal, its roles, and the person behind it (by default the rule's). */
export interface Answerer {
  principal: string;
  roles: readonly string[];
  person?: string;
}

/** Refusals people see, one spelling each (the bridge and the workflow say the same). */
export const REFUSALS = {
  notAddressed: 'this question is not addressed to you',
  ownRequest: 'this is your own request: someone else must approve it',
  excluded: 'you are excluded from answering this question',
  answered: 'you have answered this question already',
} as const;

/**
 * Why `who` may not answer `input` now, or undefined when they may. People count, not credentials: a person who
 * answered through one principal may not answer again through another, and the requester's person never answers
 * unless the audience allows it. `requesterPerson`: the requester's person when a directory says (default rule
 * otherwise). Pure: the workflow's Update validator, its handler (on the sealed identity) and the bridge use it.
 */
export function answerRefusal(input: AddressedInput, who: Answerer, requesterPerson?: string): string | undefined {
  const { audience } = input;
  const person = who.person ?? defaultPersonOf(who.principal);
  const isRequester = who.principal === input.requester || person === (requesterPerson ?? defaultPersonOf(input.requester));
  if (isRequester && !audience.allowRequester) return REFUSALS.ownRequest;
  const named = audience.principals?.some((name) => name === who.principal || name === person) ?? false;
  const inRole = who.roles.some((role) => audience.roles?.includes(role));
  if (!named && !inRole) return REFUSALS.notAddressed;
  if (audience.exclude?.some((name) => name === who.principal || name === person)) return REFUSALS.excluded;
  if (input.answers.some((answer) => answer.principal === who.principal || personOfAnswer(answer) === person)) return REFUSALS.answered;
  return undefined;
}

/**
 * Why `from` may not hand `input` to `to`, or undefined when they may. The person handed it must be eligible for the
 * question (named in it or in its escalation, or holding one of their roles: `toRoles`, as the bridge knows them),
 * someone else, not excluded, not the requester (unless allowed), and not have answered or handed it on already.
 */
export function delegationRefusal(
  input: AddressedInput,
  from: Pick<Answerer, 'principal' | 'person'>,
  to: unknown,
  toRoles: readonly string[] | undefined,
  requesterPerson?: string,
): string | undefined {
  if (typeof to !== 'string' || to.trim() === '' || to.length > 200) return 'say whom to hand the question to (delegateTo, a principal)';
  const toPerson = defaultPersonOf(to);
  if (to === from.principal || toPerson === (from.person ?? defaultPersonOf(from.principal)))
    return 'you cannot hand a question to yourself';
  const { audience, escalation } = input;
  if (audience.exclude?.some((name) => name === to || name === toPerson))
    return `cannot hand it to ${to}: they are excluded from answering it`;
  if ((to === input.requester || toPerson === (requesterPerson ?? defaultPersonOf(input.requester))) && !audience.allowRequester) {
    return `cannot hand it to ${to}: it is their own request`;
  }
  if (input.answers.some((answer) => answer.principal === to || personOfAnswer(answer) === toPerson)) {
    return `cannot hand it to ${to}: they have answered or handed it on already`;
  }
  const named = [...(audience.principals ?? []), ...(escalation?.principals ?? [])].some((name) => name === to || name === toPerson);
  const roles = [...(audience.roles ?? []), ...(escalation?.roles ?? [])];
  if (!named && !(toRoles ?? []).some((role) => roles.includes(role))) {
    return `cannot hand it to ${to}: they are not known to hold ${roles.length ? `the role ${roles.join(' or ')}` : 'a place in this question'}`;
  }
  return undefined;
}

/** The search attribute values an open addressed question stands for (see {@link AWAITING_SEARCH_ATTRIBUTE}). */
export function awaitingKeywords(audience: InputAudience): string[] {
  return [...(audience.principals ?? []).map((name) => `principal:${name}`), ...(audience.roles ?? []).map((name) => `role:${name}`)];
}

/**
 * The wire contract between a workflow and the MCP bridge.
 *
 * A workflow that wants to be more than "working until done" publishes its task state in the memo key
 * {@link TASK_STATE_MEMO} and receives answers to its input requests through the signal {@link RESPOND_SIGNAL}.
 * Everything here is plain data and Temporal message definitions, so it is safe in the workflow sandbox and
 * speakable from any Temporal SDK. Wire names are stored in workflow histories: never rename them.
 */
import { defineSignal } from '@temporalio/workflow';

/** Memo key holding the workflow's {@link PublishedTaskState}. */
export const TASK_STATE_MEMO = 'mcpTask';

/** Memo key the bridge writes at start: which tool started the workflow, with the task's ttl and poll interval. */
export const TASK_META_MEMO = 'mcpMeta';

/** Keyword search attribute naming the principal a task belongs to; set by the bridge at start. */
export const PRINCIPAL_SEARCH_ATTRIBUTE = 'McpPrincipal';

/**
 * KeywordList search attribute a workflow keeps while questions addressed to others are open: `principal:<name>` and
 * `role:<name>` for each audience, so an approver's inbox is one visibility query. Empty when nothing is open.
 */
export const AWAITING_SEARCH_ATTRIBUTE = 'McpAwaiting';

/** Update name carrying an answer to an addressed question ({@link AddressedInput}); validated, then sealed-checked. */
export const ANSWER_UPDATE_NAME = 'mcp.answer';

/**
 * `ApplicationFailure` type a workflow fails with when its call should end with a JSON-RPC error (the task `failed`)
 * instead of a tool error; `details[0].code` is the JSON-RPC code (`-32603` when absent), the message its message.
 */
export const PROTOCOL_ERROR_FAILURE_TYPE = 'McpProtocolError';

/** Signal name carrying an {@link InputResponse} to the workflow. */
export const RESPOND_SIGNAL_NAME = 'mcp.respond';

/** Delivers the user's answer to a pending input request. Durable once the signal call returns. */
export const respondSignal = defineSignal<[InputResponse]>(RESPOND_SIGNAL_NAME);

/** Non-terminal statuses a running workflow may publish; terminal ones come from the execution itself. */
export const PUBLISHED_STATUSES = ['working', 'input_required'] as const;

/** A status a running workflow may publish. */
export type PublishedStatus = (typeof PUBLISHED_STATUSES)[number];

/** A primitive property of a form-mode elicitation schema (MCP 2025-11-25 `PrimitiveSchemaDefinition`). */
export type FormProperty =
  | { type: 'string'; title?: string; description?: string; minLength?: number; maxLength?: number; default?: string }
  | { type: 'string'; enum: string[]; enumNames?: string[]; title?: string; description?: string; default?: string }
  | { type: 'number' | 'integer'; title?: string; description?: string; minimum?: number; maximum?: number; default?: number }
  | { type: 'boolean'; title?: string; description?: string; default?: boolean };

/** A form-mode elicitation request, as `elicitation/create` params without the related-task `_meta`. */
export interface FormInputRequest {
  mode: 'form';
  message: string;
  requestedSchema: {
    type: 'object';
    properties: Record<string, FormProperty>;
    required?: string[];
  };
}

/** A URL-mode elicitation request: the user is sent to `url` (to sign, pay, log in) and says whether they went. */
export interface UrlInputRequest {
  mode: 'url';
  message: string;
  url: string;
  /** Identifies the interaction at the far end; unique per request. */
  elicitationId: string;
}

/** An input request the workflow is waiting on. `key` is unique for the workflow's whole life. */
export interface PendingInput {
  key: string;
  request: FormInputRequest | UrlInputRequest;
}

/** How far the work is, as MCP progress: `progress` only grows; `total` when known. */
export interface PublishedProgress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * Something a person may do to the running workflow now, offered by the workflow itself: a call of a declared tool
 * with the task id and these arguments (the task view shows one button per action). Published while it is on offer.
 */
export interface PublishedAction {
  /** A tool the server declares; it is called with `{ taskId, ...arguments }`. */
  tool: string;
  arguments?: Record<string, string | number | boolean>;
  /** The button's label, e.g. "Pay LI-2 now". */
  title: string;
  description?: string;
}

/** The state a running workflow publishes in its memo, rewritten on every change. */
export interface PublishedTaskState {
  status: PublishedStatus;
  statusMessage?: string;
  /** ISO 8601 time of the last change, in workflow time. */
  updatedAt: string;
  /**
   * Every input request the workflow waits on, in the order it asked them; present exactly when `status` is
   * `input_required`. Keys are unique for the workflow's whole life.
   */
  inputs?: PendingInput[];
  /**
   * The first of `inputs`. Written for readers that know one pending input only; a workflow that publishes one input
   * may write this field alone (the contract before `inputs` existed), and it is still read that way.
   */
  input?: PendingInput;
  progress?: PublishedProgress;
  /** What may be done to the workflow now (see {@link PublishedAction}); absent or empty when nothing is on offer. */
  actions?: PublishedAction[];
  /**
   * Written only by a workflow that saw its cancel request, as it winds down: what it did before it stopped (e.g.
   * "Cancelled after paying LI-1 (EUR 120.50); LI-2 was not paid."). The bridge shows it as the cancelled task's status
   * message and in its `tasks/result` error, instead of a bare "Cancelled.".
   */
  cancelledStatusMessage?: string;
  /** The last few answers the workflow refused for want of a valid seal, newest last: a record for operators. */
  refusedAnswers?: RefusedAnswer[];
  /**
   * Questions addressed to others that are open (see {@link AddressedInput}): the task stays `working` while only these
   * wait; the bridge shows them in the inboxes of those they are addressed to, never to the requester.
   */
  awaiting?: AddressedInput[];
}

/** The input requests a published state waits on: `inputs`, or the single `input` of older workflows. */
export function pendingInputsOf(state: PublishedTaskState | undefined): PendingInput[] {
  if (state?.status !== 'input_required') return [];
  if (Array.isArray(state.inputs)) return state.inputs;
  return state.input ? [state.input] : [];
}

/** Content of an accepted form: the values keyed by property name. */
export type InputContent = Record<string, string | number | boolean | string[]>;

/** Who gave an answer, as the bridge that took it knows them. */
export interface AnswerOrigin {
  /** The principal the bridge authenticated (e.g. `static:alice`, `oauth:…`, `local`). */
  principal: string;
  /** The principal's roles at that moment, from its credentials (addressed questions only). */
  roles?: string[];
  /** How the answer came: `elicitation`, `input_required` (a 2026-07-28 retried call), `task_respond`. */
  via?: string;
}

/**
 * The answer to an input request, shaped after the MCP `ElicitResult`. The bridge also sends who gave it and a seal:
 * `sealed` is the JSON text of a {@link SealedAnswer} and `proof` a MAC over it that only holders of the bridge's key
 * can make. A workflow acts on the sealed copy once a worker has checked the proof ({@link VERIFY_ANSWER_ACTIVITY});
 * the plain fields are there for readers of the history.
 */
export interface InputResponse {
  key: string;
  /** `delegate` (addressed questions only): hands the question to the principal named in `content.to`. */
  action: 'accept' | 'decline' | 'cancel' | 'delegate';
  content?: InputContent;
  answeredBy?: AnswerOrigin;
  /** ISO 8601 time the bridge took the answer. */
  answeredAt?: string;
  /** A note the person gave with the answer (addressed questions), at most 2,000 characters. */
  comment?: string;
  sealed?: string;
  proof?: string;
}

/**
 * Who may answer a question addressed to someone other than the task's principal: anyone named in `principals` or
 * holding one of `roles`, except those in `exclude` and, unless `allowRequester`, the task's own principal.
 */
export interface InputAudience {
  principals?: string[];
  roles?: string[];
  exclude?: string[];
  allowRequester?: boolean;
  /**
   * Distinct people whose acceptance closes the question: 1 (any one, the default) or more. "All named" is the number
   * of `principals`, with no `roles`.
   */
  required?: number;
}

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
}

/** A question the workflow addressed to others, as published in {@link PublishedTaskState.awaiting}. */
export interface AddressedInput {
  key: string;
  request: FormInputRequest;
  audience: InputAudience;
  /** The principal whose task this is (excluded unless `audience.allowRequester`). */
  requester: string;
  /** Answers taken so far, oldest first. */
  answers: AnswerRecord[];
  /** ISO 8601: when the question was asked, and when it is due (if it is). */
  askedAt: string;
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
  kind: 'asked' | 'reminder' | 'escalated' | 'delegated';
  taskId: string;
  key: string;
  /** The question as the workflow asked it. */
  message: string;
  /** Who is asked now (after an escalation or delegation, with those added). */
  audience: InputAudience;
  accepted: number;
  required: number;
  dueAt?: string;
  /** ISO 8601, workflow time. */
  at: string;
}

/**
 * Why `principal` with `roles` may not answer `input` now, or undefined when they may. Pure: the workflow's Update
 * validator, its handler (on the sealed identity) and the bridge's inbox all use it.
 */
export function answerRefusal(input: AddressedInput, principal: string, roles: readonly string[]): string | undefined {
  const { audience } = input;
  const named = audience.principals?.includes(principal) ?? false;
  const inRole = roles.some((role) => audience.roles?.includes(role));
  if (!named && !inRole) return 'this question is not addressed to you';
  if (audience.exclude?.includes(principal)) return 'you are excluded from answering this question';
  if (principal === input.requester && !audience.allowRequester) return 'you asked for this, so someone else must answer it';
  if (input.answers.some((answer) => answer.principal === principal)) return 'you have answered this question already';
  return undefined;
}

/**
 * Why `from` may not hand `input` to `to`, or undefined when they may: the person handed it must be someone else who
 * is not excluded, not the requester (unless allowed), and has not answered or handed it on already.
 */
export function delegationRefusal(input: AddressedInput, from: string, to: unknown): string | undefined {
  if (typeof to !== 'string' || to.trim() === '' || to.length > 200) return 'say whom to hand the question to (content.to, a principal)';
  if (to === from) return 'you cannot hand a question to yourself';
  if (input.audience.exclude?.includes(to)) return `cannot hand it to ${to}: they are excluded from answering it`;
  if (to === input.requester && !input.audience.allowRequester) return `cannot hand it to ${to}: they asked for this and may not answer it`;
  if (input.answers.some((answer) => answer.principal === to)) return `cannot hand it to ${to}: they have answered or handed it on already`;
  return undefined;
}

/** The search attribute values an open addressed question stands for (see {@link AWAITING_SEARCH_ATTRIBUTE}). */
export function awaitingKeywords(audience: InputAudience): string[] {
  return [...(audience.principals ?? []).map((name) => `principal:${name}`), ...(audience.roles ?? []).map((name) => `role:${name}`)];
}

/** What the bridge seals: one answer, for one key of one run. */
export interface SealedAnswer {
  v: 1;
  workflowId: string;
  /**
   * The run's original run id (`originalExecutionRunId` of its start event): its run id, kept across resets, so that a
   * reset run replays the answers it took before and takes those Temporal reapplies; another run's differs.
   */
  originalRunId: string;
  key: string;
  action: 'accept' | 'decline' | 'delegate';
  content?: InputContent;
  comment?: string;
  answeredBy: AnswerOrigin;
  answeredAt: string;
}

/**
 * Name of the local activity a worker registers to check an answer's proof: input {@link VerifyAnswerInput}, result
 * {@link VerifyAnswerResult}. The proof is `v1.<key id>.<mac>`, `mac` the unpadded base64url HMAC-SHA256 of the
 * `sealed` text (UTF-8) under the answer key, which is HMAC-SHA256(bridge key, "temporal-mcp-tasks answer key v1");
 * the key id is the first 8 characters of the unpadded base64url SHA-256 of the answer key. Every SDK can implement it.
 */
export const VERIFY_ANSWER_ACTIVITY = 'mcpVerifyAnswer';

/** Patch id under which a workflow checks seals; histories from before it took answers unchecked and still replay. */
export const SEALED_ANSWERS_PATCH = 'mcp-sealed-answers';

export interface VerifyAnswerInput {
  sealed: string;
  proof: string;
}

export interface VerifyAnswerResult {
  ok: boolean;
  /** Why not, when not. */
  reason?: string;
}

/** An answer the workflow refused (no seal, a bad proof, another run's), as kept in the published state. */
export interface RefusedAnswer {
  key: string;
  reason: string;
  /** ISO 8601, workflow time. */
  at: string;
}

/**
 * Reads a seal's text: the answer it carries when it is well formed and made for this run, or why not. Pure and
 * deterministic; the proof is checked apart, by {@link VERIFY_ANSWER_ACTIVITY}.
 */
export function openSealedAnswer(sealed: unknown, run: { workflowId: string; originalRunId: string }): SealedAnswer | string {
  if (typeof sealed !== 'string') return 'it carries no seal';
  let parsed: unknown;
  try {
    parsed = JSON.parse(sealed);
  } catch {
    return 'its seal is not JSON';
  }
  const answer = parsed as Partial<SealedAnswer> | null;
  if (typeof answer !== 'object' || answer === null || answer.v !== 1) return 'its seal is of an unknown version';
  if (answer.workflowId !== run.workflowId || answer.originalRunId !== run.originalRunId) return 'its seal was made for another run';
  if (typeof answer.key !== 'string' || !['accept', 'decline', 'delegate'].includes(answer.action as string))
    return 'its seal has no answer';
  if (typeof answer.answeredBy?.principal !== 'string' || typeof answer.answeredAt !== 'string')
    return 'its seal does not say who answered';
  return answer as SealedAnswer;
}

/** What the bridge stores in {@link TASK_META_MEMO} when it starts a workflow. */
export interface TaskMeta {
  tool: string;
  /** Retention promised to the client, in ms, or null for unlimited. */
  ttl: number | null;
  pollInterval: number;
  /** ISO 8601 creation time the bridge announced when it started the workflow (absent on older tasks). */
  createdAt?: string;
  /** SHA-256 of the validated arguments (canonical JSON), when the call carried an idempotency key. */
  argumentsDigest?: string;
  /** The bridge's mark (an HMAC over workflow id, principal and tool): only workflows carrying it are served as tasks. */
  marker?: string;
}

/**
 * Checks accepted form content against the request's schema: required fields, types, enums, bounds.
 * Returns the first problem as a sentence a person can act on, or undefined when the content fits.
 */
export function checkFormContent(schema: FormInputRequest['requestedSchema'], content: unknown): string | undefined {
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return 'the answer must be an object';
  const values = content as Record<string, unknown>;
  for (const name of schema.required ?? []) {
    if (values[name] === undefined) return `"${name}" is required`;
  }
  for (const [name, value] of Object.entries(values)) {
    const property = schema.properties[name];
    if (!property) return `"${name}" is not a field of this form`;
    const problem = checkProperty(property, value);
    if (problem) return `"${name}" ${problem}`;
  }
  return undefined;
}

function checkProperty(property: FormProperty, value: unknown): string | undefined {
  switch (property.type) {
    case 'string':
      if (typeof value !== 'string') return 'must be a string';
      if ('enum' in property && !property.enum.includes(value)) return `must be one of ${property.enum.join(', ')}`;
      if ('maxLength' in property && property.maxLength !== undefined && value.length > property.maxLength) {
        return `must be at most ${property.maxLength} characters`;
      }
      if ('minLength' in property && property.minLength !== undefined && value.length < property.minLength) {
        return `must be at least ${property.minLength} characters`;
      }
      return undefined;
    case 'number':
    case 'integer':
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (property.type === 'integer' && !Number.isInteger(value)) return 'must be a whole number';
      if (property.minimum !== undefined && value < property.minimum) return `must be at least ${property.minimum}`;
      if (property.maximum !== undefined && value > property.maximum) return `must be at most ${property.maximum}`;
      return undefined;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
  }
}

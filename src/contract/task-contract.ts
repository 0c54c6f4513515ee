/**
 * The wire contract between a workflow and the MCP bridge.
 *
 * A workflow that wants to be more than "working until done" publishes its task state in the memo key
 * {@link TASK_STATE_MEMO} and receives answers to its input requests through the signal {@link RESPOND_SIGNAL}.
 * Everything here is plain data and Temporal message definitions, so it is safe in the workflow sandbox and
 * speakable from any Temporal SDK. Wire names are stored in workflow histories: never rename them.
 */
import type { SignedDecisionRecord } from './decision-records';
import { defineSignal } from '@temporalio/workflow';
import type { AddressedInput } from './approvals';
import type { AnswerOrigin, FormInputRequest, InputContent, UrlInputRequest } from './elicitation';

export * from './elicitation';

/** Memo key holding the workflow's {@link PublishedTaskState}. */
export const TASK_STATE_MEMO = 'mcpTask';

/** Memo key the bridge writes at start: which tool started the workflow, with the task's ttl and poll interval. */
export const TASK_META_MEMO = 'mcpMeta';

/** Keyword search attribute naming the principal a task belongs to; set by the bridge at start. */
export const PRINCIPAL_SEARCH_ATTRIBUTE = 'McpPrincipal';

/**
 * Datetime search attribute a workflow sets to its own time whenever it publishes a {@link PublishedTaskState}, in the
 * same workflow task as the memo. It tells a bridge that follows tasks by their changes (`MCP_CHANGE_FEED_MS`) that the
 * task moved on, with one visibility query for all tasks instead of a history long poll each. A run that never sets
 * it is followed by its history, as before; one that sets it once must set it with every publish after.
 */
export const CHANGED_AT_SEARCH_ATTRIBUTE = 'McpChangedAt';

/** Patch id under which the TypeScript helpers stamp {@link CHANGED_AT_SEARCH_ATTRIBUTE}; older histories replay without. */
export const CHANGE_STAMPS_PATCH = 'mcp-change-stamps';

/**
 * `ApplicationFailure` type a workflow fails with when its call should end with a JSON-RPC error (the task `failed`)
 * instead of a tool error; `details[0].code` is the JSON-RPC code (`-32603` when absent), the message its message.
 */
export const PROTOCOL_ERROR_FAILURE_TYPE = 'McpProtocolError';

/** Signal name carrying an {@link InputResponse} to the workflow. */
export const RESPOND_SIGNAL_NAME = 'mcp.respond';

/** Delivers the user's answer to a pending input request. Durable once the signal call returns. */
export const respondSignal = defineSignal<[InputResponse]>(RESPOND_SIGNAL_NAME);

/**
 * Signal name of the bridge's {@link RunBinding}: sent to every run the bridge starts, before the run's first workflow
 * task. A workflow need not handle it (the bridge reads it from the history); the TypeScript helper registers a handler
 * that ignores it, and SDKs that buffer signals without a handler (Python, Go, Java, .NET) are not disturbed by it.
 */
export const BIND_SIGNAL_NAME = 'mcp.bind';

/** Carries the bridge's {@link RunBinding} to the run it started. */
export const bindSignal = defineSignal<[RunBinding]>(BIND_SIGNAL_NAME);

/**
 * The bridge's word that it started this run: `proof` is a MAC over the workflow id and the run id its start returned,
 * under a key derived from its secret key. A read of a task whose mark says it is bound serves the run only when the
 * first run of its chain holds a binding for its own run id, so a run that replaces the task (even with a copy of its
 * memo and this signal) is not the task.
 */
export interface RunBinding {
  v: 1;
  workflowId: string;
  runId: string;
  proof: string;
}

/** Non-terminal statuses a running workflow may publish; terminal ones come from the execution itself. */
export const PUBLISHED_STATUSES = ['working', 'input_required'] as const;

/** A status a running workflow may publish. */
export type PublishedStatus = (typeof PUBLISHED_STATUSES)[number];

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
  /**
   * Addressed questions that closed (the most recent ones), and the people who answered each: a repeat is told so.
   * A question whose decisions go on record says how it closed (`close`): the bridge signs that close into the
   * decision store where no answer of its own did (an expiry, a cancellation, a close its writer never wrote).
   */
  decided?: DecidedQuestion[];
}

/** A closed addressed question, as a task state publishes it (see {@link PublishedTaskState.decided}). */
export interface DecidedQuestion {
  key: string;
  people: string[];
  close?: QuestionClose;
}

/** How a question whose decisions go on record closed, as its workflow saw it. */
export interface QuestionClose {
  /** The original run id of the run that asked it (what its records name). */
  run: string;
  outcome: 'accepted' | 'declined' | 'expired' | 'cancelled';
  /** Distinct approvals it required. */
  required: number;
  /** ISO 8601, the workflow's time of the close. */
  at: string;
}

/** The input requests a published state waits on: `inputs`, or the single `input` of older workflows. */
export function pendingInputsOf(state: PublishedTaskState | undefined): PendingInput[] {
  if (state?.status !== 'input_required') return [];
  if (Array.isArray(state.inputs)) return state.inputs;
  return state.input ? [state.input] : [];
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
  /** Addressed questions: the bridge's signed decision record of this answer. */
  record?: SignedDecisionRecord;
  /** A hand-over: the roles the bridge knows the person handed to holds. */
  delegateRoles?: string[];
  sealed?: string;
  proof?: string;
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
  /** Addressed questions: the bridge's signed decision record of this answer, as it keeps it in the decision store. */
  record?: SignedDecisionRecord;
  /** A hand-over: the roles the bridge knows the person handed to holds (from its directory or credentials). */
  delegateRoles?: string[];
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

/** What {@link VERIFY_ANSWER_ACTIVITY} is given: an answer's sealed text and the bridge's proof of it. */
export interface VerifyAnswerInput {
  sealed: string;
  proof: string;
}

/** What {@link VERIFY_ANSWER_ACTIVITY} answers: whether the proof holds for the sealed text. */
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

/** A seal's text, parsed; or why it cannot be read. */
function parseSeal(sealed: unknown): { value: unknown } | string {
  if (typeof sealed !== 'string') return 'it carries no seal';
  try {
    return { value: JSON.parse(sealed) };
  } catch {
    return 'its seal is not JSON';
  }
}

/**
 * Reads a seal's text: the answer it carries when it is well formed and made for this run, or why not. Pure and
 * deterministic; the proof is checked apart, by {@link VERIFY_ANSWER_ACTIVITY}.
 */
export function openSealedAnswer(sealed: unknown, run: { workflowId: string; originalRunId: string }): SealedAnswer | string {
  const parsed = parseSeal(sealed);
  if (typeof parsed === 'string') return parsed;
  const answer = parsed.value as (Partial<SealedAnswer> & { kind?: unknown }) | null;
  if (typeof answer !== 'object' || answer === null || answer.v !== 1) return 'its seal is of an unknown version';
  // An action's seal is proved with the same key: it never answers a question.
  if (answer.kind !== undefined) return 'its seal is not an answer seal';
  if (answer.workflowId !== run.workflowId || answer.originalRunId !== run.originalRunId) return 'its seal was made for another run';
  if (typeof answer.key !== 'string' || !['accept', 'decline', 'delegate'].includes(answer.action as string))
    return 'its seal has no answer';
  if (typeof answer.answeredBy?.principal !== 'string' || typeof answer.answeredAt !== 'string')
    return 'its seal does not say who answered';
  return answer as SealedAnswer;
}

/**
 * What the bridge seals when a person asks a workflow to do something it offers (an Update, such as the invoice's
 * release of a scheduled payment): who asked, for which run, which Update and what for. Sealed and proved like an answer
 * (the same key and {@link VERIFY_ANSWER_ACTIVITY}); `kind` tells it from an answer, whose seal has none.
 */
export interface SealedAction {
  v: 1;
  kind: 'action';
  workflowId: string;
  /** The run's original run id, as for a {@link SealedAnswer}. */
  originalRunId: string;
  /** The Update's wire name. */
  update: string;
  /** What the action is for: the Update's arguments without the seal, e.g. `{ lineItemId: 'LI-2' }`. */
  subject: Record<string, string | number | boolean>;
  requestedBy: AnswerOrigin;
  /** ISO 8601 time the bridge took the request. */
  requestedAt: string;
}

/** The seal an Update's argument carries beside its own fields: the JSON text of a {@link SealedAction} and its proof. */
export interface ActionSealFields {
  sealed?: string;
  proof?: string;
}

/** An action the workflow refused (no seal, a bad proof, another run's or another action's), as a workflow keeps it. */
export interface RefusedAction {
  /** The Update's wire name. */
  update: string;
  /** What it was asked for, as sent (shortened). */
  subject: string;
  reason: string;
  /** ISO 8601, workflow time. */
  at: string;
}

/**
 * Reads an action seal's text: the action it carries when it is well formed, made for this run and for `update` with
 * this `subject`, or why not. Pure and deterministic; the proof is checked apart, by {@link VERIFY_ANSWER_ACTIVITY}.
 */
export function openSealedAction(
  sealed: unknown,
  run: { workflowId: string; originalRunId: string },
  update: string,
  subject: Record<string, string | number | boolean>,
): SealedAction | string {
  const parsed = parseSeal(sealed);
  if (typeof parsed === 'string') return parsed;
  const action = parsed.value as Partial<SealedAction> | null;
  if (typeof action !== 'object' || action === null || action.v !== 1 || action.kind !== 'action') return 'its seal is not an action seal';
  if (action.workflowId !== run.workflowId || action.originalRunId !== run.originalRunId) return 'its seal was made for another run';
  if (action.update !== update) return `its seal was made for ${String(action.update)}, not ${update}`;
  const sealedSubject = action.subject ?? {};
  const same =
    Object.keys(sealedSubject).length === Object.keys(subject).length &&
    Object.entries(subject).every(([name, value]) => sealedSubject[name] === value);
  if (!same) return 'its seal was made for another request';
  if (typeof action.requestedBy?.principal !== 'string' || typeof action.requestedAt !== 'string') return 'its seal does not say who asked';
  return action as SealedAction;
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
  /**
   * The bridge's mark (an HMAC over workflow id, principal, tool, input digest and creation time, and whether the run is
   * bound by a {@link RunBinding}): only workflows carrying it are served as tasks.
   */
  marker?: string;
}

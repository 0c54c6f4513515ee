/**
 * From what Temporal says of a workflow to the task the bridge serves: a pure mapping, no I/O. The repository reads
 * the workflow (its description, and by status the few extra facts listed in {@link WorkflowSnapshot}) and hands the
 * snapshot here.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  pendingInputsOf,
  type PendingInput,
  type PublishedAction,
  type PublishedProgress,
  type PublishedTaskState,
  type TaskMeta,
} from '../contract/task-contract';
import { WEB_UI_META } from '../contract/wire';

/** A task's status: the two a workflow publishes, and the three it ends in. */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/**
 * A task's state, the same for every protocol generation: each front-end renders it in its own shape (2025-11-25
 * sends it as it is; 2026-07-28 renames `ttl` and `pollInterval`).
 */
export interface TaskState {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601. */
  lastUpdatedAt: string;
  /** Milliseconds from creation the task is kept for; null: unlimited. */
  ttl: number | null;
  /** Milliseconds a client should wait between polls. */
  pollInterval?: number;
}

/**
 * How a task ended, in the workflow's words, as every front-end renders it: a tool result (a result returned with
 * `isError` among them), a tool error (the workflow's application failure), a failure (with the JSON-RPC code the
 * workflow chose, if it chose one), or a cancellation.
 */
export type TaskOutcome =
  | { kind: 'result'; result: CallToolResult }
  | { kind: 'tool-error'; message: string }
  /** `code`: the JSON-RPC code the workflow chose (a protocol failure). */
  | { kind: 'failed'; message: string; code?: number }
  | { kind: 'cancelled'; message: string };

/** A task as the bridge sees it: its state plus what the server needs to serve it. */
export interface TaskView {
  task: TaskState;
  workflowId: string;
  runId: string;
  tool?: string;
  /** The digest of the workflow input the task was started with (`argumentsDigest`), when its meta has one. */
  argumentsDigest?: string;
  /** The first outstanding input request, when the task is `input_required`: the one to ask one at a time. */
  input?: PendingInput;
  /** Every outstanding input request (empty unless `input_required`), in the order the workflow asked them. */
  inputs: PendingInput[];
  /**
   * Keys of questions the workflow still publishes as open whose answer came in by a signal no workflow task has taken
   * yet: not outstanding (not in `inputs`, not asked again), and not closed either until the workflow takes the answer
   * (it may refuse it, and the question is outstanding again).
   */
  answersAwaitingWorker?: string[];
  /**
   * How a terminal task ended (absent while it runs; a task cancelled while its workflow winds down has its cancelled
   * outcome): every front-end renders its result from this alone ({@link toolErrorOf} for a tool error).
   */
  outcome?: TaskOutcome;
  /** Progress the workflow published, if any. */
  progress?: PublishedProgress;
  /** What the workflow offers to do now (running tasks only). */
  actions?: PublishedAction[];
  /** The length of the workflow's history when this was read (0 when not read from Temporal yet). */
  historyLength: number;
  /**
   * Set on a cancelled task whose workflow said, after it saw the cancel request, what it did before it stopped (the
   * contract's `cancelledStatusMessage`); it is also the task's status message.
   */
  cancellationReport?: string;
  /** The workflow in the Temporal Web UI, when the server knows the UI. */
  webUiUrl?: string;
}

/**
 * The text of the tool error a terminal task ended with: the workflow's application failure, or a result it returned
 * with `isError: true`; undefined for any other outcome. Such a task reads `completed` in its view; each protocol
 * generation maps it by its own rule.
 */
export function toolErrorOf(view: Pick<TaskView, 'outcome'>): string | undefined {
  const { outcome } = view;
  if (outcome?.kind === 'tool-error') return outcome.message;
  if (outcome?.kind === 'result' && outcome.result.isError === true) return toolErrorText(outcome.result);
  return undefined;
}

/** The `_meta` that links a task's answers to its workflow in the Web UI (empty without a Web UI). */
export function webUiMeta(view: Pick<TaskView, 'webUiUrl'>): Record<string, string> {
  return view.webUiUrl ? { [WEB_UI_META]: view.webUiUrl } : {};
}

/** How a failed workflow failed, as far as the task is concerned. */
export type WorkflowFailure =
  /** The workflow reported a JSON-RPC error (the contract's protocol error failure type), with its code if valid. */
  | { kind: 'protocol'; message: string; code?: number }
  /** An application failure: a tool error. */
  | { kind: 'application'; message: string }
  /** Anything else (a terminated or timed-out child, a non-application failure). */
  | { kind: 'other'; message: string };

/** What the repository read of a workflow: its description, and what its status calls for. */
export interface WorkflowSnapshot {
  workflowId: string;
  runId: string;
  /** The execution status's name: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT, CONTINUED_AS_NEW. */
  status: string;
  startTime: Date;
  closeTime?: Date;
  historyLength: number;
  meta?: TaskMeta;
  published?: PublishedTaskState;
  cancelRequested: boolean;
  /** When the cancel request's workflow task was scheduled (ISO 8601), if one is pending. */
  cancelRequestedAt?: string;
  /** Running, with questions: the keys answered by a signal no workflow task has taken yet, and when the newest came. */
  answersAwaitingWorker?: { keys: ReadonlySet<string>; at?: string };
  /** Completed: the tool result the workflow's return value maps to. */
  result?: CallToolResult;
  /** Failed: how. */
  failure?: WorkflowFailure;
  /** The workflow's page in the Web UI. */
  webUiUrl?: string;
}

/** Defaults the snapshot may lack (tasks made by older versions). */
export interface ViewDefaults {
  pollIntervalMs: number;
}

/** The task a workflow is, by the rules of the task contract (see the README's contract section). */
export function taskViewOf(snapshot: WorkflowSnapshot, defaults: ViewDefaults): TaskView {
  const parts = viewParts(snapshot, defaults);
  const running = snapshot.status === 'RUNNING' || snapshot.status === 'CONTINUED_AS_NEW';
  // Once cancellation was requested the task reads cancelled for good, however the execution ends.
  if (snapshot.cancelRequested && !running) {
    return closedView(parts, 'cancelled', parts.report ?? 'Cancelled.', cancelledOutcome(parts), parts.cancellation);
  }
  return running ? runningView(snapshot, parts) : endedView(snapshot, parts);
}

/** What every view of a snapshot is made of (see {@link viewParts}). */
interface ViewParts {
  /** The task's state that does not depend on its status. */
  base: { taskId: string; createdAt: string; ttl: number | null; pollInterval: number };
  /** The workflow's ids and what else every view carries. */
  ids: Omit<TaskView, 'task'>;
  /** When the workflow closed (ISO 8601): a closed task's last update. */
  closedAt: string;
  /** What the workflow said about the cancel once it saw it; the contract writes the field only then. */
  report?: string;
  /** The view's `cancellationReport`, when there is a report. */
  cancellation: Partial<TaskView>;
}

/** The parts of the views of `snapshot`, whatever its status. */
function viewParts(snapshot: WorkflowSnapshot, defaults: ViewDefaults): ViewParts {
  const { meta, published, cancelRequested } = snapshot;
  const report =
    (cancelRequested || snapshot.status === 'CANCELLED') && typeof published?.cancelledStatusMessage === 'string'
      ? published.cancelledStatusMessage
      : undefined;
  return {
    base: {
      taskId: snapshot.workflowId,
      createdAt: meta?.createdAt ?? snapshot.startTime.toISOString(),
      ttl: meta?.ttl ?? null,
      pollInterval: meta?.pollInterval ?? defaults.pollIntervalMs,
    },
    ids: {
      workflowId: snapshot.workflowId,
      runId: snapshot.runId,
      tool: meta?.tool,
      ...(meta?.argumentsDigest !== undefined && { argumentsDigest: meta.argumentsDigest }),
      inputs: [],
      historyLength: snapshot.historyLength,
      ...(snapshot.webUiUrl && { webUiUrl: snapshot.webUiUrl }),
    },
    closedAt: (snapshot.closeTime ?? snapshot.startTime).toISOString(),
    ...(report !== undefined && { report }),
    cancellation: report !== undefined ? { cancellationReport: report } : {},
  };
}

/** The view of a task that ended as `status`, last updated when its workflow closed. */
function closedView(
  parts: ViewParts,
  status: TaskStatus,
  statusMessage: string,
  outcome: TaskOutcome | undefined,
  extra: Partial<TaskView> = {},
): TaskView {
  return {
    ...parts.ids,
    ...extra,
    ...(outcome && { outcome }),
    task: { ...parts.base, status, statusMessage, lastUpdatedAt: parts.closedAt },
  };
}

/** The outcome of a cancelled task: what the workflow reported, or that it was cancelled before it finished. */
function cancelledOutcome(parts: ViewParts): TaskOutcome {
  const { taskId } = parts.base;
  return {
    kind: 'cancelled',
    message: parts.report === undefined ? `Task ${taskId} was cancelled before it finished` : `Task ${taskId}: ${parts.report}`,
  };
}

/** The outcome of a failed task: `what` went wrong. */
function failedOutcome(parts: ViewParts, what: string): TaskOutcome {
  return { kind: 'failed', message: `Task ${parts.base.taskId} failed: ${what}` };
}

/**
 * The view of a running workflow: cancelled while it winds down once cancellation was requested; otherwise working, or
 * input_required with the requests no answer awaiting the worker has taken.
 */
function runningView(snapshot: WorkflowSnapshot, parts: ViewParts): TaskView {
  const { published } = snapshot;
  const { base, ids } = parts;
  const updatedAt = published?.updatedAt ?? base.createdAt;
  if (snapshot.cancelRequested) {
    // It reads cancelled, a terminal status, while the workflow winds down: its result is the cancellation already.
    return {
      ...ids,
      ...parts.cancellation,
      outcome: cancelledOutcome(parts),
      task: {
        ...base,
        status: 'cancelled',
        statusMessage: parts.report ?? 'Cancelled; the workflow is winding down.',
        lastUpdatedAt: maxIso(updatedAt, snapshot.cancelRequestedAt ?? updatedAt),
      },
    };
  }
  const asked = pendingInputsOf(published);
  // Answers signalled but not yet taken by the workflow (the worker may be down) are not asked again.
  const received = snapshot.answersAwaitingWorker;
  const inputs = asked.filter((input) => !received?.keys.has(input.key));
  const awaiting = asked.filter((input) => received?.keys.has(input.key)).map((input) => input.key);
  const awaitingWorker = awaiting.length > 0 ? { answersAwaitingWorker: awaiting } : {};
  const lastUpdatedAt = received?.at ? maxIso(updatedAt, received.at) : updatedAt;
  const progress = published?.progress && { progress: published.progress };
  if (asked.length > 0 && inputs.length === 0) {
    return {
      ...ids,
      ...awaitingWorker,
      ...progress,
      task: { ...base, status: 'working', statusMessage: 'Answer received; resuming.', lastUpdatedAt },
    };
  }
  const statusMessage = inputs.length > 0 && inputs.length < asked.length ? inputs[0].request.message : published?.statusMessage;
  const actions = Array.isArray(published?.actions) && published.actions.length > 0 ? { actions: published.actions } : undefined;
  return {
    ...ids,
    ...actions,
    inputs,
    ...awaitingWorker,
    ...(inputs.length > 0 && { input: inputs[0] }),
    ...progress,
    task: {
      ...base,
      status: inputs.length > 0 ? 'input_required' : 'working',
      ...(statusMessage !== undefined && { statusMessage }),
      lastUpdatedAt,
    },
  };
}

/** The view of a workflow that ended (no cancellation was requested, or it ended as cancelled): by how it ended. */
function endedView(snapshot: WorkflowSnapshot, parts: ViewParts): TaskView {
  switch (snapshot.status) {
    case 'COMPLETED': {
      const { result } = snapshot;
      // The repository reads the result of every completed run; a snapshot without it only states the status.
      if (!result) return closedView(parts, 'completed', 'Completed.', undefined);
      // A result the workflow returned with isError is a tool error, exactly like an application failure.
      if (result.isError === true) {
        const text = toolErrorText(result);
        return closedView(parts, 'completed', `Completed with an error: ${text}`, { kind: 'result', result });
      }
      return closedView(parts, 'completed', 'Completed.', { kind: 'result', result });
    }
    case 'CANCELLED':
      return closedView(parts, 'cancelled', parts.report ?? 'Cancelled.', cancelledOutcome(parts), parts.cancellation);
    case 'FAILED': {
      const failure = snapshot.failure;
      if (failure?.kind === 'protocol') {
        return closedView(parts, 'failed', failure.message, {
          kind: 'failed',
          message: failure.message,
          code: failure.code === undefined ? INTERNAL_ERROR : workflowErrorCode(failure.code),
        });
      }
      if (failure?.kind === 'application') {
        return closedView(parts, 'completed', `Completed with an error: ${failure.message}`, {
          kind: 'tool-error',
          message: failure.message,
        });
      }
      const what = failure?.message ?? 'the workflow failed';
      return closedView(parts, 'failed', failure?.message ?? 'The workflow failed.', failedOutcome(parts, what));
    }
    case 'TERMINATED':
      return closedView(
        parts,
        'failed',
        'The workflow was terminated by an operator.',
        failedOutcome(parts, 'the workflow was terminated'),
      );
    case 'TIMED_OUT':
      return closedView(parts, 'failed', 'The workflow ran past its execution timeout.', failedOutcome(parts, 'the workflow timed out'));
    default:
      return closedView(
        parts,
        'failed',
        `The workflow ended as ${snapshot.status}.`,
        failedOutcome(parts, `the workflow ended as ${snapshot.status}`),
      );
  }
}

/** The text of a tool error result: its text content, joined; a generic line when it has none. */
export function toolErrorText(result: CallToolResult): string {
  const text = result.content
    .filter((part): part is { type: 'text'; text: string } => part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('\n')
    .trim();
  return text.length > 0 ? text : 'The tool reported an error.';
}

/**
 * The code a call ends with for a workflow's protocol failure of `code`: its own, unless it lies in the range JSON-RPC
 * reserves (-32768 … -32000, where MCP and this server give codes their meaning, e.g. -32020 for a header that does not
 * match), which a workflow may not speak for; of that range only invalid params (-32602) and internal error (-32603)
 * pass. Any other becomes -32603.
 */
export function workflowErrorCode(code: number): number {
  const reserved = code >= -32768 && code <= -32000;
  return !reserved || code === INVALID_PARAMS || code === INTERNAL_ERROR ? code : INTERNAL_ERROR;
}

/** JSON-RPC's invalid params. */
const INVALID_PARAMS = -32602;

/** JSON-RPC's internal error: the code of a protocol failure that names none (as the contract says). */
const INTERNAL_ERROR = -32603;

/** The later of two ISO 8601 times. */
function maxIso(a: string, b: string): string {
  return a > b ? a : b;
}

/**
 * From what Temporal says of a workflow to the task the bridge serves: a pure mapping, no I/O. The repository reads
 * the workflow (its description, and by status the few extra facts listed in {@link WorkflowSnapshot}) and hands the
 * snapshot here.
 */
import type { CallToolResult, Task } from '@modelcontextprotocol/sdk/types.js';
import {
  pendingInputsOf,
  type PendingInput,
  type PublishedAction,
  type PublishedProgress,
  type PublishedTaskState,
  type TaskMeta,
} from '../../shared/task-contract';
import { WEB_UI_META } from '../../shared/wire';

/** A task as the bridge sees it: the MCP Task plus what the server needs to serve it. */
export interface TaskView {
  task: Task;
  workflowId: string;
  runId: string;
  tool?: string;
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
   * Set when the task ended with a tool error: the workflow's application failure, or a result it returned with
   * `isError: true`. Its text. Such a task reads `completed` here; each protocol generation maps it by its own rule.
   */
  toolError?: string;
  /** The tool result of a completed task (without `_meta`), when it was read with the task. */
  result?: CallToolResult;
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

/** The `_meta` that links a task's answers to its workflow in the Web UI (empty without a Web UI). */
export function webUiMeta(view: Pick<TaskView, 'webUiUrl'>): Record<string, string> {
  return view.webUiUrl ? { [WEB_UI_META]: view.webUiUrl } : {};
}

/** How a failed workflow failed, as far as the task is concerned. */
export type WorkflowFailure =
  /** The workflow reported a JSON-RPC error (the contract's protocol error failure type). */
  | { kind: 'protocol'; message: string }
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
  const { meta, published, cancelRequested } = snapshot;
  const base = {
    taskId: snapshot.workflowId,
    createdAt: meta?.createdAt ?? snapshot.startTime.toISOString(),
    ttl: meta?.ttl ?? null,
    pollInterval: meta?.pollInterval ?? defaults.pollIntervalMs,
  };
  const closedAt = (snapshot.closeTime ?? snapshot.startTime).toISOString();
  const ids = {
    workflowId: snapshot.workflowId,
    runId: snapshot.runId,
    tool: meta?.tool,
    inputs: [],
    historyLength: snapshot.historyLength,
    ...(snapshot.webUiUrl && { webUiUrl: snapshot.webUiUrl }),
  };
  const closed = (status: Task['status'], statusMessage: string, extra: Partial<TaskView> = {}): TaskView => ({
    ...ids,
    ...extra,
    task: { ...base, status, statusMessage, lastUpdatedAt: closedAt },
  });
  const running = snapshot.status === 'RUNNING' || snapshot.status === 'CONTINUED_AS_NEW';

  // What the workflow said about the cancel once it saw it; the contract writes the field only then.
  const report =
    (cancelRequested || snapshot.status === 'CANCELLED') && typeof published?.cancelledStatusMessage === 'string'
      ? published.cancelledStatusMessage
      : undefined;
  const cancellation = report !== undefined ? { cancellationReport: report } : {};

  // Once cancellation was requested the task reads cancelled for good, however the execution ends.
  if (cancelRequested && !running) return closed('cancelled', report ?? 'Cancelled.', cancellation);
  if (running) {
    const updatedAt = published?.updatedAt ?? base.createdAt;
    if (cancelRequested) {
      return {
        ...ids,
        ...cancellation,
        task: {
          ...base,
          status: 'cancelled',
          statusMessage: report ?? 'Cancelled; the workflow is winding down.',
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
  switch (snapshot.status) {
    case 'COMPLETED': {
      const result = snapshot.result && { result: snapshot.result };
      // A result the workflow returned with isError is a tool error, exactly like an application failure.
      if (snapshot.result?.isError === true) {
        const text = toolErrorText(snapshot.result);
        return closed('completed', `Completed with an error: ${text}`, { ...result, toolError: text });
      }
      return closed('completed', 'Completed.', result);
    }
    case 'CANCELLED':
      return closed('cancelled', report ?? 'Cancelled.', cancellation);
    case 'FAILED': {
      const failure = snapshot.failure;
      if (failure?.kind === 'protocol') return closed('failed', failure.message);
      if (failure?.kind === 'application') {
        return closed('completed', `Completed with an error: ${failure.message}`, { toolError: failure.message });
      }
      return closed('failed', failure?.message ?? 'The workflow failed.');
    }
    case 'TERMINATED':
      return closed('failed', 'The workflow was terminated by an operator.');
    case 'TIMED_OUT':
      return closed('failed', 'The workflow ran past its execution timeout.');
    default:
      return closed('failed', `The workflow ended as ${snapshot.status}.`);
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

/** The later of two ISO 8601 times. */
function maxIso(a: string, b: string): string {
  return a > b ? a : b;
}

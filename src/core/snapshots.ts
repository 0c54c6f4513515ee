/**
 * Reading what a described workflow is as a task: the facts its status calls for beyond the description (the result
 * of a completed run, how a failed one failed, answers signalled that no workflow task has taken yet), then the pure
 * mapping of `task-view.ts`.
 */
import { WorkflowFailedError, type WorkflowExecutionDescription } from '@temporalio/client';
import { ApplicationFailure, TerminatedFailure, TimeoutFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  PROTOCOL_ERROR_FAILURE_TYPE,
  RESPOND_SIGNAL_NAME,
  pendingInputsOf,
  type InputResponse,
  type PublishedTaskState,
  type TaskMeta,
} from '../contract/task-contract';
import { MalformedMemoError, readTaskMeta, readTaskState } from '../contract/memo-schemas';
import { TaskStateUnreadableError } from './errors';
import { setBounded } from '../util/bounded';
import { taskViewOf, type TaskView, type WorkflowFailure, type WorkflowSnapshot } from './task-view';
import { timestampToIso, type TemporalAccess } from './temporal-access';

const EventType = temporal.api.enums.v1.EventType;

/** Results of completed runs kept per process (a closed run never changes). */
const COMPLETED_RESULTS_KEPT = 1000;

/** Builds task views from workflow descriptions (see the module's comment). */
export class Snapshots {
  /** Tool results of completed runs, by run id. */
  private readonly completed = new Map<string, CallToolResult>();

  constructor(private readonly temporal: TemporalAccess) {}

  /** The task a described workflow is: what its status calls for is read too, then mapped by {@link taskViewOf}. */
  async view(description: WorkflowExecutionDescription): Promise<TaskView> {
    const { meta, published } = checkedMemos(description);
    const cancelRequested = description.raw.workflowExtendedInfo?.cancelRequested === true;
    const status = description.status.name;
    const snapshot: WorkflowSnapshot = {
      workflowId: description.workflowId,
      runId: description.runId,
      status,
      startTime: description.startTime,
      ...(description.closeTime && { closeTime: description.closeTime }),
      historyLength: description.historyLength,
      ...(meta && { meta }),
      ...(published && { published }),
      cancelRequested,
      ...(cancelRequested && { cancelRequestedAt: timestampToIso(description.raw.pendingWorkflowTask?.scheduledTime) }),
      ...this.temporal.webUi(description.workflowId),
    };
    const running = status === 'RUNNING' || status === 'CONTINUED_AS_NEW';
    if (running && !cancelRequested && pendingInputsOf(published).length > 0) {
      snapshot.answersAwaitingWorker = await this.answersAwaitingWorker(description, description.historyLength);
    }
    if (!cancelRequested && status === 'COMPLETED') {
      snapshot.result = await this.completedResult(description.workflowId, description.runId, meta?.tool);
    }
    if (!cancelRequested && status === 'FAILED') snapshot.failure = await this.failureOf(description.workflowId, description.runId);
    return taskViewOf(snapshot, { pollIntervalMs: this.temporal.options.pollIntervalMs });
  }

  /**
   * The tool result of a completed run: the workflow's return value through the tool's `toResult`. Read once per
   * process and kept (a closed run never changes).
   */
  private async completedResult(workflowId: string, runId: string, toolName: string | undefined): Promise<CallToolResult> {
    const known = this.completed.get(runId);
    if (known) return known;
    const output = await this.temporal.client.workflow.getHandle(workflowId, runId).result();
    const tool = toolName ? this.temporal.tools.get(toolName) : undefined;
    const full: CallToolResult = tool
      ? tool.toResult(output)
      : { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output as Record<string, unknown> };
    const { _meta: _dropped, ...result } = full;
    setBounded(this.completed, runId, result, COMPLETED_RESULTS_KEPT);
    return result;
  }

  /** How a failed run failed. Reading the failure itself may fail (Temporal unreachable): that is thrown. */
  private async failureOf(workflowId: string, runId: string): Promise<WorkflowFailure> {
    const failure = await this.temporal.client.workflow
      .getHandle(workflowId, runId)
      .result()
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    if (failure !== undefined && !(failure instanceof WorkflowFailedError)) throw failure;
    if (failure instanceof WorkflowFailedError && failure.cause instanceof ApplicationFailure) {
      const { type, message } = failure.cause;
      if (type !== PROTOCOL_ERROR_FAILURE_TYPE) return { kind: 'application', message };
      const code = (failure.cause.details?.[0] as { code?: unknown } | undefined)?.code;
      return { kind: 'protocol', message, ...(typeof code === 'number' && Number.isInteger(code) && { code }) };
    }
    return { kind: 'other', message: failure instanceof WorkflowFailedError ? describeFailure(failure) : 'The workflow failed.' };
  }

  /**
   * The input keys answered by a signal that no workflow task has processed yet, as of the described state (history up
   * to `asOfEvent`), with the time of the newest such answer. Reads history newest first, skips events newer than the
   * description, and stops at the last completed workflow task, so it costs a few events.
   */
  private async answersAwaitingWorker(
    execution: { workflowId: string; runId: string },
    asOfEvent: number,
  ): Promise<{ keys: Set<string>; at?: string }> {
    const { client } = this.temporal;
    const keys = new Set<string>();
    let at: string | undefined;
    let nextPageToken: Uint8Array | undefined;
    do {
      const page = await client.workflowService.getWorkflowExecutionHistoryReverse({
        namespace: this.temporal.namespace,
        execution: { workflowId: execution.workflowId, runId: execution.runId },
        maximumPageSize: 20,
        nextPageToken,
      });
      for (const event of page.history?.events ?? []) {
        // Events after the description belong to a newer state than the memo that was read.
        if (Number(event.eventId) > asOfEvent) continue;
        if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) return { keys, ...(at && { at }) };
        const signal = event.workflowExecutionSignaledEventAttributes;
        if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED && signal?.signalName === RESPOND_SIGNAL_NAME) {
          const payload = signal.input?.payloads?.[0];
          const response = payload ? ((await this.temporal.decodePayload(payload)) as InputResponse) : undefined;
          if (response && typeof response.key === 'string' && response.action !== 'cancel') {
            keys.add(response.key);
            at ??= timestampToIso(event.eventTime);
          }
        }
      }
      nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
    } while (nextPageToken);
    return { keys, ...(at && { at }) };
  }
}

/** What ended a failed run, in a few words. */
function describeFailure(error: WorkflowFailedError): string {
  const cause = error.cause;
  if (cause instanceof TerminatedFailure) return 'the workflow was terminated';
  if (cause instanceof TimeoutFailure) return 'the workflow timed out';
  return cause?.message ?? error.message;
}

/**
 * The task meta and published state of a described task, checked (see `memo-schemas.ts`). Throws
 * {@link TaskStateUnreadableError} when either does not fit: the task cannot be read, no other task is touched.
 */
export function checkedMemos(description: WorkflowExecutionDescription): { meta?: TaskMeta; published?: PublishedTaskState } {
  try {
    const meta = readTaskMeta(description.memo);
    const published = readTaskState(description.memo);
    return { ...(meta && { meta }), ...(published && { published }) };
  } catch (error) {
    if (error instanceof MalformedMemoError) throw new TaskStateUnreadableError(description.workflowId, `${error.memo}: ${error.problem}`);
    throw error;
  }
}

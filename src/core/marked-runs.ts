/**
 * Which workflow runs are tasks of this bridge: a run is served only when it carries the bridge's mark for its own
 * workflow id, principal, tool and input, runs that tool's workflow, and started when the mark says; and, for a mark
 * that says so (every mark since run bindings), when the first run of its chain holds the bridge's binding of that very
 * run. Anything else in the namespace (a planted workflow, a copied mark on another run, a run that replaced the task)
 * is "not found", exactly like a task that does not exist.
 */
import { WorkflowNotFoundError, type WorkflowExecutionDescription } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { MalformedMemoError, readTaskMeta } from '../contract/memo-schemas';
import { BIND_SIGNAL_NAME, type TaskMeta } from '../contract/task-contract';
import { argumentsDigest } from '../util/arguments-digest';
import { setBounded } from '../util/bounded';
import { TaskNotFoundError, taskNotFound } from './errors';
import { TaskMarker } from './marker';
import { PRINCIPAL_KEY } from './principal';
import { timestampToMs, type TemporalAccess } from './temporal-access';

/** Task ids we generate and accept: a tool prefix and a UUID v4 (122 random bits). */
export const TASK_ID_PATTERN = /^[a-z][a-z0-9-]{0,40}-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Run chain starts kept per process. */
const CHAIN_STARTS_KEPT = 10_000;

/**
 * How far the run's start in Temporal may be from the creation time in its mark: the bridge's clock and Temporal's may
 * differ a little. A mark copied onto a run started later than this is not that run's.
 */
const MARK_START_TOLERANCE_MS = 120_000;

/**
 * Events read per page of a chain's start. The bridge's binding comes before the run's first workflow task (the run
 * waits in a start delay until it), so the first page holds it: the start, the binding, the first workflow task.
 */
const START_PAGE_SIZE = 8;

/** Events of a chain's start read at most: signals that pile up before a run's first workflow task are not read past it. */
const START_EVENTS_READ = 200;

/** When a run chain started, the digest of its input, and whether its first run holds the bridge's binding of it. */
export interface ChainStart {
  startedAt: number;
  argumentsDigest: string;
  /** The first run's history holds a valid binding of that run, before its first workflow task. */
  bound: boolean;
}

/** Describes tasks of this bridge, and nothing else (see the module's comment). */
export class MarkedRuns {
  /** What each run chain's start says, by first run id, once it cannot change any more. */
  private readonly chainStarts = new Map<string, ChainStart>();
  /** Pages of first runs' histories read to learn their starts: the Temporal reads marks cost beyond a describe. */
  private historyReads = 0;

  constructor(private readonly temporal: TemporalAccess) {}

  /** Notes the start of a run chain this process made (and bound), so that its reads need not fetch it from history. */
  noteStart(firstRunId: string, start: ChainStart): void {
    setBounded(this.chainStarts, firstRunId, start, CHAIN_STARTS_KEPT);
  }

  /** How many history pages were read to check marks against their runs' starts (at most one a chain, per process). */
  stats(): { historyReads: number } {
    return { historyReads: this.historyReads };
  }

  /**
   * Temporal's description of the current run of a task this bridge started (its mark holds for its run); of `owner`
   * when given, of anyone otherwise (an approver reads a task that is not theirs). Throws `TaskNotFoundError` for
   * anything else.
   */
  async readRun(taskId: string, owner?: string): Promise<WorkflowExecutionDescription> {
    const { description, bindable } = await this.examine(taskId, owner);
    if (bindable) throw taskNotFound(taskId);
    return description;
  }

  /**
   * The run of a task of `owner` that this bridge started and never bound (the process that started it stopped before
   * it could), while it still waits for its binding in its start delay: a retry of the call that started it may bind it.
   * Undefined for a task that is bound, and for anything that is not a task of this bridge.
   */
  async awaitingBinding(taskId: string, owner: string): Promise<WorkflowExecutionDescription | undefined> {
    try {
      const { description, bindable } = await this.examine(taskId, owner);
      return bindable ? description : undefined;
    } catch (error) {
      if (error instanceof TaskNotFoundError) return undefined;
      throw error;
    }
  }

  /**
   * Describes a run whose mark holds for it (see {@link readRun}); `bindable` when its mark asks for a binding that
   * its chain does not hold yet, and can still get. Throws `TaskNotFoundError` for anything else.
   */
  private async examine(taskId: string, owner?: string): Promise<{ description: WorkflowExecutionDescription; bindable: boolean }> {
    if (typeof taskId !== 'string' || !TASK_ID_PATTERN.test(taskId)) throw taskNotFound(String(taskId));
    let description: WorkflowExecutionDescription;
    try {
      description = await this.temporal.client.workflow.getHandle(taskId).describe();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw taskNotFound(taskId);
      throw error;
    }
    const principal = description.typedSearchAttributes.get(PRINCIPAL_KEY);
    if (principal === undefined || (owner !== undefined && principal !== owner)) throw taskNotFound(taskId);
    // A meta that does not fit carries no mark that holds: the task is "not found", as an unmarked one is.
    let meta: TaskMeta | undefined;
    try {
      meta = readTaskMeta(description.memo);
    } catch (error) {
      if (error instanceof MalformedMemoError) throw taskNotFound(taskId);
      throw error;
    }
    const tool = typeof meta?.tool === 'string' ? this.temporal.tools.get(meta.tool) : undefined;
    const marked = {
      workflowId: taskId,
      principal,
      tool: meta?.tool ?? '',
      argumentsDigest: meta?.argumentsDigest,
      createdAt: meta?.createdAt,
    };
    if (!tool || tool.workflowType !== description.type || !this.temporal.options.marker.verify(meta?.marker, marked)) {
      throw taskNotFound(taskId);
    }
    // The mark must also be the run's own: a copy on another run (other arguments, a later start) is not the task; and a
    // bound mark's run must be the one the bridge bound, which only its first run's history can say.
    const start = await this.chainStart(description);
    const startedNear = Math.abs(start.startedAt - Date.parse(meta!.createdAt!)) <= MARK_START_TOLERANCE_MS;
    if (start.argumentsDigest !== meta!.argumentsDigest || !startedNear) throw taskNotFound(taskId);
    if (TaskMarker.isBound(meta!.marker) && !start.bound) {
      // Its first run, still waiting for a binding: it never ran.
      const open = start.bindable && description.status.name === 'RUNNING' && description.runId === start.firstRunId;
      if (!open) throw taskNotFound(taskId);
      return { description, bindable: true };
    }
    return { description, bindable: false };
  }

  /**
   * The start of the run chain a described run belongs to (its first run: a workflow that continued as new, retried or
   * was reset keeps its chain): when it started, the digest of its input, and whether the bridge bound it, read from the
   * first run's history as far as its first workflow task, once per process (a start still waiting for its binding is
   * read again next time).
   */
  private async chainStart(description: WorkflowExecutionDescription): Promise<ChainStart & { firstRunId: string; bindable: boolean }> {
    const firstRunId = description.raw.workflowExecutionInfo?.firstRunId || description.runId;
    const known = this.chainStarts.get(firstRunId);
    if (known) return { ...known, firstRunId, bindable: false };
    const { workflowId } = description;
    let startEvent: temporal.api.history.v1.IHistoryEvent | undefined;
    let bound = false;
    // Whether the run has gone past its start (a workflow task, a close): nothing can bind it any more.
    let settled = false;
    let read = 0;
    let token: Uint8Array | undefined;
    do {
      const page = await this.temporal.historyPage(workflowId, firstRunId, START_PAGE_SIZE, token);
      this.historyReads++;
      token = page.nextPageToken;
      for (const event of page.events) {
        read++;
        if (!startEvent) {
          startEvent = event;
          continue;
        }
        const signal = event.workflowExecutionSignaledEventAttributes;
        if (signal) {
          if (signal.signalName === BIND_SIGNAL_NAME && !bound) bound = await this.bindsRun(signal, workflowId, firstRunId);
        } else if (!event.workflowExecutionCancelRequestedEventAttributes) {
          settled = true;
        }
        if (bound || settled) break;
      }
    } while (token && !bound && !settled && read < START_EVENTS_READ);
    const payload = startEvent?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    const input = payload ? await this.temporal.decodePayload(payload) : undefined;
    const start = { startedAt: timestampToMs(startEvent?.eventTime) ?? 0, argumentsDigest: argumentsDigest(input), bound };
    // Settled once bound, past its start, or too long to read: kept; a start still waiting for its binding is not.
    const bindable = !bound && !settled && read < START_EVENTS_READ;
    if (!bindable) this.noteStart(firstRunId, start);
    return { ...start, firstRunId, bindable };
  }

  /** Whether a signal in `firstRunId`'s history is the bridge's binding of that run. */
  private async bindsRun(
    signal: temporal.api.history.v1.IWorkflowExecutionSignaledEventAttributes,
    workflowId: string,
    firstRunId: string,
  ): Promise<boolean> {
    const payload = signal.input?.payloads?.[0];
    if (!payload) return false;
    let binding: unknown;
    try {
      binding = await this.temporal.decodePayload(payload);
    } catch {
      return false;
    }
    return this.temporal.options.marker.verifyBinding(binding, workflowId, firstRunId);
  }
}

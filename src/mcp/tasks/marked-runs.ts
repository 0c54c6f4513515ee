/**
 * Which workflow runs are tasks of this bridge: a run is served only when it carries the bridge's mark for its own
 * workflow id, principal, tool and input, runs that tool's workflow, and started when the mark says. Anything else in
 * the namespace (a planted workflow, a copied mark on another run) is "not found", exactly like a task that does not
 * exist.
 */
import { WorkflowNotFoundError, type WorkflowExecutionDescription } from '@temporalio/client';
import { TASK_META_MEMO, type TaskMeta } from '../../shared/task-contract';
import { argumentsDigest } from '../../util/arguments-digest';
import { setBounded } from '../../util/bounded';
import { taskNotFound } from './errors';
import { PRINCIPAL_KEY } from './principal';
import { timestampToMs, type TemporalAccess } from './temporal-access';

/** Task ids we generate and accept: a tool prefix and a UUID v4 (122 random bits). */
const TASK_ID_PATTERN = /^[a-z][a-z0-9-]{0,40}-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Run chain starts kept per process. */
const CHAIN_STARTS_KEPT = 10_000;

/**
 * How far the run's start in Temporal may be from the creation time in its mark: the bridge's clock and Temporal's may
 * differ a little. A mark copied onto a run started later than this is not that run's.
 */
const MARK_START_TOLERANCE_MS = 120_000;

/** When a run chain started and the digest of its input. */
export interface ChainStart {
  startedAt: number;
  argumentsDigest: string;
}

/** Describes tasks of this bridge, and nothing else (see the module's comment). */
export class MarkedRuns {
  /** When each run chain started and the digest of its input, by first run id (they never change). */
  private readonly chainStarts = new Map<string, ChainStart>();

  constructor(private readonly temporal: TemporalAccess) {}

  /** Notes the start of a run chain this process made, so that its reads need not fetch it from history. */
  noteStart(firstRunId: string, start: ChainStart): void {
    setBounded(this.chainStarts, firstRunId, start, CHAIN_STARTS_KEPT);
  }

  /**
   * Describes a task this bridge started (its mark holds for its run); of `owner` when given, of anyone otherwise (an
   * approver reads a task that is not theirs). Throws `TaskNotFoundError` for anything else.
   */
  async describe(taskId: string, owner?: string): Promise<WorkflowExecutionDescription> {
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
    const meta = description.memo?.[TASK_META_MEMO] as TaskMeta | undefined;
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
    // The mark must also be the run's own: a copy on another run (other arguments, a later start) is not the task.
    const start = await this.chainStart(description);
    const startedNear = Math.abs(start.startedAt - Date.parse(meta!.createdAt!)) <= MARK_START_TOLERANCE_MS;
    if (start.argumentsDigest !== meta!.argumentsDigest || !startedNear) throw taskNotFound(taskId);
    return description;
  }

  /**
   * The start of the run chain a described run belongs to (its first run: a workflow that continued as new or retried
   * keeps its chain): when it started and the digest of its input, read from its first history event once per process.
   */
  private async chainStart(description: WorkflowExecutionDescription): Promise<ChainStart> {
    const firstRunId = description.raw.workflowExecutionInfo?.firstRunId || description.runId;
    const known = this.chainStarts.get(firstRunId);
    if (known) return known;
    const event = await this.temporal.startEvent(description.workflowId, firstRunId);
    const payload = event?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    const input = payload ? this.temporal.client.options.loadedDataConverter.payloadConverter.fromPayload(payload) : undefined;
    const start = { startedAt: timestampToMs(event?.eventTime) ?? 0, argumentsDigest: argumentsDigest(input) };
    this.noteStart(firstRunId, start);
    return start;
  }
}

/**
 * Every question whose decisions go on record closes on record. The bridge signs a question's close when it takes the
 * answer that closes it; the close keeper signs the others, from what the workflows publish:
 * - a question that expired unanswered (after the workflow's own unsigned expiry record) or was cancelled with its
 *   task: a close saying so;
 * - a question an answer closed whose close was never written (the bridge that took the answer stopped first, or the
 *   store refused the close): a close "late by repair", once the answer is older than a grace period in which the
 *   bridge that took it still writes its own.
 *
 * It looks at the runs that published a state since its last look, one visibility query an interval (from
 * `lookbackMs` ago at start), and at the closes each publishes (`decided[].close`). What a listed memo says only names
 * candidates: each is read again through the task core (a task of this bridge, its current run, the run its records
 * name) before anything is signed. Several replicas may keep closes at once: a close is appended only while none
 * follows the question's last decision. Node only.
 */
import { CLOSE_VIA, type SignedDecisionRecord } from '../contract/decision-records';
import type { DecidedQuestion, PublishedTaskState, QuestionClose } from '../contract/task-contract';
import { changedSinceQuery } from '../mcp/tasks/change-feed';
import { describeServiceError, isTemporalUnavailable, TaskNotFoundError, TaskStateUnreadableError } from '../mcp/tasks/errors';
import { checkedMemos } from '../mcp/tasks/snapshots';
import type { TaskCore } from '../mcp/tasks/task-core';
import { log } from '../util/log';
import type { DecisionLog } from './decision-log';
import { closeStanding } from './records/closes';
import { DamagedRecordError } from './records/store-error';

/** Options of {@link CloseKeeper}. */
export interface CloseKeeperOptions {
  /** Pause between two looks. */
  intervalMs: number;
  /**
   * How long after an answer closed a question its close is left to the bridge that took it, before the keeper writes
   * it as a repair. Default {@link DEFAULT_CLOSE_GRACE_MS}.
   */
  graceMs?: number;
  /** How far back the first look goes (a bridge that was down meanwhile). Default {@link DEFAULT_CLOSE_LOOKBACK_MS}. */
  lookbackMs?: number;
}

/** The grace an answering bridge has to write its own close, by default. */
export const DEFAULT_CLOSE_GRACE_MS = 30_000;
/** How far back the first look goes, by default: a day. */
export const DEFAULT_CLOSE_LOOKBACK_MS = 24 * 3600_000;
/** Runs asked per visibility page. */
const PAGE_SIZE = 1_000;
/** How far before the last look the next one looks back: visibility's lag and the clocks' difference. */
const MARGIN_MS = 10_000;

/** A close a task published that is not on record yet. */
interface Pending extends QuestionClose {
  taskId: string;
  key: string;
}

/** See the module's comment. */
export class CloseKeeper {
  private since: number;
  /** Closes still within their grace, or whose writing failed: looked at again on the next look. */
  private readonly pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;
  private failing = false;

  constructor(
    private readonly core: TaskCore,
    private readonly decisions: DecisionLog,
    private readonly options: CloseKeeperOptions,
  ) {
    this.since = Date.now() - (options.lookbackMs ?? DEFAULT_CLOSE_LOOKBACK_MS);
  }

  /** Looks now, then every `intervalMs`, until {@link stop}. */
  start(): void {
    const next = () => {
      if (this.stopped) return;
      this.running = this.look().finally(() => {
        this.running = undefined;
        if (!this.stopped) this.timer = setTimeout(next, this.options.intervalMs).unref();
      });
    };
    next();
  }

  /** Stops looking; resolves once a look under way ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /**
   * One look (see the module's comment): the closes written. A look that fails (Temporal or the store out of reach)
   * is logged once until one succeeds, and the next looks from where this one did.
   */
  async look(now = Date.now()): Promise<SignedDecisionRecord[]> {
    try {
      const written: SignedDecisionRecord[] = [];
      const keep = async (closes: Iterable<Pending>) => {
        for (const close of closes) {
          if (this.stopped) return;
          const record = await this.keep(close, now);
          if (record) written.push(record);
        }
      };
      // Those still pending from earlier looks, then each page's as it comes: memory for one page at a time.
      await keep([...this.pending.values()]);
      const query = changedSinceQuery(this.since - MARGIN_MS);
      let token: Uint8Array | undefined;
      do {
        const page = await this.core.visibleStates(query, token, PAGE_SIZE);
        await keep(this.publishedOn(page.runs));
        token = page.next;
      } while (token && !this.stopped);
      this.since = now;
      if (this.failing) log.info('close keeper: looking again');
      this.failing = false;
      return written;
    } catch (error) {
      if (!this.failing)
        log.warn(`close keeper: a look failed, tried again in ${this.options.intervalMs} ms: ${describeServiceError(error)}`);
      this.failing = true;
      return [];
    }
  }

  /** The closes `runs` publish that are recent enough for this look (the rest were looked at before). */
  private publishedOn(runs: { workflowId: string; published?: PublishedTaskState }[]): Pending[] {
    return runs.flatMap((run) =>
      (run.published?.decided ?? [])
        .filter((decided) => decided.close && Date.parse(decided.close.at) >= this.since - MARGIN_MS)
        .map((decided) => ({ taskId: run.workflowId, key: decided.key, ...decided.close! })),
    );
  }

  /**
   * Writes the close of `close` unless it is on record, or still within its grace: the close written, or undefined.
   * Throws when Temporal or the store cannot be reached (the close stays pending).
   */
  private async keep(close: Pending, now: number): Promise<SignedDecisionRecord | undefined> {
    const { taskId, run, key, outcome } = close;
    const id = pendingKey(close);
    let records: SignedDecisionRecord[];
    try {
      records = await this.decisions.store.records(taskId);
      this.pending.set(id, close);
    } catch (error) {
      if (!(error instanceof DamagedRecordError)) throw error;
      log.warn(`close keeper: the close of question "${key}" is not written: the decision records do not check out: ${error.message}`, {
        taskId,
      });
      this.pending.delete(id);
      return undefined;
    }
    const standing = closeStanding(records, run, key);
    if (standing.state !== 'open') {
      this.pending.delete(id);
      return undefined;
    }
    const answered = outcome === 'accepted' || outcome === 'declined';
    if (answered && now - Date.parse(close.at) < (this.options.graceMs ?? DEFAULT_CLOSE_GRACE_MS)) return undefined;
    const confirmed = await this.confirmed(close);
    this.pending.delete(id);
    if (!confirmed) return undefined;
    const { last } = standing;
    const at = new Date().toISOString();
    const record = await this.decisions.appendClose(taskId, { run, key }, (seq, prev) => ({
      v: 1,
      taskId,
      run,
      seq,
      prev,
      question: last.body.question,
      shown: last.body.shown,
      decision: 'close',
      outcome,
      required: confirmed.required,
      ...(answered && { closedAt: confirmed.at }),
      by: { principal: 'workflow', person: 'workflow', auth: 'workflow', roles: [] },
      at,
      via: answered ? CLOSE_VIA.repair : outcome === 'expired' ? CLOSE_VIA.expiry : CLOSE_VIA.cancellation,
    }));
    // Another writer's close may have come first: it is on file, and nothing was written here.
    if (record.body.at !== at || record.body.by.principal !== 'workflow') return undefined;
    log.info(`close keeper: question "${key}" closed on record as ${outcome}${answered ? ' (late, by repair)' : ''}`, { taskId });
    return record;
  }

  /**
   * The close as the task itself publishes it now, read through the core (a task of this bridge; its current run, of
   * the run chain the records name); undefined when it does not, or is gone. Throws while Temporal is unreachable.
   */
  private async confirmed(close: Pending): Promise<QuestionClose | undefined> {
    try {
      const description = await this.core.describe(close.taskId);
      const decided: DecidedQuestion[] = checkedMemos(description).published?.decided ?? [];
      const now = decided.find(
        (entry) => entry.key === close.key && entry.close?.run === close.run && entry.close.outcome === close.outcome,
      )?.close;
      if (!now) return undefined;
      const original = await this.core.originalRunIdOf({ workflowId: description.workflowId, runId: description.runId });
      return original === close.run ? now : undefined;
    } catch (error) {
      if (isTemporalUnavailable(error)) throw error;
      if (!(error instanceof TaskNotFoundError) && !(error instanceof TaskStateUnreadableError)) throw error;
      return undefined;
    }
  }
}

function pendingKey(close: Pending): string {
  return JSON.stringify([close.taskId, close.run, close.key]);
}

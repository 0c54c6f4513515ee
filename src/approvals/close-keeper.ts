/**
 * Every question whose decisions go on record closes on record. The bridge signs a question's close when it takes the
 * answer that closes it; the close keeper signs the others, from what the workflows publish:
 * - a question that expired unanswered (after the workflow's own unsigned expiry record) or was cancelled with its
 *   task: a close saying so;
 * - a question an answer closed whose close was never written (the bridge that took the answer stopped first, or the
 *   store refused the close): a close "late by repair", once the answer is older than a grace period in which the
 *   bridge that took it still writes its own.
 *
 * It looks at the runs that published a state since its last look (a visibility query, paged; from `lookbackMs` ago
 * at start), and at the closes each publishes (`decided[].close`). What a listed memo says only names candidates:
 * each is read again through the task core (a task of this bridge, its current run, the run its records name) before
 * anything is signed. A close whose task or records cannot be read now is tried again on later looks, with a growing
 * pause, on its own: only Temporal out of reach ends a look. Several replicas may keep closes at once: a close is
 * appended only while none follows the question's last decision. Node only.
 */
import { CLOSE_VIA, type SignedDecisionRecord } from '../contract/decision-records';
import type { DecidedQuestion, PublishedTaskState, QuestionClose } from '../contract/task-contract';
import { setBounded } from '../util/bounded';
import {
  changedSinceQuery,
  describeServiceError,
  isTemporalUnavailable,
  TASK_ID_PATTERN,
  type ApprovalsPort,
  TaskNotFoundError,
} from '../core';
import { log } from '../util/log';
import type { DecisionLog } from './decision-log';
import { closeStanding } from '../records/closes';
import { DamagedRecordError } from '../records/store-error';

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

/**
 * The grace an answering bridge has to write its own close, by default: twice the patience of an approver's call, which
 * may retry its Update that long before it returns and writes the close.
 */
export const DEFAULT_CLOSE_GRACE_MS = 60_000;
/** How far back the first look goes, by default: a day. */
export const DEFAULT_CLOSE_LOOKBACK_MS = 24 * 3600_000;
/** Runs asked per visibility page. */
const PAGE_SIZE = 1_000;
/** How far before the last look the next one looks back: visibility's lag and the clocks' difference. */
const MARGIN_MS = 10_000;
/** Closes one run is taken at: what a task publishes (`DECIDED_KEPT`). */
const CLOSES_PER_RUN = 20;
/** Closes found settled (on record, nothing to close, not the task's), remembered so as not to read them again. */
const SETTLED_KEPT = 10_000;
/** Attempts at a close whose task or records cannot be read, and the longest pause between two. */
const MAX_ATTEMPTS = 40;
const MAX_PAUSE_MS = 15 * 60_000;

/** A close a task published that is not on record yet. */
interface Pending extends QuestionClose {
  taskId: string;
  key: string;
  /** Failed attempts so far, and when the next one is due (ms since the epoch). */
  attempts: number;
  dueAt: number;
}

/** What became of one attempt at a close. */
type Attempt = { written: SignedDecisionRecord } | 'settled' | { laterAt: number };

/** See the module's comment. */
export class CloseKeeper {
  private since: number;
  /** Closes not settled yet: within their grace, or whose attempt failed. Looked at when due. */
  private readonly pending = new Map<string, Pending>();
  /** Closes settled, by {@link closeId}. */
  private readonly settled = new Map<string, true>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;
  private failing = false;

  constructor(
    private readonly core: Pick<ApprovalsPort, 'visibleStates' | 'run' | 'originalRunIdOf'>,
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
   * One look (see the module's comment): the closes written. A look that Temporal does not answer is logged once until
   * one succeeds, and the next looks from where this one did.
   */
  async look(now = Date.now()): Promise<SignedDecisionRecord[]> {
    const written: SignedDecisionRecord[] = [];
    try {
      // Those pending from earlier looks when due, then each page's as it comes: memory for one page at a time.
      for (const close of [...this.pending.values()]) {
        if (this.stopped) break;
        if (close.dueAt <= now) await this.attempt(close, now, written);
      }
      const query = changedSinceQuery(this.since - MARGIN_MS);
      let token: Uint8Array | undefined;
      do {
        const page = await this.core.visibleStates(query, token, PAGE_SIZE);
        for (const close of this.publishedOn(page.runs, now)) {
          if (this.stopped) break;
          await this.attempt(close, now, written);
        }
        token = page.next;
      } while (token && !this.stopped);
      this.since = now;
      if (this.failing) log.info('close keeper: looking again');
      this.failing = false;
    } catch (error) {
      if (!this.failing)
        log.warn(`close keeper: a look failed, tried again in ${this.options.intervalMs} ms: ${describeServiceError(error)}`);
      this.failing = true;
    }
    return written;
  }

  /**
   * The closes `runs` publish that are neither settled nor pending: runs of task ids this bridge makes, at most a
   * task's worth of closes each, none dated ahead of now (they would wait out their grace for good).
   */
  private publishedOn(runs: { workflowId: string; published?: PublishedTaskState }[], now: number): Pending[] {
    return runs
      .filter((run) => TASK_ID_PATTERN.test(run.workflowId))
      .flatMap((run) =>
        (run.published?.decided ?? [])
          .filter((decided) => decided.close !== undefined)
          .slice(-CLOSES_PER_RUN)
          .map((decided) => ({ taskId: run.workflowId, key: decided.key, ...decided.close!, attempts: 0, dueAt: now })),
      )
      .filter((close) => {
        const at = Date.parse(close.at);
        const id = closeId(close);
        return Number.isFinite(at) && at <= now + MARGIN_MS && !this.settled.has(id) && !this.pending.has(id);
      });
  }

  /**
   * One attempt at `close`, which is then settled, pending until its grace ends, or pending again after a pause (its
   * task or records could not be read, or its close written: this close alone). Throws only while Temporal is out of
   * reach, leaving it pending, so that the look ends.
   */
  private async attempt(close: Pending, now: number, written: SignedDecisionRecord[]): Promise<void> {
    const id = closeId(close);
    let outcome: Attempt;
    try {
      outcome = await this.keep(close, now);
    } catch (error) {
      if (isTemporalUnavailable(error)) {
        this.pending.set(id, close);
        throw error;
      }
      const attempts = close.attempts + 1;
      if (attempts >= MAX_ATTEMPTS) {
        this.pending.delete(id);
        log.error(`close keeper: gave up the close of question "${close.key}" after ${attempts} attempts: ${describeServiceError(error)}`, {
          taskId: close.taskId,
        });
        return;
      }
      if (attempts === 1) {
        log.warn(`close keeper: the close of question "${close.key}" is tried again later: ${describeServiceError(error)}`, {
          taskId: close.taskId,
        });
      }
      const pause = Math.min(this.options.intervalMs * 2 ** attempts, MAX_PAUSE_MS);
      this.pending.set(id, { ...close, attempts, dueAt: now + pause });
      return;
    }
    if (outcome === 'settled' || 'written' in outcome) {
      this.pending.delete(id);
      setBounded(this.settled, id, true, SETTLED_KEPT);
      if (outcome !== 'settled') written.push(outcome.written);
    } else {
      this.pending.set(id, { ...close, dueAt: outcome.laterAt });
    }
  }

  /**
   * Writes the close of `close` unless it is settled (on record, nothing of the question on record, not what the task
   * publishes) or still within its grace. Throws what reading the task or the store throws.
   */
  private async keep(close: Pending, now: number): Promise<Attempt> {
    const { taskId, run, key, outcome } = close;
    const answered = outcome === 'accepted' || outcome === 'declined';
    const graceMs = this.options.graceMs ?? DEFAULT_CLOSE_GRACE_MS;
    const graceEnds = (at: string) => Date.parse(at) + graceMs;
    if (answered && graceEnds(close.at) > now) return { laterAt: graceEnds(close.at) };
    let records: SignedDecisionRecord[];
    try {
      records = await this.decisions.store.records(taskId);
    } catch (error) {
      if (!(error instanceof DamagedRecordError)) throw error;
      log.warn(`close keeper: the close of question "${key}" is not written: the decision records do not check out: ${error.message}`, {
        taskId,
      });
      return 'settled';
    }
    const standing = closeStanding(records, run, key);
    if (standing.state !== 'open') return 'settled';
    const confirmed = await this.confirmed(close);
    if (!confirmed) return 'settled';
    // The task's own word on when it closed: a listed state from before a reset does not cut the grace short.
    if (answered && graceEnds(confirmed.at) > now) return { laterAt: graceEnds(confirmed.at) };
    const { last } = standing;
    const { record, written } = await this.decisions.appendClose(taskId, { run, key, after: last.digest }, (seq, prev) => ({
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
      at: new Date().toISOString(),
      via: answered ? CLOSE_VIA.repair : outcome === 'expired' ? CLOSE_VIA.expiry : CLOSE_VIA.cancellation,
    }));
    // Another writer's close came first: it is on file, and nothing was written here.
    if (!written) return 'settled';
    log.info(`close keeper: question "${key}" closed on record as ${outcome}${answered ? ' (late, by repair)' : ''}`, { taskId });
    return { written: record };
  }

  /**
   * The close as the task itself publishes it now, read through the core (a task of this bridge; its current run, of
   * the run chain the records name); undefined when it does not, or is gone. Throws when the task cannot be read now.
   */
  private async confirmed(close: Pending): Promise<QuestionClose | undefined> {
    try {
      const run = await this.core.run(close.taskId);
      const decided: DecidedQuestion[] = run.published?.decided ?? [];
      const now = decided.find(
        (entry) => entry.key === close.key && entry.close?.run === close.run && entry.close.outcome === close.outcome,
      )?.close;
      if (!now) return undefined;
      const original = await this.core.originalRunIdOf(run);
      return original === close.run ? now : undefined;
    } catch (error) {
      if (error instanceof TaskNotFoundError) return undefined;
      throw error;
    }
  }
}

/** A close, as one question closed once: a question a reset reopened and closed again is another. */
function closeId(close: Pending): string {
  return JSON.stringify([close.taskId, close.run, close.key, close.outcome, close.at]);
}

import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, McpError, RELATED_TASK_META_KEY, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { checkFormContent, type InputResponse, type PendingInput } from '../../contract/task-contract';
import { INPUT_KEY_META } from '../../contract/wire';
import { canElicit } from '../calls/can-elicit';
import { plainMessage } from '../protocol/wire-errors';
import { type TaskPort, type TaskView, WRITE_PATIENCE_MS } from '../../core';
import { addBounded, setBounded } from '../../util/bounded';
import { log } from '../../util/log';
import { standaloneStreamOf } from './standalone-stream';
import { previousAnswerProblem } from '../protocol/confirmation';

/** Questions a connection remembers at most (answered, dismissed, refused); the oldest are forgotten first. */
const PER_CONNECTION_LIMIT = 1000;

/**
 * An elicitation on its way: its outcome, how to withdraw it, and for one pushed on the standalone stream (no request
 * of the client's carries it), that stream.
 */
interface Asking {
  outcome: Promise<AskOutcome>;
  pushed: boolean;
  /** The standalone stream a pushed question went out on (see {@link standaloneStreamOf}). */
  stream?: object;
  withdraw: AbortController;
}

/** How an elicitation for a pending input ended. */
type AskOutcome =
  | { kind: 'answered' }
  /** The user dismissed it (`cancel`), or it timed out: the request stays pending. */
  | { kind: 'dismissed' }
  /** The answer did not fit the requested schema: nothing was passed on. */
  | { kind: 'invalid'; problem: string }
  /** The input was answered elsewhere, or the task moved on, while this one was open. */
  | { kind: 'superseded' };

/** Tuning of the input channel. */
export interface InputChannelOptions {
  /** How long an open elicitation may wait for the user before it is withdrawn. */
  elicitationTimeoutMs: number;
  /** How long a dismissed request is not pushed again, nor asked again on the tasks/result that was dismissed. */
  dismissCooldownMs: number;
  /** How long after tasks/get reports input_required the request is pushed on the standalone stream, unless a tasks/result took it. */
  pushGraceMs: number;
}

/**
 * Asks the user for a task's pending input over one MCP connection, at most once at a time per input request,
 * and hands each answer to the workflow exactly once. Holds only connection state: which elicitations are open.
 */
export class InputChannel {
  private readonly open = new Map<string, Asking>();
  private readonly dismissedUntil = new Map<string, number>();
  private readonly problems = new Map<string, string>();
  /** Inputs answered through this connection; never asked again here. */
  private readonly answered = new Set<string>();
  /** Pushes waiting for their grace period to pass. */
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly server: Server,
    private readonly core: TaskPort,
    private readonly principal: string,
    private readonly options: InputChannelOptions,
  ) {}

  /** True when this connection's client can be asked `input` (see {@link canElicit}). */
  canAsk(input: PendingInput): boolean {
    return canElicit(this.server.getClientCapabilities()?.elicitation, input);
  }

  /**
   * Asks for `view`'s pending input on the stream of request `relatedRequestId` and waits for the outcome. If the same
   * input is already being asked on this connection (by another request, or pushed on the standalone stream the client
   * still holds), waits for that one instead: a user is never asked twice for the same answer. Only a push whose stream
   * has closed since (it may never have reached the client) is withdrawn and asked again here.
   */
  async ask(view: TaskView, relatedRequestId: RequestId | undefined, signal?: AbortSignal): Promise<AskOutcome> {
    const open = this.open.get(slotOf(view));
    if (open && !(relatedRequestId !== undefined && this.lost(open))) return open.outcome;
    if (open) {
      open.withdraw.abort();
      const pushed = await open.outcome;
      if (pushed.kind === 'answered') return pushed;
    }
    return this.start(view, relatedRequestId, signal).outcome;
  }

  /** True for a question pushed on a standalone stream that the client no longer holds (closed, or replaced). */
  private lost(asking: Asking): boolean {
    return asking.pushed && asking.stream !== standaloneStreamOf(this.server.transport);
  }

  /** True when this connection handed the workflow an answer to `key`: it is not asked again here. */
  answeredHere(taskId: string, key: string): boolean {
    return this.answered.has(`${taskId}\n${key}`);
  }

  /** Forgets what this connection knows of a task's inputs, once the task has ended. */
  forget(taskId: string): void {
    const prefix = `${taskId}\n`;
    for (const slots of [this.answered, this.dismissedUntil, this.problems]) {
      for (const slot of slots.keys()) if (slot.startsWith(prefix)) slots.delete(slot);
    }
  }

  /**
   * Called when tasks/get reports input_required: a client that only polls gets the elicitation on the standalone
   * stream, shortly after, unless it asks through tasks/result meanwhile or dismissed it recently. Nothing is pushed to
   * a client that holds no standalone stream (it would be dropped): it finds the question in tasks/get and asks for it
   * with tasks/result.
   */
  offer(view: TaskView): void {
    if (!view.input || !this.canAsk(view.input)) return;
    const slot = slotOf(view);
    if (!this.mayPush(slot)) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.mayPush(slot)) return;
      // Read again: the input may have been answered during the grace period.
      this.core.get(view.task.taskId, this.principal).then(
        async (now) => {
          if (!now.input || slotOf(now) !== slot || !this.mayPush(slot)) return;
          if (standaloneStreamOf(this.server.transport) === undefined) return;
          // A pushed question is held open like a blocked tasks/result: it counts against the principal's waits, and
          // is not pushed while they are all taken (the client still sees it in tasks/get).
          await this.core
            .waiting(this.principal, async () => {
              // Taken while the wait was: pushed only if it is still not being asked.
              if (this.mayPush(slot)) await this.start(now, undefined).outcome;
            })
            .catch(() => undefined);
        },
        () => undefined,
      );
    }, this.options.pushGraceMs);
    timer.unref();
    this.timers.add(timer);
  }

  private mayPush(slot: string): boolean {
    return !this.closed && !this.open.has(slot) && !this.answered.has(slot) && (this.dismissedUntil.get(slot) ?? 0) <= Date.now();
  }

  private start(view: TaskView, relatedRequestId: RequestId | undefined, signal?: AbortSignal): Asking {
    const slot = slotOf(view);
    const withdraw = new AbortController();
    const pushed = relatedRequestId === undefined;
    const asking: Asking = {
      pushed,
      ...(pushed && { stream: standaloneStreamOf(this.server.transport) }),
      withdraw,
      outcome: Promise.resolve({ kind: 'superseded' }),
    };
    asking.outcome = this.elicit(view, relatedRequestId, withdraw, signal)
      .catch((error: unknown): AskOutcome => {
        // The answer may not have reached the workflow: read the task afresh and ask again (a client that remembers
        // its answers gives it without asking its user).
        log.warn(`input for task ${view.task.taskId}: ${(error as Error).message}`, {
          taskId: view.task.taskId,
          principal: this.principal,
        });
        return { kind: 'superseded' };
      })
      .then((result) => {
        if (result.kind === 'answered') addBounded(this.answered, slot, PER_CONNECTION_LIMIT);
        // A dismissed question is not pushed again for a while; an explicit tasks/result still asks it.
        if (result.kind === 'dismissed')
          setBounded(this.dismissedUntil, slot, Date.now() + this.options.dismissCooldownMs, PER_CONNECTION_LIMIT);
        return result;
      })
      .finally(() => {
        if (this.open.get(slot) === asking) this.open.delete(slot);
      });
    this.open.set(slot, asking);
    return asking;
  }

  private async elicit(
    view: TaskView,
    relatedRequestId: RequestId | undefined,
    withdraw: AbortController,
    signal?: AbortSignal,
  ): Promise<AskOutcome> {
    const input = view.input!;
    const slot = slotOf(view);
    const stopWatching = this.watch(view, withdraw);
    const onCallerGone = () => withdraw.abort();
    signal?.addEventListener('abort', onCallerGone);
    try {
      const problem = this.problems.get(slot);
      const message = problem ? previousAnswerProblem(problem) + input.request.message : input.request.message;
      let result: Awaited<ReturnType<Server['elicitInput']>>;
      try {
        result = await this.server.elicitInput(
          { ...input.request, message, _meta: { [RELATED_TASK_META_KEY]: { taskId: view.task.taskId }, [INPUT_KEY_META]: input.key } },
          { relatedRequestId, signal: withdraw.signal, timeout: this.options.elicitationTimeoutMs },
        );
      } catch (error) {
        if (withdraw.signal.aborted) return { kind: 'superseded' };
        if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) return { kind: 'dismissed' };
        // The SDK checks accepted content against the requested schema: an answer that does not fit.
        if (error instanceof McpError && error.code === ErrorCode.InvalidParams) return this.invalid(slot, plainMessage(error));
        throw error;
      }
      if (result.action === 'cancel') return { kind: 'dismissed' };
      const response: InputResponse & { action: 'accept' | 'decline' } = { key: input.key, action: result.action };
      if (result.action === 'accept' && input.request.mode === 'form') {
        const contentProblem = checkFormContent(input.request.requestedSchema, result.content ?? {});
        if (contentProblem) return this.invalid(slot, contentProblem);
        response.content = result.content as InputResponse['content'];
      }
      if (withdraw.signal.aborted) return { kind: 'superseded' };
      return await this.handOver(view, response);
    } finally {
      stopWatching();
      signal?.removeEventListener('abort', onCallerGone);
    }
  }

  /**
   * Hands the user's answer to the workflow. The user has answered: a busy Temporal only slows this down (the re-read
   * and the signal are tried again while it is unreachable), it never makes the question come back.
   */
  private async handOver(view: TaskView, response: InputResponse & { action: 'accept' | 'decline' }): Promise<AskOutcome> {
    const deadline = Date.now() + WRITE_PATIENCE_MS;
    // Re-read under the answer: a second channel may have answered while this one was open. Any question still open
    // takes its answer, not only the first of several.
    const current = await this.core.getPatiently(view.task.taskId, this.principal);
    if (!stillAsked(current, response.key)) return { kind: 'superseded' };
    await this.core.respond(view, response, { principal: this.principal, via: 'elicitation' }, Math.max(0, deadline - Date.now()));
    this.problems.delete(slotOf(view));
    return { kind: 'answered' };
  }

  private invalid(slot: string, problem: string): AskOutcome {
    setBounded(this.problems, slot, problem, PER_CONNECTION_LIMIT);
    return { kind: 'invalid', problem };
  }

  /**
   * Withdraws the elicitation when its question is closed (the workflow took an answer given elsewhere, the task was
   * cancelled, ended or is gone), woken by the task's events. An answer that came in but that no workflow task has
   * taken yet closes nothing: the workflow may refuse it, and the user would then be asked again.
   */
  private watch(view: TaskView, withdraw: AbortController): () => void {
    const key = view.input!.key;
    const stop = new AbortController();
    const follower = this.core.follow(view.task.taskId, this.principal, {
      from: view,
      signal: AbortSignal.any([stop.signal, withdraw.signal]),
    });
    void (async () => {
      try {
        for await (const seen of follower) if (!stillAsked(seen, key)) return withdraw.abort();
      } catch {
        // Gone (not found): nothing left to answer.
        withdraw.abort();
      }
    })();
    return () => stop.abort();
  }

  /** Ends what this channel has under way: pending pushes and open elicitations (the connection closed). */
  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const asking of this.open.values()) asking.withdraw.abort();
  }
}

/**
 * Whether the workflow still asks `key`: outstanding, or answered by a signal it has not taken yet (it may refuse that
 * answer; one more answer to a question it closed meanwhile is ignored by the workflow).
 */
function stillAsked(view: TaskView, key: string): boolean {
  return view.inputs.some((input) => input.key === key) || (view.answersAwaitingWorker?.includes(key) ?? false);
}

function slotOf(view: TaskView): string {
  return `${view.task.taskId}\n${view.input!.key}`;
}

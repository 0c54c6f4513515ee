/**
 * The page following one task. It remembers the task id and nothing else the server said: every poll asks
 * `task_status` again (and `task_result` once the task has ended), so a reload shows the same page.
 */
import { ActionsPanel } from './actions-panel';
import { CancelControl } from './cancel-control';
import { h, messageOf, replaceChildren, uniqueId } from './dom';
import { QuestionsPanel } from './form';
import { ProgressPanel } from './progress-panel';
import { renderResult, type Formatting } from './result';
import { readStatus, type TaskTools, type ToolResult } from './tools';
import { TERMINAL_STATUSES, type StatusReport, type TaskAction, type TaskStatus } from './types';

/** What the page needs from the host besides the tools. */
export interface PageHost {
  tools: TaskTools;
  /** Opens a URL through the host; false when the host cannot. */
  openLink(url: string): Promise<boolean>;
  /** The output schema of the tool that started the task, when the host tells it. */
  outputSchema(): unknown;
  formatting(): Formatting;
}

/** How each status reads on the badge. */
const STATUS_LABELS: Record<TaskStatus, string> = {
  working: 'Working',
  input_required: 'Input required',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

/** Poll interval when the task does not suggest one, and the floor for one it does. */
const DEFAULT_POLL_MS = 2000;
const MIN_POLL_MS = 500;
/** Retry delay after the host or server could not be reached. */
const RETRY_MS = 5000;
/**
 * A task reads cancelled as soon as the cancel is accepted, while its work may still be winding down; the status
 * message then changes once more (to say what was done before the cancel). It is followed this long, or until it has
 * changed.
 */
const CANCEL_SETTLE_MS = 30_000;

/** The task view's page: header, status, questions, actions, result and the cancel control. */
export class TaskPage {
  private taskId: string | undefined;
  /** Bumped whenever another task is followed; answers for an older one are dropped. */
  private generation = 0;
  private polling: ReturnType<typeof setTimeout> | undefined;
  private inFlight = false;
  private pollAgain = false;
  private stopped = false;
  private resultShown = false;
  /**
   * For a task found by its call (`task_find`): asks about the task by that call again. Used once a host refuses the
   * calls that name the task (MCP Inspector 2.12 in its 2026-07-28 mode does not send an App's calls with the
   * `Mcp-Param-TaskId` header the server requires); the result then comes from the host, when the call ends.
   */
  private byCall: (() => Promise<ToolResult>) | undefined;
  /** Whether the task is followed by its call (see {@link byCall}). */
  private viaCall = false;
  /** The final result the host handed over while a task is followed: shown when the task is followed by its call. */
  private hostResult: ToolResult | undefined;
  /** What the host said when it cancelled the call (`ui/notifications/tool-cancelled`), once it has. */
  private hostCancel: { reason: string | undefined } | undefined;
  /** When the task was first seen cancelled, and the status message it had then. */
  private cancelSeen: { at: number; message: string | undefined } | undefined;

  private readonly title = h('h1', {}, 'Task');
  private readonly taskLine = h('p', { class: 'task-id', hidden: true });
  private readonly statusRegion = h('div', { class: 'status', 'aria-live': 'polite', 'aria-atomic': 'true' });
  private readonly progress = new ProgressPanel();
  private readonly notice = h('p', { class: 'notice warning', role: 'status', hidden: true });
  private readonly questions: QuestionsPanel;
  private readonly actions = new ActionsPanel((action) => this.runAction(action));
  private readonly resultBody = h('div', { class: 'result' });
  private readonly resultSection: HTMLElement;
  private readonly cancel = new CancelControl(() => this.cancelTask());

  constructor(
    private readonly host: PageHost,
    root: HTMLElement,
  ) {
    this.questions = new QuestionsPanel({
      accept: (key, content) => this.host.tools.accept(this.requireTask(), key, content),
      decline: (key) => this.host.tools.decline(this.requireTask(), key),
      openLink: (url) => this.host.openLink(url),
      answered: () => void this.refresh(),
    });
    const resultHeadingId = uniqueId('result-heading');
    this.resultSection = h(
      'section',
      { class: 'panel', 'aria-labelledby': resultHeadingId, hidden: true },
      h('h2', { id: resultHeadingId }, 'Result'),
      this.resultBody,
    );
    replaceChildren(this.statusRegion, h('p', { class: 'waiting' }, 'Waiting for the task…'));
    replaceChildren(
      root,
      h(
        'main',
        { class: 'page' },
        h('header', { class: 'page-header' }, this.title, this.taskLine),
        this.statusRegion,
        this.progress.element,
        this.notice,
        this.questions.element,
        this.actions.element,
        this.resultSection,
        this.cancel.element,
      ),
    );
    document.addEventListener('visibilitychange', () => {
      if (document.hidden) this.stopPolling();
      else void this.refresh();
    });
  }

  /** Names the page after the tool that started the task. */
  setTitle(title: string | undefined): void {
    this.title.textContent = title || 'Task';
  }

  /**
   * Follows `taskId`, unless it is followed already. `byCall`: the task was found by its call, and this asks about it
   * that way, should the host refuse the calls that name the task.
   */
  follow(taskId: string, byCall?: () => Promise<ToolResult>): void {
    if (taskId === this.taskId) return;
    this.taskId = taskId;
    this.byCall = byCall;
    this.viaCall = false;
    this.hostResult = undefined;
    this.generation += 1;
    this.stopPolling();
    this.inFlight = false;
    this.pollAgain = false;
    this.stopped = false;
    this.resultShown = false;
    this.cancelSeen = undefined;
    this.hostCancel = undefined;
    replaceChildren(this.taskLine, 'Task ID ', h('code', {}, taskId));
    this.taskLine.hidden = false;
    replaceChildren(this.statusRegion, h('p', { class: 'waiting' }, 'Loading the task…'));
    this.progress.show(undefined);
    this.showNotice(undefined);
    this.questions.clear();
    this.actions.update([]);
    this.actions.clearOutcome();
    this.resultSection.hidden = true;
    this.resultBody.replaceChildren();
    this.cancel.show(false);
    void this.refresh();
  }

  /**
   * Shows a finished call's result as the host handed it, when it names no task to follow (a host that followed the
   * task itself hands the view only the final result). A task followed already is left to its polls.
   */
  showFinal(result: ToolResult): void {
    if (this.taskId !== undefined) {
      // Followed by its call, the task's result can come only from the host (kept until the view knows it must).
      this.hostResult = result;
      if (this.viaCall && !this.resultShown) this.showResult(result);
      return;
    }
    this.stopped = true;
    this.stopPolling();
    const status: TaskStatus = result.isError ? 'failed' : 'completed';
    replaceChildren(
      this.statusRegion,
      h('p', { class: 'status-line' }, h('span', { class: 'badge', 'data-status': status }, STATUS_LABELS[status])),
    );
    this.cancel.show(false);
    this.showResult(result);
  }

  /**
   * The host cancelled the tool call (`ui/notifications/tool-cancelled`). A task followed here is asked about at once,
   * and its own status says the rest (with the host's words once it reads cancelled). A host that followed the task
   * itself hands over no result after a cancel: the page says the task was cancelled and stops waiting for one.
   */
  cancelledByHost(reason: string | undefined): void {
    if (this.taskId !== undefined) {
      this.hostCancel = { reason };
      void this.refresh();
      return;
    }
    this.stopped = true;
    this.stopPolling();
    replaceChildren(
      this.statusRegion,
      h('p', { class: 'status-line' }, h('span', { class: 'badge', 'data-status': 'cancelled' }, STATUS_LABELS.cancelled)),
      h('p', { class: 'status-message notice danger' }, cancelledText(reason)),
    );
    this.cancel.show(false);
  }

  /** Whether a task is followed already. */
  get following(): boolean {
    return this.taskId !== undefined;
  }

  /** Tells that the page could not reach the host at all. */
  disconnected(error: unknown): void {
    this.showNotice(`This view could not connect to the chat: ${messageOf(error)}`);
  }

  /** Asks the server for the task's status now, and shows the result once it has ended. */
  async refresh(): Promise<void> {
    const taskId = this.taskId;
    if (taskId === undefined || this.stopped) return;
    if (this.inFlight) {
      this.pollAgain = true;
      return;
    }
    this.stopPolling();
    this.inFlight = true;
    const generation = this.generation;
    let next: number | undefined;
    try {
      const answer = await this.statusOf(taskId);
      if (generation !== this.generation) return;
      if (answer.isError) {
        this.notFound();
        return;
      }
      const report = readStatus(answer.structuredContent);
      if (!report) {
        this.showNotice('The task status could not be read. Trying again…');
        next = RETRY_MS;
        return;
      }
      this.showNotice(undefined);
      this.show(report);
      const interval = Math.max(MIN_POLL_MS, report.task.pollInterval ?? DEFAULT_POLL_MS);
      if (!TERMINAL_STATUSES.includes(report.task.status)) {
        next = interval;
      } else {
        if (this.settling(report)) next = interval;
        if (!this.resultShown && this.viaCall && this.hostResult) {
          this.showResult(this.hostResult);
        } else if (!this.resultShown && !this.viaCall) {
          const result = await this.host.tools.result(taskId);
          if (generation !== this.generation) return;
          this.showResult(result);
        }
      }
    } catch (error) {
      if (generation !== this.generation) return;
      this.showNotice(`The server could not be reached (${messageOf(error)}). Trying again…`);
      next = RETRY_MS;
    } finally {
      if (generation === this.generation) {
        this.inFlight = false;
        if (this.pollAgain) {
          this.pollAgain = false;
          void this.refresh();
        } else if (next !== undefined) {
          this.schedule(next);
        }
      }
    }
  }

  /** `task_status`, or the call's `task_find` once the host has refused `task_status` for a task found by its call. */
  private async statusOf(taskId: string): Promise<ToolResult> {
    if (!this.viaCall) {
      try {
        return await this.host.tools.status(taskId);
      } catch (error) {
        if (!this.byCall) throw error;
        this.viaCall = true;
      }
    }
    return this.byCall!();
  }

  /** Whether a cancelled task's status message may still change (see {@link CANCEL_SETTLE_MS}). */
  private settling(report: StatusReport): boolean {
    if (report.task.status !== 'cancelled') return false;
    this.cancelSeen ??= { at: Date.now(), message: report.task.statusMessage };
    return report.task.statusMessage === this.cancelSeen.message && Date.now() - this.cancelSeen.at < CANCEL_SETTLE_MS;
  }

  private schedule(delay: number): void {
    this.stopPolling();
    if (document.hidden) return;
    this.polling = setTimeout(() => void this.refresh(), delay);
  }

  private stopPolling(): void {
    if (this.polling !== undefined) clearTimeout(this.polling);
    this.polling = undefined;
  }

  private requireTask(): string {
    if (this.taskId === undefined) throw new Error('no task is shown');
    return this.taskId;
  }

  /** An unknown task: the page says so and nothing else, and stops asking. */
  private notFound(): void {
    this.stopped = true;
    this.stopPolling();
    replaceChildren(this.statusRegion, h('p', { class: 'notice danger' }, 'Task not found'));
    this.taskLine.hidden = true;
    this.progress.show(undefined);
    this.showNotice(undefined);
    this.questions.clear();
    this.actions.update([]);
    this.actions.clearOutcome();
    this.resultSection.hidden = true;
    this.cancel.show(false);
  }

  private show(report: StatusReport): void {
    const { status } = report.task;
    const terminal = TERMINAL_STATUSES.includes(status);
    // A task waiting on a question usually says the question as its status too: the question's card shows it once.
    const statusMessage =
      terminal || !report.questions.some((question) => question.message.trim() === report.task.statusMessage?.trim())
        ? report.task.statusMessage
        : undefined;
    const byHost = status === 'cancelled' && this.hostCancel ? cancelledText(this.hostCancel.reason) : undefined;
    const signature = JSON.stringify([status, statusMessage, byHost]);
    if (this.statusRegion.dataset.signature !== signature) {
      this.statusRegion.dataset.signature = signature;
      const prominent = status === 'failed' || status === 'cancelled';
      replaceChildren(
        this.statusRegion,
        h('p', { class: 'status-line' }, h('span', { class: 'badge', 'data-status': status }, STATUS_LABELS[status])),
        byHost && h('p', { class: 'status-message notice danger' }, byHost),
        statusMessage && h('p', { class: prominent ? 'status-message notice danger' : 'status-message' }, statusMessage),
      );
    }
    this.progress.show(terminal ? undefined : report.progress);
    this.questions.update(terminal ? [] : report.questions);
    this.actions.update(report.actions);
    this.cancel.show(!terminal);
  }

  private showResult(result: ToolResult): void {
    this.resultShown = true;
    replaceChildren(this.resultBody, ...renderResult(result, this.host.outputSchema(), this.host.formatting()));
    this.resultSection.hidden = false;
  }

  private showNotice(text: string | undefined): void {
    this.notice.textContent = text ?? '';
    this.notice.hidden = text === undefined;
  }

  private async runAction(action: TaskAction): Promise<ToolResult> {
    try {
      return await this.host.tools.run(action, this.requireTask());
    } finally {
      void this.refresh();
    }
  }

  private async cancelTask(): Promise<ToolResult> {
    try {
      return await this.host.tools.cancel(this.requireTask());
    } finally {
      void this.refresh();
    }
  }
}

/** What the page says of a call the host cancelled, with the host's reason if it gave one. */
function cancelledText(reason: string | undefined): string {
  return reason ? `The task was cancelled (${reason}).` : 'The task was cancelled.';
}

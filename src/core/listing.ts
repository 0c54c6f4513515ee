/**
 * Listing a principal's tasks: one visibility query a page, in the order the store keeps them, with the store's own
 * page token in an opaque cursor bound to the principal. Tasks created here lately that the store does not show yet
 * are listed first, so that a task `tasks/get` can read is also found by `tasks/list`.
 */
import { temporal } from '@temporalio/proto';
import { PRINCIPAL_SEARCH_ATTRIBUTE, TASK_STATE_MEMO, type PublishedTaskState } from '../contract/task-contract';
import { readTaskState } from '../contract/memo-schemas';
import { setBounded } from '../util/bounded';
import { log } from '../util/log';
import type { ReplicaSharedState } from './shared-state';
import { isTemporalUnavailable, TaskStateUnreadableError } from './errors';
import { decodeCursor, encodeCursor, listBinding } from './list-cursor';
import { assertValidPrincipal } from './principal';
import type { TaskReads } from './reads';
import type { TaskView } from './task-view';
import type { TemporalAccess } from './temporal-access';

/**
 * How long a task this process created is listed even if the visibility store does not show it yet: the store lags
 * the start by up to a second or so.
 */
const RECENT_CREATION_MS = 60_000;

/**
 * A task id that may be written into a visibility query as it is: the ids the bridge makes (`<prefix>-<uuid>`) and
 * anything else without a quote, a backslash or a space. Another one, put into the shared state by someone who can
 * write its database, is dropped rather than let into a query, where it would break the listing or change its meaning.
 */
const QUERYABLE_TASK_ID = /^[A-Za-z0-9._:@+/-]{1,255}$/;

/** The principal's tasks, a page at a time (see the module's comment). */
export class TaskListing {
  /** Tasks created here lately, per principal (task id → creation time): listed while visibility catches up. */
  private readonly recent = new Map<string, Map<string, number>>();
  /** Tasks the store was seen to show, of those the shared state notes: not listed ahead of the store again. */
  private readonly shown = new Map<string, number>();

  constructor(
    private readonly temporal: TemporalAccess,
    private readonly reads: TaskReads,
    /** The replicas' shared state: a task created through one replica is listed through the others at once. */
    private readonly shared?: ReplicaSharedState,
  ) {}

  /**
   * The principal's tasks, a page at a time, in the order the visibility store keeps them (the SQL stores: open tasks
   * first, each group newest first). Each page is one visibility request with the store's own page token, so every
   * page costs the same however many tasks there are; the cursor carries that token, bound to the principal.
   */
  async list(principal: string, cursor?: string): Promise<{ views: TaskView[]; nextCursor?: string }> {
    assertValidPrincipal(principal);
    const query = `${PRINCIPAL_SEARCH_ATTRIBUTE} = '${principal}'`;
    const binding = listBinding(principal, query);
    const token = cursor === undefined ? undefined : decodeCursor(cursor, binding);
    // Asked before the page, so that a task the store shows by then is on one of its pages (visibility only catches up).
    const unseen = cursor === undefined ? await this.notYetVisible(principal) : [];
    const { ids: listed, next } = await this.visiblePage(query, token);
    // The first page also names what this process created lately and the store does not show yet (newest first).
    const ids = [...unseen.filter((id) => !listed.includes(id)), ...listed];
    return { views: await this.readAll(ids, principal), ...(next && { nextCursor: encodeCursor(next, binding) }) };
  }

  /**
   * The principal's tasks started within the last `withinMs` (at most one page of them, open ones first, each group
   * newest first), those created here that the store does not show yet among them. One visibility request (two while
   * such tasks exist), whatever the principal's history holds.
   */
  async startedWithin(principal: string, withinMs: number): Promise<TaskView[]> {
    assertValidPrincipal(principal);
    const since = new Date(Date.now() - withinMs);
    const unseen = await this.notYetVisible(principal);
    const { ids: listed } = await this.visiblePage(
      `${PRINCIPAL_SEARCH_ATTRIBUTE} = '${principal}' AND StartTime >= '${since.toISOString()}'`,
      undefined,
    );
    const views = await this.readAll([...unseen.filter((id) => !listed.includes(id)), ...listed], principal);
    // A task that continued as new lately started long ago: its creation, not its run's start, says how recent it is.
    return views.filter((view) => Date.parse(view.task.createdAt) >= since.getTime());
  }

  /** Reads each task for `principal`: one deleted by retention meanwhile, or unreadable, is left out; an outage is thrown. */
  private async readAll(ids: readonly string[], principal: string): Promise<TaskView[]> {
    const views = await Promise.all(
      ids.map((id) =>
        this.reads.get(id, principal, { watch: false }).catch((error: unknown) => {
          if (isTemporalUnavailable(error)) throw error;
          // A task whose state cannot be read is left out of the list; a read of it says why.
          if (error instanceof TaskStateUnreadableError) log.warn(`tasks/list: left out: ${error.message}`, { taskId: id, principal });
          return undefined;
        }),
      ),
    );
    return views.filter((view): view is TaskView => view !== undefined);
  }

  /**
   * Notes a task this process just created for `principal`, so that {@link list} finds it before the store does: in
   * this process, and in the replicas' shared state when there is one (a failure there is logged: the task exists, and
   * the other replicas list it once the store shows it).
   */
  async remember(principal: string, taskId: string): Promise<void> {
    this.rememberHere(principal, taskId);
    await this.shared?.noteCreated(principal, taskId).catch((error: Error) => {
      log.warn(
        `a new task is listed through the other replicas only once visibility shows it: ${this.shared?.location()}: ${error.message}`,
        {
          taskId,
          principal,
        },
      );
    });
  }

  private rememberHere(principal: string, taskId: string): void {
    let own = this.recent.get(principal);
    if (!own) {
      own = new Map();
      setBounded(this.recent, principal, own, 10_000);
    }
    // The newest hundred: older ones are in the store by the time that many were created (it lags by about a second).
    setBounded(own, taskId, Date.now(), 100);
  }

  /**
   * One page of a visibility query: the workflow ids on it (a workflow that continued as new is listed once per run;
   * the task is the workflow), and the store's token of the next page, if any.
   */
  async visiblePage(query: string, token: Uint8Array | undefined): Promise<{ ids: string[]; next?: Uint8Array }> {
    const { executions, next } = await this.page(query, token, this.temporal.options.pageSize);
    const ids = [...new Set(executions.map((info) => info.execution?.workflowId).filter((id): id is string => !!id))];
    return { ids, ...(next && { next }) };
  }

  /** One page of a visibility query, under the RPC deadline: its runs, and the store's token of the next page, if any. */
  private async page(
    query: string,
    token: Uint8Array | undefined,
    pageSize: number,
  ): Promise<{ executions: temporal.api.workflow.v1.IWorkflowExecutionInfo[]; next?: Uint8Array }> {
    const page = await this.temporal.rpc(() =>
      this.temporal.client.workflowService.listWorkflowExecutions({
        namespace: this.temporal.namespace,
        query,
        pageSize,
        ...(token && { nextPageToken: token }),
      }),
    );
    const next = page.nextPageToken && page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
    return { executions: page.executions ?? [], ...(next && { next }) };
  }

  /**
   * One page of the runs a visibility query finds, each with the task state its memo publishes, decoded (undefined when
   * it publishes none, or one that cannot be decoded or read). What a run's memo says is unchecked: it names candidates,
   * to be read again through {@link TaskReads} rules before anything is done on them.
   */
  async visibleStates(
    query: string,
    token: Uint8Array | undefined,
    pageSize = this.temporal.options.pageSize,
  ): Promise<{ runs: { workflowId: string; runId: string; published?: PublishedTaskState }[]; next?: Uint8Array }> {
    const { executions, next } = await this.page(query, token, pageSize);
    const runs = await Promise.all(
      executions.map(async (info) => {
        const workflowId = info.execution?.workflowId ?? '';
        const runId = info.execution?.runId ?? '';
        const payload = info.memo?.fields?.[TASK_STATE_MEMO];
        let published: PublishedTaskState | undefined;
        try {
          published = payload ? readTaskState({ [TASK_STATE_MEMO]: await this.temporal.decodePayload(payload) }) : undefined;
        } catch {
          published = undefined;
        }
        return { workflowId, runId, ...(published && { published }) };
      }),
    );
    return { runs: runs.filter((run) => run.workflowId !== ''), ...(next && { next }) };
  }

  /**
   * Tasks created here for `principal` within {@link RECENT_CREATION_MS} that the visibility store does not show yet,
   * newest first. Costs one visibility request, and only while such tasks exist; the ones the store shows are forgotten
   * (the listing made after this request has them, on their own page).
   */
  private async notYetVisible(principal: string): Promise<string[]> {
    if (this.shared) {
      // Other replicas' creations too: taken into this process's record, oldest first, so that the newest stays last.
      const created = await this.shared.createdWithin(principal, RECENT_CREATION_MS, 100).catch((error: Error) => {
        log.warn(`tasks/list shows the tasks other replicas created lately only once visibility does: ${error.message}`, { principal });
        return [];
      });
      const own = this.recent.get(principal);
      for (const taskId of [...created].reverse()) {
        if (!QUERYABLE_TASK_ID.test(taskId)) {
          log.warn('tasks/list: left out a task id of the shared state that is not one the bridge makes', {
            principal,
            taskId: JSON.stringify(taskId).slice(0, 100),
          });
          continue;
        }
        if (!own?.has(taskId) && !this.shown.has(taskId)) this.rememberHere(principal, taskId);
      }
    }
    const own = this.recent.get(principal);
    if (!own) return [];
    for (const [taskId, at] of own) if (Date.now() - at > RECENT_CREATION_MS) own.delete(taskId);
    if (own.size === 0) {
      this.recent.delete(principal);
      return [];
    }
    const candidates = [...own.keys()];
    const ids = candidates.map((id) => `'${id}'`).join(', ');
    const page = await this.temporal.rpc(() =>
      this.temporal.client.workflowService.listWorkflowExecutions({
        namespace: this.temporal.namespace,
        query: `${PRINCIPAL_SEARCH_ATTRIBUTE} = '${principal}' AND WorkflowId IN (${ids})`,
        pageSize: candidates.length,
      }),
    );
    for (const info of page.executions ?? []) {
      const taskId = info.execution?.workflowId;
      if (!taskId) continue;
      own.delete(taskId);
      // The store shows it: another replica's note of it is not taken again.
      if (this.shared) setBounded(this.shown, taskId, Date.now(), 10_000);
    }
    return candidates.filter((id) => own.has(id)).reverse();
  }
}

/** A task core held in a map, for the front-ends' tests in memory: the views the real one would answer, no Temporal. */
import { z } from 'zod';
import { TaskNotFoundError } from '../../src/core/errors';
import type { CreatedTask } from '../../src/core/lifecycle';
import type { ActionOutcome } from '../../src/core/actions';
import type { TaskFollowing, TaskPort } from '../../src/core/ports';
import { taskViewOf, type TaskView, type WorkflowSnapshot } from '../../src/core/task-view';
import { defineWorkflowTool } from '../../src/mcp/tools/define';

export const PRINCIPAL = 'local:front-end-test';

export const report = defineWorkflowTool({
  name: 'report',
  description: 'Makes a report.',
  workflowType: 'reportWorkflow',
  inputSchema: z.object({ region: z.string() }),
  taskSupport: 'optional',
});

export function view(workflowId: string, overrides: Partial<WorkflowSnapshot> = {}): TaskView {
  return taskViewOf(
    {
      workflowId,
      runId: 'run-1',
      status: 'RUNNING',
      startTime: new Date('2026-01-01T00:00:00.000Z'),
      historyLength: 5,
      cancelRequested: false,
      published: { status: 'working', statusMessage: 'Working', updatedAt: '2026-01-01T00:00:01.000Z' },
      ...overrides,
    },
    { pollIntervalMs: 1000 },
  );
}

/**
 * A task port that holds its tasks in a map and records what it was asked; `failWith` makes every read fail. It has no
 * quotas, and it takes no answers: a test that writes to a task runs against a real core.
 */
export class FakeCore implements TaskPort {
  readonly tasks = new Map<string, TaskView>();
  readonly created: Array<{ tool: string; input: unknown; principal: string; options: unknown }> = [];
  failWith: unknown;

  async takeOperation(_principal: string): Promise<void> {}

  waiting<T>(_principal: string, work: () => Promise<T>): Promise<T> {
    return work();
  }

  async create(tool: { name: string }, input: unknown, principal: string, options: unknown): Promise<CreatedTask> {
    this.created.push({ tool: tool.name, input, principal, options });
    const created = view(`report-${this.created.length}`);
    this.tasks.set(created.task.taskId, created);
    return { ...created, replayed: false };
  }

  async get(taskId: string, principal: string): Promise<TaskView> {
    if (this.failWith) throw this.failWith;
    const found = this.tasks.get(taskId);
    if (!found || principal !== PRINCIPAL) throw new TaskNotFoundError(taskId);
    return found;
  }

  getPatiently(taskId: string, principal: string): Promise<TaskView> {
    return this.get(taskId, principal);
  }

  async ownedWorkflowId(taskId: string, principal: string): Promise<string> {
    return (await this.get(taskId, principal)).workflowId;
  }

  async startedWithin(principal: string): Promise<TaskView[]> {
    return principal === PRINCIPAL ? [...this.tasks.values()].reverse() : [];
  }

  async cancel(taskId: string, principal: string): Promise<TaskView> {
    const found = await this.get(taskId, principal);
    const cancelled = view(found.workflowId, { status: 'CANCELLED', published: undefined });
    this.tasks.set(taskId, cancelled);
    return cancelled;
  }

  respond(): Promise<void> {
    return Promise.reject(new Error('the fake core takes no answers'));
  }

  answer(): Promise<string[]> {
    return Promise.reject(new Error('the fake core takes no answers'));
  }

  sendAction<Result>(): Promise<ActionOutcome<Result>> {
    return Promise.reject(new Error('the fake core sends no actions'));
  }

  async list(principal: string, cursor?: string): Promise<{ views: TaskView[]; nextCursor?: string }> {
    const all = principal === PRINCIPAL ? [...this.tasks.values()] : [];
    const from = cursor === undefined ? 0 : Number(cursor);
    return { views: all.slice(from, from + 2), ...(from + 2 < all.length && { nextCursor: String(from + 2) }) };
  }

  /** Follows a task by reading it once: enough for one that has ended. */
  follow(taskId: string, principal: string): TaskFollowing {
    const get = () => this.get(taskId, principal);
    return {
      latest: undefined,
      readAgainIn: () => undefined,
      readAgainWithin: () => undefined,
      async *[Symbol.asyncIterator]() {
        yield await get();
      },
    };
  }
}

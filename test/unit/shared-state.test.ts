/**
 * The replicas' shared state without a database of its own: the listing over fakes of Temporal's visibility (a task
 * another replica created is listed first while the store does not show it yet, and once when it does; without the
 * shared state the listing is this process's), and a database that cannot be reached, not asked again for a while.
 */
import { TaskListing } from '../../src/core/listing';
import type { TaskReads } from '../../src/core/reads';
import { PostgresSharedState, SharedStateUnavailableError, type ReplicaSharedState } from '../../src/core/shared-state';
import type { TaskView } from '../../src/core/task-view';
import type { TemporalAccess } from '../../src/core/temporal-access';
import { fakeSharedState } from '../helpers/shared-state';

/** Visibility that shows the ids in `visible`, for a listing or an `IN (…)` query alike. */
function visibility(visible: Set<string>) {
  const queries: string[] = [];
  const temporal = {
    namespace: 'default',
    options: { pageSize: 20 },
    rpc: <T>(work: () => Promise<T>) => work(),
    client: {
      workflowService: {
        listWorkflowExecutions: async ({ query }: { query: string }) => {
          queries.push(query);
          const asked = /WorkflowId IN \((.*)\)/.exec(query)?.[1];
          const ids = asked ? asked.split(', ').map((id) => id.slice(1, -1)) : [...visible];
          return { executions: ids.filter((id) => visible.has(id)).map((workflowId) => ({ execution: { workflowId } })) };
        },
      },
    },
  };
  return { temporal: temporal as unknown as TemporalAccess, queries };
}

const reads = { get: async (taskId: string) => ({ workflowId: taskId, task: { taskId } }) as unknown as TaskView } as unknown as TaskReads;

function shared(created: string[], fail = false): ReplicaSharedState {
  return fakeSharedState({ createdWithin: async () => (fail ? Promise.reject(new Error('connection refused')) : created) });
}

const idsOf = (views: TaskView[]) => views.map((view) => view.workflowId);

test('a task another replica created is listed first until the store shows it, then once, on its place', async () => {
  const visible = new Set(['old-1']);
  const { temporal } = visibility(visible);
  const listing = new TaskListing(temporal, reads, shared(['new-2', 'new-1']));
  expect(idsOf((await listing.list('alice')).views)).toEqual(['new-2', 'new-1', 'old-1']);
  visible.add('new-1');
  visible.add('new-2');
  expect(idsOf((await listing.list('alice')).views).sort()).toEqual(['new-1', 'new-2', 'old-1']);
});

test('a task id in the shared state that is not one the bridge makes (a quote) never reaches a visibility query, and the listing stands', async () => {
  const { temporal, queries } = visibility(new Set(['old-1']));
  const listing = new TaskListing(temporal, reads, shared(["x') OR WorkflowId != ('", 'new-1']));
  expect(idsOf((await listing.list('bob')).views)).toEqual(['new-1', 'old-1']);
  expect(queries.some((query) => query.includes("x')"))).toBe(false);
  expect(queries).toContain("McpPrincipal = 'bob' AND WorkflowId IN ('new-1')");
});

test('without the shared state (unreachable), the listing is what this process and the store know', async () => {
  const { temporal } = visibility(new Set(['old-1']));
  const listing = new TaskListing(temporal, reads, shared([], true));
  await listing.remember('alice', 'mine-1');
  expect(idsOf((await listing.list('alice')).views)).toEqual(['mine-1', 'old-1']);
});

test('a shared state that cannot be reached is not asked again for a while: the next calls fail at once, for their callers to count alone', async () => {
  const state = new PostgresSharedState('postgresql://nobody:secret@127.0.0.1:1/none');
  try {
    await expect(state.takeTokens('alice', 1, 2, 1)).rejects.toThrow(SharedStateUnavailableError);
    await expect(state.takeTokens('alice', 1, 2, 1)).rejects.toThrow(/is not asked for a few seconds after it failed/);
    await expect(state.noteCreated('alice', 'task-1')).rejects.toThrow(SharedStateUnavailableError);
    // The password is never in what is said.
    expect(state.location()).toBe('the shared state of postgresql://nobody:***@127.0.0.1:1/none');
  } finally {
    await state.close();
  }
});

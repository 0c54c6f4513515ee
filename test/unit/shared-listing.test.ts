/**
 * The listing with the replicas' shared state, over fakes of Temporal's visibility: a task another replica created is
 * listed first while the store does not show it yet, once only when it does, and the listing goes on without the
 * shared state when that cannot be reached.
 */
import { TaskListing } from '../../src/mcp/tasks/listing';
import type { TaskReads } from '../../src/mcp/tasks/reads';
import type { ReplicaSharedState } from '../../src/mcp/tasks/shared-state';
import type { TaskView } from '../../src/mcp/tasks/task-view';
import type { TemporalAccess } from '../../src/mcp/tasks/temporal-access';

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
  return {
    takeToken: async () => undefined,
    noteCreated: async () => undefined,
    createdWithin: async () => (fail ? Promise.reject(new Error('connection refused')) : created),
    beginWait: async () => undefined,
    reserveTask: async () => ({ open: 0 }),
    describe: () => 'the shared state of a test',
    close: async () => undefined,
  };
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

test('without the shared state (unreachable), the listing is what this process and the store know', async () => {
  const { temporal } = visibility(new Set(['old-1']));
  const listing = new TaskListing(temporal, reads, shared([], true));
  await listing.remember('alice', 'mine-1');
  expect(idsOf((await listing.list('alice')).views)).toEqual(['mine-1', 'old-1']);
});

/**
 * The change feed's own logic over a scripted visibility: which rows are changes of a followed run, where each query
 * looks back from, when a kept read is vouched for. Visibility itself is exercised against Temporal in
 * test/mcp/change-feed.test.ts.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { ChangeFeed, changedSinceQuery, changeStampOf } from '../../src/core/change-feed';
import { pollUntil } from '../../src/util/wait';

const { WORKFLOW_EXECUTION_STATUS_RUNNING: RUNNING, WORKFLOW_EXECUTION_STATUS_COMPLETED: COMPLETED } =
  temporal.api.enums.v1.WorkflowExecutionStatus;

type Row = temporal.api.workflow.v1.IWorkflowExecutionInfo;

function stamped(ms: number | undefined): temporal.api.common.v1.ISearchAttributes {
  if (ms === undefined) return { indexedFields: {} };
  const data = Buffer.from(JSON.stringify(new Date(ms).toISOString()));
  return { indexedFields: { McpChangedAt: { metadata: { encoding: Buffer.from('json/plain') }, data } } };
}

function row(workflowId: string, runId: string, status: number, stamp?: number): Row {
  return { execution: { workflowId, runId }, status, searchAttributes: stamped(stamp) };
}

/** A client whose visibility answers each query with the next scripted rows (none once the script is spent). */
function scriptedVisibility(script: Row[][]): { client: Client; queries: string[] } {
  const queries: string[] = [];
  const client = {
    options: { namespace: 'default' },
    connection: { withDeadline: (_deadline: number, work: () => Promise<unknown>) => work() },
    workflowService: {
      listWorkflowExecutions: async ({ query }: { query: string }) => {
        queries.push(query);
        return { executions: script.shift() ?? [] };
      },
    },
  };
  return { client: client as unknown as Client, queries };
}

describe('change stamps', () => {
  test('a stamp is read from the search attribute as Temporal returns it', () => {
    expect(changeStampOf(stamped(Date.UTC(2026, 10, 28, 6, 0, 0, 125)))).toBe(Date.UTC(2026, 10, 28, 6, 0, 0, 125));
    expect(changeStampOf(stamped(undefined))).toBeUndefined();
    expect(changeStampOf(undefined)).toBeUndefined();
    expect(changeStampOf({ indexedFields: { McpChangedAt: { data: Buffer.from('not json') } } })).toBeUndefined();
    expect(changeStampOf({ indexedFields: { McpChangedAt: { data: Buffer.from('"yesterday"') } } })).toBeUndefined();
  });

  test('the query asks for runs stamped or closed since a moment', () => {
    expect(changedSinceQuery(Date.UTC(2026, 10, 28))).toBe(
      "McpChangedAt >= '2026-11-28T00:00:00.000Z' OR (CloseTime >= '2026-11-28T00:00:00.000Z' AND ExecutionStatus != 'Running')",
    );
  });
});

describe('which rows are changes', () => {
  test('a newer stamp or a close of the followed run, or a newer stamp of another running run; nothing else', async () => {
    const t0 = Date.now();
    const { client, queries } = scriptedVisibility([
      [
        row('same', 'r1', RUNNING, t0),
        row('older', 'r1', RUNNING, t0 - 5),
        row('newer', 'r1', RUNNING, t0 + 5),
        row('closed', 'r1', COMPLETED, t0),
        row('earlier-run', 'r0', COMPLETED, t0 + 5),
        row('next-run', 'r2', RUNNING, t0 + 5),
        row('unstamped-next-run', 'r2', RUNNING),
        row('not-followed', 'r1', RUNNING, t0 + 5),
      ],
    ]);
    const changed: string[] = [];
    const feed = new ChangeFeed(client, { intervalMs: 10, marginMs: 1000 }, (workflowId) => changed.push(workflowId));
    for (const id of ['same', 'older', 'newer', 'closed', 'earlier-run', 'next-run', 'unstamped-next-run']) feed.follow(id, 'r1', t0, t0);
    await pollUntil(() => (queries.length >= 2 ? true : undefined), { timeoutMs: 10_000, what: 'two queries' });
    const stats = feed.stats();
    feed.close();
    expect(changed.sort()).toEqual(['closed', 'newer', 'next-run']);
    // A run reported is followed no more; the others still are.
    expect(stats).toMatchObject({ following: 4, changes: 3, rows: 8, failures: 0 });
    // The first query looks back from the read, by the margin.
    expect(queries[0]).toBe(changedSinceQuery(t0 - 1000));
  });

  test('each query looks back from the start of the last answered one; a read followed from further back lowers it', async () => {
    const { client, queries } = scriptedVisibility([]);
    const feed = new ChangeFeed(client, { intervalMs: 20, marginMs: 1000 }, () => undefined);
    const t0 = Date.now();
    feed.follow('a', 'r1', t0, t0);
    await pollUntil(() => (queries.length >= 3 ? true : undefined), { timeoutMs: 10_000, what: 'three queries' });
    const since = (query: string) => Date.parse(/'([^']+)'/.exec(query)![1]);
    expect(since(queries[0])).toBe(t0 - 1000);
    expect(since(queries[2])).toBeGreaterThan(since(queries[0]));
    feed.follow('b', 'r1', t0, t0 - 60_000);
    const asked = queries.length;
    await pollUntil(() => (queries.length > asked ? true : undefined), { timeoutMs: 10_000, what: 'one more query' });
    expect(since(queries[asked])).toBe(t0 - 61_000);
    feed.close();
  });
});

describe('vouching for a kept read', () => {
  test('a read within an interval is served; an older one only while the last query answered, within its deadline and two intervals', async () => {
    const { client, queries } = scriptedVisibility([]);
    const feed = new ChangeFeed(client, { intervalMs: 100, queryTimeoutMs: 200 }, () => undefined);
    const now = Date.now();
    expect(feed.vouches(now - 100, now)).toBe(true);
    expect(feed.vouches(now - 1000, now)).toBe(false);
    feed.follow('a', 'r1', now, now - 1000);
    await pollUntil(() => (queries.length >= 1 && feed.vouches(now - 1000, Date.now()) ? true : undefined), {
      timeoutMs: 10_000,
      what: 'an answered query',
    });
    // An answer older than the deadline and two intervals no longer vouches.
    expect(feed.vouches(now - 1000, Date.now() + 1000)).toBe(false);
    feed.close();
  });

  test('once a query fails, every kept read goes and the feed starts afresh from the reads after it; the failures are counted', async () => {
    let fail = false;
    const queries: string[] = [];
    const flaky = {
      options: { namespace: 'default' },
      connection: { withDeadline: (_deadline: number, work: () => Promise<unknown>) => work() },
      workflowService: {
        listWorkflowExecutions: async ({ query }: { query: string }) => {
          queries.push(query);
          if (fail) throw new Error('4 DEADLINE_EXCEEDED: Deadline exceeded');
          return { executions: [] };
        },
      },
    } as unknown as Client;
    const changed: string[] = [];
    const feed = new ChangeFeed(flaky, { intervalMs: 10, marginMs: 1000 }, (workflowId) => changed.push(workflowId));
    const start = Date.now();
    feed.follow('a', 'r1', start, start);
    feed.follow('b', 'r1', start, start);
    await pollUntil(() => (feed.stats().queries >= 1 && feed.vouches(start - 1000, Date.now()) ? true : undefined), {
      timeoutMs: 10_000,
      what: 'an answered query',
    });
    fail = true;
    await pollUntil(() => (feed.stats().failures >= 1 ? true : undefined), { timeoutMs: 10_000, what: 'a failed query' });
    expect(changed.sort()).toEqual(['a', 'b']);
    expect(feed.following).toBe(0);
    expect(feed.vouches(start - 1000, Date.now())).toBe(false);
    expect(feed.vouches(Date.now(), Date.now())).toBe(true);
    fail = false;
    // Read again later: the next query looks back from that read, not from the reads before the failure.
    const again = Date.now() + 60_000;
    const asked = queries.length;
    feed.follow('a', 'r1', start, again);
    await pollUntil(() => (queries.length > asked && feed.vouches(again - 1, Date.now() + 60_000) ? true : undefined), {
      timeoutMs: 10_000,
      what: 'the feed answering again',
    });
    expect(Date.parse(/'([^']+)'/.exec(queries[asked])![1])).toBe(again - 1000);
    expect(feed.stats().failures).toBeGreaterThanOrEqual(1);
    feed.close();
  });
});

import { ErrorCode, McpError, type Task } from '@modelcontextprotocol/sdk/types.js';
import { TaskFollower, type FollowSource } from '../../src/core/task-follower';
import type { TaskView } from '../../src/core/task-view';

function view(status: Task['status'], historyLength: number, statusMessage?: string): TaskView {
  return {
    workflowId: 'invoice-1',
    runId: 'run-1',
    inputs: [],
    historyLength,
    task: {
      taskId: 'invoice-1',
      status,
      ...(statusMessage !== undefined && { statusMessage }),
      createdAt: '2026-01-01T00:00:00.000Z',
      lastUpdatedAt: '2026-01-01T00:00:00.000Z',
      ttl: null,
    },
  };
}

/** A gRPC UNAVAILABLE as the Temporal client throws it. */
function unavailable(): Error {
  return Object.assign(new Error('14 UNAVAILABLE: no connection'), { code: 14, details: 'no connection', metadata: {} });
}

/** A source that answers reads from a script (a view, or an error to throw) and records how it was asked. */
class ScriptedSource implements FollowSource {
  reads = 0;
  waits: number[] = [];
  constructor(
    private readonly script: Array<TaskView | Error>,
    private readonly changeAfterMs = 0,
  ) {}
  async get(): Promise<TaskView> {
    const next = this.script[Math.min(this.reads, this.script.length - 1)];
    this.reads++;
    if (next instanceof Error) throw next;
    return next;
  }
  changed(_view: TaskView, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    this.waits.push(timeoutMs);
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, Math.min(this.changeAfterMs, timeoutMs));
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

async function collect(follower: TaskFollower, limit = 20): Promise<TaskView[]> {
  const seen: TaskView[] = [];
  for await (const next of follower) {
    seen.push(next);
    if (seen.length >= limit) break;
  }
  return seen;
}

describe('TaskFollower', () => {
  test('hands out the view it starts from without a read, then each view read after the next event, to the terminal one', async () => {
    const source = new ScriptedSource([view('working', 5), view('completed', 9)]);
    const seen = await collect(new TaskFollower(source, 'invoice-1', 'alice', { from: view('working', 3) }));
    expect(seen.map((next) => [next.task.status, next.historyLength])).toEqual([
      ['working', 3],
      ['working', 5],
      ['completed', 9],
    ]);
    expect(source.reads).toBe(2);
  });

  test('ends after a terminal view, reading nothing more', async () => {
    const source = new ScriptedSource([view('failed', 4)]);
    expect((await collect(new TaskFollower(source, 'invoice-1', 'alice'))).map((next) => next.task.status)).toEqual(['failed']);
    expect(source.reads).toBe(1);
    expect(source.waits).toEqual([]);
  });

  test('ends at the deadline, waiting no longer than the time left', async () => {
    // The follower's clock is jest's: the wait it asks for is exactly the time left, whatever the machine's speed.
    jest.useFakeTimers();
    try {
      const source = new ScriptedSource([view('working', 1)], 60_000);
      const following = collect(new TaskFollower(source, 'invoice-1', 'alice', { deadline: Date.now() + 100 }));
      await jest.advanceTimersByTimeAsync(0);
      expect(source.waits).toEqual([100]);
      await jest.advanceTimersByTimeAsync(100);
      expect((await following).length).toBe(1);
      // Nothing is read once the deadline has passed.
      expect(source.reads).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });

  test('ends when its signal aborts', async () => {
    const source = new ScriptedSource([view('working', 1)], 10_000);
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 50);
    const seen = await collect(new TaskFollower(source, 'invoice-1', 'alice', { signal: stop.signal }));
    expect(seen.length).toBe(1);
  });

  test('a change key hands out only views that changed by it', async () => {
    const source = new ScriptedSource([view('working', 2, 'a'), view('working', 3, 'a'), view('working', 4, 'b'), view('completed', 5)]);
    const seen = await collect(
      new TaskFollower(source, 'invoice-1', 'alice', { changeKey: (next) => `${next.task.status}/${next.task.statusMessage}` }),
    );
    expect(seen.map((next) => next.historyLength)).toEqual([2, 4, 5]);
  });

  test('readAgainIn reads after the pause without waiting for an event', async () => {
    jest.useFakeTimers();
    try {
      const source = new ScriptedSource([view('working', 1), view('completed', 1)], 60_000);
      const follower = new TaskFollower(source, 'invoice-1', 'alice', { sliceMs: 60_000 });
      const seen: TaskView[] = [];
      const following = (async () => {
        for await (const next of follower) {
          seen.push(next);
          follower.readAgainIn(30);
        }
      })();
      await jest.advanceTimersByTimeAsync(29);
      expect(source.reads).toBe(1);
      await jest.advanceTimersByTimeAsync(1);
      // Read at the end of the pause: no wait for the task's next event was asked for.
      expect(source.reads).toBe(2);
      expect(source.waits).toEqual([]);
      await following;
      expect(seen.map((next) => next.task.status)).toEqual(['working', 'completed']);
    } finally {
      jest.useRealTimers();
    }
  });

  test('readAgainWithin reads at the next event, or at the end of the pause if none comes first', async () => {
    jest.useFakeTimers();
    try {
      for (const [eventAfterMs, readAtMs] of [
        [10, 10],
        [60_000, 30],
      ]) {
        const source = new ScriptedSource([view('working', 1), view('completed', 2)], eventAfterMs);
        const follower = new TaskFollower(source, 'invoice-1', 'alice', { sliceMs: 60_000 });
        const following = (async () => {
          for await (const _next of follower) follower.readAgainWithin(30);
        })();
        await jest.advanceTimersByTimeAsync(readAtMs - 1);
        expect(source.reads).toBe(1);
        await jest.advanceTimersByTimeAsync(1);
        expect(source.reads).toBe(2);
        // It waited for the task's next event, for the pause at most.
        expect(source.waits).toEqual([30]);
        await following;
      }
    } finally {
      jest.useRealTimers();
    }
  });

  test('a read that finds Temporal unreachable is tried again with growing pauses; latest keeps the last view', async () => {
    const source = new ScriptedSource([view('working', 1), unavailable(), unavailable(), view('completed', 3)]);
    const follower = new TaskFollower(source, 'invoice-1', 'alice', { backoffMs: 10, maxBackoffMs: 40 });
    const seen = await collect(follower);
    expect(seen.map((next) => next.task.status)).toEqual(['working', 'completed']);
    expect(source.reads).toBe(4);
    expect(follower.latest?.task.status).toBe('completed');
  });

  test('any other failure of a read (the task is gone) ends the iteration with that error', async () => {
    const gone = new McpError(ErrorCode.InvalidParams, 'Task not found: invoice-1');
    const source = new ScriptedSource([view('working', 1), gone]);
    await expect(collect(new TaskFollower(source, 'invoice-1', 'alice'))).rejects.toBe(gone);
  });
});

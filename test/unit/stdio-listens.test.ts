/**
 * Task subscriptions on stdio at shutdown: every open one ends with its final response, and so does one that arrives
 * while the server stops, before the server lets stdout go.
 */
import { PassThrough } from 'node:stream';
import type { ListenSink, McpEndpoints } from '../../src/mcp/endpoints';
import { TaskListens } from '../../src/mcp/transports/stdio';

/** A listen request as a 2026-07-28 client writes it on stdin. */
function listen(id: string): string {
  return `${JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications: { taskIds: ['t'] } } })}\n`;
}

/**
 * Subscriptions that acknowledge at once and end when told, each with its final response; the final responses wait for
 * `release` (a shutdown in the middle of writing them).
 */
function endpoints(release: Promise<void>): McpEndpoints {
  return {
    taskSubscriptions: {
      accepts: (message: unknown): message is never => (message as { method?: string }).method === 'subscriptions/listen',
      serve: async (request: unknown, _principal: string | undefined, sink: ListenSink) => {
        const { id } = request as { id: string };
        await sink.send({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { id } });
        if (!sink.signal.aborted) await new Promise((resolve) => sink.signal.addEventListener('abort', resolve, { once: true }));
        await release;
        if (sink.canReply()) await sink.send({ jsonrpc: '2.0', id, result: { resultType: 'complete' } });
      },
    },
  } as unknown as McpEndpoints;
}

test('a shutdown ends every subscription with its final response, those that arrive while it stops too', async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const output = new PassThrough();
  const lines: Array<{ id?: string; method?: string; result?: unknown }> = [];
  output.on('data', (chunk: Buffer) =>
    lines.push(
      ...chunk
        .toString()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ),
  );
  const listens = new TaskListens(endpoints(released), output);
  listens.filter.resume();

  listens.filter.write(listen('a'));
  await new Promise((resolve) => setImmediate(resolve));
  let ended = false;
  const ending = listens.endAll().then(() => (ended = true));
  // While the first one writes its final response, another arrives.
  listens.filter.write(listen('b'));
  await new Promise((resolve) => setImmediate(resolve));
  expect(ended).toBe(false);
  release();
  await ending;
  await new Promise((resolve) => setImmediate(resolve));

  const finals = lines.filter((line) => line.result !== undefined).map((line) => line.id);
  expect(finals.sort()).toEqual(['a', 'b']);
});

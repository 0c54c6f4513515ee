/**
 * A fleet of pollers for the bench: N of them, each reading its own task once a second, as 2026-07-28 clients without
 * `tasks/result` do. Each poller's first poll falls at a random point of the first second, so the load is even; a
 * poller whose read takes longer than its interval reads again at once. Only the reads in the measured window count.
 */
import http from 'node:http';

/** One read: resolves when it answered, rejects when it failed. */
export type Read = (id: string) => Promise<void>;

/** What the fleet measured in its window. */
export interface FleetFigures {
  /** Latency of each read in the window, ms. */
  latencies: number[];
  /** Reads that failed in the window, with the first failure's message. */
  failures: number;
  firstFailure?: string;
  /** Length of the window, ms. */
  windowMs: number;
}

/** Options of {@link runFleet}. */
export interface FleetOptions {
  /** Seconds the pollers run before the window, so every task has been read a few times. */
  warmupSeconds: number;
  /** Seconds measured. */
  seconds: number;
  /** Reads per second of each poller. */
  rate?: number;
  /** Called at the window's start and end (figures of the server and of Temporal are taken there). */
  onWindowStart?(): Promise<void> | void;
  onWindowEnd?(): Promise<void> | void;
}

/** Runs one poller per id with `read`, and measures the window. */
export async function runFleet(ids: readonly string[], read: Read, options: FleetOptions): Promise<FleetFigures> {
  const intervalMs = 1000 / (options.rate ?? 1);
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  let measuring = false;
  let stopped = false;
  const poller = async (id: string) => {
    let next = performance.now() + Math.random() * intervalMs;
    while (!stopped) {
      const wait = next - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (stopped) return;
      next += intervalMs;
      const started = performance.now();
      const counted = measuring;
      try {
        await read(id);
        if (counted && measuring) latencies.push(performance.now() - started);
      } catch (error) {
        if (counted && measuring) {
          failures++;
          firstFailure ??= (error as Error).message;
        }
      }
      // A read slower than the interval: the next one goes at once rather than in a burst of the missed ones.
      next = Math.max(next, performance.now());
    }
  };
  const running = ids.map((id) => poller(id));
  await new Promise((resolve) => setTimeout(resolve, options.warmupSeconds * 1000));
  await options.onWindowStart?.();
  measuring = true;
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, options.seconds * 1000));
  measuring = false;
  const windowMs = performance.now() - started;
  await options.onWindowEnd?.();
  stopped = true;
  await Promise.all(running);
  return { latencies, failures, ...(firstFailure && { firstFailure }), windowMs };
}

/** Keep-alive connections shared by the pollers of one endpoint. */
export function pollerAgent(): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: 256 });
}

/** `tasks/get` of protocol 2026-07-28 posted to `url` over `agent`, as a client of that generation polls. */
export function mcp2026TaskGet(url: string, agent: http.Agent, headers: Record<string, string> = {}): Read {
  return async (taskId) => {
    const result = await mcp2026Post(url, agent, 'tasks/get', { taskId }, taskId, headers);
    if (typeof result.status !== 'string') throw new Error(`tasks/get answered no task: ${JSON.stringify(result).slice(0, 200)}`);
  };
}

/**
 * One request of protocol 2026-07-28 with the tasks extension declared, posted to `url` over `agent` with the headers
 * a conforming client sends and `headers` (credentials); resolves with the result, rejects with the error.
 */
export function mcp2026Post(
  url: string,
  agent: http.Agent,
  method: string,
  params: Record<string, unknown>,
  name?: string,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const target = new URL(url);
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
      },
    },
  });
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': method,
          ...(name !== undefined && { 'mcp-name': name }),
          ...headers,
          'content-length': Buffer.byteLength(body),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const data = text.startsWith('{') ? text : /^data: (.*)$/m.exec(text)?.[1];
          const answer = data ? (JSON.parse(data) as { result?: Record<string, unknown>; error?: { message: string } }) : undefined;
          if (response.statusCode === 200 && answer?.result) resolve(answer.result);
          else reject(new Error(answer?.error?.message ?? `HTTP ${response.statusCode}: ${text.slice(0, 200)}`));
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

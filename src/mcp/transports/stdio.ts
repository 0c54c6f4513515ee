import { PassThrough, Transform } from 'node:stream';
import { StdioServerTransport as LegacyStdioTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { log } from '../../util/log';
import { drained } from '../../util/wait';
import type { McpEndpoints } from '../endpoints';

/** Longest first message read before the generation is decided (the HTTP body limit's default). */
const MAX_FIRST_LINE = 2 * 1024 * 1024;

/** `_meta` key every MCP 2026-07-28 request carries. */
const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';

/**
 * Serves MCP on stdin/stdout for every client generation. The first message decides for the whole connection: an
 * `initialize` (or any message without the 2026-07-28 envelope) opens a 2025-11-25 session; a request with the
 * envelope (a `server/discover` probe, usually) is served as 2026-07-28. `onClose` runs when the connection ends.
 * Returns a function that ends it (a shutdown): requests still running, such as a blocked `tasks/result`, are aborted.
 */
export function serveStdioForAllGenerations(endpoints: McpEndpoints, onClose: () => void): () => Promise<void> {
  const input = new PassThrough();
  let close: () => Promise<void> = async () => {
    process.stdin.off('data', onData);
    onClose();
  };
  let buffered = '';
  const onData = (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const newline = buffered.indexOf('\n');
    if (newline < 0) {
      // The first message decides the generation; one that never ends is not held in memory.
      if (buffered.length > MAX_FIRST_LINE) {
        process.stdin.off('data', onData);
        process.stdout.write(
          `${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid request: the first message is longer than ${MAX_FIRST_LINE} bytes` } })}\n`,
        );
        log.error(`stdio: the first message is longer than ${MAX_FIRST_LINE} bytes; closing`);
        buffered = '';
        onClose();
      }
      return;
    }
    process.stdin.off('data', onData);
    process.stdin.pause();
    const mcp2026 = isMcp2026(buffered.slice(0, newline));
    input.write(buffered);
    process.stdin.pipe(input);
    if (mcp2026) {
      const listens = new TaskListens(endpoints, process.stdout);
      const handle = serveStdio(() => endpoints.createMcp2026Server(), {
        legacy: 'reject',
        transport: new StdioServerTransport(input.pipe(listens.filter), process.stdout),
        onerror: (error) => log.error(`mcp (2026-07-28): ${error.message}`),
      });
      // Subscriptions first: each ends with its final response while stdout is still open.
      close = () =>
        listens
          .endAll()
          .then(() => handle.close())
          .finally(onClose);
      input.once('end', () => void close());
    } else {
      const transport = new LegacyStdioTransport(input, process.stdout);
      transport.onclose = onClose;
      void endpoints.createMcp2025Server().connect(transport);
      close = () => transport.close();
      input.once('end', () => void close());
    }
  };
  process.stdin.on('data', onData);
  process.stdin.once('end', () => {
    if (buffered.indexOf('\n') < 0) onClose();
  });
  return () => close();
}

/** One task status subscription on stdio: ended by the client (no final response) or by the server (with it). */
class StdioSubscription {
  private readonly abort = new AbortController();
  private cancelled = false;

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** The client cancelled the request or closed its input: nothing more is written for it. */
  cancel(): void {
    this.cancelled = true;
    this.abort.abort();
  }

  /** The server stops: the subscription ends, and its final response is still written. */
  end(): void {
    this.abort.abort();
  }

  canReply(): boolean {
    return !this.cancelled;
  }
}

/**
 * Takes the task status subscriptions (and their cancellations) out of a 2026-07-28 stdio stream and serves them
 * beside the SDK, which serves everything else; their messages go to `output` a whole line at a time.
 */
export class TaskListens {
  private readonly open = new Map<string | number, StdioSubscription>();
  private readonly serving = new Set<Promise<void>>();
  private stopping = false;
  readonly filter: Transform;

  constructor(endpoints: McpEndpoints, output: NodeJS.WritableStream) {
    this.filter = taskListenFilter(endpoints, output, {
      open: this.open,
      serving: this.serving,
      stopping: () => this.stopping,
    });
  }

  /**
   * Ends every open subscription (a shutdown), and every one that arrives meanwhile as soon as it is acknowledged;
   * resolves once each has written its final response.
   */
  async endAll(): Promise<void> {
    this.stopping = true;
    for (const subscription of this.open.values()) subscription.end();
    while (this.serving.size > 0) await Promise.all(this.serving);
  }
}

/** What the filter shares with its {@link TaskListens}. */
interface ListensState {
  open: Map<string | number, StdioSubscription>;
  serving: Set<Promise<void>>;
  stopping(): boolean;
}

function taskListenFilter(endpoints: McpEndpoints, output: NodeJS.WritableStream, { open, serving, stopping }: ListensState): Transform {
  let partial = '';
  const filter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      const forwarded = lines.filter((line) => !takeListenMessage(line)).map((line) => `${line}\n`);
      done(null, forwarded.join(''));
    },
    flush(done) {
      // The client closed its input: nobody reads the final responses.
      for (const subscription of open.values()) subscription.cancel();
      done(null, partial);
    },
  });

  function takeListenMessage(line: string): boolean {
    let message: { method?: string; id?: string | number; params?: { requestId?: string | number } };
    try {
      message = JSON.parse(line);
    } catch {
      return false;
    }
    if (message.method === 'notifications/cancelled' && message.params?.requestId !== undefined) {
      const subscription = open.get(message.params.requestId);
      subscription?.cancel();
      return subscription !== undefined;
    }
    if (!endpoints.taskSubscriptions.accepts(message) || open.has(message.id)) return false;
    const subscription = new StdioSubscription();
    open.set(message.id, subscription);
    // Arrived while the server stops: it ends at once, with its final response.
    if (stopping()) subscription.end();
    const send = async (reply: object) => {
      if (!subscription.canReply()) return;
      // Respect back-pressure: a client that reads slowly slows the subscription instead of growing a buffer here.
      if (!output.write(`${JSON.stringify(reply)}\n`) && !subscription.signal.aborted) {
        await drained(output, subscription.signal);
      }
    };
    const served = endpoints.taskSubscriptions
      .serve(message, undefined, { send, signal: subscription.signal, canReply: () => subscription.canReply() })
      .catch((error: Error) => {
        log.error(`mcp (2026-07-28): subscriptions/listen: ${error.message}`);
        void send({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: 'Internal error' } });
      })
      .finally(() => {
        open.delete(message.id);
        serving.delete(served);
      });
    serving.add(served);
    return true;
  }

  return filter;
}

function isMcp2026(line: string): boolean {
  try {
    const message = JSON.parse(line) as { method?: string; params?: { _meta?: Record<string, unknown> } };
    return message.method !== 'initialize' && typeof message.params?._meta?.[PROTOCOL_VERSION_META] === 'string';
  } catch {
    return false;
  }
}

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
      const handle = serveStdio(() => endpoints.createMcp2026Server(), {
        legacy: 'reject',
        transport: new StdioServerTransport(input.pipe(taskListenFilter(endpoints)), process.stdout),
        onerror: (error) => log.error(`mcp (2026-07-28): ${error.message}`),
      });
      close = () => handle.close().finally(onClose);
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

/**
 * Takes the task status subscriptions (and their cancellations) out of a 2026-07-28 stdio stream and serves them
 * beside the SDK, which serves everything else; their messages go to stdout a whole line at a time.
 */
function taskListenFilter(endpoints: McpEndpoints): Transform {
  const open = new Map<string | number, AbortController>();
  let partial = '';
  const filter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      const forwarded = lines.filter((line) => !takeListenMessage(line)).map((line) => `${line}\n`);
      done(null, forwarded.join(''));
    },
    flush(done) {
      for (const subscription of open.values()) subscription.abort();
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
      subscription?.abort();
      return subscription !== undefined;
    }
    if (!endpoints.taskSubscriptions.accepts(message) || open.has(message.id)) return false;
    const abort = new AbortController();
    open.set(message.id, abort);
    const send = async (reply: object) => {
      if (abort.signal.aborted) return;
      // Respect back-pressure: a client that reads slowly slows the subscription instead of growing a buffer here.
      if (!process.stdout.write(`${JSON.stringify(reply)}\n`)) await drained(process.stdout, abort.signal);
    };
    endpoints.taskSubscriptions
      .serve(message, undefined, { send, signal: abort.signal })
      .catch((error: Error) => {
        log.error(`mcp (2026-07-28): subscriptions/listen: ${error.message}`);
        void send({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: 'Internal error' } });
      })
      .finally(() => open.delete(message.id));
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

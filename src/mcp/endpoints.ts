/**
 * What a transport needs of the protocol generations it carries: one interface, so that stdio and Streamable HTTP
 * know nothing of how each generation is served. A {@link Bridge} is one.
 */
import type { Server as Mcp2025Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { McpHttpHandler, Server as Mcp2026Server } from '@modelcontextprotocol/server';
import type { ParamHeader } from './protocol/param-headers';

/** A JSON-RPC `subscriptions/listen` request as it came off the wire. */
export interface ListenRequest {
  jsonrpc: '2.0';
  id: string | number;
  method: 'subscriptions/listen';
  params?: { notifications?: { taskIds?: unknown }; _meta?: Record<string, unknown> };
}

/** Where a subscription writes: one JSON-RPC message at a time, until `signal` aborts (the client went away or cancelled). */
export interface ListenSink {
  /** Writes one message; resolves once the transport can take more (back-pressure), or at once after the end. */
  send(message: object): Promise<void>;
  /** Aborted when the subscription is to end: the client went away or cancelled it, or the server is stopping. */
  signal: AbortSignal;
  /**
   * Whether the listen request's final response can still reach the client: true while the server ends the
   * subscription (every task finished, or a shutdown), false once the client went away or cancelled the request.
   */
  canReply(): boolean;
}

/** Task status subscriptions (2026-07-28), served beside the SDK, which knows only the base protocol's. */
export interface TaskListenEndpoint {
  /** True for a listen request this endpoint serves (one that names task ids). */
  accepts(message: unknown): message is ListenRequest;
  /** Serves one listen request for `principal` (the local principal when undefined) until it ends. */
  serve(request: ListenRequest, principal: string | undefined, sink: ListenSink): Promise<void>;
}

/** Every generation a transport may carry. */
export interface McpEndpoints {
  /** The MCP server of one new 2025-11-25 (or older) session. */
  createMcp2025Server(): Mcp2025Server;
  /**
   * The JSON-RPC response to a session's request that sends nothing on its own stream (`tasks/get`, `tasks/list`,
   * `tasks/cancel`, a task-augmented `tools/call` that only starts its task), so the transport can send it as JSON;
   * undefined for any other message.
   */
  answerAtOnce?(
    server: Mcp2025Server,
    message: unknown,
    authInfo: AuthInfo | undefined,
    sessionId: string | undefined,
  ): Promise<object | undefined>;
  /**
   * The `Mcp-Param-*` headers a 2026-07-28 `tools/call` of tool `name` must carry over HTTP, mirroring its arguments
   * marked `x-mcp-header` (SEP-2243); undefined or empty when it mirrors none.
   */
  paramHeadersOf?(name: string): readonly ParamHeader[] | undefined;
  /** Serves 2026-07-28 requests over HTTP, each on its own (no session). */
  mcp2026: McpHttpHandler;
  /** A 2026-07-28 server for the local principal (stdio). */
  createMcp2026Server(): Mcp2026Server;
  /** Task status subscriptions of 2026-07-28. */
  taskSubscriptions: TaskListenEndpoint;
}

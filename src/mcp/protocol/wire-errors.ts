/**
 * The task core's errors as JSON-RPC errors, for both protocol generations: one table, from which 2025-11-25 makes
 * its `McpError` and 2026-07-28 its `ProtocolError`.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { GrpcStatus, grpcStatusOf, isTemporalUnavailable, TaskCoreError, type TaskErrorCategory } from '../tasks/errors';

/** A JSON-RPC error's parts. */
export interface JsonRpcFailure {
  code: number;
  message: string;
  data?: unknown;
}

const CODE_OF: Record<TaskErrorCategory, number> = {
  request: ErrorCode.InvalidParams,
  refused: ErrorCode.InvalidRequest,
  later: ErrorCode.InternalError,
};

/**
 * The JSON-RPC error `error` stands for: a JSON-RPC error already, one of the task core's errors, or Temporal out of
 * reach (a retryable -32603 that says so). Undefined for anything else, which is a fault of the server.
 */
export function jsonRpcFailureOf(error: unknown): JsonRpcFailure | undefined {
  if (error instanceof McpError)
    return { code: error.code, message: plainMessage(error), ...(error.data !== undefined && { data: error.data }) };
  if (error instanceof TaskCoreError) {
    return { code: CODE_OF[error.category], message: error.message, ...(error.details !== undefined && { data: error.details }) };
  }
  // A call cancelled on Temporal's side (a frontend whose own work was cut off, a link reset under it), or by this
  // server as it stops: the client did not cancel it (a cancelled request gets no answer), and may send it again.
  if (isTemporalUnavailable(error) || grpcStatusOf(error) === GrpcStatus.CANCELLED) {
    return {
      code: ErrorCode.InternalError,
      message: `Temporal is unavailable right now (${(error as Error).message}); retry shortly`,
      data: { retryable: true },
    };
  }
  return undefined;
}

/** `error` as the SDK v1 `McpError` it stands for (see {@link jsonRpcFailureOf}), or `error` itself. */
export function asMcpError(error: unknown): unknown {
  if (error instanceof McpError) return error;
  const failure = jsonRpcFailureOf(error);
  return failure ? new McpError(failure.code, failure.message, failure.data) : error;
}

/** True for an error a JSON-RPC client gets as -32602 (an unknown task, a bad argument). */
export function isInvalidParams(error: unknown): boolean {
  return jsonRpcFailureOf(error)?.code === ErrorCode.InvalidParams;
}

/** An error's message as a person should read it: without the "MCP error -32602: " prefix the SDK puts before it. */
export function plainMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return error instanceof McpError ? message.replace(/^MCP error -?\d+: /, '') : message;
}

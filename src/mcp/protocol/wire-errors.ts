/**
 * JSON-RPC errors, in no SDK's type, for every layer below the protocol front-ends: {@link JsonRpcError} is what the
 * shared layers throw, {@link jsonRpcFailureOf} reads any error as the JSON-RPC error it stands for (one table for the
 * task core's errors; data this server cannot decrypt), and each generation turns that into its SDK's error in one place.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ProtocolError } from '@modelcontextprotocol/server';
import { JsonRpcError, type JsonRpcFailure } from '../../util/json-rpc-error';
import { isTemporalUnavailable, TaskCoreError, unreadableDataOf, type TaskErrorCategory } from '../../core';

export { JsonRpcError, type JsonRpcFailure };

const CODE_OF: Record<TaskErrorCategory, number> = {
  request: ErrorCode.InvalidParams,
  refused: ErrorCode.InvalidRequest,
  later: ErrorCode.InternalError,
};

/**
 * The JSON-RPC error `error` stands for: a JSON-RPC error already (ours or either SDK's), one of the task core's errors,
 * or Temporal out of reach (a retryable -32603 that says so). Undefined for anything else, which is a fault of the
 * server.
 */
export function jsonRpcFailureOf(error: unknown): JsonRpcFailure | undefined {
  const known = refusalOf(error);
  if (known) return known;
  // Data of a key this server does not hold: the operator adds the key; nothing the client can do but wait.
  const unreadable = unreadableDataOf(error);
  if (unreadable) {
    // Without the keys file's path: that is for the operator's log.
    const why = unreadable.unknownKey
      ? `it is encrypted with key "${unreadable.keyId}", which this server's keys file does not hold; its operator must add that key (MCP_PAYLOAD_KEYS)`
      : `it does not decrypt under key "${unreadable.keyId}" (another key under that id, or altered data)`;
    return { code: ErrorCode.InternalError, message: `This server cannot read the task's data: ${why}`, data: { keyId: unreadable.keyId } };
  }
  // A call cancelled on Temporal's side (a frontend whose own work was cut off, a link reset under it), or by this
  // server as it stops: the client did not cancel it (a cancelled request gets no answer), and may send it again.
  if (isTemporalUnavailable(error)) {
    return {
      code: ErrorCode.InternalError,
      message: `Temporal is unavailable right now (${(error as Error).message}); retry shortly`,
      data: { retryable: true },
    };
  }
  return undefined;
}

/**
 * The JSON-RPC error of a refusal: a JSON-RPC error (ours or either SDK's) or one of the task core's errors; undefined
 * for anything else, Temporal out of reach included.
 */
export function refusalOf(error: unknown): JsonRpcFailure | undefined {
  if (error instanceof JsonRpcError || error instanceof McpError || error instanceof ProtocolError) {
    return { code: error.code, message: plainMessage(error), ...(error.data !== undefined && { data: error.data }) };
  }
  if (error instanceof TaskCoreError) {
    return { code: CODE_OF[error.category], message: error.message, ...(error.details !== undefined && { data: error.details }) };
  }
  return undefined;
}

/** `error` as the {@link JsonRpcError} it stands for (see {@link jsonRpcFailureOf}), or `error` itself. */
export function asJsonRpcError(error: unknown): unknown {
  if (error instanceof JsonRpcError) return error;
  const failure = jsonRpcFailureOf(error);
  return failure ? JsonRpcError.of(failure) : error;
}

/** True for an error a JSON-RPC client gets as -32602 (an unknown task, a bad argument). */
export function isInvalidParams(error: unknown): boolean {
  return jsonRpcFailureOf(error)?.code === ErrorCode.InvalidParams;
}

/**
 * An error's message as a person should read it: without the "MCP error <code>: " the v1 SDK puts before what it was
 * given (it keeps no field of its own for that), the prefix made from the error's own code.
 */
export function plainMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (!(error instanceof McpError)) return message;
  const prefix = `MCP error ${error.code}: `;
  return message.startsWith(prefix) ? message.slice(prefix.length) : message;
}

/** The errors the task layer answers with, and how it recognises Temporal's answers by their gRPC status. */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { NamespaceNotFoundError } from '@temporalio/common';
import { isGrpcServiceError, ServiceError } from '@temporalio/client';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

export { GrpcStatus };

/** The error every tasks/* method returns for an id the caller may not see: unknown, expired or someone else's. */
export function taskNotFound(taskId: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
}

/** The gRPC status of a failed call to Temporal (the SDK wraps some in a `ServiceError`), if it is one. */
export function grpcStatusOf(error: unknown): GrpcStatus | undefined {
  const cause = error instanceof ServiceError ? error.cause : error;
  return isGrpcServiceError(cause) ? (cause.code as GrpcStatus) : undefined;
}

/**
 * True when `error` means Temporal cannot serve right now (UNAVAILABLE, DEADLINE_EXCEEDED): the same call may succeed
 * later. So is "namespace not found": the namespace was there when the process started (`--check`, `/healthz`), and
 * a cluster's frontends answer it while their database restarts; a namespace really gone keeps failing until the
 * client gives up.
 */
export function isTemporalUnavailable(error: unknown): boolean {
  const code = grpcStatusOf(error);
  if (code === GrpcStatus.UNAVAILABLE || code === GrpcStatus.DEADLINE_EXCEEDED) return true;
  return (
    error instanceof NamespaceNotFoundError || (code === GrpcStatus.NOT_FOUND && /namespace .* not found/i.test((error as Error).message))
  );
}

/** The error a request gets while Temporal is unreachable; `data.retryable` tells clients to try again. */
export function temporalUnavailable(error: unknown): McpError {
  return new McpError(ErrorCode.InternalError, `Temporal is unavailable right now (${(error as Error).message}); retry shortly`, {
    retryable: true,
  });
}

/** True for the -32602 an id the caller may not see gets ({@link taskNotFound}) and every other invalid-params refusal. */
export function isInvalidParams(error: unknown): error is McpError {
  return error instanceof McpError && error.code === ErrorCode.InvalidParams;
}

/** An error's message as a person should read it: without the "MCP error -32602: " prefix the SDK puts before it. */
export function plainMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return error instanceof McpError ? message.replace(/^MCP error -?\d+: /, '') : message;
}

/** A Temporal client error with the gRPC details behind it ("Workflow Update failed" alone says little). */
export function describeServiceError(error: unknown): string {
  const cause = (error as { cause?: { details?: unknown } }).cause;
  return typeof cause?.details === 'string' && cause.details ? `${(error as Error).message}: ${cause.details}` : (error as Error).message;
}

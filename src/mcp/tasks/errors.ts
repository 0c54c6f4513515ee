/** The errors the task layer answers with, and how it recognises an unreachable Temporal. */
import { isGrpcServiceError, ServiceError } from '@temporalio/client';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/** The error every tasks/* method returns for an id the caller may not see: unknown, expired or someone else's. */
export function taskNotFound(taskId: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
}

/** gRPC codes that mean Temporal cannot be reached right now: UNAVAILABLE, DEADLINE_EXCEEDED. */
export const UNREACHABLE_CODES = new Set([14, 4]);

/** True when `error` means Temporal cannot be reached right now, so the same call may succeed later. */
export function isTemporalUnavailable(error: unknown): boolean {
  const cause = error instanceof ServiceError ? error.cause : error;
  if (isGrpcServiceError(cause)) return UNREACHABLE_CODES.has(cause.code);
  return /UNAVAILABLE|DEADLINE_EXCEEDED|ECONNREFUSED|Connection refused|transport error/i.test((error as Error)?.message ?? '');
}

/** The error a request gets while Temporal is unreachable; `data.retryable` tells clients to try again. */
export function temporalUnavailable(error: unknown): McpError {
  return new McpError(ErrorCode.InternalError, `Temporal is unavailable right now (${(error as Error).message}); retry shortly`, {
    retryable: true,
  });
}

/**
 * The errors the task core answers with, one class per failure mode, and how it recognises Temporal's answers by their
 * gRPC status. They know no wire: each protocol front-end maps them to its generation's errors in one place
 * (`../wire-errors.ts`).
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { ApplicationFailure, NamespaceNotFoundError } from '@temporalio/common';
import { isGrpcServiceError, ServiceError, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { google } from '@temporalio/proto';
import { PayloadDecryptionError, UnknownPayloadKeyError } from '../shared/payload-keys';

export { GrpcStatus };

/**
 * What a task core error asks of its caller: `request` to fix the request (an id, an argument, a cursor; JSON-RPC
 * -32602), `refused` to do something else first (-32600), `later` to try again shortly (-32603 with `retryable`).
 */
export type TaskErrorCategory = 'request' | 'refused' | 'later';

/** The base of the task core's own errors: a message a person can act on, and what it asks of the caller. */
export abstract class TaskCoreError extends Error {
  abstract readonly category: TaskErrorCategory;
  /** Facts a client may act on (a limit, when to retry), passed on as the error's data. */
  readonly details?: Record<string, unknown>;

  constructor(message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = new.target.name;
    if (details !== undefined) this.details = details;
  }
}

/** Thrown when a task id names nothing the caller may see: unknown, expired, someone else's, or not this bridge's. */
export class TaskNotFoundError extends TaskCoreError {
  readonly category = 'request';

  constructor(readonly taskId: string) {
    super(`Task not found: ${taskId}`);
  }
}

/** Thrown when a request cannot be carried out as asked: a bad argument, a cursor, a task past what was asked of it. */
export class InvalidTaskRequestError extends TaskCoreError {
  readonly category = 'request';
}

/** Thrown when a principal holds as many open tasks as it may: nothing was started. */
export class TooManyTasksError extends TaskCoreError {
  readonly category = 'refused';
}

/** Thrown when a principal asks too fast, or holds as many waits as it may: the same request may pass shortly. */
export class TooManyRequestsError extends TaskCoreError {
  readonly category = 'later';
}

/** Thrown when a task is still being set up elsewhere and cannot be served yet: the same request may pass shortly. */
export class TaskNotReadyError extends TaskCoreError {
  readonly category = 'later';
}

/**
 * Thrown when a task's published state (its `mcpTask` memo) does not fit the task contract: the task cannot be read
 * until its workflow publishes a state that does. Only that task is affected.
 */
export class TaskStateUnreadableError extends TaskCoreError {
  readonly category = 'later';

  constructor(
    readonly taskId: string,
    /** What does not fit, as a path and a sentence. */
    readonly problem: string,
  ) {
    super(
      `The state of task ${taskId} cannot be read: its workflow published a malformed task state (${problem}). ` +
        'It can be read again once the workflow publishes a valid one; its author should fix the workflow',
      { taskId, problem },
    );
  }
}

/**
 * Thrown when an answer was refused (by the workflow, or by the bridge on its behalf): nothing was recorded. The
 * person should do something else (the question closed, or is not theirs to answer).
 */
export class AnswerRefusedError extends TaskCoreError {
  readonly category = 'refused';

  constructor(
    message: string,
    /** What stays on record although the answer was refused (a signed rejection stands); undefined: nothing does. */
    readonly onRecord?: string,
  ) {
    super(message);
  }
}

/** The error every task read answers for an id the caller may not see (see {@link TaskNotFoundError}). */
export function taskNotFound(taskId: string): TaskNotFoundError {
  return new TaskNotFoundError(taskId);
}

/** True for a refusal of the request as asked (an unknown task, a bad argument): the caller should change it. */
export function isRequestError(error: unknown): error is TaskCoreError {
  return error instanceof TaskCoreError && error.category === 'request';
}

/** The gRPC status of a failed call to Temporal (the SDK wraps some in a `ServiceError`), if it is one. */
export function grpcStatusOf(error: unknown): GrpcStatus | undefined {
  const cause = error instanceof ServiceError ? error.cause : error;
  return isGrpcServiceError(cause) ? (cause.code as GrpcStatus) : undefined;
}

/**
 * True when `error` means Temporal cannot serve right now (UNAVAILABLE, DEADLINE_EXCEEDED, and CANCELLED: a call cut
 * off on Temporal's side, a link reset under it, or made on a connection this process closed as it stops): the same
 * call may succeed later, so it is waited out or answered as retryable, never taken for a verdict. So is "namespace not
 * found" (told by the status's NamespaceNotFoundFailure detail, which the SDK reads too): the namespace was there when the process started (`--check`, `/healthz`), and
 * a cluster's frontends answer it while their database restarts; a namespace really gone keeps failing until the
 * client gives up.
 */
export function isTemporalUnavailable(error: unknown): boolean {
  const code = grpcStatusOf(error);
  if (code === GrpcStatus.UNAVAILABLE || code === GrpcStatus.DEADLINE_EXCEEDED || code === GrpcStatus.CANCELLED) return true;
  return error instanceof NamespaceNotFoundError || (code === GrpcStatus.NOT_FOUND && namesMissingNamespace(error));
}

/** The type of the detail Temporal gives a NOT_FOUND about the namespace (not about a workflow). */
const NAMESPACE_NOT_FOUND_DETAIL = 'temporal.api.errordetails.v1.NamespaceNotFoundFailure';

/** True when a failed call's gRPC status details (`grpc-status-details-bin`) say the namespace was not found. */
function namesMissingNamespace(error: unknown): boolean {
  const cause = error instanceof ServiceError ? error.cause : error;
  if (!isGrpcServiceError(cause)) return false;
  const raw = cause.metadata?.get('grpc-status-details-bin')?.[0];
  if (!raw || typeof raw === 'string') return false;
  try {
    return (google.rpc.Status.decode(raw).details ?? []).some((detail) => detail.type_url?.endsWith(`/${NAMESPACE_NOT_FOUND_DETAIL}`));
  } catch {
    return false;
  }
}

/** A Temporal client error with the gRPC details behind it ("Workflow Update failed" alone says little). */
export function describeServiceError(error: unknown): string {
  const cause = (error as { cause?: { details?: unknown } }).cause;
  return typeof cause?.details === 'string' && cause.details ? `${(error as Error).message}: ${cause.details}` : (error as Error).message;
}

/**
 * Data this process cannot decrypt, when `error` is the payload codec's error for it or was caused by one: the key
 * the data names, and whether this process holds no key of that id (else the data does not decrypt under the key it
 * holds: another key under that id, or altered data). Undefined for any other error.
 */
export function unreadableDataOf(error: unknown): { keyId: string; unknownKey: boolean } | undefined {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++, current = current.cause) {
    if (current instanceof UnknownPayloadKeyError) return { keyId: current.keyId, unknownKey: true };
    if (current instanceof PayloadDecryptionError) return { keyId: current.keyId, unknownKey: false };
  }
  return undefined;
}

/**
 * True when the run an Update was sent to has ended: closed before it admitted the Update (NOT_FOUND), or after it
 * accepted it and before it completed (Temporal's failure `AcceptedUpdateCompletedWorkflow`). A reset may have
 * replaced it with a run that still waits.
 */
export function isRunEnded(error: unknown): boolean {
  if (error instanceof WorkflowNotFoundError || grpcStatusOf(error) === GrpcStatus.NOT_FOUND) return true;
  const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
  return cause instanceof ApplicationFailure && cause.type === 'AcceptedUpdateCompletedWorkflow';
}

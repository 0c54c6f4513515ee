/**
 * The task core's one face: what the layers above it (approvals, the front-ends, the transports, the bridge and its
 * commands) may use of it. Every other file of src/core/ is its own, and the lint rule `local/layers` keeps it so.
 */

// The core, and the task as it answers with it.
export { TaskCore } from './task-core';
export type { ApprovalsPort, TaskFollowing, TaskPort, TaskRun, VisibleRun } from './ports';
export type { ActionOutcome, TaskAction } from './actions';
export type { TaskCoreOptions, TaskTool, WatchedReadOptions } from './options';
export type { QuotaOptions } from './quotas';
export { WRITE_PATIENCE_MS } from './options';
export type { CreatedTask, CreateOptions } from './lifecycle';
export type { PassedResponse } from './answers';
export type { FollowOptions } from './task-follower';
export type { ReadStats } from './reads';
export type { ChangeFeedStats } from './change-feed';
export { toolErrorOf, webUiMeta, type TaskOutcome, type TaskState, type TaskStatus, type TaskView } from './task-view';

// Its errors, and how Temporal's are told apart.
export {
  AnswerRefusedError,
  describeServiceError,
  GrpcStatus,
  grpcStatusOf,
  InvalidTaskRequestError,
  isRunEnded,
  isTemporalUnavailable,
  TaskCoreError,
  TaskNotFoundError,
  TaskStateUnreadableError,
  TooManyRequestsError,
  TooManyTasksError,
  unreadableDataOf,
  type TaskErrorCategory,
} from './errors';

// Principals, roles, and the marks of the tasks a bridge starts.
export { assertValidPrincipal, isReservedPrincipal, isValidRole, localPrincipal, OAUTH_PRINCIPAL_PREFIX, parseRoles } from './principal';
export { MarkerKeyError, markerFromEnv, type MarkedStart, type TaskMarker } from './marker';
export { TASK_ID_PATTERN } from './marked-runs';

// What the replicas of a deployment share.
export { SharedStateConfigError, sharedStateFromEnv, type ReplicaSharedState } from './shared-state';

// Listings and cursors, for the parts that read tasks under their own rule of access.
export { formFieldsOf } from './answers';
export { changedSinceQuery } from './change-feed';
export { decodeCursor, encodeCursor, listBinding } from './list-cursor';
export { DEFAULT_WATCH_LIMIT, type HistoryWatchStats } from './history-watch';
export { DEFAULT_FEED_LIMIT } from './reads';

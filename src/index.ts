/**
 * The public API of `temporal-mcp-tasks` (the package's `.` entry), for programs that serve Temporal workflows as MCP
 * tasks: declare tools, connect a bridge, serve it on stdio or Streamable HTTP. Every name here is covered by semantic
 * versioning; nothing else in the package is importable. Workflow code imports `temporal-mcp-tasks/workflow` instead.
 */

// The bridge: one Temporal connection and task core, one MCP server per connection.
export { createBridge } from './mcp/bridge/create-bridge';
export type { Bridge } from './mcp/bridge/public-bridge';
export {
  bridgeOptionsFromEnv,
  DEFAULT_TUNING,
  tuningFromEnv,
  type BridgeApprovalsOptions,
  type BridgeTuning,
  type CreateBridgeOptions,
  type Mcp2025RequestExtra,
} from './mcp/bridge/bridge-options';
export type { InputChannelOptions } from './mcp/mcp2025/input-channel';

// Tools: declared in code, or in a JSON or YAML file; the generic tools every server may offer (DEFAULT_TOOLS).
export { defaultToolResult, defineWorkflowTool, ToolDeclarationError, type WorkflowToolDeclaration } from './mcp/tools/define';
export type { DirectTool, DirectToolContext, ToolDefinition, WorkflowTool } from './mcp/tools/types';
export { InvalidJsonSchemaError, jsonSchema, zodSchema, type Checked, type ObjectJsonSchema, type ToolSchema } from './mcp/tools/schema';
export type { StartConfirmation } from './mcp/protocol/confirmation';
export type { ParamHeader } from './mcp/protocol/param-headers';
export { APPROVAL_TOOLS, COMPANION_TOOLS, DEFAULT_TOOLS } from './mcp/tools';
export { loadToolsFile, ToolsFileError } from './mcp/tools/config-file';

// Serving: stdio for every client generation, or Streamable HTTP with its bounds and authentication.
export { serveStdioForAllGenerations } from './mcp/transports/stdio';
export type { ListenRequest, ListenSink, McpEndpoints, TaskListenEndpoint } from './mcp/endpoints';
export { startHttpServer, type HttpRoute, type HttpServerOptions, type RunningHttpServer } from './mcp/transports/http';
export { allowedHostsFromEnv, httpLimitsFromEnv, OriginPolicy, type HttpLimits } from './mcp/transports/limits';
export { BearerTokens, TokenConfigError, tokensFromEnv } from './mcp/transports/auth';
export {
  createAuthenticator,
  type AuthenticatorOptions,
  type Caller,
  type PublicAnswer,
  type Refusal,
  type RequestAuthenticator,
} from './mcp/transports/oauth';
export { OAuthConfigError, oauthConfigFromEnv, type OAuthConfig } from './mcp/transports/oauth-config';
export { MarkerKeyError, type MarkedStart, type TaskMarker } from './core';

// What a direct tool's context reads and sends (a task's view, an action and its outcome), what a workflow tool is to
// the task core, and the options of a bridge's parts that `CreateBridgeOptions` names.
export type { ActionOutcome, TaskAction, TaskTool } from './core';
export type { TaskOutcome, TaskState, TaskStatus, TaskView } from './core';
export type { QuotaOptions, ReplicaSharedState, TaskCoreOptions, TaskErrorCategory, WatchedReadOptions } from './core';
export type { PeopleDirectory } from './approvals/approvals';
export type { DecisionDraft, DecisionLog } from './approvals/decision-log';
export type { DecisionSigner } from './records/keys';
export type { ApprovalLinks, QuestionLinkTarget } from './records/approval-links';
export { ApproversDirectory, ApproversDirectoryError } from './records/directory';
export { PersonSchema, type Person } from './records/directory-file';
export type { PasskeyEntry } from './records/passkeys';
export type { ApproverKeyring, ApproverPublicKey } from './records/approver-signatures';
export type { CloseKeeperOptions } from './approvals/close-keeper';

// The task core's errors, which a direct tool's context throws and the front-ends turn into JSON-RPC errors.
export {
  AnswerRefusedError,
  InvalidTaskRequestError,
  TaskCoreError,
  TaskNotFoundError,
  TooManyRequestsError,
  TooManyTasksError,
} from './core';

// The worker side: the activities a worker of bridge-served workflows registers beside its own.
export { createTaskActivities, type TaskActivitiesOptions } from './activities/task-activities';
export { createTaskWorker, runTaskWorker, type TaskWorkerOptions } from './task-worker';
export { runWorkerCommand, type ActivityFunctions, type WorkerCommandOptions } from './worker';
export { NotAStoreDirectoryError, RecordKeyMismatchError, RecordStore, type KeyedRecord } from './activities/record-store';
export { heartbeating, heartbeatingSleep } from './util/heartbeat';
export { AnswerSeal, createAnswerActivities } from './shared/answer-proof';
export { dataConverterFromEnv, EncryptionCodec, encryptingDataConverter } from './shared/payload-codec';
export {
  PayloadDecryptionError,
  PayloadKeys,
  PayloadKeysError,
  payloadKeysFromEnv,
  readPayloadKeys,
  UnknownPayloadKeyError,
  type Sealed,
} from './shared/payload-keys';
export { startCodecServer, type CodecServerOptions, type RunningCodecServer } from './codec/codec-server';
export { createNotificationActivities, notificationOutboxFromEnv } from './activities/notifications';
export { notificationDeliveryFromEnv, type NotificationDeliveryConfig } from './activities/notification-delivery-config';
export { createDecisionActivities } from './records/activities';
export { decisionStoreFromEnv, decisionStoreLocation, openDecisionStore } from './records/store';
export { DecisionStoreError } from './records/store-error';
export type { DecisionStore } from './contract/decision-records';
export { DecisionKeyError, decisionPublicKeysFromEnv, publicKeysFromFiles, type DecisionPublicKeys } from './records/keys';

// Configuration.
export { temporalConfigFromEnv, type TemporalConfig } from './shared/temporal-config';

// The task contract's types that the signatures above use. The contract itself (the respond signal, the published
// state, the question types and their helpers) is workflow code's: `temporal-mcp-tasks/workflow` holds all of it.
export type {
  ActionSealFields,
  AnswerOrigin,
  ApprovalJudgement,
  ApproverSignature,
  CountedApproval,
  DecisionRecordBody,
  Ed25519ApproverSignature,
  FormInputRequest,
  FormProperty,
  InputAudience,
  InputContent,
  InputResponse,
  PasskeyApproverSignature,
  PendingInput,
  PublishedAction,
  PublishedProgress,
  SealedAction,
  SignedDecisionRecord,
  UrlInputRequest,
  VerifyDecisionsInput,
} from './contract';

// What the bridge's activities take and return.
export { VERIFY_ANSWER_ACTIVITY, type RunBinding, type VerifyAnswerInput, type VerifyAnswerResult } from './contract/task-contract';
export type { DecisionNotification } from './contract/approvals';
export type { AppendOutcome, RecordDecisionInput } from './contract/decision-records';

export { PACKAGE_VERSION } from './version';

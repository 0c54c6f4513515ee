/**
 * The task contract between workflows and the bridge, as the package makes it public: the same names from
 * `temporal-mcp-tasks` and from `temporal-mcp-tasks/workflow`. Plain definitions only (it is bundled into the workflow
 * sandbox). Every name here is covered by semantic versioning.
 */
export {
  CHANGED_AT_SEARCH_ATTRIBUTE,
  checkFormContent,
  pendingInputsOf,
  PRINCIPAL_SEARCH_ATTRIBUTE,
  PROTOCOL_ERROR_FAILURE_TYPE,
  PUBLISHED_STATUSES,
  RESPOND_SIGNAL_NAME,
  respondSignal,
  TASK_META_MEMO,
  TASK_STATE_MEMO,
  type FormInputRequest,
  type FormProperty,
  type InputContent,
  type InputResponse,
  type PendingInput,
  type PublishedAction,
  type PublishedProgress,
  type PublishedStatus,
  type PublishedTaskState,
  type TaskMeta,
  type UrlInputRequest,
  VERIFY_ANSWER_ACTIVITY,
  openSealedAction,
  type ActionSealFields,
  type AnswerOrigin,
  type RefusedAction,
  type SealedAction,
  type VerifyAnswerInput,
  type VerifyAnswerResult,
} from './task-contract';
export { formatAmount } from './amount';
export {
  ANSWER_UPDATE_NAME,
  AWAITING_SEARCH_ATTRIBUTE,
  NOTIFY_ACTIVITY,
  approvalDecisionOf,
  personOfAnswer,
  type AnswerRecord,
  type DecisionNotification,
  type InputAudience,
  type InputEscalation,
} from './approvals';
export {
  RECORD_DECISION_ACTIVITY,
  VERIFY_DECISIONS_ACTIVITY,
  type ApprovalJudgement,
  type CountedApproval,
  type VerifyDecisionsInput,
} from './decision-records';

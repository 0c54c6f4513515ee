/**
 * The task contract between workflows and the bridge, as the package makes it public: the same names from
 * `temporal-mcp-tasks` and from `temporal-mcp-tasks/workflow`. Plain definitions only (it is bundled into the workflow
 * sandbox). Every name here is covered by semantic versioning: the names workflow code uses (a question and its answer,
 * a sealed action, the published state and the memo that holds it, the respond signal and its name, the protocol-error
 * failure type, a decision check's verdict) and the types their signatures need.
 */
export {
  PROTOCOL_ERROR_FAILURE_TYPE,
  PUBLISHED_STATUSES,
  RESPOND_SIGNAL_NAME,
  respondSignal,
  TASK_STATE_MEMO,
  type ActionSealFields,
  type AnswerOrigin,
  type DecidedQuestion,
  type FormInputRequest,
  type FormProperty,
  type InputContent,
  type InputResponse,
  type PendingInput,
  type PublishedAction,
  type PublishedProgress,
  type PublishedStatus,
  type PublishedTaskState,
  type QuestionClose,
  type RefusedAction,
  type RefusedAnswer,
  type SealedAction,
  type UrlInputRequest,
} from './task-contract';
export { formatAmount } from './amount';
export {
  approvalDecisionOf,
  personOfAnswer,
  type AddressedInput,
  type AnswerRecord,
  type InputAudience,
  type InputEscalation,
} from './approvals';
export {
  type ApprovalJudgement,
  type ApproverSignature,
  type CountedApproval,
  type DecisionRecordBody,
  type Ed25519ApproverSignature,
  type PasskeyApproverSignature,
  type SignedDecisionRecord,
  type VerifyDecisionsInput,
} from './decision-records';

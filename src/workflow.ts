/**
 * The workflow side of the package (`temporal-mcp-tasks/workflow`): what workflow code imports to speak the task
 * contract. Temporal's workflow bundler bundles it into the sandbox, so it imports `@temporalio/workflow` and plain
 * definitions only, never Node built-ins or the MCP side. Every name here is covered by semantic versioning.
 */
export { startWorkflowTask, type WorkflowTask } from './workflows/workflow-task';
export {
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
} from './shared/task-contract';

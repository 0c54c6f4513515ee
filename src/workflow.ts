/**
 * The workflow side of the package (`temporal-mcp-tasks/workflow`): what workflow code imports to speak the task
 * contract. Temporal's workflow bundler bundles it into the sandbox, so it imports `@temporalio/workflow` and plain
 * definitions only, never Node built-ins or the MCP side. Every name here is covered by semantic versioning.
 */
export { startWorkflowTask, taskPrincipal, type Decision, type DecisionRequest, type WorkflowTask } from './workflows/workflow-task';
export { verifyDecisions } from './workflows/decision-check';
export { checkSealedAction } from './workflows/sealed-actions';
export * from './contract';

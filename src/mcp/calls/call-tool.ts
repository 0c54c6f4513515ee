/**
 * What a tools/call does, whatever protocol generation carries it: tool descriptors, argument errors, the
 * idempotency `_meta`, and the answer of a plain call whose task outlived its wait.
 */
import { ErrorCode, RELATED_TASK_META_KEY, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { ADOPT_ONLY_META, IDEMPOTENCY_KEY_META, IDEMPOTENCY_KEY_PATTERN } from '../../contract/wire';
import { appOnlyToolMeta, taskViewToolMeta } from '../app/ui';
import { JsonRpcError } from '../protocol/wire-errors';
import { PENDING_CONFIRMATION_SCHEMA } from '../protocol/confirmation';
import { statusSentence } from '../tools/task-tool-support';
import { type TaskPort, type TaskView, webUiMeta } from '../../core';
import type { CallSeal } from '../protocol/signed-call';
import type { Approvals } from '../../approvals/approvals';
import type { BridgeToolContext, DirectToolContext, ToolDefinition, WorkflowTool } from '../tools/types';

/**
 * The structured content of a plain call that answers before its task has finished (see {@link pendingTaskResult}):
 * every workflow tool's output schema admits it beside the tool's own result.
 */
const PENDING_TASK_SCHEMA = {
  type: 'object',
  properties: {
    pendingTask: {
      type: 'object',
      description: 'The task goes on: follow it with task_status / task_result, answer it with task_respond.',
      properties: {
        taskId: { type: 'string' },
        status: { type: 'string', enum: ['working', 'input_required', 'completed', 'failed', 'cancelled'] },
        statusMessage: { type: 'string' },
        pollIntervalMs: { type: 'integer' },
        question: {
          type: 'object',
          description: 'The question the task waits on: an elicitation request (form or url) with its key.',
          properties: { key: { type: 'string' }, mode: { type: 'string', enum: ['form', 'url'] }, message: { type: 'string' } },
          required: ['key', 'mode', 'message'],
        },
      },
      required: ['taskId', 'status'],
    },
  },
  required: ['pendingTask'],
} as const;

/** The tools/list entry of a tool. A workflow tool points at the task view and admits the pending-task answer. */
export function describeTool(tool: ToolDefinition): Tool {
  const workflow = tool.kind === 'workflow';
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: tool.input.jsonSchema,
    ...(workflow && tool.output && { outputSchema: withPendingTask(tool.output.jsonSchema, tool.confirm !== undefined) }),
    ...(tool.annotations && { annotations: tool.annotations }),
    execution: { taskSupport: workflow ? tool.taskSupport : 'forbidden' },
    ...((workflow || tool.view) && { _meta: taskViewToolMeta() }),
    ...(!workflow && tool.appOnly && { _meta: appOnlyToolMeta() }),
  };
}

/** `{ type: "object", anyOf: [the tool's own output, the pending task, (the pending confirmation)] }`. */
function withPendingTask(schema: Tool['inputSchema'], confirms: boolean): NonNullable<Tool['outputSchema']> {
  const { $schema, ...own } = schema as Record<string, unknown>;
  return {
    ...($schema !== undefined && { $schema }),
    type: 'object',
    anyOf: [own, PENDING_TASK_SCHEMA, ...(confirms ? [PENDING_CONFIRMATION_SCHEMA] : [])],
  } as NonNullable<Tool['outputSchema']>;
}

/** The ttl a task-augmented call asks for; -32602 unless it is a whole, non-negative number of milliseconds. */
export function ttlOf(task: { ttl?: unknown } | undefined): number | undefined {
  const ttl = task?.ttl;
  if (ttl === undefined || ttl === null) return undefined;
  if (typeof ttl !== 'number' || !Number.isSafeInteger(ttl) || ttl < 0) {
    throw new JsonRpcError(
      ErrorCode.InvalidParams,
      `params.task.ttl must be a whole number of milliseconds, 0 or more (got ${JSON.stringify(ttl)})`,
    );
  }
  return ttl;
}

/** The call's idempotency key and adopt-only flag from its `_meta`; -32602 when they are malformed. */
export function idempotencyOf(meta: Record<string, unknown> | undefined): { idempotencyKey?: string; adoptOnly?: boolean } {
  const key = meta?.[IDEMPOTENCY_KEY_META];
  const adoptOnly = meta?.[ADOPT_ONLY_META];
  if (key !== undefined && (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key))) {
    throw new JsonRpcError(
      ErrorCode.InvalidParams,
      `_meta["${IDEMPOTENCY_KEY_META}"] must be 1-200 printable ASCII characters without spaces (a UUID, for example)`,
    );
  }
  if (adoptOnly !== undefined && typeof adoptOnly !== 'boolean') {
    throw new JsonRpcError(ErrorCode.InvalidParams, `_meta["${ADOPT_ONLY_META}"] must be true or false`);
  }
  if (adoptOnly && key === undefined) {
    throw new JsonRpcError(ErrorCode.InvalidParams, `_meta["${ADOPT_ONLY_META}"] needs _meta["${IDEMPOTENCY_KEY_META}"]`);
  }
  return { ...(key !== undefined && { idempotencyKey: key as string }), ...(adoptOnly === true && { adoptOnly }) };
}

/** Why a plain call answered before its task finished. */
export type PendingReason =
  /** The host renders the task view, which follows the task from here. */
  | { kind: 'view' }
  /** The task asks a question this client cannot be asked (it declared no elicitation for it). */
  | { kind: 'question' }
  /** The call waited as long as it may. */
  | { kind: 'budget'; budgetMs: number };

/**
 * The answer to a plain call whose task goes on: not an error (the work is under way), with the task id, the question
 * it waits on, and how to go on with the companion tools. `structuredContent.pendingTask` is declared in every
 * workflow tool's output schema ({@link PENDING_TASK_SCHEMA}).
 */
export function pendingTaskResult(view: TaskView, reason: PendingReason): CallToolResult {
  const { taskId, status, statusMessage, pollInterval } = view.task;
  const lead =
    reason.kind === 'view'
      ? `Started task ${taskId}; the task view shows its progress and takes the user's answers.`
      : reason.kind === 'budget'
        ? `Not finished within the ${Math.round(reason.budgetMs / 1000)} s this call may wait; the work goes on as task ${taskId}.`
        : `Task ${taskId} needs an answer from the user.`;
  const howTo =
    reason.kind === 'view'
      ? `task_status and task_result with taskId "${taskId}" report it.`
      : `Follow it with task_status, task_result, task_respond or task_cancel and taskId "${taskId}".`;
  const question = view.input && { key: view.input.key, ...view.input.request };
  return {
    content: [{ type: 'text', text: `${lead} ${statusSentence(view)} ${howTo}` }],
    structuredContent: {
      pendingTask: {
        taskId,
        status,
        ...(statusMessage !== undefined && { statusMessage }),
        ...(pollInterval !== undefined && { pollIntervalMs: pollInterval }),
        ...(question && { question }),
      },
    },
    _meta: { [RELATED_TASK_META_KEY]: { taskId }, ...webUiMeta(view) },
  };
}

export function invalidArgumentsText(name: string, problems: string[]): string {
  return `Invalid arguments for tool ${name}: ${problems.join('; ')}`;
}

export function invalidArgumentsResult(name: string, problems: string[]): CallToolResult {
  return { content: [{ type: 'text', text: `${invalidArgumentsText(name, problems)}. Fix them and call again.` }], isError: true };
}

/** What every direct tool's context is made of. */
export interface DirectToolDependencies {
  core: TaskPort;
  approvals: Approvals;
  seal: CallSeal;
  workflowTools: ReadonlyMap<string, WorkflowTool<any, any>>;
}

/**
 * What the direct tool `tool` may use, for `principal`: the same in every generation but for how it waits. A form it puts to
 * the caller (`ask`) counts against the principal's waits (`MCP_MAX_WAITS_PER_PRINCIPAL`) while it is open; over the
 * quota, `ask` throws `TooManyRequestsError`.
 */
export function directToolContext(
  deps: DirectToolDependencies,
  tool: string,
  caller: { principal: string; roles: readonly string[] },
  awaitResult: DirectToolContext['awaitResult'],
  ask?: DirectToolContext['ask'],
): BridgeToolContext {
  const { core, approvals, seal, workflowTools } = deps;
  const { principal, roles } = caller;
  return {
    core,
    approvals,
    principal,
    roles,
    ownedWorkflowId: (taskId) => core.ownedWorkflowId(taskId, principal),
    task: (taskId) => core.get(taskId, principal),
    sendAction: (view, action) => core.sendAction(view, action, { principal, via: tool }),
    awaitResult,
    ...(ask && { ask }),
    confirmations: { open: (token, caller) => seal.open(token, caller), tool: (name) => workflowTools.get(name) },
  };
}

/** The roles an authInfo carries in `extra.roles` (set by the HTTP transport from the caller's credentials). */
export function rolesInAuthInfo(authInfo: { extra?: Record<string, unknown> } | undefined): string[] {
  const roles = authInfo?.extra?.roles;
  return Array.isArray(roles) ? roles.filter((role): role is string => typeof role === 'string') : [];
}

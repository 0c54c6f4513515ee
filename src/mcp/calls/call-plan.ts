/**
 * What a tools/call does, decided once for both protocol generations: which tool, whether it runs as a task, what
 * becomes of arguments that do not fit, the confirmation asked before start, and how the call answers once its task
 * exists. {@link planCall} is a pure function of the call and of what the client declared; each generation carries
 * the plan out in its own wire (2025-11-25: `McpError`, `{ task }`, elicitation on the call's stream; 2026-07-28:
 * `ProtocolError`, `resultType: "task"`, input_required rounds).
 */
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PendingInput } from '../../contract/task-contract';
import { rendersApps } from '../app/ui';
import { canElicit, type ElicitationCapability } from './can-elicit';
import { invalidArgumentsResult, invalidArgumentsText } from './call-tool';
import { confirmationRequest, declinedResult, pendingConfirmationResult, type StartConfirmation } from '../protocol/confirmation';
import type { DirectTool, ToolDefinition, WorkflowTool } from '../tools/types';
import type { CallAnswer } from '../protocol/outcome';

/** The extension id of MCP tasks in protocol 2026-07-28 (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** What a client declared, as far as the plan of a call depends on it. */
export interface DeclaredCapabilities {
  elicitation?: ElicitationCapability;
  extensions?: Record<string, unknown>;
}

/** A tools/call as either generation received it. */
export type ToolCall = {
  name: string;
  /** The arguments as they came; absent: none. */
  args: unknown;
  tools: ReadonlyMap<string, ToolDefinition>;
  /** Declared at initialize (2025-11-25) or in the request's client capabilities (2026-07-28). */
  capabilities: DeclaredCapabilities | undefined;
} & (
  | /** 2025-11-25: the client decides; a call with `params.task` must be answered with a task. */
    { generation: 'mcp2025'; taskAugmented: boolean }
    /**
     * 2026-07-28: the server decides per call, for a request that declared the tasks extension (SEP-2663). A retried
     * plain call whose input_required round asked its task's questions names that task in `resumesTask` (from the
     * round's sealed state, already checked to be this call's).
     */
  | { generation: 'mcp2026'; resumesTask?: string }
);

export type { CallAnswer };

/** Run a direct tool's handler with the checked arguments. */
export interface DirectPlan {
  kind: 'direct';
  tool: DirectTool<any>;
  input: unknown;
  /** Whether the handler may put a form to the caller: the client declared form elicitation. */
  mayAsk: boolean;
}

/** Go on with the task of a workflow tool's call, whose round this retried call answers (2026-07-28). */
export interface ResumePlan {
  kind: 'resume';
  taskId: string;
}

/** The question a workflow tool asks before it starts, and whether this client can be asked it. */
export interface PlannedConfirmation {
  confirm: StartConfirmation;
  question: PendingInput;
  askable: boolean;
}

/** Start a workflow tool's workflow: first its confirmation, if it asks one; then answer as `then` says. */
export interface StartPlan {
  kind: 'start';
  tool: WorkflowTool<any, any>;
  /** The checked arguments: the workflow's input, unless an accepted confirmation adds its fields. */
  input: unknown;
  confirmation?: PlannedConfirmation;
  /**
   * How the call answers when it ends before a task exists (its confirmation cannot be asked, or was declined): with
   * a tool result, or with a protocol error where the client demanded a task (a 2025-11-25 task-augmented call).
   */
  refusal: 'error' | 'result';
  /** Once the task exists: answer with the task, with the pending-task result the task view follows, or wait inline. */
  then: 'task' | 'view' | 'inline';
}

/** What a tools/call does (see {@link planCall}). */
export type CallPlan = CallAnswer | DirectPlan | StartPlan | ResumePlan;

/**
 * What `call` does, by the rules of its generation. Pure but for the tool's argument check, which strips what a
 * configured tool's schema does not declare from `call.args`.
 */
export function planCall(call: ToolCall): CallPlan {
  const { name, tools, capabilities } = call;
  const tool = tools.get(name);
  if (!tool) return failure(ProtocolErrorCode.InvalidParams, `Unknown tool "${name}"; available tools: ${[...tools.keys()].join(', ')}`);
  // The round's arguments were checked when it was asked, and the sealed state binds them to this call.
  if (call.generation === 'mcp2026' && call.resumesTask !== undefined && tool.kind === 'workflow') {
    return { kind: 'resume', taskId: call.resumesTask };
  }
  // Only a 2025-11-25 client asks for a task, and a call that asked can only be answered with one.
  const demanded = call.generation === 'mcp2025' && call.taskAugmented;
  if (tool.kind === 'direct') {
    if (demanded) return failure(ProtocolErrorCode.MethodNotFound, taskForbiddenText(name));
    const parsed = tool.input.check(call.args ?? {});
    if (!parsed.ok) return { kind: 'result', result: invalidArgumentsResult(name, parsed.problems) };
    return { kind: 'direct', tool, input: parsed.value, mayAsk: canElicit(capabilities?.elicitation) };
  }
  const asTask =
    call.generation === 'mcp2025'
      ? call.taskAugmented
      : // The server decides per call (SEP-2663): a tool that never runs as a task answers inline even to a task client.
        capabilities?.extensions?.[TASKS_EXTENSION] !== undefined && tool.taskSupport !== 'forbidden';
  const unsupported = taskSupportRefusal(call.generation, tool, asTask);
  if (unsupported) return unsupported;
  const parsed = tool.input.check(call.args ?? {});
  if (!parsed.ok) {
    // A call that demanded a task gets none and no result: a protocol error. Otherwise a tool error the model can
    // correct (2026-07-28: whether or not the client takes tasks).
    return demanded
      ? failure(ProtocolErrorCode.InvalidParams, invalidArgumentsText(name, parsed.problems))
      : { kind: 'result', result: invalidArgumentsResult(name, parsed.problems) };
  }
  return {
    kind: 'start',
    tool,
    input: parsed.value,
    ...(tool.confirm && { confirmation: plannedConfirmation(tool.confirm, parsed.value, capabilities) }),
    refusal: demanded ? 'error' : 'result',
    then: asTask ? 'task' : rendersApps(capabilities) ? 'view' : 'inline',
  };
}

/** The refusal of a workflow tool called as a task it cannot be, or not as the task it must be; undefined if neither. */
function taskSupportRefusal(generation: ToolCall['generation'], tool: WorkflowTool<any, any>, asTask: boolean): CallAnswer | undefined {
  if (generation === 'mcp2025') {
    if (asTask && tool.taskSupport === 'forbidden') return failure(ProtocolErrorCode.MethodNotFound, taskForbiddenText(tool.name));
    if (!asTask && tool.taskSupport === 'required') {
      return failure(
        ProtocolErrorCode.MethodNotFound,
        `Tool "${tool.name}" must be called as a task: add params.task (execution.taskSupport is "required")`,
      );
    }
    return undefined;
  }
  if (!asTask && tool.taskSupport === 'required') {
    return failure(
      ProtocolErrorCode.MissingRequiredClientCapability,
      `Tool "${tool.name}" runs only as a task: declare the ${TASKS_EXTENSION} extension in the request's client capabilities`,
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    );
  }
  return undefined;
}

function taskForbiddenText(name: string): string {
  return `Tool "${name}" does not support task-augmented calls (execution.taskSupport is "forbidden")`;
}

function plannedConfirmation(
  confirm: StartConfirmation,
  input: unknown,
  capabilities: DeclaredCapabilities | undefined,
): PlannedConfirmation {
  const question = confirmationRequest(confirm, input);
  return { confirm, question, askable: canElicit(capabilities?.elicitation, question) };
}

/**
 * The answer to a call whose confirmation this client cannot be asked: the question and how to answer it with
 * `confirm_start` (`token` seals this call for its caller); -32600 carrying them where a task was demanded.
 */
export function unaskedConfirmation(plan: StartPlan, question: PendingInput, token: string): CallAnswer {
  const pending = pendingConfirmationResult(plan.tool, question, token);
  if (plan.refusal === 'error') return failure(ProtocolErrorCode.InvalidRequest, textOf(pending), pending.structuredContent);
  return { kind: 'result', result: pending };
}

/** The answer to a call whose confirmation was declined or dismissed: nothing started; -32600 where a task was demanded. */
export function declinedConfirmation(plan: StartPlan, action: 'decline' | 'cancel'): CallAnswer {
  const result = declinedResult(plan.tool, action);
  if (plan.refusal === 'error') return failure(ProtocolErrorCode.InvalidRequest, textOf(result), { declined: true });
  return { kind: 'result', result };
}

function failure(code: number, message: string, data?: unknown): CallAnswer {
  return { kind: 'error', error: { code, message, ...(data !== undefined && { data }) } };
}

/** The text of a tool result. */
function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join(' ');
}

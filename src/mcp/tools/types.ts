import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { ActionOutcome, TaskAction, TaskPort, TaskTool, TaskView } from '../../core';
import type { Approvals } from '../../approvals/approvals';
import type { StartConfirmation } from '../protocol/confirmation';
import type { FormInputRequest, InputContent } from '../../contract/task-contract';
import type { SealedCall } from '../protocol/signed-call';
import type { ToolSchema } from './schema';

/** A tool whose call starts a workflow; the workflow id is the task id. Make one with `defineWorkflowTool`. */
export interface WorkflowTool<Input = unknown, Output = unknown> extends TaskTool<Output> {
  kind: 'workflow';
  title?: string;
  description: string;
  input: ToolSchema<Input>;
  output?: ToolSchema<Output>;
  /**
   * `required`: only as a task; `optional`: as a task, or a plain call that runs the workflow and waits for its result;
   * `forbidden`: never as a task (a quick workflow served as a plain tool: every call waits for its result).
   */
  taskSupport: 'optional' | 'required' | 'forbidden';
  annotations?: ToolAnnotations;
  /** A short line a host may hand the model as soon as the task exists. */
  immediateResponse?(input: Input, taskId: string): string;
  /** A question asked on the call itself before the workflow starts; nothing starts unless it is accepted. */
  confirm?: StartConfirmation;
}

/** What a direct tool's handler may use: the caller, their tasks, and a form put to them. */
export interface DirectToolContext {
  principal: string;
  /** The caller's roles, from its credentials only (never from arguments). */
  roles: readonly string[];
  /** Resolves a task id the caller owns to its workflow id; throws the tasks/* "not found" error otherwise. */
  ownedWorkflowId(taskId: string): Promise<string>;
  /** Reads a task the caller owns; throws the tasks/* "not found" error otherwise. */
  task(taskId: string): Promise<TaskView>;
  /**
   * Sends the task's workflow an action it offers the caller (an Update of its own, for `action.subject`), on the run
   * `view` shows, sealed with who asked and this tool's name; the workflow takes it only through
   * `checkSealedAction`. A repeated request of the same action on the same run is applied once and answered alike.
   */
  sendAction<Result>(view: TaskView, action: TaskAction): Promise<ActionOutcome<Result>>;
  /**
   * Puts a form to the caller and returns their answer; absent when the caller's client cannot be asked. A 2025-11-25
   * client that declared forms is asked on this call's own stream. A 2026-07-28 client is asked with an input_required
   * round: the call answers with it, this `ask` never returns, and the retried call runs the handler again, its `ask`
   * returning the answer the retry carries. So the handler does nothing before its form that it may not do twice.
   */
  ask?(request: Omit<FormInputRequest, 'mode'>): Promise<{ action: 'accept' | 'decline' | 'cancel'; content?: InputContent }>;
  /**
   * Waits up to `budgetMs` for the task to end, asking its questions on this call's stream: the task's result as its
   * tool returned it (a task that failed or was cancelled: a tool error that says so), or undefined if it did not end.
   */
  awaitResult(taskId: string, budgetMs: number): Promise<CallToolResult | undefined>;
}

/**
 * What the bridge's own direct tools use beside a direct tool's context (the tools of `tools/`: task steering, the
 * approvers' inbox and answers, confirmed starts). The bridge hands every direct tool this; the public type shows a
 * team's tool only {@link DirectToolContext}.
 */
export interface BridgeToolContext extends DirectToolContext {
  /** The task core's port, for the principal's tasks (each call names the principal). */
  core: TaskPort;
  /** Questions addressed to people: the inbox and the answer path. */
  approvals: Approvals;
  /** Calls waiting for a confirmation before they start (see `confirm_start`). */
  confirmations: {
    /** The call a confirmation token stands for, if it is valid and the caller's. */
    open(token: string, principal: string): SealedCall | undefined;
    /** A declared workflow tool by name. */
    tool(name: string): WorkflowTool<any, any> | undefined;
  };
}

/**
 * A tool that runs at once, without a task. `Context` is what its handler is given: a team's tool takes
 * {@link DirectToolContext}.
 */
export interface DirectTool<Input = unknown, Context extends DirectToolContext = DirectToolContext> {
  kind: 'direct';
  name: string;
  title?: string;
  description: string;
  input: ToolSchema<Input>;
  annotations?: ToolAnnotations;
  /** Whether hosts that render MCP Apps show its result in the task view (which knows this tool's result). */
  view?: boolean;
  /**
   * Whether only Apps call it (MCP Apps `_meta.ui.visibility: ["app"]`): a host that renders Apps keeps it off the
   * model's tool list. Other clients list it as any other tool.
   */
  appOnly?: boolean;
  /**
   * Whether a call with these (valid) arguments sends nothing on its own stream while it runs: no form put to the
   * caller (`ask`), no wait with progress (`awaitResult`). Such a call of a 2025-11-25 session over HTTP is answered
   * with plain JSON, not an SSE stream, so a server that dies under it is a failed request the client retries. Default:
   * never.
   */
  answersAtOnce?(input: Input): boolean;
  handler(input: Input, context: Context): Promise<CallToolResult>;
}

/** Any tool the server can list. */
export type ToolDefinition = WorkflowTool<any, any> | DirectTool<any, any>;

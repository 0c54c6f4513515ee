/**
 * MCP 2026-07-28 requests (stateless, per-request `_meta`) and the tasks extension
 * `io.modelcontextprotocol/tasks` (SEP-2663), over the same Temporal-backed task core as 2025-11-25.
 *
 * The SDK (v2) serves the base protocol: `server/discover`, the per-request envelope, header checks, `resultType`,
 * `-32601` for `tasks/result` and `tasks/list`. This module adds the tools and the three task methods.
 */
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { ProtocolError, ProtocolErrorCode, Server, type RequestStateCodec, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { servedRequest, type ServedParams } from '../calls/served-request';
import { APP_RESOURCES, readAppResource } from '../app/ui';
import { describeTool } from '../calls/call-tool';
import { planCall, TASKS_EXTENSION } from '../calls/call-plan';
import { runCall } from '../calls/call-runner';
import { isInvalidParams, jsonRpcFailureOf } from '../protocol/wire-errors';
import { argumentsDigest } from '../../util/arguments-digest';
import type { CallSeal } from '../protocol/signed-call';
import { toolTables } from '../tools';
import { type TaskPort, webUiMeta } from '../../core';
import type { Approvals } from '../../approvals/approvals';
import { detailedTask } from './task-shape';
import type { ToolDefinition } from '../tools/types';
import { capabilitiesOf, Mcp2026Call, type Mcp2026Answer, type Origin, type ResumeState } from './call-port';

export type { ResumeState };

/** Everything the 2026-07-28 front-end needs; shared by all requests of a process. */
export interface Mcp2026Dependencies {
  core: TaskPort;
  approvals: Approvals;
  tools: readonly ToolDefinition[];
  /** How long a plain call of a task tool waits before it answers with the task id. */
  inlineBudgetMs: number;
  /** Seals the `requestState` of an input_required round; bound to the principal, so no one else can resume it. */
  requestState: RequestStateCodec<ResumeState>;
  /** Seals the calls that wait for a confirmation before they start (`confirm_start`). */
  seal: CallSeal;
  serverInfo: { name: string; version: string };
  instructions: string;
}

const TaskIdParams = z.looseObject({ taskId: z.string() });

/**
 * Makes the MCP server that answers one 2026-07-28 request for `principal`. Called per request by the SDK's
 * handler; holds no state between requests (the tasks live in Temporal).
 */
export function createMcp2026Server(deps: Mcp2026Dependencies, principal: string, roles: readonly string[] = []): Server {
  const server = new Server(deps.serverInfo, {
    capabilities: { tools: {}, resources: {}, extensions: { [TASKS_EXTENSION]: {} } },
    instructions: deps.instructions,
    requestState: { verify: (state, ctx) => deps.requestState.verify(state, ctx) },
  });
  const { core } = deps;
  const { byName, workflowTools } = toolTables(deps.tools);
  /** A tools/call or tasks/* request under the principal's rate, in its span and log context. */
  const traced = <T>(method: string, params: ServedParams, work: () => Promise<T>) =>
    protocolErrors(() => servedRequest(core, method, principal, params, work));

  server.setRequestHandler('tools/list', async () => ({ tools: deps.tools.map(describeTool) as never }));
  server.setRequestHandler('resources/list', async () => ({ resources: APP_RESOURCES }));
  server.setRequestHandler('resources/read', (request) => protocolErrors(() => readAppResource(request.params.uri)) as never);

  server.setRequestHandler('tools/call', (request, ctx) =>
    traced('tools/call', request.params, async (): Promise<Mcp2026Answer> => {
      const { name, _meta } = request.params;
      const args = request.params.arguments ?? {};
      const tool = byName.get(name);
      // A call is bound to its arguments as they came (the plan's check may strip what a configured schema does not
      // declare), and the round a workflow tool's call resumes is checked before anything else.
      const origin = tool && { tool: name, args: argumentsDigest(args) };
      let resume = tool?.kind === 'workflow' ? resumeStateOf(ctx, origin!) : undefined;
      const call = (resumed: ResumeState | undefined) =>
        new Mcp2026Call(deps, { principal, roles }, ctx, origin, _meta as Record<string, unknown> | undefined, resumed);
      const plan = planCall({
        generation: 'mcp2026',
        name,
        args,
        tools: byName,
        capabilities: capabilitiesOf(ctx),
        ...(resume?.kind === 'task' && { resumesTask: resume.taskId }),
      });
      if (plan.kind === 'direct') resume = resumeStateOf(ctx, origin!, 'direct');
      return runCall(plan, call(resume), { core, approvals: deps.approvals, seal: deps.seal, workflowTools });
    }),
  );

  server.setRequestHandler('tasks/get', { params: TaskIdParams }, (params, ctx) =>
    traced('tasks/get', params, async () => {
      requireTasks(ctx);
      const view = await core.get(params.taskId, principal);
      const meta = webUiMeta(view);
      return { ...detailedTask(view), ...(Object.keys(meta).length > 0 && { _meta: meta }) } as never;
    }),
  );

  // The SDK lifts `inputResponses` out of every request's params into ctx.mcpReq.inputResponses.
  server.setRequestHandler('tasks/update', { params: TaskIdParams }, (params, ctx) =>
    traced('tasks/update', params, async () => {
      const { taskId } = params;
      requireTasks(ctx);
      // The client waits for the acknowledgement: a busy Temporal slows it down rather than fail it.
      const view = await core.getPatiently(taskId, principal);
      const responses = ctx.mcpReq.inputResponses;
      if (responses === undefined || responses === null || typeof responses !== 'object' || Array.isArray(responses)) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          'tasks/update needs params.inputResponses: an object of answers keyed by input request',
        );
      }
      // Unknown and already answered keys are ignored (SEP-2663); answers that do not fit fail the call, and none is passed on.
      await core.answer(view, responses as Record<string, unknown>, { principal, via: 'tasks/update' });
      return {};
    }),
  );

  // Cooperative and acknowledged only; a terminal task is left as it is.
  server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, (params, ctx) =>
    traced('tasks/cancel', params, async () => {
      const { taskId } = params;
      requireTasks(ctx);
      const view = await core.get(taskId, principal);
      if (!isTerminal(view.task.status)) {
        await core.cancel(taskId, principal).catch((error: unknown) => {
          // It ended between the read and the cancel: nothing to do.
          if (!isInvalidParams(error)) throw error;
        });
      }
      return {};
    }),
  );

  return server;
}

/** -32021 unless this request declared the tasks extension. */
function requireTasks(ctx: ServerContext): void {
  if (capabilitiesOf(ctx).extensions?.[TASKS_EXTENSION] === undefined) {
    throw new ProtocolError(
      ProtocolErrorCode.MissingRequiredClientCapability,
      `Task methods need the ${TASKS_EXTENSION} extension: declare it in the request's client capabilities`,
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    );
  }
}

/**
 * The requestState a retried call carries, if any (of the kind `only`, when named); -32602 when it was issued for
 * another call: a state is the server's promise for one call, refused on another tool or other arguments.
 */
function resumeStateOf(ctx: ServerContext, origin: Origin, only?: ResumeState['kind']): ResumeState | undefined {
  const resume = ctx.mcpReq.requestState<ResumeState>();
  if (
    resume !== undefined &&
    (resume?.tool !== origin.tool || resume.args !== origin.args || (only !== undefined && resume.kind !== only))
  ) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `requestState was issued for another call; retry the call that received it with the same tool and arguments, or call afresh without it`,
    );
  }
  return resume;
}

/** Errors in this SDK's error type (see {@link jsonRpcFailureOf}); "Temporal unreachable" becomes a retryable error. */
async function protocolErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    const failure = jsonRpcFailureOf(error);
    if (failure) throw new ProtocolError(failure.code, failure.message, failure.data);
    throw error;
  }
}

/**
 * A connected bridge ({@link createBridge}): one Temporal client and one task core, the approvals over it, and the
 * endpoints of both protocol generations, closed together. Its options and their reading from the environment are in
 * `bridge/bridge-options.ts`.
 */
import { assertValidPrincipal, TaskCore } from '../core';
import { randomBytes } from 'node:crypto';
import { log } from '../util/log';
import { TaskSubscriptions, isTaskListen } from './mcp2026/task-subscriptions';
import type { Bridge as PublicBridge } from './bridge/public-bridge';
import { answerAtOnce, createMcp2025Server } from './mcp2025/server';
import { createMcp2026Server } from './mcp2026/server';
import { SERVER_INFO } from './protocol/server-identity';
import type { Approvals } from '../approvals/approvals';
import { CloseKeeper } from '../approvals/close-keeper';
import { DEFAULT_TOOLS, toolTables, workflowToolsByName } from './tools';
import { confirmStartTool } from './tools/confirm-start';
import { CallSeal } from './protocol/signed-call';
import { assertBridgeOptions, DEFAULT_CLOSE_KEEPER_MS, DEFAULT_TUNING, type CreateBridgeOptions } from './bridge/bridge-options';
import { connectBridgeClient, temporalHealth } from './bridge/temporal-client';
import { bridgeApprovals } from './bridge/bridge-approvals';
import { generationsOf } from './bridge/generations';

/** A connected bridge with its parts: the task core and the approvals over it, which the server's HTTP routes use. */
export interface Bridge extends PublicBridge {
  /** The task core all generations share. */
  core: TaskCore;
  /** Questions addressed to people, across tasks. */
  approvals: Approvals;
}

/**
 * Connects to Temporal and prepares the task core. The longest ttl granted defaults to the namespace's retention,
 * so a task is never forgotten by Temporal before its ttl has passed.
 */
export async function createBridge(options: CreateBridgeOptions): Promise<Bridge> {
  assertBridgeOptions(options);
  const tuning = options.tuning ?? DEFAULT_TUNING;
  let tools = options.tools ?? DEFAULT_TOOLS;
  const local = options.localPrincipal;
  assertValidPrincipal(local);
  const localRoles = options.localRoles ?? [];
  const { client, connection, maxTtlMs } = await connectBridgeClient(options, tuning);
  const shared = options.sharedState;
  if (shared) log.info(`bridge: the rate limit and the tasks created lately are shared with the other replicas in ${shared.location()}`);
  const core = new TaskCore(
    client,
    {
      ...tuning.core,
      maxTtlMs,
      defaultTtlMs: Math.min(tuning.core.defaultTtlMs, maxTtlMs),
      taskQueue: options.temporal.taskQueue,
      marker: options.marker,
      answerSeal: options.answerSeal,
      ...(options.temporal.webUiUrl && { webUiUrl: options.temporal.webUiUrl }),
      ...(shared && { shared }),
    },
    workflowToolsByName(tools),
  );
  const stateKey = options.requestState?.key ?? randomBytes(32);
  const stateTtlMs = options.requestState?.ttlMs ?? 15 * 60_000;
  const seal = new CallSeal(stateKey, stateTtlMs);
  const confirms = tools.some((tool) => tool.kind === 'workflow' && tool.confirm !== undefined);
  if (confirms && !tools.some((tool) => tool.name === confirmStartTool.name)) tools = [...tools, confirmStartTool];
  // Read once here, so that an invalid x-mcp-header stops the server at start rather than failing its requests.
  const { paramHeaders } = toolTables(tools);
  const { decisions } = options.approvals;
  const approvals = bridgeApprovals(core, options);
  const parts = { core, client, approvals, tools, tuning, seal, stateKey, stateTtlMs, local, localRoles };
  const { mcp2025, mcp2026, mcp2026Handler } = generationsOf(parts, options);
  const subscriptions = new TaskSubscriptions(core, SERVER_INFO);
  const keeper =
    decisions && options.closeKeeper !== false
      ? new CloseKeeper(core, decisions, options.closeKeeper ?? { intervalMs: DEFAULT_CLOSE_KEEPER_MS })
      : undefined;
  keeper?.start();
  return {
    core,
    approvals,
    localPrincipal: local,
    createMcp2025Server: () => createMcp2025Server(mcp2025),
    answerAtOnce,
    paramHeadersOf: (name) => paramHeaders.get(name),
    mcp2026: mcp2026Handler,
    createMcp2026Server: () => createMcp2026Server(mcp2026, local, localRoles),
    taskSubscriptions: {
      accepts: isTaskListen,
      serve: (request, principal, sink) => subscriptions.serve(request, principal ?? local, sink),
    },
    health: (deadlineMs) => temporalHealth(client, deadlineMs),
    close: async () => {
      await keeper?.stop();
      core.close();
      await mcp2026Handler.close();
      await decisions?.close();
      await shared?.close();
      await connection?.close();
    },
  };
}

import {
  assertValidPrincipal,
  DEFAULT_FEED_LIMIT,
  DEFAULT_WATCH_LIMIT,
  isTemporalUnavailable,
  localPrincipal,
  markerFromEnv,
  parseRoles,
  type ReplicaSharedState,
  sharedStateFromEnv,
  TaskCore,
  type TaskCoreOptions,
  type TaskMarker,
} from '../core';
import { DecisionChallenges } from '../approvals/decision-challenges';
import { OneTimeUses } from '../approvals/one-time-uses';
import { randomBytes } from 'node:crypto';
import { Client, Connection, type ClientInterceptors, type ConnectionOptions } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { createMcpHandler, createRequestStateCodec } from '@modelcontextprotocol/server';
import { countFromEnv, msFromEnv, temporalConfigFromEnv, type TemporalConfig } from '../shared/temporal-config';
import { log } from '../util/log';
import { retryWithBackoff } from '../util/wait';
import type { InputChannelOptions } from './mcp2025/input-channel';
import { createMcp2026Server, type Mcp2026Dependencies } from './mcp2026/server';
import { isTaskListen, TaskSubscriptions } from './mcp2026/task-subscriptions';
import type { McpEndpoints } from './endpoints';
import { answerAtOnce, createMcp2025Server, type Mcp2025Dependencies } from './mcp2025/server';
import { SERVER_INFO, SERVER_INSTRUCTIONS } from './protocol/server-identity';
import { answerSealFromEnv, type AnswerSeal } from '../shared/answer-proof';
import { dataConverterFromEnv } from '../shared/payload-codec';
import { rolesInAuthInfo } from './calls/call-tool';
import { Approvals, type ApprovalsOptions } from '../approvals/approvals';
import { approversFromEnv } from '../approvals/approvals-setup';
import { CloseKeeper, DEFAULT_CLOSE_LOOKBACK_MS, type CloseKeeperOptions } from '../approvals/close-keeper';
import { DecisionLog } from '../approvals/decision-log';
import { DEFAULT_TOOLS, toolTables, workflowToolsByName } from './tools';
import { confirmStartTool } from './tools/confirm-start';
import { CallSeal } from './protocol/signed-call';
import type { ToolDefinition } from './tools/types';

/** Task and input tuning, from MCP_* environment variables. */
export interface BridgeTuning {
  core: Omit<TaskCoreOptions, 'taskQueue' | 'maxTtlMs' | 'marker' | 'answerSeal'> & { maxTtlMs?: number };
  input: InputChannelOptions;
  /** How long a plain call of a task tool waits before answering with the task id (below common host timeouts). */
  inlineBudgetMs: number;
}

/**
 * Reads tuning from MCP_TASK_MAX_TTL_MS, MCP_TASK_DEFAULT_TTL_MS, MCP_TASK_POLL_INTERVAL_MS, MCP_TASK_PAGE_SIZE,
 * MCP_TEMPORAL_RPC_TIMEOUT_MS, MCP_WATCH_KEEP_MS, MCP_WATCH_LIMIT, MCP_WATCH_LONG_POLL_MS, MCP_CHANGE_FEED_MS, MCP_CHANGE_FEED_LIMIT,
 * MCP_ELICITATION_TIMEOUT_MS, MCP_INPUT_PUSH_GRACE_MS, MCP_INPUT_DISMISS_COOLDOWN_MS and MCP_INLINE_BUDGET_MS.
 */
export function tuningFromEnv(env: NodeJS.ProcessEnv = process.env): BridgeTuning {
  const maxTtl = env.MCP_TASK_MAX_TTL_MS ? msFromEnv(env, 'MCP_TASK_MAX_TTL_MS', 0) : undefined;
  return {
    core: {
      ...(maxTtl !== undefined && { maxTtlMs: maxTtl }),
      defaultTtlMs: msFromEnv(env, 'MCP_TASK_DEFAULT_TTL_MS', 24 * 3600_000),
      pollIntervalMs: msFromEnv(env, 'MCP_TASK_POLL_INTERVAL_MS', 1000),
      pageSize: msFromEnv(env, 'MCP_TASK_PAGE_SIZE', 20),
      rpcTimeoutMs: msFromEnv(env, 'MCP_TEMPORAL_RPC_TIMEOUT_MS', 5000),
      reads: {
        keepMs: msFromEnv(env, 'MCP_WATCH_KEEP_MS', 30_000),
        limit: countFromEnv(env, 'MCP_WATCH_LIMIT', DEFAULT_WATCH_LIMIT, 0),
        longPollMs: msFromEnv(env, 'MCP_WATCH_LONG_POLL_MS', 70_000),
        feedIntervalMs: msFromEnv(env, 'MCP_CHANGE_FEED_MS', 0),
        feedLimit: countFromEnv(env, 'MCP_CHANGE_FEED_LIMIT', DEFAULT_FEED_LIMIT, 0),
      },
      quotas: {
        maxOpenTasks: countFromEnv(env, 'MCP_MAX_OPEN_TASKS_PER_PRINCIPAL', 1000, 0),
        maxWaits: countFromEnv(env, 'MCP_MAX_WAITS_PER_PRINCIPAL', 64, 0),
        operationsPerSecond: countFromEnv(env, 'MCP_TASK_OPS_PER_SECOND', 50, 0),
      },
    },
    input: {
      elicitationTimeoutMs: msFromEnv(env, 'MCP_ELICITATION_TIMEOUT_MS', 600_000),
      pushGraceMs: msFromEnv(env, 'MCP_INPUT_PUSH_GRACE_MS', 1500),
      dismissCooldownMs: msFromEnv(env, 'MCP_INPUT_DISMISS_COOLDOWN_MS', 60_000),
    },
    inlineBudgetMs: msFromEnv(env, 'MCP_INLINE_BUDGET_MS', 50_000),
  };
}

/**
 * A connected bridge: the endpoints of every protocol generation (hand it to {@link startHttpServer} or
 * {@link serveStdioForAllGenerations}) over one Temporal-backed task core.
 */
export interface Bridge extends McpEndpoints {
  /** The task core all generations share. */
  core: TaskCore;
  /** Questions addressed to people, across tasks. */
  approvals: Approvals;
  /** The principal of requests without credentials. */
  localPrincipal: string;
  /** Whether Temporal answers a cheap call (DescribeNamespace) within `deadlineMs`: the health check's question. */
  health(deadlineMs: number): Promise<{ ok: true } | { ok: false; reason: string }>;
  close(): Promise<void>;
}

/**
 * Options of {@link createBridge}. Nothing here is read from the environment: {@link bridgeOptionsFromEnv} reads the
 * options `serve` takes from MCP_* and TEMPORAL_* variables (`createBridge({ ...bridgeOptionsFromEnv(), tools })`).
 */
export interface CreateBridgeOptions {
  temporal: TemporalConfig;
  /** Default {@link DEFAULT_TUNING}. */
  tuning?: BridgeTuning;
  /** The tools served; default {@link DEFAULT_TOOLS}, which holds no sample (add `SAMPLE_TOOLS` for those). */
  tools?: readonly ToolDefinition[];
  /** An existing client to use; otherwise one is connected from `temporal` and closed by {@link Bridge.close}. */
  client?: Client;
  /**
   * How long to wait at the start for Temporal to answer when it does not (a replica restarted during a network fault),
   * retrying with backoff; default 0: one attempt, and the error at once.
   */
  startupWaitMs?: number;
  principalOf?: Mcp2025Dependencies['principalOf'];
  /** The caller's roles; default: from the credentials (see the HTTP transport), {@link localRoles} without them. */
  rolesOf?: Mcp2025Dependencies['rolesOf'];
  /** The roles of requests without credentials; default none. */
  localRoles?: string[];
  /** The principal of requests without credentials (stdio, HTTP without authentication). */
  localPrincipal: string;
  /** Signs and checks the tasks this bridge starts ({@link markerFromEnv}). */
  marker: TaskMarker;
  /** Seals the answers this bridge hands to workflows; workers check them ({@link answerSealFromEnv}). */
  answerSeal: AnswerSeal;
  /**
   * Whether this bridge serves 2025-11-25 `tasks/list` (and declares `tasks.list`); default true. `serve --no-auth`
   * turns it off: every caller that reaches the address acts for one principal, and a listing would hand each of them
   * the ids of everyone's tasks. It holds for every caller of the bridge, with credentials or without.
   */
  taskListing?: boolean;
  /**
   * The data converter of the client this bridge connects: the same payload codec as the workers (an encrypting one
   * from {@link dataConverterFromEnv}, or a team's own); default Temporal's. Not used with `client`, whose own is.
   */
  dataConverter?: DataConverter;
  /** Interceptors of the client this bridge connects (tracing); not used with `client`. */
  clientInterceptors?: ClientInterceptors;
  /**
   * Decision records and who is who for approvals: `decisions` signs a record of every answer to an addressed question
   * into the decision store, or `null` turns the records off (the bridge warns at start: workers that check records
   * before an effect then refuse it); `people` (default: the default rule, no roles known) and `signatures` (the
   * people's own keys, who must sign) come from the approvers directory.
   */
  approvals: Omit<ApprovalsOptions, 'localPrincipal' | 'decisions'> & { decisions: DecisionLog | null };
  /**
   * What the replicas of a deployment share (the rate limit, the waits and open tasks, the tasks created lately); default
   * none: each process keeps its own. Closed by {@link Bridge.close}.
   */
  sharedState?: ReplicaSharedState;
  /**
   * The close keeper (with decision records on): every how often it signs the closes of questions that expired, were
   * cancelled, or whose closing answer's close was never written, and how far back it looks at start; `false` turns it
   * off. Default: every 15 s, a day back.
   */
  closeKeeper?: CloseKeeperOptions | false;
  /**
   * Seals the state of 2026-07-28 input_required rounds and of calls waiting for `confirm_start`: `key` (at least 32
   * characters; the same on every replica) and how long a sealed state holds. Default: a random key of this process
   * (a round then resumes only on the process that began it) and 15 minutes.
   */
  requestState?: { key: string | Uint8Array; ttlMs: number };
}

/** The tuning of a bridge given none: the defaults docs/configuration.md names. */
export const DEFAULT_TUNING: BridgeTuning = tuningFromEnv({});

/**
 * Every option of {@link createBridge} the environment gives, as `serve` reads it: Temporal (TEMPORAL_*), the tuning
 * ({@link tuningFromEnv}), MCP_LOCAL_PRINCIPAL and MCP_LOCAL_ROLES, MCP_TEMPORAL_STARTUP_WAIT_MS, the task key
 * (marker and answer seal), approvals (MCP_DECISION_SIGNING_KEY, MCP_DECISION_STORE, MCP_APPROVERS_DIRECTORY, whose
 * roles may be completed by `credentialRoles`), MCP_SHARED_STATE, MCP_REQUEST_STATE_KEY and MCP_REQUEST_STATE_TTL_MS, and
 * MCP_PAYLOAD_KEYS (the payload codec; the decision store then holds its records encrypted too).
 * Throws, naming the variable, when one is malformed.
 */
export function bridgeOptionsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  credentialRoles?: (principal: string) => string[] | undefined,
): CreateBridgeOptions {
  const dataConverter = dataConverterFromEnv(env);
  const shared = sharedStateFromEnv(env);
  const key = env.MCP_REQUEST_STATE_KEY;
  if (key !== undefined && key !== '' && Buffer.byteLength(key) < 32)
    throw new Error('MCP_REQUEST_STATE_KEY must be at least 32 characters');
  return {
    temporal: temporalConfigFromEnv(env),
    tuning: tuningFromEnv(env),
    localPrincipal: localPrincipal(env),
    localRoles: parseRoles(env.MCP_LOCAL_ROLES, 'MCP_LOCAL_ROLES'),
    startupWaitMs: msFromEnv(env, 'MCP_TEMPORAL_STARTUP_WAIT_MS', 0),
    marker: markerFromEnv(env),
    answerSeal: answerSealFromEnv(env),
    approvals: { ...approversFromEnv(credentialRoles, env), decisions: DecisionLog.fromEnv(env) },
    ...(shared && { sharedState: shared }),
    ...(dataConverter && { dataConverter }),
    closeKeeper: closeKeeperFromEnv(env),
    requestState: {
      key: key === undefined || key === '' ? randomBytes(32) : key,
      ttlMs: msFromEnv(env, 'MCP_REQUEST_STATE_TTL_MS', 15 * 60_000),
    },
  };
}

/** The close keeper of MCP_CLOSE_KEEPER_MS (0: off) and MCP_CLOSE_LOOKBACK_MS. */
function closeKeeperFromEnv(env: NodeJS.ProcessEnv): CloseKeeperOptions | false {
  if (env.MCP_CLOSE_KEEPER_MS?.trim() === '0') return false;
  const intervalMs = msFromEnv(env, 'MCP_CLOSE_KEEPER_MS', DEFAULT_CLOSE_KEEPER_MS);
  return { intervalMs, lookbackMs: msFromEnv(env, 'MCP_CLOSE_LOOKBACK_MS', DEFAULT_CLOSE_LOOKBACK_MS) };
}

/** How often the close keeper looks, by default. */
const DEFAULT_CLOSE_KEEPER_MS = 15_000;

/** The longest pause between the server's attempts to reach Temporal again once its connection failed. */
const MAX_RECONNECT_BACKOFF_MS = 2000;

/**
 * Connects to Temporal and prepares the task core. The longest ttl granted defaults to the namespace's retention,
 * so a task is never forgotten by Temporal before its ttl has passed.
 */
// eslint-disable-next-line max-lines-per-function -- longer than a function should be; split next
export async function createBridge(options: CreateBridgeOptions): Promise<Bridge> {
  for (const needed of ['localPrincipal', 'marker', 'answerSeal', 'approvals'] as const) {
    if (options[needed] === undefined) {
      throw new Error(
        `createBridge needs options.${needed}; bridgeOptionsFromEnv() reads every option from the environment, as serve does`,
      );
    }
  }
  const tuning = options.tuning ?? DEFAULT_TUNING;
  let tools = options.tools ?? DEFAULT_TOOLS;
  const local = options.localPrincipal;
  assertValidPrincipal(local);
  const localRoles = options.localRoles ?? [];
  let connection: Connection | undefined;
  let client = options.client;
  // A replica that starts while Temporal is out of reach (a restart during a network fault) waits for it this long.
  const startupWaitMs = options.startupWaitMs ?? 0;
  const waiting = { deadline: Date.now() + startupWaitMs, isRetryable: () => true, maxDelayMs: 5_000 };
  const waitLog = (error: unknown, count: number) => {
    if (count === 0) {
      log.warn(
        `bridge: Temporal at ${options.temporal.address} does not answer (${(error as Error).message}); waiting for it up to ${startupWaitMs} ms`,
      );
    }
  };
  if (!client) {
    const connectionOptions = options.temporal.connectionOptions as ConnectionOptions;
    connection = await retryWithBackoff(
      async () => {
        const candidate = Connection.lazy({
          ...connectionOptions,
          // After Temporal was unreachable for a while, gRPC waits up to 2 minutes between attempts to connect again:
          // requests would fail (retryable) for that long after it is back. A few seconds at most.
          channelArgs: { 'grpc.max_reconnect_backoff_ms': MAX_RECONNECT_BACKOFF_MS, ...connectionOptions.channelArgs },
        });
        try {
          await candidate.ensureConnected();
          return candidate;
        } catch (error) {
          // A failed attempt leaves no channel behind to connect later on its own.
          await candidate.close().catch(() => undefined);
          throw error;
        }
      },
      { ...waiting, onRetry: waitLog },
    ).catch((error: Error) => {
      throw new Error(`cannot reach Temporal at ${options.temporal.address}: ${error.message}. Start it with ./temporal-dev.sh start`);
    });
    client = new Client({
      connection,
      namespace: options.temporal.namespace,
      ...(options.dataConverter && { dataConverter: options.dataConverter }),
      ...(options.clientInterceptors && { interceptors: options.clientInterceptors }),
    });
  }
  const reached = client;
  const maxTtlMs =
    tuning.core.maxTtlMs ??
    (await retryWithBackoff(
      // Each attempt under a deadline: a link that lets nothing through would hold the start for good.
      () => reached.connection.withDeadline(Date.now() + (tuning.core.rpcTimeoutMs ?? 5000) * 2, () => namespaceRetentionMs(reached)),
      { ...waiting, isRetryable: isTemporalUnavailable, onRetry: waitLog },
    ).catch(async (error: unknown) => {
      await connection?.close().catch(() => undefined);
      throw error;
    }));
  const shared = options.sharedState;
  if (shared) log.info(`bridge: the rate limit and the tasks created lately are shared with the other replicas in ${shared.describe()}`);
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
  const { decisions, people, signatures, passkeyPage } = options.approvals;
  if (!decisions) {
    log.warn(
      'bridge: decision records are off (approvals.decisions: null): answers to addressed questions are not signed, and a worker that checks the records before an effect refuses it',
    );
  }
  // Every replica checks, and takes once, the challenges another issued.
  const challengeUses = new OneTimeUses(shared);
  const challenges = new DecisionChallenges(options.answerSeal.derivedKey('approver decision challenges v1'), (id, expiresAt) =>
    challengeUses.take(id, expiresAt),
  );
  const approvals = new Approvals(core, {
    ...(people && { people }),
    ...(decisions && { decisions }),
    ...(signatures && { signatures }),
    ...(passkeyPage && { passkeyPage }),
    challenges,
    localPrincipal: local,
  });
  const dependencies: Mcp2025Dependencies = {
    core,
    client,
    approvals,
    tools,
    principalOf: options.principalOf ?? ((extra) => extra.authInfo?.clientId ?? local),
    rolesOf: options.rolesOf ?? ((extra) => (extra.authInfo ? rolesInAuthInfo(extra.authInfo) : localRoles)),
    input: tuning.input,
    inlineBudgetMs: tuning.inlineBudgetMs,
    seal,
    listing: options.taskListing !== false,
  };
  const mcp2026Dependencies: Mcp2026Dependencies = {
    core,
    client,
    approvals,
    tools,
    inlineBudgetMs: tuning.inlineBudgetMs,
    requestState: createRequestStateCodec({
      key: stateKey,
      ttlSeconds: Math.max(1, Math.round(stateTtlMs / 1000)),
      // A round's state resumes only for the principal it was issued to.
      bind: (ctx) => ctx.http?.authInfo?.clientId ?? local,
    }),
    serverInfo: SERVER_INFO,
    instructions: SERVER_INSTRUCTIONS,
    seal,
  };
  const mcp2026 = createMcpHandler(
    (context) =>
      context.authInfo
        ? createMcp2026Server(mcp2026Dependencies, context.authInfo.clientId, rolesInAuthInfo(context.authInfo))
        : createMcp2026Server(mcp2026Dependencies, local, localRoles),
    {
      legacy: 'reject',
      onerror: (error) => log.error(`mcp (2026-07-28): ${error.message}`),
    },
  );
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
    createMcp2025Server: () => createMcp2025Server(dependencies),
    answerAtOnce,
    paramHeadersOf: (name) => paramHeaders.get(name),
    mcp2026,
    createMcp2026Server: () => createMcp2026Server(mcp2026Dependencies, local, localRoles),
    taskSubscriptions: {
      accepts: isTaskListen,
      serve: (request, principal, sink) => subscriptions.serve(request, principal ?? local, sink),
    },
    health: async (deadlineMs) => {
      try {
        await client.connection.withDeadline(Date.now() + deadlineMs, () =>
          client.workflowService.describeNamespace({ namespace: client.options.namespace }),
        );
        return { ok: true };
      } catch (error) {
        // The caller needs no credentials: it learns that Temporal did not answer, the log says what went wrong.
        log.warn(`health: Temporal did not answer DescribeNamespace within ${deadlineMs} ms: ${(error as Error).message}`);
        return { ok: false, reason: `Temporal did not answer DescribeNamespace within ${deadlineMs} ms` };
      }
    },
    close: async () => {
      await keeper?.stop();
      core.close();
      await mcp2026.close();
      await decisions?.close();
      await shared?.close();
      await connection?.close();
    },
  };
}

async function namespaceRetentionMs(client: Client): Promise<number> {
  const { config } = await client.workflowService.describeNamespace({ namespace: client.options.namespace });
  const retention = config?.workflowExecutionRetentionTtl;
  const ms = Number(retention?.seconds ?? 0) * 1000 + Math.floor((retention?.nanos ?? 0) / 1e6);
  return ms > 0 ? ms : 24 * 3600_000;
}

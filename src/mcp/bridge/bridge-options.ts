/**
 * What a bridge is made from: its options ({@link CreateBridgeOptions}) with the task and input tuning, and both read
 * from MCP_* and TEMPORAL_* environment variables, as `serve` reads them.
 */
import {
  DEFAULT_FEED_LIMIT,
  DEFAULT_WATCH_LIMIT,
  localPrincipal,
  markerFromEnv,
  parseRoles,
  type ReplicaSharedState,
  sharedStateFromEnv,
  type TaskCoreOptions,
  type TaskMarker,
} from '../../core';
import { randomBytes } from 'node:crypto';
import { Client, type ClientInterceptors } from '@temporalio/client';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { DataConverter } from '@temporalio/common';
import { countFromEnv, msFromEnv, temporalConfigFromEnv, type TemporalConfig } from '../../shared/temporal-config';
import type { InputChannelOptions } from '../mcp2025/input-channel';
import { answerSealFromEnv, type AnswerSeal } from '../../shared/answer-proof';
import { dataConverterFromEnv } from '../../shared/payload-codec';
import type { ApproverKeyring, PeopleDirectory } from '../../approvals/approvals';
import { approversFromEnv } from '../../approvals/approvals-setup';
import { DEFAULT_CLOSE_LOOKBACK_MS, type CloseKeeperOptions } from '../../approvals/close-keeper';
import { DecisionLog } from '../../approvals/decision-log';
import type { ToolDefinition } from '../tools/types';

/** What the 2025-11-25 SDK hands a request's handler: its credentials (`authInfo`), session and signal. */
export type Mcp2025RequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

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

/** The approvals of a bridge: its decision records, and who is who, from the approvers directory. */
export interface BridgeApprovalsOptions {
  /**
   * Signs a record of every answer to an addressed question into the decision store; `null` turns the records off (the
   * bridge warns at start: workers that check records before an effect then refuse it).
   */
  decisions: DecisionLog | null;
  /** Who is who (an {@link ApproversDirectory} is one); default: the default rule, and no roles known for others. */
  people?: PeopleDirectory;
  /**
   * The people's own keys and who must sign (the approvers directory's): a signature given is checked against them,
   * and an approval of someone who must sign is refused without one. Without it signatures given are recorded unchecked.
   */
  signatures?: ApproverKeyring;
  /** The passkey page's address (`https://approvals.example.com/passkeys`), where approvers sign with passkeys. */
  passkeyPage?: string;
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
  /** The principal a 2025-11-25 request acts for; default: from the credentials, {@link localPrincipal} without them. */
  principalOf?: (extra: Mcp2025RequestExtra) => string;
  /** The caller's roles; default: from the credentials (see the HTTP transport), {@link localRoles} without them. */
  rolesOf?: (extra: Mcp2025RequestExtra) => string[];
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
  /** Decision records and who is who for approvals ({@link BridgeApprovalsOptions}). */
  approvals: BridgeApprovalsOptions;
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
export const DEFAULT_CLOSE_KEEPER_MS = 15_000;

/** Throws for options without one that {@link createBridge} needs, saying how `serve` reads them all. */
export function assertBridgeOptions(options: CreateBridgeOptions): void {
  for (const needed of ['localPrincipal', 'marker', 'answerSeal', 'approvals'] as const) {
    if (options[needed] === undefined) {
      throw new Error(
        `createBridge needs options.${needed}; bridgeOptionsFromEnv() reads every option from the environment, as serve does`,
      );
    }
  }
}

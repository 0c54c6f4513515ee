/** How the task core is tuned, and what it needs of a tool that starts a workflow. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AnswerSeal } from '../shared/answer-proof';
import type { TaskMarker } from './marker';
import type { QuotaOptions } from './quotas';
import type { ReplicaSharedState } from './shared-state';

/**
 * What the task core needs of a tool that starts a workflow: how to start it, and how to turn its return value into
 * the tool result. The MCP tool layer's `WorkflowTool` is one.
 */
export interface TaskTool<Output = any> {
  name: string;
  workflowType: string;
  /** Task queue of the workflow; the server's own task queue when absent. */
  taskQueue?: string;
  /** ttl granted when the client asks for none (still capped by the server's maximum). */
  ttlMs?: number;
  /** Poll interval suggested to clients for this tool's tasks. */
  pollIntervalMs?: number;
  /** Prefix of generated task ids, e.g. "invoice". */
  idPrefix: string;
  /** Turns the workflow's return value into the tool result. */
  toResult(output: Output): CallToolResult;
}

/** Tuning of the task core. */
export interface TaskCoreOptions {
  /** Task queue the workflows are started on. */
  taskQueue: string;
  /** Longest ttl granted; requests above it are capped. Keep it at or below the namespace's retention. */
  maxTtlMs: number;
  /** ttl granted when the client asks for none. */
  defaultTtlMs: number;
  /** Poll interval suggested to clients (the server itself waits on Temporal's events, see `TaskCore.changed`). */
  pollIntervalMs: number;
  /** Page size of tasks/list. */
  pageSize: number;
  /** Deadline of each request to Temporal; past it the call fails as "Temporal unavailable" (retryable). Default 5 s. */
  rpcTimeoutMs?: number;
  /** Signs the tasks this bridge starts and checks them on every read. */
  marker: TaskMarker;
  /** Seals every answer handed to a workflow, so that the workflow can tell it came from a bridge. */
  answerSeal: AnswerSeal;
  /** Open tasks, concurrent waits and task operations per principal (see {@link QuotaOptions}). */
  quotas?: Partial<QuotaOptions>;
  /** What the replicas of a deployment share: the rate of task operations, the tasks created lately. */
  shared?: ReplicaSharedState;
  /** The Temporal Web UI's base URL: every task view links to its workflow there. None: no links. */
  webUiUrl?: string;
  /** How task reads are served from the history watches (see {@link WatchedReadOptions}). */
  reads?: Partial<WatchedReadOptions>;
}

/**
 * Task reads served from the history watches: a read of a task whose watch has seen no event since the task was last
 * read is answered from that read, without a Temporal call.
 */
export interface WatchedReadOptions {
  /**
   * How long a read keeps its task's watch (and so the next reads cheap) after it; default 30 s. A watch costs a
   * request per long poll (20 s on a default server): clients that poll less often than this are served from Temporal.
   */
  keepMs: number;
  /** Most watches kept for reads; past it the least recently read goes. 0 turns serving reads from watches off. */
  limit: number;
  /** Deadline of a watch's long poll; Temporal answers idle ones before it (history.longPollExpirationInterval). */
  longPollMs: number;
  /**
   * Pause between the change feed's visibility queries; 0 (the default) turns the feed off. With the feed, a read of a
   * task whose workflow stamps its changes (`McpChangedAt`) is kept without a watch, for as long as the feed reports
   * no change of it: one query per interval for every task instead of a long poll each (see `change-feed.ts`).
   */
  feedIntervalMs: number;
  /** Most reads the feed keeps; past it the least recently read goes. Default 100,000. */
  feedLimit: number;
}

/** How long an answer a person gave is kept trying while Temporal is unreachable or busy, before the call gives up. */
export const WRITE_PATIENCE_MS = 120_000;

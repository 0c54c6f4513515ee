/** What every part of the task core shares: the Temporal client, its options, and requests under a deadline. */
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { webUiWorkflowUrl } from '../shared/temporal-config';
import type { TaskCoreOptions, TaskTool } from './options';

/** The Temporal side of the task core, shared by its parts (reads, lifecycle, answers, listing). */
export class TemporalAccess {
  constructor(
    readonly client: Client,
    readonly options: TaskCoreOptions,
    /** The workflow tools by name: a task is served only for a tool declared here. */
    readonly tools: ReadonlyMap<string, TaskTool>,
  ) {}

  get namespace(): string {
    return this.client.options.namespace;
  }

  /** Runs `work` (requests to Temporal) under the RPC deadline. */
  rpc<T>(work: () => Promise<T>): Promise<T> {
    return this.client.connection.withDeadline(Date.now() + (this.options.rpcTimeoutMs ?? 5000), work);
  }

  /** The workflow's page in the Web UI, when there is one. */
  webUi(workflowId: string): { webUiUrl?: string } {
    const base = this.options.webUiUrl;
    return base ? { webUiUrl: webUiWorkflowUrl(base, this.namespace, workflowId) } : {};
  }

  /**
   * The value of a payload read from history as it is stored: through the client's codecs (the last one first, as
   * Temporal applies them) and then its payload converter. Throws what a codec throws (a key it does not hold).
   */
  async decodePayload(payload: Payload): Promise<unknown> {
    const { payloadCodecs, payloadConverter } = this.client.options.loadedDataConverter;
    let decoded = [payload];
    for (const codec of [...payloadCodecs].reverse()) decoded = await codec.decode(decoded);
    return payloadConverter.fromPayload(decoded[0]);
  }

  /** The first event of a run's history (its start), read alone. */
  async startEvent(workflowId: string, runId: string): Promise<temporal.api.history.v1.IHistoryEvent | undefined> {
    const page = await this.client.workflowService.getWorkflowExecutionHistory({
      namespace: this.namespace,
      execution: { workflowId, runId },
      maximumPageSize: 1,
      skipArchival: true,
    });
    return page.history?.events?.[0];
  }

  /** One page of a run's history from its start (`nextPageToken` of the page before for the next). */
  async historyPage(
    workflowId: string,
    runId: string,
    pageSize: number,
    nextPageToken?: Uint8Array,
  ): Promise<{ events: temporal.api.history.v1.IHistoryEvent[]; nextPageToken?: Uint8Array }> {
    const page = await this.client.workflowService.getWorkflowExecutionHistory({
      namespace: this.namespace,
      execution: { workflowId, runId },
      maximumPageSize: pageSize,
      skipArchival: true,
      ...(nextPageToken && { nextPageToken }),
    });
    const token = page.nextPageToken;
    return { events: page.history?.events ?? [], ...(token && token.length > 0 && { nextPageToken: token }) };
  }
}

type Timestamp = temporal.api.workflow.v1.IPendingWorkflowTaskInfo['scheduledTime'];

/** A protobuf timestamp in milliseconds since the epoch. */
export function timestampToMs(timestamp: Timestamp): number | undefined {
  if (!timestamp?.seconds) return undefined;
  return Number(timestamp.seconds) * 1000 + Math.floor((timestamp.nanos ?? 0) / 1e6);
}

/** A protobuf timestamp in ISO 8601. */
export function timestampToIso(timestamp: Timestamp): string | undefined {
  const ms = timestampToMs(timestamp);
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

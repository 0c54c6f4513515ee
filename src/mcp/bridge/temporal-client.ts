/**
 * A bridge's Temporal client: connected (or the one given), with the wait for Temporal at start that the options ask
 * for; the longest ttl the namespace's retention allows; and the health check's question to Temporal.
 */
import { isTemporalUnavailable } from '../../core';
import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import { log } from '../../util/log';
import { retryWithBackoff } from '../../util/wait';
import type { BridgeTuning, CreateBridgeOptions } from './bridge-options';

/** The longest pause between the server's attempts to reach Temporal again once its connection failed. */
const MAX_RECONNECT_BACKOFF_MS = 2000;

/** A bridge's client, the connection it made for it (none for a client given), and the longest ttl it grants. */
export interface BridgeClient {
  client: Client;
  connection?: Connection;
  maxTtlMs: number;
}

/**
 * Connects to Temporal (unless `options.client` is given) and reads the longest ttl to grant: the tuning's, or by
 * default the namespace's retention, so a task is never forgotten by Temporal before its ttl has passed. While Temporal
 * does not answer, tries again for `options.startupWaitMs`; throws once that has passed, having closed what it opened.
 */
export async function connectBridgeClient(options: CreateBridgeOptions, tuning: BridgeTuning): Promise<BridgeClient> {
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
    connection = await retryWithBackoff(() => connectOnce(connectionOptions), { ...waiting, onRetry: waitLog }).catch((error: Error) => {
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
  return { client, ...(connection && { connection }), maxTtlMs };
}

/** One attempt to connect to Temporal: the connection, or the failure with nothing left behind. */
async function connectOnce(connectionOptions: ConnectionOptions): Promise<Connection> {
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
}

async function namespaceRetentionMs(client: Client): Promise<number> {
  const { config } = await client.workflowService.describeNamespace({ namespace: client.options.namespace });
  const retention = config?.workflowExecutionRetentionTtl;
  const ms = Number(retention?.seconds ?? 0) * 1000 + Math.floor((retention?.nanos ?? 0) / 1e6);
  return ms > 0 ? ms : 24 * 3600_000;
}

/**
 * Whether Temporal answers a cheap call (DescribeNamespace) of `client` within `deadlineMs`: the health check's
 * question. The answer says only that Temporal did not answer; the log says what went wrong.
 */
export async function temporalHealth(client: Client, deadlineMs: number): Promise<{ ok: true } | { ok: false; reason: string }> {
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
}

/**
 * The gRPC service the history watch's long polls go through: the client's own channel and credentials, without the
 * client's retries, and safe against a connection closed under a poll still running.
 */
import { InterceptingCall, Metadata, status as GrpcStatus, type Interceptor } from '@grpc/grpc-js';
import { Connection, type ConnectionLike } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/** A call that fails with CANCELLED as soon as it starts: what a call made on a closed connection becomes. */
function closedConnectionCall(): ConstructorParameters<typeof InterceptingCall>[0] {
  return {
    start(_metadata, listener) {
      process.nextTick(() =>
        listener?.onReceiveStatus?.({
          code: GrpcStatus.CANCELLED,
          details: 'The connection to Temporal is closed',
          metadata: new Metadata(),
        }),
      );
    },
    cancelWithStatus: () => undefined,
    getPeer: () => '',
    sendMessageWithContext: () => undefined,
    sendMessage: () => undefined,
    startRead: () => undefined,
    halfClose: () => undefined,
    getAuthContext: () => null,
  };
}

/**
 * The long polls' interceptor: a call made once the connection was closed (a watch still polling when its application
 * closed the connection) fails with CANCELLED instead of throwing "Channel has been shut down" where nobody catches it.
 */
const closedConnectionGuard: Interceptor = (options, next) => {
  try {
    return new InterceptingCall(next(options));
  } catch {
    return new InterceptingCall(closedConnectionCall());
  }
};

/**
 * The workflow service of `connection` for the long polls: the same channel, metadata (API key included), deadline and
 * abort signal, without the client's interceptors (its retries: the watch retries on its own, and a retried long poll
 * held its answer back from the watch) and with {@link closedConnectionGuard}. The connection's own service when the
 * client does not expose what this needs.
 */
export function pollingService(connection: ConnectionLike): ConnectionLike['workflowService'] {
  if (!(connection instanceof Connection)) return connection.workflowService;
  const internals = connection as unknown as { client?: unknown; apiKeyFnRef?: unknown };
  const generate = (Connection as unknown as { generateRPCImplementation?: (options: object) => unknown }).generateRPCImplementation;
  if (typeof generate !== 'function' || typeof internals.client !== 'object' || typeof internals.apiKeyFnRef !== 'object') {
    return connection.workflowService;
  }
  const rpc = generate.call(Connection, {
    serviceName: 'temporal.api.workflowservice.v1.WorkflowService',
    client: internals.client,
    callContextStorage: connection.callContextStorage,
    interceptors: [closedConnectionGuard],
    staticMetadata: connection.options.metadata,
    apiKeyFnRef: internals.apiKeyFnRef,
  });
  return temporal.api.workflowservice.v1.WorkflowService.create(rpc as never, false, false);
}

/**
 * OpenTelemetry traces for the server and the worker, in one place. Off unless OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (then spans go out over OTLP/HTTP, protobuf or JSON as
 * OTEL_EXPORTER_OTLP_PROTOCOL says); while off, the request spans below are the API's no-op spans and Temporal's
 * interceptors are not installed.
 *
 * One trace follows a task from the MCP request that creates it: the request span (server side), Temporal's
 * `StartWorkflow:<type>` span under it, whose context travels in the workflow's headers to `RunWorkflow:<type>` on the
 * worker, then `StartActivity:<name>` and `RunActivity:<name>` for each activity.
 */
import { context, isSpanContextValid, propagation, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { envDetectorSync, Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ClientInterceptors } from '@temporalio/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
  type OpenTelemetrySinks,
} from '@temporalio/interceptors-opentelemetry';
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import { addLogContext, withLogContext } from '../util/log';

/** The module a workflow bundle includes for workflow spans (`bundleWorkflowCode({ workflowInterceptorModules })`). */
export const WORKFLOW_INTERCEPTOR_MODULE = require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

/** Span attributes of an MCP request: the method (OpenTelemetry's MCP conventions), the tool, the task. */
export const SPAN_ATTRIBUTES = { method: 'mcp.method.name', tool: 'gen_ai.tool.name', taskId: 'mcp.task.id' } as const;

const TRACER_NAME = 'temporal-mcp-tasks';

/** Thrown when the OTEL_* variables ask for something this process cannot do (an OTLP protocol it does not speak). */
export class TelemetryConfigError extends Error {}

/** Tracing as configured for this process. */
export interface Telemetry {
  /** True when spans are recorded and exported. */
  readonly enabled: boolean;
  /** Where spans go, for the startup line. */
  readonly description: string;
  /** Interceptors for a Temporal `Client`: its workflow starts, signals and reads become spans; none while off. */
  readonly clientInterceptors?: ClientInterceptors;
  /**
   * What a `Worker` needs for workflow and activity spans; none while off. The workflow interceptors are a module the
   * workflow bundle includes ({@link WORKFLOW_INTERCEPTOR_MODULE}); a prebuilt bundle must have been built with it.
   */
  readonly worker?: { interceptors: WorkerInterceptors; sinks: InjectedSinks<OpenTelemetrySinks> };
  /** Exports what is still buffered and unregisters the tracer. */
  shutdown(): Promise<void>;
}

/** Options of {@link startTelemetry}. */
export interface TelemetryOptions {
  /** `service.name` of the spans (OTEL_SERVICE_NAME wins). */
  serviceName: string;
  /** Record spans into this processor instead of the OTLP exporter (tests use an in-memory exporter). */
  spanProcessor?: SpanProcessor;
  env?: NodeJS.ProcessEnv;
}

/**
 * Turns tracing on when an OTLP endpoint is configured (or a span processor is given), registering the tracer
 * provider, the async context manager and the W3C trace-context propagator for the whole process. Throws
 * {@link TelemetryConfigError} for an OTLP protocol other than http/protobuf or http/json.
 */
export function startTelemetry(options: TelemetryOptions): Telemetry {
  const env = options.env ?? process.env;
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const disabled = env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none';
  if (!options.spanProcessor && (!endpoint || disabled)) {
    return { enabled: false, description: 'off', shutdown: async () => undefined };
  }
  let processor = options.spanProcessor;
  let description = 'in process';
  if (!processor) {
    const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
    processor = new BatchSpanProcessor(otlpExporter(protocol));
    description = `OTLP ${protocol} to ${endpoint}`;
  }
  const resource = Resource.default()
    .merge(new Resource({ 'service.name': options.serviceName }))
    .merge(envDetectorSync.detect());
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  // The async context manager carries the request span across awaits into the workflow start's headers.
  provider.register({ contextManager: new AsyncLocalStorageContextManager().enable() });
  return {
    enabled: true,
    description,
    clientInterceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
    worker: {
      interceptors: {
        workflowModules: [WORKFLOW_INTERCEPTOR_MODULE],
        activity: [
          (ctx) => ({
            inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
            outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
          }),
        ],
      },
      // Workflow code runs in a sandbox: its spans leave it through this sink.
      sinks: { exporter: makeWorkflowExporter(processor, resource) },
    },
    shutdown: async () => {
      await provider.shutdown().catch(() => undefined);
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** The official OTLP/HTTP exporter for `protocol`; it reads the endpoint, headers and timeout from OTEL_EXPORTER_OTLP_*. */
function otlpExporter(protocol: string): SpanExporter {
  // Loaded only when tracing is on: a process without an endpoint never loads the exporters.
  if (protocol === 'http/protobuf') {
    const { OTLPTraceExporter } =
      require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto');
    return new OTLPTraceExporter();
  }
  if (protocol === 'http/json') {
    const { OTLPTraceExporter } =
      require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter();
  }
  throw new TelemetryConfigError(
    `OTEL_EXPORTER_OTLP_PROTOCOL "${protocol}" is not supported: use http/protobuf (the default) or http/json, with an OTLP/HTTP endpoint (port 4318)`,
  );
}

/** What an MCP request is about, for its span and its log lines. */
export interface RequestScope {
  method: string;
  principal?: string;
  tool?: string;
  taskId?: string;
  /** The request's `_meta`: a `traceparent` there (the MCP way to pass trace context) makes the span its child. */
  meta?: Record<string, unknown>;
}

/**
 * Runs the handler of one MCP request inside its span (kind server, named `<method>` or `<method> <tool>`) and its
 * log context, so that the workflow start it makes, and every line it logs, belong to it.
 */
export function traceRequest<T>(request: RequestScope, work: () => Promise<T>): Promise<T> {
  const attributes: Attributes = { [SPAN_ATTRIBUTES.method]: request.method };
  if (request.tool) attributes[SPAN_ATTRIBUTES.tool] = request.tool;
  if (request.taskId) attributes[SPAN_ATTRIBUTES.taskId] = request.taskId;
  const parent = request.meta ? propagation.extract(context.active(), request.meta) : context.active();
  const name = request.tool ? `${request.method} ${request.tool}` : request.method;
  const { meta: _meta, ...logContext } = request;
  const span = trace.getTracer(TRACER_NAME).startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  const run = async () => {
    try {
      return await work();
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
      throw error;
    } finally {
      span.end();
    }
  };
  // A span nothing records and that continues no trace (tracing off, no traceparent) has no context worth carrying.
  const carried = span.isRecording() || isSpanContextValid(span.spanContext());
  return withLogContext(logContext, () => (carried ? context.with(trace.setSpan(parent, span), run) : run()));
}

/** Names the task a request turned out to be about (a tools/call learns it once the workflow starts). */
export function annotateRequest(scope: { taskId: string }): void {
  trace.getActiveSpan()?.setAttribute(SPAN_ATTRIBUTES.taskId, scope.taskId);
  addLogContext(scope);
}

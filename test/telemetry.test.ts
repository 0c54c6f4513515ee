/**
 * OpenTelemetry: one trace from the MCP request that creates a task, through Temporal's start, to the workflow and
 * its activities on the worker, recorded in memory.
 */
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { bundleWorkflowCode } from '@temporalio/worker';
import { SPAN_ATTRIBUTES, startTelemetry, WORKFLOW_INTERCEPTOR_MODULE, type Telemetry } from '../src/shared/telemetry';
import { FIXTURE_WORKFLOWS } from './helpers/dev-server';
import { startStack } from './helpers/test-stack';
import { APPROVE, newMcpClient, ScriptedUser, taskResult } from './helpers/mcp';
import { eventually } from './helpers/temporal';
import { ASK_WORKFLOW_TYPE } from './fixtures/definitions';
import { askInput, FIXTURES, type FixtureStack } from './fixtures/stack';
import { askRequesterTool } from './fixtures/tools';

const exporter = new InMemorySpanExporter();
let telemetry: Telemetry;
let stack: FixtureStack;

beforeAll(async () => {
  telemetry = startTelemetry({ serviceName: 'telemetry-test', spanProcessor: new SimpleSpanProcessor(exporter) });
  // The run's shared bundle has no tracing: this worker gets one with the workflow interceptors.
  const { code } = await bundleWorkflowCode({
    ...FIXTURE_WORKFLOWS,
    workflowInterceptorModules: [WORKFLOW_INTERCEPTOR_MODULE],
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error },
  });
  stack = await startStack({
    name: 'telemetry',
    app: FIXTURES,
    worker: { workflowBundle: { code }, telemetry: telemetry.worker },
    bridge: { clientInterceptors: telemetry.clientInterceptors },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await telemetry?.shutdown();
});

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

test('a task is one trace: the tools/call span, StartWorkflow under it, then the workflow and its activities on the worker', async () => {
  expect(telemetry.enabled).toBe(true);
  const client = newMcpClient('traced');
  new ScriptedUser(() => APPROVE).attach(client);
  const close = await stack.connect(client);
  try {
    // The caller's own trace context, passed the MCP way in _meta: the whole task joins that trace.
    const created = await client.request(
      {
        method: 'tools/call',
        params: {
          name: askRequesterTool.name,
          // Steps noted: an activity before the question and another after the answer.
          arguments: askInput({ noteSteps: true }),
          task: {},
          _meta: { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` },
        },
      },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    expect((await taskResult(client, taskId)).structuredContent).toMatchObject({ outcome: 'approved' });

    const named = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name);
    // The workflow's own span ends with the workflow; it reaches the exporter through the worker's sink.
    const [run] = await eventually(
      async () => (named(`RunWorkflow:${ASK_WORKFLOW_TYPE}`).length > 0 ? named(`RunWorkflow:${ASK_WORKFLOW_TYPE}`) : undefined),
      'the RunWorkflow span',
    );
    const [request] = named(`tools/call ${askRequesterTool.name}`);
    expect(request).toBeDefined();
    expect(request.kind).toBe(SpanKind.SERVER);
    expect(request.attributes).toMatchObject({
      [SPAN_ATTRIBUTES.method]: 'tools/call',
      [SPAN_ATTRIBUTES.tool]: askRequesterTool.name,
      [SPAN_ATTRIBUTES.taskId]: taskId,
    });
    expect(request.spanContext().traceId).toBe(TRACE_ID);
    expect(request.parentSpanId).toBe('00f067aa0ba902b7');

    const [start] = named(`StartWorkflow:${ASK_WORKFLOW_TYPE}`);
    expect(start.spanContext().traceId).toBe(TRACE_ID);
    expect(start.parentSpanId).toBe(request.spanContext().spanId);
    expect(start.attributes.temporalWorkflowId).toBe(taskId);

    expect(run.spanContext().traceId).toBe(TRACE_ID);
    expect(run.parentSpanId).toBe(start.spanContext().spanId);
    const inTrace = (span: ReadableSpan) => span.spanContext().traceId === TRACE_ID;
    // Both steps, the one before the question and the one after the answer, are in the task's trace.
    for (const name of ['StartActivity:noteStep', 'RunActivity:noteStep']) {
      expect(named(name).filter(inTrace).length).toBeGreaterThanOrEqual(2);
    }
    const noted = named('RunActivity:noteStep').filter(inTrace);
    const started = named('StartActivity:noteStep').map((span) => span.spanContext().spanId);
    for (const step of noted) {
      expect(step.attributes.temporalWorkflowId).toBe(taskId);
      expect(started).toContain(step.parentSpanId);
    }

    // The other requests of the task have spans of their own, naming it; the answer is in the trace of the request
    // that gave it, down to the workflow's handling of the signal.
    const [result] = named('tasks/result').filter((span) => span.attributes[SPAN_ATTRIBUTES.taskId] === taskId);
    expect(result).toBeDefined();
    const [signal] = named('SignalWorkflow:mcp.respond');
    expect(signal.parentSpanId).toBe(result.spanContext().spanId);
    const handled = await eventually(
      async () => named('HandleSignal:mcp.respond').find((span) => span.parentSpanId === signal.spanContext().spanId),
      'the HandleSignal span',
    );
    expect(handled.spanContext().traceId).toBe(result.spanContext().traceId);
  } finally {
    await close();
  }
});

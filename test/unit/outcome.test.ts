import { status as GrpcStatus } from '@grpc/grpc-js';
import { ServiceError } from '@temporalio/client';
import { ErrorCode, McpError, RELATED_TASK_META_KEY } from '@modelcontextprotocol/sdk/types.js';
import { mcp2025Task } from '../../src/mcp/mcp2025/server';
import { detailedTask } from '../../src/mcp/mcp2026/task-shape';
import { callAnswerOf, toolResultOf } from '../../src/mcp/protocol/outcome';
import {
  AnswerRefusedError,
  InvalidTaskRequestError,
  TaskNotFoundError,
  TooManyRequestsError,
  TooManyTasksError,
} from '../../src/core/errors';
import { taskViewOf, type WorkflowSnapshot } from '../../src/core/task-view';
import { asJsonRpcError, JsonRpcError, jsonRpcFailureOf } from '../../src/mcp/protocol/wire-errors';

function ended(overrides: Partial<WorkflowSnapshot>) {
  return taskViewOf(
    {
      workflowId: 'invoice-1',
      runId: 'run-1',
      status: 'COMPLETED',
      startTime: new Date('2026-01-01T00:00:00.000Z'),
      closeTime: new Date('2026-01-01T00:01:00.000Z'),
      historyLength: 20,
      cancelRequested: false,
      ...overrides,
    },
    { pollIntervalMs: 1000 },
  );
}

/** The JSON-RPC error a terminal task's call answers with; undefined for a tool result. */
function failureOf(view: ReturnType<typeof ended>): { code: number; message: string; data?: unknown } | undefined {
  const answer = callAnswerOf(view);
  return answer.kind === 'error' ? answer.error : undefined;
}

/** The tool result a terminal task's call answers with; undefined for a JSON-RPC error. */
function resultOf(view: ReturnType<typeof ended>) {
  const answer = callAnswerOf(view);
  return answer.kind === 'result' ? answer.result : undefined;
}

describe('the task core’s errors on the wire', () => {
  test('each failure mode has one JSON-RPC code, its message as it is, and its details as data', () => {
    expect(jsonRpcFailureOf(new TaskNotFoundError('invoice-1'))).toEqual({
      code: ErrorCode.InvalidParams,
      message: 'Task not found: invoice-1',
    });
    expect(jsonRpcFailureOf(new InvalidTaskRequestError('Invalid cursor'))?.code).toBe(ErrorCode.InvalidParams);
    expect(jsonRpcFailureOf(new TooManyTasksError('Too many open tasks', { limit: 3 }))).toEqual({
      code: ErrorCode.InvalidRequest,
      message: 'Too many open tasks',
      data: { limit: 3 },
    });
    expect(jsonRpcFailureOf(new TooManyRequestsError('Too many waits', { retryable: true }))).toMatchObject({
      code: ErrorCode.InternalError,
      data: { retryable: true },
    });
  });

  test('Temporal out of reach is a retryable -32603 that says so; an error of the server is nobody’s JSON-RPC error', () => {
    const unavailable = new ServiceError('connect failed', {
      cause: Object.assign(new Error('14 UNAVAILABLE'), { code: GrpcStatus.UNAVAILABLE, details: '', metadata: {} }),
    });
    expect(jsonRpcFailureOf(unavailable)).toMatchObject({ code: ErrorCode.InternalError, data: { retryable: true } });
    expect(jsonRpcFailureOf(unavailable)?.message).toMatch(/^Temporal is unavailable right now/);
    expect(jsonRpcFailureOf(new Error('a bug'))).toBeUndefined();
  });

  test('a refused answer is one of the core’s refusals: -32600, do something else first', () => {
    expect(jsonRpcFailureOf(new AnswerRefusedError('The question is closed'))).toEqual({
      code: ErrorCode.InvalidRequest,
      message: 'The question is closed',
    });
  });

  test('an SDK error keeps its code and data, without the SDK’s message prefix', () => {
    const error = new McpError(ErrorCode.InvalidParams, 'Unknown tool "x"', { tool: 'x' });
    expect(jsonRpcFailureOf(error)).toEqual({ code: ErrorCode.InvalidParams, message: 'Unknown tool "x"', data: { tool: 'x' } });
  });

  test('any known error is thrown as a JsonRpcError whose message is the message a client reads', () => {
    const notFound = asJsonRpcError(new TaskNotFoundError('invoice-1'));
    expect(notFound).toBeInstanceOf(JsonRpcError);
    expect(notFound).toMatchObject({ code: ErrorCode.InvalidParams, message: 'Task not found: invoice-1' });
    expect(asJsonRpcError(new McpError(ErrorCode.InvalidParams, 'Unknown tool "x"'))).toMatchObject({
      code: ErrorCode.InvalidParams,
      message: 'Unknown tool "x"',
    });
    const bug = new Error('a bug');
    expect(asJsonRpcError(bug)).toBe(bug);
  });
});

describe('a terminal task’s outcome, rendered by each generation from the view alone', () => {
  const result = { content: [{ type: 'text' as const, text: 'Paid.' }], structuredContent: { outcome: 'paid' } };

  test('completed: the tool result with the related task in 2025-11-25, inline without it in 2026-07-28', () => {
    const view = ended({ result, webUiUrl: 'http://ui/invoice-1' });
    expect(resultOf(view)).toEqual({
      ...result,
      _meta: { [RELATED_TASK_META_KEY]: { taskId: 'invoice-1' }, 'temporal-mcp-tasks/web-ui': 'http://ui/invoice-1' },
    });
    expect(detailedTask(view)).toMatchObject({
      status: 'completed',
      result: { ...result, _meta: { 'temporal-mcp-tasks/web-ui': 'http://ui/invoice-1' } },
    });
  });

  test('an application failure: a tool error; completed in 2026-07-28, failed in 2025-11-25', () => {
    const view = ended({ status: 'FAILED', failure: { kind: 'application', message: 'Vendor V-666 is on hold' } });
    expect(resultOf(view)).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Vendor V-666 is on hold' }] });
    expect(detailedTask(view)).toMatchObject({ status: 'completed', result: { isError: true } });
    expect(mcp2025Task(view)).toMatchObject({ status: 'failed', statusMessage: 'Vendor V-666 is on hold' });
  });

  test('a protocol failure: the code the workflow chose, in the call’s error and the 2026 task’s error', () => {
    const view = ended({ status: 'FAILED', failure: { kind: 'protocol', message: 'Bad vendor id', code: ErrorCode.InvalidParams } });
    expect(failureOf(view)).toEqual({
      code: ErrorCode.InvalidParams,
      message: 'Bad vendor id',
      data: { taskId: 'invoice-1' },
    });
    expect(detailedTask(view)).toMatchObject({ status: 'failed', error: { code: ErrorCode.InvalidParams, message: 'Bad vendor id' } });
  });

  test('a protocol failure with a code JSON-RPC reserves (-32768 … -32000) is answered -32603, but for -32602; other codes pass', () => {
    const codeOf = (code: number) => failureOf(ended({ status: 'FAILED', failure: { kind: 'protocol', message: 'no', code } }))!.code;
    expect([-32020, -32021, -32099, -32000, -32768, -32700, -32601, -32600].map(codeOf)).toEqual(Array(8).fill(ErrorCode.InternalError));
    expect([-32602, -32603, -31999, -32769, 1, 4001].map(codeOf)).toEqual([-32602, -32603, -31999, -32769, 1, 4001]);
  });

  test('terminated and timed out: -32603 saying how the task failed', () => {
    expect(failureOf(ended({ status: 'TERMINATED' }))).toEqual({
      code: ErrorCode.InternalError,
      message: 'Task invoice-1 failed: the workflow was terminated',
      data: { taskId: 'invoice-1', status: 'failed' },
    });
    expect(detailedTask(ended({ status: 'TIMED_OUT' }))).toMatchObject({
      error: { code: ErrorCode.InternalError, message: 'Task invoice-1 failed: the workflow timed out' },
    });
  });

  test('for a tool that reports on another task (task_result), a failed one is a tool error with the words of its error', () => {
    const view = ended({ status: 'FAILED', failure: { kind: 'protocol', message: 'Bad vendor id', code: ErrorCode.InvalidParams } });
    expect(toolResultOf(view)).toEqual({ content: [{ type: 'text', text: 'Bad vendor id' }], isError: true });
    expect(toolResultOf(ended({ result: { content: [{ type: 'text', text: 'Paid.' }] } }))).toMatchObject({
      content: [{ type: 'text', text: 'Paid.' }],
    });
  });

  test('cancelled: -32603 with what the workflow reported before it stopped', () => {
    const view = ended({
      status: 'CANCELLED',
      published: {
        status: 'working',
        updatedAt: '2026-01-01T00:00:30.000Z',
        cancelledStatusMessage: 'Cancelled before approval; nothing was paid.',
      },
    });
    expect(failureOf(view)).toEqual({
      code: ErrorCode.InternalError,
      message: 'Task invoice-1: Cancelled before approval; nothing was paid.',
      data: { taskId: 'invoice-1', status: 'cancelled' },
    });
  });
});

import type { PublishedTaskState, TaskMeta } from '../../src/contract/task-contract';
import { taskViewOf, toolErrorOf, toolErrorText, webUiMeta, type WorkflowSnapshot } from '../../src/core/task-view';

const META: TaskMeta = { tool: 'process_invoice', ttl: 60_000, pollInterval: 500, createdAt: '2026-01-01T00:00:00.000Z' };
const form = (message: string) => ({ mode: 'form' as const, message, requestedSchema: { type: 'object' as const, properties: {} } });

function snapshot(overrides: Partial<WorkflowSnapshot> = {}): WorkflowSnapshot {
  return {
    workflowId: 'invoice-1',
    runId: 'run-1',
    status: 'RUNNING',
    startTime: new Date('2026-01-01T00:00:01.000Z'),
    historyLength: 7,
    meta: META,
    cancelRequested: false,
    ...overrides,
  };
}

function published(state: Partial<PublishedTaskState>): PublishedTaskState {
  return { status: 'working', updatedAt: '2026-01-01T00:00:05.000Z', ...state } as PublishedTaskState;
}

const DEFAULTS = { pollIntervalMs: 1000 };

describe('taskViewOf', () => {
  test('a running workflow without questions is working, with its status message and the memo’s creation, ttl and poll interval', () => {
    const view = taskViewOf(snapshot({ published: published({ statusMessage: 'Validating' }) }), DEFAULTS);
    expect(view.task).toEqual({
      taskId: 'invoice-1',
      status: 'working',
      statusMessage: 'Validating',
      createdAt: META.createdAt,
      lastUpdatedAt: '2026-01-01T00:00:05.000Z',
      ttl: 60_000,
      pollInterval: 500,
    });
    expect(view.inputs).toEqual([]);
    expect(view.historyLength).toBe(7);
  });

  test('without a memo the start time, a null ttl and the default poll interval stand in', () => {
    const view = taskViewOf(snapshot({ meta: undefined }), DEFAULTS);
    expect(view.task).toMatchObject({ createdAt: '2026-01-01T00:00:01.000Z', ttl: null, pollInterval: 1000 });
  });

  test('a running workflow with open questions is input_required with every question, the first one first', () => {
    const inputs = [
      { key: 'tax-id', request: form('Tax id?') },
      { key: 'iban', request: form('IBAN?') },
    ];
    const view = taskViewOf(snapshot({ published: published({ status: 'input_required', inputs }) }), DEFAULTS);
    expect(view.task.status).toBe('input_required');
    expect(view.inputs.map((input) => input.key)).toEqual(['tax-id', 'iban']);
    expect(view.input?.key).toBe('tax-id');
  });

  test('answers awaiting the worker are not asked again: the rest stay open, saying the first of them', () => {
    const inputs = [
      { key: 'tax-id', request: form('Tax id?') },
      { key: 'iban', request: form('IBAN?') },
    ];
    const view = taskViewOf(
      snapshot({
        published: published({ status: 'input_required', inputs }),
        answersAwaitingWorker: { keys: new Set(['tax-id']), at: '2026-01-01T00:00:09.000Z' },
      }),
      DEFAULTS,
    );
    expect(view.inputs.map((input) => input.key)).toEqual(['iban']);
    expect(view.task).toMatchObject({ status: 'input_required', statusMessage: 'IBAN?', lastUpdatedAt: '2026-01-01T00:00:09.000Z' });
  });

  test('every question answered but not yet taken by a worker reads working, "Answer received; resuming."', () => {
    const view = taskViewOf(
      snapshot({
        published: published({ status: 'input_required', inputs: [{ key: 'approval', request: form('Approve?') }] }),
        answersAwaitingWorker: { keys: new Set(['approval']) },
      }),
      DEFAULTS,
    );
    expect(view.task).toMatchObject({ status: 'working', statusMessage: 'Answer received; resuming.' });
    expect(view.inputs).toEqual([]);
  });

  test('a cancel requested while it runs reads cancelled, with what the workflow reported', () => {
    const view = taskViewOf(
      snapshot({ cancelRequested: true, published: published({ cancelledStatusMessage: 'Cancelled after paying LI-1.' }) }),
      DEFAULTS,
    );
    expect(view.task).toMatchObject({ status: 'cancelled', statusMessage: 'Cancelled after paying LI-1.' });
    expect(view.cancellationReport).toBe('Cancelled after paying LI-1.');
  });

  test('a cancel requested stays cancelled however the run ends', () => {
    const view = taskViewOf(
      snapshot({ status: 'COMPLETED', cancelRequested: true, closeTime: new Date('2026-01-01T00:01:00.000Z') }),
      DEFAULTS,
    );
    expect(view.task).toMatchObject({ status: 'cancelled', statusMessage: 'Cancelled.', lastUpdatedAt: '2026-01-01T00:01:00.000Z' });
  });

  test('completed with a plain result: completed, the result kept, no tool error', () => {
    const result = { content: [{ type: 'text' as const, text: 'paid' }] };
    const view = taskViewOf(snapshot({ status: 'COMPLETED', result }), DEFAULTS);
    expect(view.task).toMatchObject({ status: 'completed', statusMessage: 'Completed.' });
    expect(view.outcome).toEqual({ kind: 'result', result });
    expect(toolErrorOf(view)).toBeUndefined();
  });

  test('completed with a result whose isError is true: a tool error with the result’s text', () => {
    const result = { content: [{ type: 'text' as const, text: 'Vendor V-666 is on hold' }], isError: true };
    const view = taskViewOf(snapshot({ status: 'COMPLETED', result }), DEFAULTS);
    expect(view.task).toMatchObject({ status: 'completed', statusMessage: 'Completed with an error: Vendor V-666 is on hold' });
    expect(toolErrorOf(view)).toBe('Vendor V-666 is on hold');
  });

  test('failed by an application failure: a tool error; by a protocol error or anything else: failed', () => {
    const application = taskViewOf(snapshot({ status: 'FAILED', failure: { kind: 'application', message: 'no' } }), DEFAULTS);
    expect(application).toMatchObject({ outcome: { kind: 'tool-error', message: 'no' }, task: { status: 'completed' } });
    expect(toolErrorOf(application)).toBe('no');
    const protocol = taskViewOf(snapshot({ status: 'FAILED', failure: { kind: 'protocol', message: 'bad request' } }), DEFAULTS);
    expect(protocol.task).toMatchObject({ status: 'failed', statusMessage: 'bad request' });
    expect(toolErrorOf(protocol)).toBeUndefined();
    const other = taskViewOf(snapshot({ status: 'FAILED', failure: { kind: 'other', message: 'the workflow timed out' } }), DEFAULTS);
    expect(other.task).toMatchObject({ status: 'failed', statusMessage: 'the workflow timed out' });
  });

  test('terminated and timed out are failed, saying so', () => {
    expect(taskViewOf(snapshot({ status: 'TERMINATED' }), DEFAULTS).task).toMatchObject({
      status: 'failed',
      statusMessage: 'The workflow was terminated by an operator.',
    });
    expect(taskViewOf(snapshot({ status: 'TIMED_OUT' }), DEFAULTS).task).toMatchObject({
      status: 'failed',
      statusMessage: 'The workflow ran past its execution timeout.',
    });
  });
});

describe('toolErrorText and webUiMeta', () => {
  test('toolErrorText joins the text parts; a result without text gets a generic line', () => {
    expect(
      toolErrorText({
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
        isError: true,
      }),
    ).toBe('a\nb');
    expect(toolErrorText({ content: [], isError: true })).toBe('The tool reported an error.');
  });

  test('webUiMeta links the workflow only when the server knows the Web UI', () => {
    expect(webUiMeta({})).toEqual({});
    expect(webUiMeta({ webUiUrl: 'http://ui/wf' })).toEqual({ 'temporal-mcp-tasks/web-ui': 'http://ui/wf' });
  });
});

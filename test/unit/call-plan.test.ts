import { z } from 'zod';
import { APP_MIME_TYPE, UI_EXTENSION } from '../../src/mcp/app/ui';
import {
  declinedConfirmation,
  planCall,
  TASKS_EXTENSION,
  unaskedConfirmation,
  type CallPlan,
  type DeclaredCapabilities,
  type StartPlan,
  type ToolCall,
} from '../../src/mcp/calls/call-plan';
import { canElicit } from '../../src/mcp/calls/can-elicit';
import { confirmationRequest } from '../../src/mcp/protocol/confirmation';
import { defineWorkflowTool } from '../../src/mcp/tools/define';
import { zodSchema } from '../../src/mcp/tools/schema';
import type { DirectTool, ToolDefinition } from '../../src/mcp/tools/types';

const Input = z.object({ count: z.number().int().describe('How many') });
const VALID = { count: 2 };
const INVALID = { count: 'two' };

function workflowTool(name: string, taskSupport: 'optional' | 'required' | 'forbidden', confirm?: { message: string }) {
  return defineWorkflowTool({ name, description: name, workflowType: 'someWorkflow', inputSchema: Input, taskSupport, confirm });
}

const direct: DirectTool<z.infer<typeof Input>> = {
  kind: 'direct',
  name: 'direct',
  description: 'direct',
  input: zodSchema(Input),
  handler: async () => ({ content: [] }),
};

const TOOLS: ToolDefinition[] = [
  direct,
  workflowTool('optional', 'optional'),
  workflowTool('required', 'required'),
  workflowTool('forbidden', 'forbidden'),
  workflowTool('confirmed', 'optional', { message: 'Start {{count}}?' }),
];
const byName = new Map(TOOLS.map((tool) => [tool.name, tool]));

const FORMS: DeclaredCapabilities = { elicitation: { form: {} } };
const APPS: DeclaredCapabilities = { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } };
const TASKS: DeclaredCapabilities = { extensions: { [TASKS_EXTENSION]: {} } };

/** The call of `name` with `args`: 2025-11-25 with or without `params.task`, or 2026-07-28 with these capabilities. */
function mcp2025(name: string, args: unknown, taskAugmented: boolean, capabilities?: DeclaredCapabilities): ToolCall {
  return { generation: 'mcp2025', taskAugmented, name, args, tools: byName, capabilities };
}
function mcp2026(name: string, args: unknown, capabilities?: DeclaredCapabilities): ToolCall {
  return { generation: 'mcp2026', name, args, tools: byName, capabilities: capabilities ?? {} };
}

/** A plan in one line: what a reader of the tables compares. */
function summary(plan: CallPlan): string {
  switch (plan.kind) {
    case 'error':
      return `error ${plan.error.code}`;
    case 'result':
      return plan.result.isError ? 'tool error' : 'result';
    case 'direct':
      return plan.mayAsk ? 'direct, may ask' : 'direct';
    case 'start':
      return [
        `start, then ${plan.then}`,
        ...(plan.confirmation ? [`confirm ${plan.confirmation.askable ? 'asked' : 'unaskable'}`] : []),
        ...(plan.refusal === 'error' ? ['refusals are errors'] : []),
      ].join('; ');
    case 'resume':
      return `resume ${plan.taskId}`;
  }
}

describe('planCall', () => {
  // tool × task-augmented (2025-11-25) × arguments → plan
  test.each([
    ['direct', true, VALID, 'error -32601'],
    ['direct', true, INVALID, 'error -32601'],
    ['direct', false, VALID, 'direct'],
    ['direct', false, INVALID, 'tool error'],
    ['optional', true, VALID, 'start, then task; refusals are errors'],
    ['optional', true, INVALID, 'error -32602'],
    ['optional', false, VALID, 'start, then inline'],
    ['optional', false, INVALID, 'tool error'],
    ['required', true, VALID, 'start, then task; refusals are errors'],
    ['required', true, INVALID, 'error -32602'],
    ['required', false, VALID, 'error -32601'],
    ['required', false, INVALID, 'error -32601'],
    ['forbidden', true, VALID, 'error -32601'],
    ['forbidden', true, INVALID, 'error -32601'],
    ['forbidden', false, VALID, 'start, then inline'],
    ['forbidden', false, INVALID, 'tool error'],
    ['nonesuch', true, VALID, 'error -32602'],
    ['nonesuch', false, VALID, 'error -32602'],
  ])('2025-11-25: %s, task-augmented %s, arguments %j → %s', (name, augmented, args, expected) => {
    expect(summary(planCall(mcp2025(name, args, augmented)))).toBe(expected);
  });

  // tool × tasks extension declared (2026-07-28) × arguments → plan
  test.each([
    ['direct', true, VALID, 'direct'],
    ['direct', true, INVALID, 'tool error'],
    ['direct', false, VALID, 'direct'],
    ['direct', false, INVALID, 'tool error'],
    ['optional', true, VALID, 'start, then task'],
    ['optional', true, INVALID, 'tool error'],
    ['optional', false, VALID, 'start, then inline'],
    ['optional', false, INVALID, 'tool error'],
    ['required', true, VALID, 'start, then task'],
    ['required', true, INVALID, 'tool error'],
    ['required', false, VALID, 'error -32021'],
    ['required', false, INVALID, 'error -32021'],
    ['forbidden', true, VALID, 'start, then inline'],
    ['forbidden', true, INVALID, 'tool error'],
    ['forbidden', false, VALID, 'start, then inline'],
    ['forbidden', false, INVALID, 'tool error'],
    ['nonesuch', true, VALID, 'error -32602'],
    ['nonesuch', false, VALID, 'error -32602'],
  ])('2026-07-28: %s, tasks extension %s, arguments %j → %s', (name, tasks, args, expected) => {
    expect(summary(planCall(mcp2026(name, args, tasks ? TASKS : {})))).toBe(expected);
  });

  // what the client declared → plan
  const byCapabilities: [string, ToolCall, string][] = [
    ['2025-11-25 plain, a host that renders Apps', mcp2025('optional', VALID, false, APPS), 'start, then view'],
    [
      '2025-11-25 task-augmented, a host that renders Apps',
      mcp2025('optional', VALID, true, APPS),
      'start, then task; refusals are errors',
    ],
    ['2026-07-28 without tasks, a host that renders Apps', mcp2026('optional', VALID, APPS), 'start, then view'],
    [
      '2026-07-28 forbidden tool, tasks and Apps',
      mcp2026('forbidden', VALID, { extensions: { ...TASKS.extensions, ...APPS.extensions } }),
      'start, then view',
    ],
    [
      '2026-07-28 with tasks, a host that renders Apps',
      mcp2026('optional', VALID, { extensions: { ...TASKS.extensions, ...APPS.extensions } }),
      'start, then task',
    ],
    ['2025-11-25 direct, forms', mcp2025('direct', VALID, false, FORMS), 'direct, may ask'],
    ['2025-11-25 direct, url only', mcp2025('direct', VALID, false, { elicitation: { url: {} } }), 'direct'],
    ['2025-11-25 direct, an elicitation naming no mode', mcp2025('direct', VALID, false, { elicitation: {} }), 'direct, may ask'],
    ['2026-07-28 direct, forms', mcp2026('direct', VALID, FORMS), 'direct, may ask'],
    ['2026-07-28 direct, nothing declared', mcp2026('direct', VALID), 'direct'],
    ['2025-11-25 confirmation, plain, forms', mcp2025('confirmed', VALID, false, FORMS), 'start, then inline; confirm asked'],
    ['2025-11-25 confirmation, plain, no elicitation', mcp2025('confirmed', VALID, false), 'start, then inline; confirm unaskable'],
    [
      '2025-11-25 confirmation, task-augmented, no elicitation',
      mcp2025('confirmed', VALID, true),
      'start, then task; confirm unaskable; refusals are errors',
    ],
    [
      '2025-11-25 confirmation, task-augmented, forms',
      mcp2025('confirmed', VALID, true, FORMS),
      'start, then task; confirm asked; refusals are errors',
    ],
    ['2026-07-28 confirmation, tasks and forms', mcp2026('confirmed', VALID, { ...FORMS, ...TASKS }), 'start, then task; confirm asked'],
    [
      '2026-07-28 confirmation, tasks, url only',
      mcp2026('confirmed', VALID, { elicitation: { url: {} }, ...TASKS }),
      'start, then task; confirm unaskable',
    ],
    ['2026-07-28 confirmation, invalid arguments', mcp2026('confirmed', INVALID, FORMS), 'tool error'],
  ];
  test.each(byCapabilities.map(([title, call, expected]) => [title, expected, call] as const))('%s → %s', (_, expected, call) => {
    expect(summary(planCall(call))).toBe(expected);
  });

  test('errors and tool errors carry the texts clients see', () => {
    const names = 'direct, optional, required, forbidden, confirmed';
    expect(planCall(mcp2025('nonesuch', {}, false))).toEqual({
      kind: 'error',
      error: { code: -32602, message: `Unknown tool "nonesuch"; available tools: ${names}` },
    });
    expect(planCall(mcp2026('nonesuch', {}))).toEqual(planCall(mcp2025('nonesuch', {}, true)));
    expect(planCall(mcp2025('forbidden', VALID, true))).toEqual({
      kind: 'error',
      error: { code: -32601, message: 'Tool "forbidden" does not support task-augmented calls (execution.taskSupport is "forbidden")' },
    });
    expect(planCall(mcp2025('direct', VALID, true))).toEqual({
      kind: 'error',
      error: { code: -32601, message: 'Tool "direct" does not support task-augmented calls (execution.taskSupport is "forbidden")' },
    });
    expect(planCall(mcp2025('required', VALID, false))).toEqual({
      kind: 'error',
      error: { code: -32601, message: 'Tool "required" must be called as a task: add params.task (execution.taskSupport is "required")' },
    });
    expect(planCall(mcp2026('required', VALID))).toEqual({
      kind: 'error',
      error: {
        code: -32021,
        message: `Tool "required" runs only as a task: declare the ${TASKS_EXTENSION} extension in the request's client capabilities`,
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      },
    });
    expect(planCall(mcp2025('optional', INVALID, true))).toEqual({
      kind: 'error',
      error: { code: -32602, message: 'Invalid arguments for tool optional: count: Invalid input: expected number, received string' },
    });
    const toolError = {
      kind: 'result',
      result: {
        content: [
          {
            type: 'text',
            text: 'Invalid arguments for tool optional: count: Invalid input: expected number, received string. Fix them and call again.',
          },
        ],
        isError: true,
      },
    };
    expect(planCall(mcp2025('optional', INVALID, false))).toEqual(toolError);
    expect(planCall(mcp2026('optional', INVALID, TASKS))).toEqual(toolError);
  });

  test('a plan starts with the checked arguments; absent arguments are checked as {}', () => {
    expect(planCall(mcp2026('optional', VALID))).toMatchObject({ kind: 'start', input: VALID });
    expect(summary(planCall(mcp2026('optional', undefined)))).toBe('tool error');
    const confirmed = planCall(mcp2025('confirmed', VALID, false, FORMS)) as StartPlan;
    expect(confirmed.confirmation?.question).toEqual(confirmationRequest({ message: 'Start {{count}}?' }, VALID));
  });

  test('a retried 2026-07-28 call that answers its task’s round resumes that task, before any other check', () => {
    const resumes = (name: string, args: unknown) => planCall({ ...mcp2026(name, args, TASKS), resumesTask: 'task-7' } as ToolCall);
    expect(summary(resumes('optional', VALID))).toBe('resume task-7');
    expect(summary(resumes('optional', INVALID))).toBe('resume task-7');
    // Only a workflow tool's call has a task to resume; anything else is planned as it always is.
    expect(summary(resumes('direct', VALID))).toBe('direct');
    expect(summary(resumes('missing', VALID))).toBe('error -32602');
  });
});

describe('a confirmation that starts nothing', () => {
  const plain = planCall(mcp2025('confirmed', VALID, false)) as StartPlan;
  const augmented = planCall(mcp2025('confirmed', VALID, true)) as StartPlan;
  const question = plain.confirmation!.question;

  test('unasked: the pending confirmation as a tool result, or -32600 carrying it where a task was demanded', () => {
    const answer = unaskedConfirmation(plain, question, 'token-1');
    expect(answer.kind).toBe('result');
    const pending = answer.kind === 'result' ? answer.result : undefined;
    expect(pending?.structuredContent).toMatchObject({
      pendingConfirmation: { confirmation: 'token-1', question: { key: 'confirm_start' } },
    });
    expect(unaskedConfirmation(augmented, question, 'token-1')).toEqual({
      kind: 'error',
      error: { code: -32600, message: (pending?.content[0] as { text: string }).text, data: pending?.structuredContent },
    });
  });

  test('declined: a tool error saying nothing started, or -32600 with data.declined where a task was demanded', () => {
    const text = 'Not started: the confirmation of confirmed was declined, so no task was created.';
    expect(declinedConfirmation(plain, 'decline')).toEqual({
      kind: 'result',
      result: { content: [{ type: 'text', text }], isError: true },
    });
    expect(declinedConfirmation(augmented, 'decline')).toEqual({
      kind: 'error',
      error: { code: -32600, message: text, data: { declined: true } },
    });
    expect(declinedConfirmation(augmented, 'cancel')).toMatchObject({ error: { message: expect.stringContaining('was dismissed') } });
  });
});

describe('canElicit', () => {
  const form = confirmationRequest({ message: 'Go?' }, {});
  const url = { key: 'sign', request: { mode: 'url' as const, message: 'Sign', url: 'https://example.com/sign', elicitationId: 'e-1' } };
  test.each([
    ['nothing declared', false, false, undefined],
    ['an elicitation naming no mode (older clients)', true, false, {}],
    ['form', true, false, { form: {} }],
    ['url', false, true, { url: {} }],
    ['form and url', true, true, { form: {}, url: {} }],
  ])('%s: a form askable %s, a url askable %s', (_, formAskable, urlAskable, elicitation) => {
    expect([canElicit(elicitation, form), canElicit(elicitation, url)]).toEqual([formAskable, urlAskable]);
    expect(canElicit(elicitation)).toBe(formAskable);
  });
});

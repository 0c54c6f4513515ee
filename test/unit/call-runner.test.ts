import { z } from 'zod';
import { planCall, type CallAnswer, type DeclaredCapabilities, type ToolCall } from '../../src/mcp/calls/call-plan';
import { runCall, type Asked, type CallPort } from '../../src/mcp/calls/call-runner';
import type { DirectToolDependencies } from '../../src/mcp/calls/call-tool';
import { JsonRpcError } from '../../src/mcp/protocol/wire-errors';
import { defineWorkflowTool } from '../../src/mcp/tools/define';
import { zodSchema } from '../../src/mcp/tools/schema';
import type { CreatedTask } from '../../src/core/lifecycle';
import type { DirectTool, ToolDefinition } from '../../src/mcp/tools/types';
import type { PendingInput } from '../../src/contract/task-contract';

const Input = z.object({ count: z.number().int() });

const asking: DirectTool<z.infer<typeof Input>> = {
  kind: 'direct',
  name: 'asking',
  description: 'asks a form, then says what it got',
  input: zodSchema(Input),
  handler: async ({ count }, context) => {
    const answer = await context.ask!({ message: `Really ${count}?`, requestedSchema: { type: 'object', properties: {} } });
    return { content: [{ type: 'text', text: `asked: ${answer.action}` }] };
  },
};

/** A tool that takes any failure of its form for a refusal: the round that ends a call is no failure it can catch. */
const cautious: DirectTool<z.infer<typeof Input>> = {
  kind: 'direct',
  name: 'cautious',
  description: 'asks a form, and says so when asking fails',
  input: zodSchema(Input),
  handler: async ({ count }, context) => {
    try {
      const answer = await context.ask!({ message: `Sure ${count}?`, requestedSchema: { type: 'object', properties: {} } });
      return { content: [{ type: 'text', text: `asked: ${answer.action}` }] };
    } catch {
      return { content: [{ type: 'text', text: 'asking failed' }], isError: true };
    } finally {
      ran.push('finally');
    }
  },
};
const ran: string[] = [];

/** A tool that sends its task's workflow an action, and says what became of it. */
const acting: DirectTool<{ taskId: string }> = {
  kind: 'direct',
  name: 'acting',
  description: 'releases a line of a task',
  input: zodSchema(z.object({ taskId: z.string() })),
  handler: async ({ taskId }, context) => {
    const outcome = await context.sendAction(await context.task(taskId), { update: 'release', subject: { line: 'L-1' } });
    return { content: [{ type: 'text', text: `action ${outcome.kind}` }] };
  },
};

const TOOLS: ToolDefinition[] = [
  asking,
  cautious,
  acting,
  defineWorkflowTool({ name: 'run', description: 'run', workflowType: 'w', inputSchema: Input, taskSupport: 'optional' }),
  defineWorkflowTool({
    name: 'confirmed',
    description: 'confirmed',
    workflowType: 'w',
    inputSchema: Input,
    taskSupport: 'optional',
    confirm: {
      message: 'Start {{count}}?',
      requestedSchema: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] },
      into: 'confirmation',
    },
  }),
];
const byName = new Map(TOOLS.map((tool) => [tool.name, tool]));
const FORMS: DeclaredCapabilities = { elicitation: { form: {} } };

/** What the fake port saw, in order, and what the runner answered. */
type Step = string;

/**
 * A port that records each step and answers questions from a script: each entry is the caller's answer, or 'round'
 * (the call ends with an input_required round while the question is out).
 */
function fakePort(script: unknown[], options: { ttl?: unknown; carried?: unknown } = {}) {
  const steps: Step[] = [];
  const questions: PendingInput[] = [];
  const port: CallPort<string> = {
    caller: { principal: 'local:alice', roles: [] },
    answer: (answer: CallAnswer) => {
      if (answer.kind === 'error') throw JsonRpcError.of(answer.error);
      const text = answer.result.content.map((part) => (part.type === 'text' ? part.text : '')).join(' ');
      return `${answer.result.isError ? 'tool error' : 'result'}: ${text}`;
    },
    startOptions: () => {
      steps.push('start options');
      if (options.ttl !== undefined) throw new JsonRpcError(-32602, 'params.task.ttl must be a whole number');
      return {};
    },
    ...(options.carried !== undefined && { carriedConfirmation: () => options.carried }),
    askConfirmation: async (question, refusals): Promise<Asked<string>> => {
      steps.push(`ask confirmation (${refusals} refused)`);
      questions.push(question);
      const next = script.shift();
      return next === 'round' ? { kind: 'ends', answer: 'input_required round' } : { kind: 'answered', answer: next };
    },
    askForm: async (form) => {
      steps.push(`ask form: ${form.message}`);
      const next = script.shift();
      return next === 'round'
        ? { kind: 'ends', answer: 'input_required round' }
        : { kind: 'answered', answer: next as { action: 'accept' } };
    },
    awaitResult: async () => undefined,
    created: (view) => steps.push(`created ${view.task.taskId}`),
    taskAnswer: (view) => `task ${view.task.taskId}`,
    waitInline: async (view) => `waited for ${view.task.taskId}`,
    resumeTask: async (taskId) => `resumed ${taskId}`,
  };
  const created: unknown[] = [];
  const deps = {
    // A form a direct tool puts counts as one of the principal's waits while it is out.
    core: {
      waiting: async <T>(_principal: string, work: () => Promise<T>) => {
        steps.push('wait begins');
        try {
          return await work();
        } finally {
          steps.push('wait ends');
        }
      },
      get: async (taskId: string, principal: string) => {
        steps.push(`read ${taskId} for ${principal}`);
        return { workflowId: taskId, runId: 'run-1' };
      },
      sendAction: async (view: { workflowId: string }, action: unknown, requestedBy: unknown) => {
        steps.push(`action on ${view.workflowId}: ${JSON.stringify(action)} by ${JSON.stringify(requestedBy)}`);
        return { kind: 'applied', result: {} };
      },
      create: async (_tool: unknown, input: unknown) => {
        created.push(input);
        return { task: { taskId: 'task-1', status: 'working' }, inputs: [], replayed: false } as unknown as CreatedTask;
      },
    } as unknown as DirectToolDependencies['core'],
    approvals: {} as DirectToolDependencies['approvals'],
    seal: {
      seal: (call: unknown) => {
        steps.push(`sealed ${JSON.stringify(call)}`);
        return 'sealed-token';
      },
    } as unknown as DirectToolDependencies['seal'],
    workflowTools: new Map(),
  } satisfies DirectToolDependencies;
  return { port, deps, steps, questions, created };
}

function mcp2025(name: string, args: unknown, taskAugmented: boolean, capabilities?: DeclaredCapabilities): ToolCall {
  return { generation: 'mcp2025', taskAugmented, name, args, tools: byName, capabilities };
}
function mcp2026(name: string, args: unknown, capabilities: DeclaredCapabilities = {}): ToolCall {
  return { generation: 'mcp2026', name, args, tools: byName, capabilities };
}

describe('runCall carries out a plan the same way for every generation', () => {
  const starts: [string, ToolCall, string][] = [
    ['a task-augmented call answers with the task', mcp2025('run', { count: 1 }, true), 'task task-1'],
    ['a plain call waits inline', mcp2025('run', { count: 1 }, false), 'waited for task-1'],
    [
      'a 2026 call with the tasks extension answers with the task',
      mcp2026('run', { count: 1 }, { extensions: { 'io.modelcontextprotocol/tasks': {} } }),
      'task task-1',
    ],
    [
      'a host that renders the task view gets the pending task',
      mcp2026('run', { count: 1 }, { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } }),
      'result: Started task task-1',
    ],
  ];
  test.each(starts)('%s', async (_, call, answer) => {
    const { port, deps, steps } = fakePort([]);
    expect(await runCall(planCall(call), port, deps)).toMatch(new RegExp(`^${answer}`));
    expect(steps).toEqual(['start options', 'created task-1']);
  });

  test('a plan that runs nothing is answered at once, an error thrown by the port', async () => {
    const { port, deps, steps } = fakePort([]);
    await expect(runCall(planCall(mcp2025('nonesuch', {}, false)), port, deps)).rejects.toMatchObject({ code: -32602 });
    expect(await runCall(planCall(mcp2026('run', { count: 'x' })), port, deps)).toMatch(/^tool error: Invalid arguments for tool run/);
    expect(steps).toEqual([]);
  });

  test('the request’s own fields are checked before the confirmation is asked: a bad one asks nothing, starts nothing', async () => {
    const { port, deps, steps, created } = fakePort([{ action: 'accept', content: { note: 'ok' } }], { ttl: -1 });
    await expect(runCall(planCall(mcp2025('confirmed', { count: 2 }, true, FORMS)), port, deps)).rejects.toMatchObject({ code: -32602 });
    expect(steps).toEqual(['start options']);
    expect(created).toEqual([]);
  });

  test('an answer that does not fit is asked again, saying why, in the same words for every generation', async () => {
    for (const call of [mcp2025('confirmed', { count: 2 }, false, FORMS), mcp2026('confirmed', { count: 2 }, FORMS)]) {
      const { port, deps, steps, questions, created } = fakePort([
        { action: 'accept', content: {} },
        { action: 'accept', content: { note: 'ok' } },
      ]);
      expect(await runCall(planCall(call), port, deps)).toBe('waited for task-1');
      expect(steps).toEqual(['start options', 'ask confirmation (0 refused)', 'ask confirmation (1 refused)', 'created task-1']);
      expect(questions[0].request.message).toBe('Start 2?');
      expect(questions[1].request.message).toMatch(/^Your previous answer could not be used: .*note.*\.\n\nStart 2\?$/s);
      expect(created).toEqual([{ count: 2, confirmation: { note: 'ok' } }]);
    }
  });

  test('a confirmation out as an input_required round ends the call; nothing starts', async () => {
    const { port, deps, steps, created } = fakePort(['round']);
    expect(await runCall(planCall(mcp2026('confirmed', { count: 2 }, FORMS)), port, deps)).toBe('input_required round');
    expect(steps).toEqual(['start options', 'ask confirmation (0 refused)']);
    expect(created).toEqual([]);
  });

  test('a declined confirmation starts nothing: a tool error, or -32600 where a task was demanded', async () => {
    const plain = fakePort([{ action: 'decline' }]);
    expect(await runCall(planCall(mcp2025('confirmed', { count: 2 }, false, FORMS)), plain.port, plain.deps)).toMatch(
      /^tool error: Not started/,
    );
    const augmented = fakePort([{ action: 'cancel' }]);
    await expect(runCall(planCall(mcp2025('confirmed', { count: 2 }, true, FORMS)), augmented.port, augmented.deps)).rejects.toMatchObject({
      code: -32600,
      data: { declined: true },
    });
    expect([...plain.created, ...augmented.created]).toEqual([]);
  });

  test('a client that cannot be asked gets the question and a confirm_start token; nothing is asked or started', async () => {
    const { port, deps, steps, created } = fakePort([]);
    expect(await runCall(planCall(mcp2026('confirmed', { count: 2 })), port, deps)).toMatch(/^result: .*confirm_start/s);
    expect(steps).toEqual(['start options', 'sealed {"principal":"local:alice","tool":"confirmed","args":{"count":2}}']);
    expect(created).toEqual([]);
  });

  test('an answer the retried call carries is taken first, even where this request could not be asked', async () => {
    const accepted = fakePort([], { carried: { action: 'accept', content: { note: 'ok' } } });
    expect(await runCall(planCall(mcp2026('confirmed', { count: 2 })), accepted.port, accepted.deps)).toBe('waited for task-1');
    expect(accepted.created).toEqual([{ count: 2, confirmation: { note: 'ok' } }]);
    // One that does not fit is asked again where the client can be asked, and handed to confirm_start where not.
    const askable = fakePort([{ action: 'accept', content: { note: 'now' } }], { carried: { action: 'accept', content: {} } });
    expect(await runCall(planCall(mcp2026('confirmed', { count: 2 }, FORMS)), askable.port, askable.deps)).toBe('waited for task-1');
    expect(askable.questions[0].request.message).toMatch(/^Your previous answer could not be used: /);
    const unaskable = fakePort([], { carried: { action: 'accept', content: {} } });
    expect(await runCall(planCall(mcp2026('confirmed', { count: 2 })), unaskable.port, unaskable.deps)).toMatch(
      /^result: .*confirm_start/s,
    );
    expect(unaskable.created).toEqual([]);
  });

  test('a direct tool’s form: answered, it runs on; out as a round, the call ends with the round', async () => {
    const answered = fakePort([{ action: 'accept' }]);
    expect(await runCall(planCall(mcp2025('asking', { count: 3 }, false, FORMS)), answered.port, answered.deps)).toBe(
      'result: asked: accept',
    );
    expect(answered.steps).toEqual(['wait begins', 'ask form: Really 3?', 'wait ends']);
    const round = fakePort(['round']);
    expect(await runCall(planCall(mcp2026('asking', { count: 3 }, FORMS)), round.port, round.deps)).toBe('input_required round');
    expect(round.steps).toEqual(['wait begins', 'ask form: Really 3?', 'wait ends']);
  });

  test('a resumed round goes on with its task through the port, asking and starting nothing', async () => {
    const { port, deps, steps, created } = fakePort([]);
    expect(await runCall({ kind: 'resume', taskId: 'task-9' }, port, deps)).toBe('resumed task-9');
    expect(steps).toEqual([]);
    expect(created).toEqual([]);
    const { resumeTask: _, ...withoutRounds } = port;
    await expect(runCall({ kind: 'resume', taskId: 'task-9' }, withoutRounds, deps)).rejects.toMatchObject({ code: -32603 });
  });

  test('a round that ends the call is its answer, whatever the tool does around its form', async () => {
    ran.length = 0;
    const round = fakePort(['round']);
    expect(await runCall(planCall(mcp2026('cautious', { count: 4 }, FORMS)), round.port, round.deps)).toBe('input_required round');
    // The tool's catch and finally never ran: its form is still out, and the retried call runs it again.
    expect(ran).toEqual([]);
    expect(round.steps).toEqual(['wait begins', 'ask form: Sure 4?', 'wait ends']);
    const answered = fakePort([{ action: 'decline' }]);
    expect(await runCall(planCall(mcp2026('cautious', { count: 4 }, FORMS)), answered.port, answered.deps)).toBe('result: asked: decline');
    expect(ran).toEqual(['finally']);
  });

  test('a direct tool’s action is sealed with its caller and its own name, whatever it says', async () => {
    const { port, deps, steps } = fakePort([]);
    expect(await runCall(planCall(mcp2025('acting', { taskId: 'task-7' }, false)), port, deps)).toBe('result: action applied');
    expect(steps).toEqual([
      'read task-7 for local:alice',
      'action on task-7: {"update":"release","subject":{"line":"L-1"}} by {"principal":"local:alice","via":"acting"}',
    ]);
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { TerminalAnswers, ScriptedAnswers } from '../../src/client/answers';
import { EXIT } from '../../src/client/args';
import { LocalTaskStore } from '../../src/client/store';
import { runClient } from '../helpers/cli';
import { freePort } from '../helpers/dev-server';
import { startStack } from '../helpers/test-stack';
import { QUESTION_KEY, questionRequest, type AskInput } from '../fixtures/definitions';
import { askInput, FIXTURES, type FixtureStack } from '../fixtures/stack';
import { eventually, expectedWebUiLink } from '../helpers/temporal';

let stack: FixtureStack;

beforeAll(async () => {
  stack = await startStack({ name: 'client', app: FIXTURES, servers: [{}] });
});

afterAll(() => stack?.stop());

function scratch() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'client-test-'));
  /** A file of `input` (default a fresh subject's) as `ask_requester`'s arguments. */
  const argsFile = (input: AskInput = askInput()) => {
    const file = path.join(dir, `args-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify(input));
    return file;
  };
  return { stateDir: path.join(dir, 'state'), argsFile };
}

describe('temporal-mcp-client', () => {
  test('call: runs the tool as a task, answers from --answer, exits 0 with the outcome as JSON; the task id is stored first', async () => {
    const { stateDir, argsFile } = scratch();
    const run = await runClient(
      [
        'call',
        'ask_requester',
        '--url',
        stack.server.url,
        '--args',
        `@${argsFile()}`,
        '--answer',
        '{"decision":"approve"}',
        '--json',
        '--state-dir',
        stateDir,
      ],
      stack.taskQueue,
    );
    expect(run.code).toBe(EXIT.completed);
    const outcome = JSON.parse(run.stdout);
    expect(outcome).toMatchObject({ status: 'completed', result: { structuredContent: { outcome: 'approved' } } });
    expect(outcome.webUi).toBe(expectedWebUiLink(outcome.taskId));
    // The link is printed once, beside the status lines.
    expect(run.stderr.split(expectedWebUiLink(outcome.taskId))).toHaveLength(2);
    expect(run.stderr).toMatch(/answered accept \{"decision":"approve"\}/);
    const [stored] = new LocalTaskStore(stateDir).tasks();
    expect(stored).toMatchObject({ taskId: outcome.taskId, server: stack.server.url, tool: 'ask_requester', status: 'completed' });
    expect(stored.humanAnswers.get(QUESTION_KEY)).toBe(1);
  });

  test('call --no-input stops with exit 6 when a question has no answer; tasks lists it; resume answers and finishes it', async () => {
    const { stateDir, argsFile } = scratch();
    const input = askInput();
    const first = await runClient(
      ['call', 'ask_requester', '--url', stack.server.url, '--args', `@${argsFile(input)}`, '--no-input', '--state-dir', stateDir],
      stack.taskQueue,
    );
    expect(first.code).toBe(EXIT.needsInput);
    expect(first.stderr).toContain(`needs input: "${questionRequest(input.subject).message}"`);
    const [stored] = new LocalTaskStore(stateDir).tasks();

    const listed = await eventually(async () => {
      const run = await runClient(['tasks', '--url', stack.server.url, '--json', '--state-dir', stateDir], stack.taskQueue);
      const rows = JSON.parse(run.stdout) as { taskId: string; status: string }[];
      return rows.find((row) => row.taskId === stored.taskId && row.status === 'input_required');
    }, 'the task in the client’s task list');
    expect(listed.status).toBe('input_required');

    const resumed = await runClient(
      ['resume', stored.taskId, '--answer', '{"action":"accept","content":{"decision":"reject"}}', '--state-dir', stateDir],
      stack.taskQueue,
    );
    // A rejection is a tool error: the work did not run.
    expect(resumed.code).toBe(EXIT.toolError);
    expect(resumed.stdout + resumed.stderr).toContain(`"${input.subject}" was rejected`);
    expect(resumed.stderr).toContain(`task ${stored.taskId}: ${expectedWebUiLink(stored.taskId)}`);
  });

  test('exit codes: 1 for a tool error, 4 for a cancelled task, 2 for usage errors, 5 for an unreachable server, 7 for an unknown task', async () => {
    const { stateDir, argsFile } = scratch();
    const refused = await runClient(
      [
        'call',
        'ask_requester',
        '--url',
        stack.server.url,
        '--args',
        `@${argsFile(askInput({ refuse: 'the requester is on hold' }))}`,
        '--state-dir',
        stateDir,
      ],
      stack.taskQueue,
    );
    expect(refused.code).toBe(EXIT.toolError);
    expect(refused.stdout).toMatch(/was refused: the requester is on hold/);

    const waiting = await runClient(
      ['call', 'ask_requester', '--url', stack.server.url, '--args', `@${argsFile()}`, '--no-input', '--state-dir', stateDir],
      stack.taskQueue,
    );
    expect(waiting.code).toBe(EXIT.needsInput);
    const taskId = new LocalTaskStore(stateDir).tasks()[1].taskId;
    const cancelled = await runClient(['cancel', taskId, '--state-dir', stateDir], stack.taskQueue);
    expect(cancelled.code).toBe(EXIT.completed);
    expect(cancelled.stdout).toMatch(/cancelled/);
    expect((await runClient(['result', taskId, '--state-dir', stateDir], stack.taskQueue)).code).toBe(EXIT.cancelled);

    expect((await runClient(['call', 'no_such_tool', '--url', stack.server.url, '--state-dir', stateDir], stack.taskQueue)).code).toBe(
      EXIT.usage,
    );
    expect((await runClient(['call', 'ask_requester', '--args', '{not json', '--state-dir', stateDir], stack.taskQueue)).code).toBe(
      EXIT.usage,
    );
    expect((await runClient(['frobnicate'], stack.taskQueue)).code).toBe(EXIT.usage);
    const closed = await freePort();
    const unreachable = await runClient(
      ['tasks', '--url', `http://127.0.0.1:${closed}/mcp`, '--reconnect-timeout', '1', '--state-dir', stateDir],
      stack.taskQueue,
    );
    expect(unreachable.code).toBe(EXIT.unreachable);
    const unknown = await runClient(
      ['result', 'ask-00000000-0000-4000-8000-000000000000', '--url', stack.server.url, '--state-dir', stateDir],
      stack.taskQueue,
    );
    expect(unknown.code).toBe(EXIT.error);
    expect(unknown.stderr).toMatch(/Task not found/);
  });
});

describe('answers', () => {
  const request = { mode: 'form' as const, ...questionRequest('the test subject') };

  test('the terminal form offers enum choices by number, re-asks invalid values and skips optional fields', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (chunk) => (shown += chunk));
    const pending = new TerminalAnswers(input, output).answer(request);
    input.write('a\n7\n2\n\n');
    const given = await pending;
    expect(given).toEqual({ response: { action: 'accept', content: { decision: 'reject' } }, source: 'terminal' });
    expect(shown).toMatch(/1\) Approve/);
    expect(shown).toMatch(/must be one of approve, reject/);
  });

  test('the terminal form can decline', async () => {
    const input = new PassThrough();
    const pending = new TerminalAnswers(input, new PassThrough()).answer(request);
    input.write('d\n');
    expect((await pending)?.response).toEqual({ action: 'decline' });
  });

  test('scripted answers: keyed answers win, bare content means accept, answers that do not fit the form are refused', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'answers-'));
    const file = path.join(dir, 'answers.json');
    writeFileSync(file, JSON.stringify({ [QUESTION_KEY]: { decision: 'approve', comment: 'ok' } }));
    expect((await new ScriptedAnswers([], file).answer(request, QUESTION_KEY))?.response).toEqual({
      action: 'accept',
      content: { decision: 'approve', comment: 'ok' },
    });
    await expect(new ScriptedAnswers(['{"decision":"maybe"}'], undefined).answer(request, QUESTION_KEY)).rejects.toThrow(
      /must be one of approve, reject/,
    );
    expect(() => new ScriptedAnswers(['{"action":"accept"}'], undefined)).toThrow(/needs "content"/);
    expect(await new ScriptedAnswers([], undefined).answer(request, QUESTION_KEY)).toBeUndefined();
  });
});

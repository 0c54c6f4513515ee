/**
 * What the bridge reads from workflow memos: a memo that fits is read as written, one that does not is reported with
 * the first problem's path; and the `done:` keywords a workflow publishes for people who may answer none of its
 * open questions.
 */
import { doneKeywords } from '../../src/workflows/approvals';
import type { AddressedInput } from '../../src/contract/approvals';
import { MalformedMemoError, readTaskMeta, readTaskState } from '../../src/contract/memo-schemas';
import { inboxQuery } from '../../src/approvals/inbox';

const question: AddressedInput = {
  key: 'approval',
  request: {
    mode: 'form',
    message: 'Approve?',
    requestedSchema: { type: 'object', properties: { decision: { type: 'string', enum: ['approve', 'reject'] } }, required: ['decision'] },
  },
  audience: { roles: ['spend-approver'], required: 2 },
  requester: 'alice',
  answers: [],
  askedAt: '2026-11-26T10:00:00.000Z',
};

function answered(input: AddressedInput, ...principals: string[]): AddressedInput {
  return {
    ...input,
    answers: principals.map((principal) => ({
      principal,
      roles: [],
      action: 'accept',
      content: { decision: 'approve' },
      at: input.askedAt,
    })),
  };
}

describe('readTaskState', () => {
  test('a state that fits is read as written, fields the bridge does not know kept', () => {
    const state = { status: 'working', updatedAt: question.askedAt, awaiting: [question], decided: [], extra: { anything: 1 } };
    expect(readTaskState({ mcpTask: state })).toBe(state);
    expect(readTaskState({})).toBeUndefined();
  });

  test.each([
    ['a question without key or request', { status: 'working', awaiting: [{ key: 1, request: null }] }, 'awaiting.0.key'],
    [
      'a question whose form has no schema',
      { status: 'working', awaiting: [{ ...question, request: { mode: 'form', message: 'Approve?' } }] },
      'awaiting.0.request.requestedSchema',
    ],
    [
      'an answer without a principal',
      { status: 'working', awaiting: [{ ...question, answers: [{ action: 'accept' }] }] },
      'awaiting.0.answers.0.principal',
    ],
    ['an unknown status', { status: 'done' }, 'status'],
    ['an input without a request', { status: 'input_required', inputs: [{ key: 'a' }] }, 'inputs.0.request'],
  ])('%s is malformed, and the error names where', (_what, state, path) => {
    expect(() => readTaskState({ mcpTask: state })).toThrow(MalformedMemoError);
    expect(() => readTaskState({ mcpTask: state })).toThrow(`the mcpTask memo is malformed: ${path}:`);
  });

  test('a meta without a tool name is malformed', () => {
    expect(() => readTaskMeta({ mcpMeta: { ttl: 5 } })).toThrow('the mcpMeta memo is malformed: tool:');
    expect(readTaskMeta({ mcpMeta: { tool: 'x', ttl: null, pollInterval: 1000 } })).toEqual({ tool: 'x', ttl: null, pollInterval: 1000 });
  });
});

describe('doneKeywords', () => {
  test('a person who answered every open question, the excluded and the requester are done; one who may still answer is not', () => {
    const first = answered(question, 'carol', 'erin');
    const second = { ...answered({ ...question, key: 'second' }, 'carol'), audience: { roles: ['spend-approver'], exclude: ['dave'] } };
    expect(doneKeywords([first, second]).sort()).toEqual(['done:alice', 'done:carol']);
    expect(doneKeywords([second]).sort()).toEqual(['done:alice', 'done:carol', 'done:dave']);
  });

  test('the requester is not done where a question allows the requester; people count by person', () => {
    const allowed = { ...question, audience: { ...question.audience, allowRequester: true } };
    expect(doneKeywords([allowed])).toEqual([]);
    const byOAuth = { ...question, answers: [{ principal: 'oauth:carol', roles: [], action: 'accept' as const, at: question.askedAt }] };
    expect(doneKeywords([byOAuth]).sort()).toEqual(['done:alice', 'done:carol']);
    expect(doneKeywords([])).toEqual([]);
  });
});

describe('inboxQuery', () => {
  test('leaves out tasks the person is done with; a name a query cannot carry leaves the clause out', () => {
    expect(inboxQuery('carol', ['spend-approver', "it's"], 'carol')).toBe(
      "McpAwaiting IN ('principal:carol', 'role:spend-approver') AND McpAwaiting NOT IN ('done:carol') AND ExecutionStatus = 'Running'",
    );
    expect(inboxQuery('carol', [], "Carol O'Brien")).toBe("McpAwaiting IN ('principal:carol') AND ExecutionStatus = 'Running'");
  });
});

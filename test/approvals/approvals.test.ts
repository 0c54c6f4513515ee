/**
 * Approvals by the right people: a decision addressed to a role (`request_decision`), over a real HTTP server whose callers hold static
 * tokens with roles, answered by distinct approvers through their inbox, on both client generations; the requester
 * never approves their own, outsiders see nothing, and a namespace writer's Update is refused by the workflow.
 */
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { TASK_STATE_MEMO, type PublishedTaskState } from '../../src/contract/task-contract';
import { ANSWER_UPDATE_NAME } from '../../src/contract/approvals';
import { answer, ApprovalClients, awaitInInbox, inbox, makePeople, textOf, writeTokensFile } from '../helpers/approvals';
import { startStack } from '../helpers/test-stack';
import { getTask, taskResult, waitForTask } from '../helpers/mcp';
import { mcp2026Request } from '../helpers/mcp2026';
import { FIXTURES, startDecisionTask, type FixtureStack } from '../fixtures/stack';
// alice asks (and holds the approver role too: she still may not approve her own); carol and erin approve; dave has no role.
const people = makePeople({ alice: 'spend-approver', carol: 'spend-approver,controller', erin: 'spend-approver', dave: '' });
type Person = keyof typeof people;

let stack: FixtureStack;
const clients = new ApprovalClients();

beforeAll(async () => {
  const tokensFile = writeTokensFile(people);
  stack = await startStack({
    name: 'approvals',
    app: FIXTURES,
    servers: [{ env: { MCP_AUTH_TOKENS_FILE: tokensFile, MCP_TASK_OPS_PER_SECOND: '0' } }],
  });
}, 120_000);

afterAll(async () => {
  await clients.closeAll();
  await stack?.stop();
});

function connectAs(who: Person): Promise<McpClient> {
  return clients.connect(stack.server.url, people[who]);
}

test('two distinct approvers by role, on both generations; the requester, a repeat and an outsider are refused; the result says who decided', async () => {
  const [alice, carol, dave] = await Promise.all([connectAs('alice'), connectAs('carol'), connectAs('dave')]);
  const taskId = await startDecisionTask(alice, { subject: 'EUR 4,200.00 for "GPU server"', roles: ['spend-approver'], required: 2 });
  const waiting = await waitForTask(alice, taskId, (task) => task.statusMessage?.startsWith('Waiting for') ?? false);
  // The requester's task works while others are asked; its status names roles and counts, never people.
  expect(waiting.status).toBe('working');
  expect(waiting.statusMessage).toBe('Waiting for 2 of 2 approvals by spend-approver');

  const item = await awaitInInbox(carol, taskId);
  expect(item).toMatchObject({ key: 'approval', required: 2, accepted: 0, message: 'Approve EUR 4,200.00 for "GPU server"?' });
  // alice holds the role but asked for it: not in her inbox, and her own approval is refused.
  expect((await inbox(alice)).some((entry) => entry.taskId === taskId)).toBe(false);
  const own = await answer(alice, taskId, 'approve');
  expect(own.isError).toBe(true);
  expect(textOf(own)).toBe('This is your own request: someone else must approve it. Nothing was recorded.');
  // dave is not addressed: he sees nothing, and the task does not exist for him.
  expect((await inbox(dave)).some((entry) => entry.taskId === taskId)).toBe(false);
  const outsider = await answer(dave, taskId, 'approve');
  expect(outsider.isError).toBe(true);
  expect(textOf(outsider)).toBe(`No question "approval" of task ${taskId} awaits your answer. Nothing was recorded.`);
  // Roles come from credentials: a role or principal in the arguments changes nothing.
  const forged = await dave.callTool({
    name: 'approvals_answer',
    arguments: {
      taskId,
      key: 'approval',
      action: 'accept',
      content: { decision: 'approve' },
      roles: ['spend-approver'],
      principal: people.carol.principal,
    },
  });
  expect(forged.isError).toBe(true);
  // Content that does not fit the form, and an oversized comment: refused, nothing recorded.
  expect(textOf(await answer(carol, taskId, 'maybe' as 'approve'))).toMatch(/does not fit the question.*Nothing was recorded/);
  expect((await answer(carol, taskId, 'approve', { comment: 'x'.repeat(2_001) })).isError).toBe(true);

  const first = await answer(carol, taskId, 'approve', { comment: 'within budget' });
  expect(first.isError).toBeFalsy();
  expect(first.structuredContent).toMatchObject({
    recorded: {
      principal: people.carol.principal,
      roles: ['spend-approver', 'controller'],
      action: 'accept',
      comment: 'within budget',
      via: 'approvals_answer',
    },
  });
  const again = await answer(carol, taskId, 'approve');
  expect(textOf(again)).toBe('You have answered this question already. Nothing was recorded.');
  await waitForTask(alice, taskId, (task) => task.statusMessage === 'Waiting for 1 of 2 approvals by spend-approver');

  // The second approver on 2026-07-28, with a plain request of the tool.
  const erinAuth = { authorization: `Bearer ${people.erin.token}` };
  const listed = await mcp2026Request(stack.server.url, 'tools/call', { name: 'approvals_inbox', arguments: {} }, { headers: erinAuth });
  expect(listed.body.result?.structuredContent.items.map((entry: { taskId: string }) => entry.taskId)).toContain(taskId);
  const second = await mcp2026Request(
    stack.server.url,
    'tools/call',
    { name: 'approvals_answer', arguments: { taskId, key: 'approval', action: 'accept', content: { decision: 'approve' } } },
    { headers: erinAuth },
  );
  expect(second.body.result?.isError).toBeFalsy();

  const result = await taskResult(alice, taskId);
  expect(result.isError).toBeFalsy();
  expect(textOf(result)).toBe('Approved: EUR 4,200.00 for "GPU server", by 2 approver(s).');
  expect(result.structuredContent).toMatchObject({
    approved: true,
    outcome: 'approved',
    approvers: [
      { principal: people.carol.principal, roles: ['spend-approver', 'controller'], decision: 'approve', comment: 'within budget' },
      { principal: people.erin.principal, roles: ['spend-approver'], decision: 'approve' },
    ],
  });
  expect((await getTask(alice, taskId)).status).toBe('completed');
  expect((await inbox(carol)).some((entry) => entry.taskId === taskId)).toBe(false);
});

test('a rejection ends the request; an Update sent past the bridge with a forged identity is refused by the workflow', async () => {
  const [alice, carol] = await Promise.all([connectAs('alice'), connectAs('carol')]);
  const taskId = await startDecisionTask(alice, { subject: 'EUR 80.00 for "Team lunch"', roles: ['spend-approver'] });
  await awaitInInbox(carol, taskId);

  // A namespace writer calls the Update with an identity that passes the validator but carries no seal of the bridge.
  const handle = stack.temporal.workflow.getHandle(taskId);
  await expect(
    handle.executeUpdate(ANSWER_UPDATE_NAME, {
      args: [
        {
          key: 'approval',
          action: 'accept',
          content: { decision: 'approve' },
          answeredBy: { principal: 'mallory', roles: ['spend-approver'] },
        },
      ],
    }),
  ).rejects.toMatchObject({ cause: { message: expect.stringMatching(/^Answer refused: it carries no seal/) } });
  const memo = (await handle.describe()).memo?.[TASK_STATE_MEMO] as PublishedTaskState;
  expect(memo.awaiting?.[0].answers).toEqual([]);

  const rejected = await answer(carol, taskId, 'reject', { comment: 'not this month' });
  expect(rejected.isError).toBeFalsy();
  const result = await taskResult(alice, taskId);
  // A final denial is a tool error saying the work did not run: the task is failed in 2025-11-25.
  expect(result.isError).toBe(true);
  expect(textOf(result)).toBe('Not approved (rejected): EUR 80.00 for "Team lunch"; nothing was done.');
  expect(result.structuredContent).toMatchObject({
    approved: false,
    outcome: 'rejected',
    approvers: [{ principal: people.carol.principal, decision: 'reject', comment: 'not this month' }],
  });
  expect((await getTask(alice, taskId)).status).toBe('failed');
  expect(await stack.temporal.workflow.getHandle(taskId).describe()).toMatchObject({
    memo: { [TASK_STATE_MEMO]: { statusMessage: 'Not approved (rejected); nothing was done' } },
  });
});

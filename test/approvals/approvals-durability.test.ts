/**
 * Approvals survive crashes: the MCP server, the worker and the Temporal dev server are SIGKILLed between the first and
 * the second approval of a decision that needs two; after the restart nothing is lost (the first approval still
 * counts), nobody is asked again (the first approver's inbox is empty, a repeat is refused), and the effect is carried
 * out once. A stack of its own (the drill's rig, running the fixtures), since the shared dev server is killed here.
 */
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { readNotifications } from '../../src/activities/notifications';
import { Rig } from '../../scripts/lib/rig';
import type { DecisionResult } from '../fixtures/definitions';
import { FIXTURE_WORKER_ARGS, FIXTURES, effectsCarriedOut } from '../fixtures/stack';
import { requestDecisionTool } from '../fixtures/tools';
import { answer, ApprovalClients, awaitInInbox, inbox, makePeople, textOf, writeTokensFile } from '../helpers/approvals';
import { taskResult } from '../helpers/mcp';

const people = makePeople({ sam: 'ap-approver', ann: 'ap-approver', bob: 'ap-approver' });
let rig: Rig;
let passed = false;

beforeAll(async () => {
  rig = new Rig({
    name: 'approvals-kill',
    workerArgs: FIXTURE_WORKER_ARGS,
    workerEnv: {},
    serveArgs: FIXTURES.serveArgs(),
    serverEnv: { MCP_AUTH_TOKENS_FILE: writeTokensFile(people) },
  });
  await rig.up();
}, 300_000);

afterAll(async () => {
  await rig?.down(!passed);
});

test('the server, the worker and Temporal killed between two approvals: the first still counts, nobody is asked again, the effect carried out once', async () => {
  let clients = new ApprovalClients();
  const connect = (person: (typeof people)[keyof typeof people]): Promise<McpClient> => clients.connect(rig.url, person);
  const [sam, ann] = await Promise.all([connect(people.sam), connect(people.ann)]);
  const created = await sam.request(
    {
      method: 'tools/call',
      params: {
        name: requestDecisionTool.name,
        arguments: { subject: 'Servers and rack space', roles: ['ap-approver'], required: 2 },
        task: {},
      },
    },
    CreateTaskResultSchema,
  );
  const { taskId } = created.task;
  await awaitInInbox(ann, taskId, undefined, 60_000);
  expect((await answer(ann, taskId, 'approve', { comment: 'first of two' })).isError).toBeFalsy();

  await clients.closeAll();
  await rig.killAndRestart({ server: true, worker: true, temporal: true });

  clients = new ApprovalClients();
  const [sam2, ann2, bob] = await Promise.all([connect(people.sam), connect(people.ann), connect(people.bob)]);
  try {
    // Nothing lost: bob sees one of two approvals given; nobody asked again: ann's inbox is empty and a repeat is refused.
    const entry = await awaitInInbox(bob, taskId, (item) => item.accepted === 1, 60_000);
    expect(entry).toMatchObject({ required: 2, accepted: 1 });
    expect((await inbox(ann2)).some((item) => item.taskId === taskId)).toBe(false);
    expect(textOf(await answer(ann2, taskId, 'approve'))).toBe('You have answered this question already. Nothing was recorded.');

    expect((await answer(bob, taskId, 'approve')).isError).toBeFalsy();
    const result = await taskResult(sam2, taskId);
    const outcome = result.structuredContent as unknown as DecisionResult;
    expect(outcome.outcome).toBe('approved');
    expect(outcome.approvers.map((a) => [a.principal, a.decision, a.comment])).toEqual([
      [people.ann.principal, 'approve', 'first of two'],
      [people.bob.principal, 'approve', undefined],
    ]);
    expect(await effectsCarriedOut(rig.client!, taskId)).toBe(1);
    const notifications = (await readNotifications(rig.outbox)).filter((n) => n.taskId === taskId);
    expect(notifications.map((n) => n.kind)).toEqual(['asked', 'decided']);
    passed = true;
  } finally {
    await clients.closeAll();
  }
});

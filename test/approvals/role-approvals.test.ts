/**
 * Decisions approved by the right people: holders of `ap-approver` other than the requester, two distinct ones when
 * two are required, over real HTTP servers whose callers hold static tokens with roles. Two server replicas take
 * answers at the same moment; an approver hands a question on; a question nobody answers is reminded and escalates on
 * durable timers, with each notification in the outbox.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DecisionLog } from '../../src/approvals/decision-log';
import { FileDecisionStore } from '../../src/records/file-store';
import { DecisionStoreError } from '../../src/records/store-error';
import { CLOSE_VIA, type DecisionStore, type SignedDecisionRecord } from '../../src/contract/decision-records';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { randomUUID } from 'node:crypto';
import { CancelTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { readNotifications } from '../../src/activities/notifications';
import type { DecisionInput, DecisionResult } from '../fixtures/definitions';
import { effectsCarriedOut, FIXTURES, startDecisionTask, type FixtureStack } from '../fixtures/stack';
import {
  answer,
  approvalsCommand,
  ApprovalClients,
  callAnswer,
  awaitInInbox,
  inbox,
  makePeople,
  textOf,
  writeTokensFile,
  type Person,
} from '../helpers/approvals';
import { startStack } from '../helpers/test-stack';
import { getTask, newMcpClient, taskResult, waitForTask } from '../helpers/mcp';
import { mcp2026Request } from '../helpers/mcp2026';
import { eventually } from '../helpers/temporal';

// sam asks (and holds the approver role: still not for his own requests); ann and bob approve; mia manages; olga has no role.
const people = makePeople({ sam: 'ap-approver', ann: 'ap-approver', bob: 'ap-approver,auditor', mia: 'ap-manager', olga: '' });

// Reminded after 1.5 s, escalated to ap-manager after 4 s, overdue after 10 s.
const HURRIED: Partial<DecisionInput> = {
  remindAfterMs: 1_500,
  dueAfterMs: 4_000,
  escalateTo: ['ap-manager'],
  escalationDueAfterMs: 10_000,
};

const clients = new ApprovalClients();
let main: FixtureStack;

beforeAll(async () => {
  const env = { MCP_AUTH_TOKENS_FILE: writeTokensFile(people), MCP_TASK_OPS_PER_SECOND: '0', MCP_CLOSE_KEEPER_MS: '1000' };
  main = await startStack({ name: 'role-approvals', app: FIXTURES, servers: [{ env }, { env }] });
}, 120_000);

afterAll(async () => {
  await clients.closeAll();
  await main?.stop();
});

function connectAs(person: Person, replica = 0): Promise<McpClient> {
  return clients.connect(main.servers[replica].url, person);
}

/**
 * Asks the holders of ap-approver to approve an order of its own, its details the subject of the decision records (one
 * approval, unless `overrides` say otherwise).
 */
function submit(client: McpClient, overrides: Partial<DecisionInput> = {}): Promise<string> {
  const order = `ORD-${randomUUID().slice(0, 8)}`;
  return startDecisionTask(client, { subject: `order ${order}`, roles: ['ap-approver'], details: { order }, ...overrides });
}

/** What the decision of `taskId` returned. */
const outcomeOf = async (client: McpClient, taskId: string) =>
  (await taskResult(client, taskId)).structuredContent as unknown as DecisionResult;

const effects = (taskId: string) => effectsCarriedOut(main.temporal, taskId);

/** The signed close of `taskId`'s question on record, once there is one. */
function closeOnRecord(taskId: string, timeoutMs = 30_000): Promise<SignedDecisionRecord> {
  const store = new FileDecisionStore(main.activities.decisionStore);
  return eventually(
    async () => (await store.records(taskId)).find((record) => record.body.decision === 'close' && record.signature !== undefined),
    `a close of ${taskId} on record`,
    timeoutMs,
  );
}

/** `temporal-mcp-tasks approvals verify` of `taskId` as an auditor runs it on the stack's store. */
const verify = (taskId: string) => approvalsCommand(['verify', taskId], { MCP_DECISION_STORE: main.activities.decisionStore });

/** A decision store that takes every record but closes: a bridge that stops between an answer and its close. */
class NoCloses implements DecisionStore {
  constructor(private readonly inner: DecisionStore) {}
  records(taskId: string) {
    return this.inner.records(taskId);
  }
  append(record: SignedDecisionRecord) {
    if (record.body.decision === 'close') return Promise.reject(new DecisionStoreError('this store takes no closes', this.location()));
    return this.inner.append(record);
  }
  location() {
    return `${this.inner.location()} (no closes)`;
  }
  close() {
    return this.inner.close();
  }
}

test('two distinct approvers required, answering at the same moment through two replicas; never the requester; the result lists who approved', async () => {
  const [sam, ann, bob, olga] = await Promise.all([
    connectAs(people.sam),
    connectAs(people.ann, 0),
    connectAs(people.bob, 1),
    connectAs(people.olga),
  ]);
  const taskId = await submit(sam, { required: 2 });
  const waiting = await waitForTask(sam, taskId, (task) => task.statusMessage?.startsWith('Waiting for') ?? false);
  // The requester's task works while approvers are asked; roles and counts, never names.
  expect(waiting.status).toBe('working');
  expect(waiting.statusMessage).toBe('Waiting for 2 of 2 approvals by ap-approver');

  // The question as the workflow asked it.
  const entry = await awaitInInbox(ann, taskId);
  expect(entry).toMatchObject({ key: 'approval', required: 2, accepted: 0 });
  expect(entry.message).toMatch(/^Approve order ORD-\w+\?/);

  // Four eyes: sam holds the role but asked; olga is not addressed and learns nothing.
  expect((await inbox(sam)).some((item) => item.taskId === taskId)).toBe(false);
  expect(textOf(await answer(sam, taskId, 'approve'))).toBe(
    'This is your own request: someone else must approve it. Nothing was recorded.',
  );
  expect((await inbox(olga)).some((item) => item.taskId === taskId)).toBe(false);
  expect(textOf(await answer(olga, taskId, 'approve'))).toBe(
    `No question "approval" of task ${taskId} awaits your answer. Nothing was recorded.`,
  );

  // ann and bob answer at the same moment, through different replicas: both are counted.
  await awaitInInbox(bob, taskId);
  const [first, second] = await Promise.all([
    answer(ann, taskId, 'approve', { comment: 'matches the PO' }),
    answer(bob, taskId, 'approve'),
  ]);
  expect([first.isError, second.isError]).toEqual([undefined, undefined]);
  // A repeat counts once, and says so after the question closed as it does while it is open; a question that never
  // was is refused like a task that is not the caller's.
  expect(textOf(await answer(ann, taskId, 'approve'))).toBe('You have answered this question already. Nothing was recorded.');
  const unknown = await callAnswer(bob, { taskId, key: 'payment-run', action: 'accept', content: { decision: 'approve' } });
  expect(textOf(unknown)).toBe(`No question "payment-run" of task ${taskId} awaits your answer. Nothing was recorded.`);

  const result = await taskResult(sam, taskId);
  expect(result.isError).toBeFalsy();
  const outcome = result.structuredContent as unknown as DecisionResult;
  expect(outcome.outcome).toBe('approved');
  const approvers = [...outcome.approvers].sort((a, b) => a.principal.localeCompare(b.principal));
  expect(approvers).toEqual([
    expect.objectContaining({
      principal: people.ann.principal,
      roles: ['ap-approver'],
      decision: 'approve',
      comment: 'matches the PO',
      via: 'approvals_answer',
    }),
    expect.objectContaining({ principal: people.bob.principal, roles: ['ap-approver', 'auditor'], decision: 'approve' }),
  ]);
  expect(await effects(taskId)).toBe(1);
});

test('a rejection ends the task as a tool error saying nothing was done (2025-11-25: failed)', async () => {
  const [sam, ann] = await Promise.all([connectAs(people.sam), connectAs(people.ann)]);
  const taskId = await submit(sam);
  const waiting = await waitForTask(sam, taskId, (task) => task.statusMessage?.startsWith('Waiting for') ?? false);
  expect(waiting.statusMessage).toBe('Waiting for 1 approval by ap-approver');
  await awaitInInbox(ann, taskId);
  expect((await answer(ann, taskId, 'reject', { comment: 'duplicate of last month' })).isError).toBeFalsy();
  const result = await taskResult(sam, taskId);
  expect(result.isError).toBe(true);
  expect(textOf(result)).toMatch(/^Not approved \(rejected\): .*; nothing was done\.$/);
  expect(result.structuredContent).toMatchObject({
    approved: false,
    outcome: 'rejected',
    approvers: [{ principal: people.ann.principal, decision: 'reject', comment: 'duplicate of last month' }],
  });
  expect((await getTask(sam, taskId)).status).toBe('failed');
  expect(await effects(taskId)).toBe(0);
});

test('an approver hands the question to someone eligible, who approves through a form on their own call; both are recorded', async () => {
  const approve = () => ({ action: 'accept' as const, content: { decision: 'approve', comment: 'checked the contract' } });
  const [sam, ann, bob, bobWithForms] = await Promise.all([
    connectAs(people.sam),
    connectAs(people.ann),
    connectAs(people.bob),
    clients.connect(main.servers[0].url, people.bob, approve),
  ]);
  const taskId = await submit(sam);
  await awaitInInbox(ann, taskId);
  // Not to the submitter, not to oneself, and only with a name.
  const toSubmitter = await callAnswer(ann, { taskId, key: 'approval', action: 'delegate', delegateTo: people.sam.principal });
  expect(textOf(toSubmitter)).toBe(`Cannot hand it to ${people.sam.principal}: it is their own request. Nothing was recorded.`);
  const toSelf = await callAnswer(ann, { taskId, key: 'approval', action: 'delegate', delegateTo: people.ann.principal });
  expect(toSelf.isError).toBe(true);
  // Only to someone eligible: mia manages, but this question is for ap-approver.
  const toMia = await callAnswer(ann, { taskId, key: 'approval', action: 'delegate', delegateTo: people.mia.principal });
  expect(textOf(toMia)).toBe(
    `Cannot hand it to ${people.mia.principal}: they are not known to hold the role ap-approver. Nothing was recorded.`,
  );
  expect((await callAnswer(ann, { taskId, key: 'approval', action: 'delegate' })).isError).toBe(true);

  const handed = await callAnswer(ann, {
    taskId,
    key: 'approval',
    action: 'delegate',
    delegateTo: people.bob.principal,
    comment: 'on leave',
  });
  expect(handed.isError).toBeFalsy();
  // bob is named now; ann has handed it on and cannot answer any more.
  await awaitInInbox(bob, taskId);
  expect(textOf(await answer(ann, taskId, 'approve'))).toBe('You have answered this question already. Nothing was recorded.');
  // A client that shows no forms is told how to answer with a plain call; nothing is recorded.
  const plainCall = await callAnswer(bob, { taskId, key: 'approval' });
  expect(textOf(plainCall)).toBe(
    'Your client cannot show a form: call again with action (accept, decline or delegate) and content with the fields ' +
      'decision, comment. Nothing was recorded.',
  );
  // bob's other client shows forms: he calls with the question only, and it is put to him on that call, with who
  // submitted and how far the approval has come.
  const formed = await callAnswer(bobWithForms, { taskId, key: 'approval' });
  expect(formed.isError).toBeFalsy();
  expect(clients.asked).toHaveLength(1);
  expect(clients.asked[0].message).toMatch(/^Approve order ORD-/);
  expect(clients.asked[0].message).toContain(`Submitted by ${people.sam.principal}; 0 of 1 approval so far.`);
  expect(clients.asked[0].message).toContain(`(You answer as ${people.bob.principal}; your answer is recorded with your name.)`);
  const result = await taskResult(sam, taskId);
  expect(result.structuredContent).toMatchObject({
    outcome: 'approved',
    approvers: [
      { principal: people.ann.principal, decision: 'delegate', delegatedTo: people.bob.principal, comment: 'on leave' },
      { principal: people.bob.principal, roles: ['ap-approver', 'auditor'], decision: 'approve' },
    ],
  });
  expect(await effects(taskId)).toBe(1);
});

test('nobody answers: a reminder on a durable timer, then the question escalates to ap-manager; every step in the outbox', async () => {
  const [sam, ann, mia] = await Promise.all([connectAs(people.sam), connectAs(people.ann), connectAs(people.mia)]);
  const taskId = await submit(sam, HURRIED);
  await awaitInInbox(ann, taskId);
  // Before the escalation the manager is not asked.
  expect((await inbox(mia)).some((item) => item.taskId === taskId)).toBe(false);
  const escalated = await waitForTask(sam, taskId, (task) => /ap-approver or ap-manager/.test(task.statusMessage ?? ''), 30_000);
  expect(escalated.status).toBe('working');
  await awaitInInbox(mia, taskId);
  expect((await answer(mia, taskId, 'approve', { comment: 'approved on escalation' })).isError).toBeFalsy();
  const result = await taskResult(sam, taskId);
  expect(result.structuredContent).toMatchObject({
    outcome: 'approved',
    approvers: [{ principal: people.mia.principal, decision: 'approve', comment: 'approved on escalation' }],
  });

  const notifications = (await readNotifications(main.activities.notificationOutbox)).filter((n) => n.taskId === taskId);
  expect(notifications.map((n) => n.kind)).toEqual(['asked', 'reminder', 'escalated', 'decided']);
  expect(notifications[0]).toMatchObject({ key: 'approval', audience: { roles: ['ap-approver'] }, accepted: 0, required: 1 });
  expect(notifications[2].audience.roles).toEqual(['ap-approver', 'ap-manager']);
  expect(notifications.map((n) => n.id)).toEqual([
    `${taskId}/approval/asked/1`,
    `${taskId}/approval/reminder/1`,
    `${taskId}/approval/escalated/1`,
    `${taskId}/approval/decided/1`,
  ]);
  expect(notifications[3]).toMatchObject({ outcome: 'accepted', requester: people.sam.principal, accepted: 1 });
});

test('an approver on 2026-07-28 is put the form through an input_required round on their own call', async () => {
  const sam = await connectAs(people.sam);
  const ann = await connectAs(people.ann);
  const taskId = await submit(sam);
  await awaitInInbox(ann, taskId);
  const url = main.servers[1].url;
  const asBob = { headers: { authorization: `Bearer ${people.bob.token}` } };
  const call = { name: 'approvals_answer', arguments: { taskId, key: 'approval' } };

  // A client that declares no elicitation is told how to answer with a plain call.
  const formless = await mcp2026Request(url, 'tools/call', call, { ...asBob, capabilities: {} });
  expect(formless.body.result?.isError).toBe(true);
  expect(formless.body.result?.content[0].text).toMatch(/^Your client cannot show a form/);

  const round = await mcp2026Request(url, 'tools/call', call, asBob);
  expect(round.body.result).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) });
  const form = round.body.result!.inputRequests.form;
  expect(form).toMatchObject({ method: 'elicitation/create', params: { mode: 'form', requestedSchema: { required: ['decision'] } } });
  expect(form.params.message).toMatch(/^Approve order ORD-/);
  const { requestState } = round.body.result!;
  // The state stands for this call only: another task's id, or another person, is refused.
  const replayed = await mcp2026Request(
    url,
    'tools/call',
    { ...call, arguments: { taskId: `${taskId}x`, key: 'approval' }, requestState, inputResponses: { form: { action: 'accept' } } },
    asBob,
  );
  expect(replayed.body.error?.code).toBe(-32602);
  const stolen = await mcp2026Request(
    url,
    'tools/call',
    { ...call, requestState, inputResponses: { form: { action: 'accept', content: { decision: 'approve' } } } },
    { headers: { authorization: `Bearer ${people.ann.token}` } },
  );
  expect(stolen.body.error ?? stolen.body.result?.isError).toBeTruthy();

  const answered = await mcp2026Request(
    url,
    'tools/call',
    { ...call, requestState, inputResponses: { form: { action: 'accept', content: { decision: 'approve', comment: 'ok from 2026' } } } },
    asBob,
  );
  expect(answered.body.result?.isError).toBeFalsy();
  expect(answered.body.result?.content[0].text).toBe(`Your answer to "approval" on task ${taskId} is recorded.`);
  const result = await taskResult(sam, taskId);
  expect(result.structuredContent).toMatchObject({
    outcome: 'approved',
    approvers: [{ principal: people.bob.principal, decision: 'approve', via: 'approvals_answer (form)' }],
  });
});

test('nobody answers, not even after the escalation: the decision ends overdue, nothing done, a tool error', async () => {
  const sam = await connectAs(people.sam);
  const taskId = await submit(sam, HURRIED);
  const result = await taskResult(sam, taskId, 40_000);
  expect(result.isError).toBe(true);
  expect(textOf(result)).toMatch(/^Not approved \(overdue\): .*; nothing was done\.$/);
  expect(result.structuredContent).toMatchObject({ approved: false, outcome: 'overdue', approvers: [] });
  expect(await effects(taskId)).toBe(0);
  const kinds = (await readNotifications(main.activities.notificationOutbox)).filter((n) => n.taskId === taskId).map((n) => n.kind);
  expect(kinds).toEqual(['asked', 'reminder', 'escalated', 'decided']);
  // The workflow's unsigned expiry, then the bridge's signed close saying so.
  const close = await closeOnRecord(taskId);
  expect(close.body).toMatchObject({ outcome: 'expired', required: 1, via: CLOSE_VIA.expiry, by: { principal: 'workflow' } });
  const audit = verify(taskId);
  expect(audit.code).toBe(3);
  expect(audit.out).toMatch(/1\. expire by workflow .* unsigned \(recorded by the workflow\)/);
  expect(audit.out).toMatch(/2\. close by workflow .* via closed by its deadline; closed as expired, 1 approval\(s\) required; signed/);
  expect(audit.out).toMatch(/Verdict: expired unanswered at \S+, closed on record: nothing may be done on it/);
});

test('a task cancelled with one approval of two on record: its question closes on record as cancelled, never approved', async () => {
  const [sam, ann] = await Promise.all([connectAs(people.sam), connectAs(people.ann)]);
  const taskId = await submit(sam, { required: 2 });
  await awaitInInbox(ann, taskId);
  expect((await answer(ann, taskId, 'approve')).isError).toBeFalsy();
  await sam.request({ method: 'tasks/cancel', params: { taskId } }, CancelTaskResultSchema);
  const close = await closeOnRecord(taskId);
  expect(close.body).toMatchObject({ outcome: 'cancelled', required: 2, via: CLOSE_VIA.cancellation, by: { principal: 'workflow' } });
  const audit = verify(taskId);
  expect(audit.code).toBe(3);
  expect(audit.out).toMatch(/Verdict: cancelled with its task, closed on record at \S+ with 1 approval: nothing may be done on it/);
  expect(await effects(taskId)).toBe(0);
});

test('an approval whose close was never written (its bridge stopped first) is closed late by repair, and the audit says so', async () => {
  const sam = await connectAs(people.sam);
  const taskId = await submit(sam);
  await awaitInInbox(await connectAs(people.ann), taskId);
  // ann answers through a bridge whose close never reaches the store, and which keeps no closes itself.
  const written = DecisionLog.fromEnv({ ...process.env, MCP_DECISION_STORE: main.activities.decisionStore });
  const stopsFirst = await main.addBridge({
    principal: people.ann.principal,
    roles: ['ap-approver'],
    decisions: new DecisionLog(written.signer, new NoCloses(written.store)),
    closeKeeper: false,
  });
  const annThere = newMcpClient('role-approvals-no-closes');
  await main.connect(annThere, stopsFirst);
  expect((await answer(annThere, taskId, 'approve')).isError).toBeFalsy();
  expect((await outcomeOf(sam, taskId)).outcome).toBe('approved');
  const decided = (await new FileDecisionStore(main.activities.decisionStore).records(taskId)).map((record) => record.body.decision);
  expect(decided).toEqual(['approve']);

  // A bridge that keeps closes, with a short grace for the answering bridge's own close.
  await main.addBridge({ closeKeeper: { intervalMs: 500, lookbackMs: 120_000, graceMs: 2_000 } });
  const close = await closeOnRecord(taskId, 60_000);
  expect(close.body).toMatchObject({ outcome: 'accepted', required: 1, via: CLOSE_VIA.repair, by: { principal: 'workflow' } });
  expect(Date.parse(close.body.closedAt!)).toBeLessThan(Date.parse(close.body.at));
  const audit = verify(taskId);
  expect(audit.code).toBe(0);
  expect(audit.out).toMatch(
    /2\. close by workflow .* via closed late by repair; closed as accepted, 1 approval\(s\) required; the workflow closed it at \S+; signed/,
  );
  expect(audit.out).toMatch(
    new RegExp(
      `Verdict: approved by 1 distinct person: \\S+ \\(principal ${people.ann.principal}\\), of 1 required; closed at \\S+, closed late by repair at \\S+; no rejection on record`,
    ),
  );
});

test('nobody answers, and the decision records of the task are damaged: the expiry is not retried for good, the task fails saying why', async () => {
  const sam = await connectAs(people.sam);
  const taskId = await submit(sam, HURRIED);
  // Something that is no record, in the place of the task's first one.
  const store = new FileDecisionStore(main.activities.decisionStore);
  mkdirSync(path.join(store.folderOf(taskId), '0000000001.json'), { recursive: true });
  const failed = await waitForTask(sam, taskId, (task) => task.status === 'failed', 60_000);
  expect(failed.statusMessage).toMatch(/the expiry of question "approval" cannot be recorded: the decision records of .* do not check out/);
  expect(await effects(taskId)).toBe(0);
});

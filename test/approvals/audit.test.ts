/**
 * Approvals that hold up in an audit: every decision is a record the bridge signs and keeps outside Temporal, and the
 * worker checks those records before the effect (`request_decision` with details). A reset that drops a rejection
 * does nothing; four eyes count
 * people, not credentials; a hand-over goes only to someone eligible and records the delegate's decision; the
 * submitter hears that it is her own request; and an auditor checks a decision's approvals offline with the public key.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { temporal } from '@temporalio/proto';
import { pollUntil } from '../../src/util/wait';
import {
  answer,
  ApprovalClients,
  awaitInInbox,
  callAnswer,
  makePeople,
  approvalsCommand,
  textOf,
  writeTokensFile,
  type Person,
} from '../helpers/approvals';
import { ROOT } from '../helpers/dev-server';
import { TestIssuer } from '../helpers/issuer';
import { newMcpClient, taskResult } from '../helpers/mcp';
import { startStack } from '../helpers/test-stack';
import type { DecisionResult } from '../fixtures/definitions';
import { effectsCarriedOut, FIXTURES, startDecisionTask, type FixtureStack } from '../fixtures/stack';
import { requestDecisionTool } from '../fixtures/tools';

// sam submits and holds the role; sue submits without it; carol, dave and ann approve; olga has no role.
const people = makePeople({
  sam: 'ap-approver',
  sue: '',
  carol: 'ap-approver',
  dave: 'ap-approver',
  ann: 'ap-approver',
  olga: '',
  spender: '',
  sp1: 'spend-approver',
  sp2: 'spend-approver',
});

let issuer: TestIssuer;
let stack: FixtureStack;
const clients = new ApprovalClients();

beforeAll(async () => {
  issuer = await TestIssuer.start();
  stack = await startStack({
    name: 'audit',
    app: FIXTURES,
    servers: [
      {
        env: {
          MCP_AUTH_TOKENS_FILE: writeTokensFile(people),
          MCP_OAUTH_ISSUER: issuer.url,
          MCP_OAUTH_ROLES_CLAIM: 'groups',
          MCP_TASK_OPS_PER_SECOND: '0',
        },
      },
    ],
  });
}, 120_000);

afterAll(async () => {
  await clients.closeAll();
  await stack?.stop();
  await issuer?.close();
});

const as = (person: Person): Promise<McpClient> => clients.connect(stack.server.url, person);

/**
 * Asks holders of ap-approver (`required` distinct ones) to approve a purchase of `amount`, whose details the
 * workflow checks against the decision records before its effect; returns the task id.
 */
const submit = (client: McpClient, { amount = 200.75, required = 1 }: { amount?: number; required?: number } = {}) =>
  startDecisionTask(client, {
    subject: `purchase ${randomUUID().slice(0, 8)}`,
    roles: ['ap-approver'],
    required,
    details: { vendor: 'V-100', currency: 'EUR', amount },
  });
/** How many times the task's effect was carried out, by its history. */
const effects = (taskId: string) => effectsCarriedOut(stack.temporal, taskId);
/** The result of `taskId` as `client` reads it. */
const resultOf = async (client: McpClient, taskId: string) =>
  (await taskResult(client, taskId)).structuredContent as unknown as DecisionResult;

/** The result of `taskId` once the run a reset made has ended: the result of the run it replaced (rejected) is read past. */
function resultAfterReset(client: McpClient, taskId: string): Promise<DecisionResult> {
  return pollUntil(
    async () => {
      const now = await resultOf(client, taskId);
      return now.outcome === 'rejected' ? undefined : now;
    },
    { timeoutMs: 60_000, intervalMs: 500, what: 'the reset run to end' },
  );
}
/** `temporal-mcp-tasks approvals …` as an auditor runs it, with the stack's store. */
const auditor = (args: string[]) => approvalsCommand(args, { MCP_DECISION_STORE: stack.activities.decisionStore });

const publicKey = path.join(os.homedir(), '.config', 'temporal-mcp-tasks', 'decision-signing-key.pub.pem');

test('a reset that leaves out the rejection from its reapply does nothing, and the task says why', async () => {
  const [sam, carol, dave] = await Promise.all([as(people.sam), as(people.carol), as(people.dave)]);
  const taskId = await submit(sam);
  await awaitInInbox(carol, taskId);
  expect(textOf(await answer(carol, taskId, 'reject', { comment: 'not ours' }))).toMatch(/is recorded\.$/);
  const rejected = await resultOf(sam, taskId);
  expect(rejected.outcome).toBe('rejected');

  // A namespace writer resets the run to before carol's answer and leaves Updates and signals out of the reapply.
  const handle = stack.temporal.workflow.getHandle(taskId);
  const { events } = await handle.fetchHistory();
  const accepted = events!.findIndex((event) => event.workflowExecutionUpdateAcceptedEventAttributes);
  const before = events!.slice(0, accepted).filter((event) => event.workflowTaskCompletedEventAttributes);
  const { ResetReapplyExcludeType } = temporal.api.enums.v1;
  await stack.temporal.workflowService.resetWorkflowExecution({
    namespace: 'default',
    workflowExecution: { workflowId: taskId },
    reason: 'audit test: drop the rejection',
    workflowTaskFinishEventId: before[before.length - 1].eventId,
    requestId: `reset-${taskId}`,
    resetReapplyExcludeTypes: [
      ResetReapplyExcludeType.RESET_REAPPLY_EXCLUDE_TYPE_UPDATE,
      ResetReapplyExcludeType.RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL,
    ],
  });

  // The question is open again in the new run, and dave approves alone.
  await awaitInInbox(dave, taskId);
  expect(textOf(await answer(dave, taskId, 'approve'))).toMatch(/is recorded\.$/);
  const result = await resultAfterReset(sam, taskId);
  expect(result.outcome).toBe('unapproved');
  expect(result.reason).toContain(people.carol.principal);
  expect(result.reason).toMatch(/reject/);
  expect(result.effect).toBeUndefined();
  expect(await effects(taskId)).toBe(0);
});

test('four eyes count people: the static carol and oauth:carol are one approver; the second is refused', async () => {
  const groups = ['ap-approver'];
  const oauthCarol = await clients.connect(stack.server.url, {
    principal: `oauth:${people.carol.principal}`,
    token: await issuer.token({ sub: people.carol.principal, aud: stack.server.url, groups }),
    roles: '',
  });
  const [sam, carol, dave] = await Promise.all([as(people.sam), as(people.carol), as(people.dave)]);
  const taskId = await submit(sam, { amount: 2_400, required: 2 });
  await awaitInInbox(carol, taskId);
  expect((await answer(carol, taskId, 'approve')).isError).toBeFalsy();
  expect(textOf(await answer(oauthCarol, taskId, 'approve'))).toBe('You have answered this question already. Nothing was recorded.');
  expect((await answer(dave, taskId, 'approve')).isError).toBeFalsy();
  const result = await resultOf(sam, taskId);
  expect(result.outcome).toBe('approved');
  expect(result.approvers.map((approver) => approver.principal)).toEqual([people.carol.principal, people.dave.principal]);
  expect(await effects(taskId)).toBe(1);
});

test('a hand-over goes only to someone eligible; the delegate decides and the result says so (with details checked and without)', async () => {
  const [sam, ann, dave] = await Promise.all([as(people.sam), as(people.ann), as(people.dave)]);
  const taskId = await submit(sam);
  await awaitInInbox(ann, taskId);
  const toOlga = await callAnswer(ann, { taskId, key: 'approval', action: 'delegate', delegateTo: people.olga.principal });
  expect(textOf(toOlga)).toBe(
    `Cannot hand it to ${people.olga.principal}: they are not known to hold the role ap-approver. Nothing was recorded.`,
  );
  const unknown = await callAnswer(ann, { taskId, key: 'approval', action: 'delegate', delegateTo: 'nobody-known' });
  expect(textOf(unknown)).toMatch(/^Cannot hand it to nobody-known: they are not known to hold the role ap-approver\./);
  expect((await callAnswer(ann, { taskId, key: 'approval', action: 'delegate', delegateTo: people.dave.principal })).isError).toBeFalsy();
  expect((await answer(dave, taskId, 'approve')).isError).toBeFalsy();
  expect(await resultOf(sam, taskId)).toMatchObject({
    outcome: 'approved',
    approvers: [
      { principal: people.ann.principal, decision: 'delegate', delegatedTo: people.dave.principal },
      { principal: people.dave.principal, decision: 'approve' },
    ],
  });
  expect(await effects(taskId)).toBe(1);

  // Without details to check: the delegate's approval makes the request approved.
  const [spender, sp1, sp2] = await Promise.all([as(people.spender), as(people.sp1), as(people.sp2)]);
  const spendId = await startDecisionTask(spender, { subject: 'books', roles: ['spend-approver'] });
  await awaitInInbox(sp1, spendId);
  expect(
    (await callAnswer(sp1, { taskId: spendId, key: 'approval', action: 'delegate', delegateTo: people.sp2.principal })).isError,
  ).toBeFalsy();
  expect((await answer(sp2, spendId, 'approve')).isError).toBeFalsy();
  expect((await taskResult(spender, spendId)).structuredContent).toMatchObject({
    approved: true,
    outcome: 'approved',
    approvers: [
      { principal: people.sp1.principal, decision: 'delegate', delegatedTo: people.sp2.principal },
      { principal: people.sp2.principal, decision: 'approve' },
    ],
  });
});

test('the submitter hears it is her own request; someone else gets one answer for a task not theirs and for none', async () => {
  const [sam, sue, olga, ann] = await Promise.all([as(people.sam), as(people.sue), as(people.olga), as(people.ann)]);
  const own = 'This is your own request: someone else must approve it. Nothing was recorded.';
  const samTask = await submit(sam);
  const sueTask = await submit(sue);
  await awaitInInbox(ann, samTask);
  await awaitInInbox(ann, sueTask);
  // With the approver role and without it.
  expect(textOf(await answer(sam, samTask, 'approve'))).toBe(own);
  expect(textOf(await answer(sue, sueTask, 'approve'))).toBe(own);
  const real = textOf(await answer(olga, samTask, 'approve'));
  const nowhere = `${requestDecisionTool.idPrefix}-00000000-0000-4000-8000-000000000000`;
  const none = textOf(await answer(olga, nowhere, 'approve'));
  expect(real.replace(samTask, 'ID')).toBe(none.replace(nowhere, 'ID'));
  expect(real).toBe(`No question "approval" of task ${samTask} awaits your answer. Nothing was recorded.`);
  // The inbox says who submitted and how far the approval has come.
  const entry = await awaitInInbox(ann, samTask);
  expect(entry).toMatchObject({ requester: people.sam.principal, accepted: 0, required: 1 });
  for (const taskId of [samTask, sueTask]) await answer(ann, taskId, 'reject');
});

test("form answers keep only the form's own fields: prototype names and a 900 KB field never reach the history", async () => {
  const [sam, ann] = await Promise.all([as(people.sam), as(people.ann)]);
  const taskId = await submit(sam);
  await awaitInInbox(ann, taskId);
  const heavy = 'x'.repeat(900_000);
  const answered = await callAnswer(ann, {
    taskId,
    key: 'approval',
    action: 'accept',
    content: { decision: 'approve', constructor: heavy, toString: heavy },
  });
  expect(answered.isError).toBeFalsy();
  expect(answered.structuredContent).toMatchObject({ recorded: { content: { decision: 'approve' } } });
  expect(Object.keys((answered.structuredContent as { recorded: { content: object } }).recorded.content)).toEqual(['decision']);
  await taskResult(sam, taskId);
  const history = await stack.temporal.workflow.getHandle(taskId).fetchHistory();
  expect(JSON.stringify(history).length).toBeLessThan(200_000);
});

test('an auditor verifies a decision offline with the public key; one byte changed, or an approval moved, fails', async () => {
  const [sam, carol, dave] = await Promise.all([as(people.sam), as(people.carol), as(people.dave)]);
  const big = { amount: 1_450, required: 2 };
  const [first, second] = [await submit(sam, big), await submit(sam, big)];
  for (const taskId of [first, second]) {
    await awaitInInbox(carol, taskId);
    expect((await answer(carol, taskId, 'approve')).isError).toBeFalsy();
    expect((await answer(dave, taskId, 'approve')).isError).toBeFalsy();
    expect((await resultOf(sam, taskId)).outcome).toBe('approved');
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-receipts-'));
  const receipts = [first, second].map((taskId) => {
    const file = path.join(dir, `${taskId}.json`);
    const verified = auditor(['verify', taskId, '--public-key', publicKey, '--export', file]);
    expect(verified).toMatchObject({ code: 0 });
    expect(verified.out).toContain(people.carol.principal);
    expect(verified.out).toContain(people.dave.principal);
    return file;
  });
  // The receipt alone, without the store or Temporal.
  const offline = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/cli.ts', 'approvals', 'verify', '--receipt', receipts[0], '--public-key', publicKey],
    {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, MCP_DECISION_STORE: path.join(dir, 'no-store-here'), TEMPORAL_ADDRESS: '127.0.0.1:1' },
    },
  );
  expect(offline.status).toBe(0);

  const text = readFileSync(receipts[0], 'utf8');
  const at = text.indexOf('1450');
  expect(at).toBeGreaterThan(0);
  const tampered = path.join(dir, 'tampered.json');
  writeFileSync(tampered, `${text.slice(0, at)}1460${text.slice(at + 4)}`);
  expect(auditor(['verify', '--receipt', tampered, '--public-key', publicKey]).code).toBe(1);

  // carol's approval of the second decision moved into the first one's receipt.
  const one = JSON.parse(text);
  const other = JSON.parse(readFileSync(receipts[1], 'utf8'));
  one.records[0] = other.records[0];
  const moved = path.join(dir, 'moved.json');
  writeFileSync(moved, JSON.stringify(one));
  expect(auditor(['verify', '--receipt', moved, '--public-key', publicKey]).code).toBe(1);
});

test('a decision the decision store cannot take is refused, and the workflow never hears of it', async () => {
  const [sam, ann] = await Promise.all([as(people.sam), as(people.ann)]);
  const taskId = await submit(sam);
  await awaitInInbox(ann, taskId);
  // A bridge whose store is under a file: every append fails.
  const blocker = path.join(mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-blocked-')), 'a-file');
  writeFileSync(blocker, '');
  const broken = await stack.addBridge({
    principal: people.ann.principal,
    roles: ['ap-approver'],
    decisionStore: path.join(blocker, 'decisions'),
  });
  const annThere = newMcpClient('audit-broken-store');
  await stack.connect(annThere, broken);
  const refused = (await answer(annThere, taskId, 'approve')) as CallToolResult;
  expect(refused.isError).toBe(true);
  expect(textOf(refused)).toMatch(
    /^The decision store could not take your decision \(.*\); answer again in a moment\. Nothing was recorded\.$/,
  );
  // Still open for ann, who answers through a bridge whose store works.
  await awaitInInbox(ann, taskId);
  expect((await answer(ann, taskId, 'approve')).isError).toBeFalsy();
  expect((await resultOf(sam, taskId)).outcome).toBe('approved');
});

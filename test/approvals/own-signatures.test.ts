/**
 * Approvers' own signatures: the approvers directory says that holders of ap-approver must sign their approvals with
 * a key of their own. carol makes hers with `approvals keygen`, signs with `approvals sign`, and the effect is carried out;
 * without a signature, or with one over another subject, her answer is refused and nothing is recorded. A bridge that
 * holds the decision key but not the directory records her approval with the bridge's signature alone: the workflow
 * refuses its effect on it, and `approvals verify` with the directory says it is not approved. Nor does it act on an
 * approval by someone the directory does not list, whatever his record says of his roles.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { openDecisionStore } from '../../src/records/store';
import {
  ApprovalClients,
  answer,
  approvalsCommand,
  awaitInInbox,
  inbox,
  makePeople,
  textOf,
  writeTokensFile,
  type Person,
} from '../helpers/approvals';
import type { DecisionResult } from '../fixtures/definitions';
import { effectsCarriedOut, FIXTURES, startDecisionTask, type FixtureStack } from '../fixtures/stack';
import { taskResult } from '../helpers/mcp';
import { startStack } from '../helpers/test-stack';

// zed holds ap-approver by his token, and the directory does not list him.
const people = makePeople({ sam: '', carol: 'ap-approver', zed: 'ap-approver' });
const scratch = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-own-signatures-'));
const carolKey = path.join(scratch, 'carol.pem');
const directoryFile = path.join(scratch, 'approvers.json');

let stack: FixtureStack;
const clients = new ApprovalClients();
let store = '';

const approvals = (args: string[], input?: string) => approvalsCommand(args, { MCP_DECISION_STORE: store }, input);

beforeAll(async () => {
  // carol makes her key; the directory's keeper lists its public half, and says ap-approver holders must sign.
  const keygen = approvals(['keygen', '--out', carolKey, '--json']);
  expect(keygen).toMatchObject({ code: 0 });
  const { publicKey } = JSON.parse(keygen.out) as { publicKey: string };
  writeFileSync(
    directoryFile,
    JSON.stringify({
      mustSignRoles: ['ap-approver'],
      people: [
        { name: 'sam', principals: [people.sam.principal] },
        { name: 'carol', principals: [people.carol.principal], roles: ['ap-approver'], keys: [{ ed25519: publicKey }] },
      ],
    }),
  );
  const tokens = writeTokensFile(people);
  stack = await startStack({
    name: 'own-signatures',
    app: FIXTURES,
    worker: false,
    // The first server knows the directory; the second holds the same decision key without it.
    servers: [{ env: { MCP_AUTH_TOKENS_FILE: tokens, MCP_APPROVERS_DIRECTORY: directoryFile } }, { env: { MCP_AUTH_TOKENS_FILE: tokens } }],
  });
  store = stack.activities.decisionStore;
  await stack.spawnWorker({
    NOTIFICATION_LEDGER: path.join(scratch, 'notifications-sent'),
    MCP_APPROVERS_DIRECTORY: directoryFile,
  });
}, 180_000);

afterAll(async () => {
  await clients.closeAll();
  await stack?.stop();
});

/** Asks the holders of ap-approver to approve an order of its own, checked against its decision records. */
function submit(client: McpClient): Promise<string> {
  const order = `ORD-${randomUUID().slice(0, 8)}`;
  return startDecisionTask(client, { subject: `order ${order}`, roles: ['ap-approver'], details: { order, total: 200.75 } });
}

const outcomeOf = async (sam: McpClient, taskId: string) =>
  (await taskResult(sam, taskId, 120_000)).structuredContent as unknown as DecisionResult;
const effects = (taskId: string) => effectsCarriedOut(stack.temporal, taskId);

/** The number of decision records of `taskId`. */
async function recordCount(taskId: string): Promise<number> {
  const opened = openDecisionStore(store);
  try {
    return (await opened.records(taskId)).length;
  } finally {
    await opened.close();
  }
}

/** carol's signature of `decision` on `taskId`'s approval, from the subject her inbox shows, as she makes it. */
async function carolSigns(
  carol: McpClient,
  taskId: string,
  decision: 'approve' | 'reject',
  options: { run?: string; challenge?: string | null } = {},
): Promise<Record<string, unknown>> {
  await awaitInInbox(carol, taskId);
  const item = (await inbox(carol)).find((entry) => entry.taskId === taskId) as unknown as {
    subject: unknown;
    subjectDigest: string;
    run: string;
    challenge: string;
  };
  const challenge = options.challenge === undefined ? item.challenge : options.challenge;
  const signed = approvals(
    [
      'sign',
      '--key',
      carolKey,
      '--task',
      taskId,
      '--run',
      options.run ?? item.run,
      ...(challenge === null ? [] : ['--challenge', challenge]),
      '--question',
      'approval',
      '--decision',
      decision,
      '--subject',
      '-',
    ],
    JSON.stringify(item.subject),
  );
  expect(signed).toMatchObject({ code: 0, err: expect.stringContaining(`Signing a ${decision} of "approval" on task ${taskId}`) });
  return JSON.parse(signed.out) as Record<string, unknown>;
}

const as = (person: Person, server = 0): Promise<McpClient> => clients.connect(stack.servers[server].url, person);

test('carol must sign: unsigned or signed over another subject, her approval is refused; signed, the effect is carried out and the receipt names her key', async () => {
  const [sam, carol] = await Promise.all([as(people.sam), as(people.carol)]);
  const taskId = await submit(sam);
  await awaitInInbox(carol, taskId);

  const unsigned = await answer(carol, taskId, 'approve');
  expect(unsigned.isError).toBe(true);
  expect(textOf(unsigned)).toMatch(
    /^You must sign your approval with your own key: sign the statement \{.*"taskId":"[^"]+".*\} \(temporal-mcp-tasks approvals sign\)/,
  );
  expect(await recordCount(taskId)).toBe(0);

  // A signature of a rejection does not stand for an approval.
  const ofReject = await carolSigns(carol, taskId, 'reject');
  const mismatched = await answer(carol, taskId, 'approve', { signature: ofReject });
  expect(textOf(mismatched)).toMatch(/^Your signature does not verify: sign exactly the statement/);
  expect(await recordCount(taskId)).toBe(0);

  // A signature for another run of this task id (a workflow started again under it) does not verify for this one.
  const ofOtherRun = await carolSigns(carol, taskId, 'approve', { run: 'another-run' });
  expect(textOf(await answer(carol, taskId, 'approve', { signature: ofOtherRun }))).toMatch(/^Your signature does not verify/);
  // A challenge the server never issued for her is refused; a statement without a run (version 1) too.
  const forged = await carolSigns(carol, taskId, 'approve', { challenge: 'eyJuIjoiMSJ9.AAAA' });
  expect(textOf(await answer(carol, taskId, 'approve', { signature: forged }))).toMatch(/its challenge is not one this server issued/);
  expect(await recordCount(taskId)).toBe(0);

  const signature = await carolSigns(carol, taskId, 'approve');
  expect(signature).toMatchObject({ v: 2, challenge: expect.any(String) });
  expect(textOf(await answer(carol, taskId, 'approve', { signature }))).toMatch(/is recorded\.$/);
  const result = await outcomeOf(sam, taskId);
  expect(result.outcome).toBe('approved');
  expect(await effects(taskId)).toBe(1);

  const verified = approvals(['verify', taskId, '--directory', directoryFile, '--json']);
  expect(verified.code).toBe(0);
  const report = JSON.parse(verified.out) as {
    approverKeysChecked: boolean;
    questions: { standing: string; approvers: { person: string; signedWith?: string }[] }[];
  };
  expect(report.approverKeysChecked).toBe(true);
  expect(report.questions[0]).toMatchObject({ standing: 'approved', approvers: [{ person: 'carol', signedWith: signature.keyId }] });
  const human = approvals(['verify', taskId, '--directory', directoryFile]);
  expect(human.out).toContain(`signed by carol with their own key ${String(signature.keyId)}`);
}, 180_000);

test('an approval a bridge signed alone (the decision key without the directory) is refused before the effect and in the receipt', async () => {
  const [sam, carol] = await Promise.all([as(people.sam, 1), as(people.carol, 1)]);
  const taskId = await submit(sam);
  await awaitInInbox(carol, taskId);
  expect(textOf(await answer(carol, taskId, 'approve'))).toMatch(/is recorded\.$/);
  const result = await outcomeOf(sam, taskId);
  expect(result.outcome).toBe('unapproved');
  expect(result.reason).toMatch(/carol must sign approvals with their own key, and it bears the bridge's signature alone/);
  expect(await effects(taskId)).toBe(0);

  const withDirectory = approvals(['verify', taskId, '--directory', directoryFile]);
  expect(withDirectory.code).toBe(3);
  expect(withDirectory.out).toMatch(/NOT signed by carol, who must sign/);
  expect(withDirectory.out).toMatch(/Verdict: not approved: carol must sign approvals with their own key/);
  // Without the directory the chain checks out and her signature cannot be asked for: the report says it was not checked.
  const without = approvals(['verify', taskId], undefined);
  expect(without.out).toContain("Approvers' own signatures not checked: give --directory FILE");
}, 180_000);

test('an approval by someone the directory does not list, recorded by a bridge without it, is refused before the effect and in the verdict', async () => {
  const [sam, zed] = await Promise.all([as(people.sam, 1), as(people.zed, 1)]);
  const taskId = await submit(sam);
  await awaitInInbox(zed, taskId);
  // The bridge without the directory takes his token's word for the role, and records his approval under its key.
  expect(textOf(await answer(zed, taskId, 'approve'))).toMatch(/is recorded\.$/);
  const result = await outcomeOf(sam, taskId);
  expect(result.outcome).toBe('unapproved');
  expect(result.reason).toMatch(
    /the approval by zed-\w+ \(principal [^)]+\) does not count: the question did not address them \(it asks role ap-approver/,
  );
  expect(await effects(taskId)).toBe(0);

  const withDirectory = approvals(['verify', taskId, '--directory', directoryFile]);
  expect(withDirectory.code).toBe(3);
  expect(withDirectory.out).toMatch(
    /Verdict: not approved: the approvals on record are by zed-\w+ \(principal [^)]+\), whom the approvers directory does not list/,
  );
}, 180_000);

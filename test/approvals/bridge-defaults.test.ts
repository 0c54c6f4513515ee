/**
 * A bridge built in code from the environment (`createBridge({ ...bridgeOptionsFromEnv(), … })`) gets the approvals
 * `serve` has: decision records signed into the decision store, and who is who from MCP_APPROVERS_DIRECTORY. A
 * directory of one's own (`approvals.people`) keeps the records; only `approvals.decisions: null` turns them off.
 * `createBridge` itself reads nothing from the environment.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { decisionStoreFromEnv } from '../../src/records/store';
import { createBridge, type Bridge } from '../../src/mcp/bridge';
import { bridgeOptionsFromEnv, type CreateBridgeOptions } from '../../src/mcp/bridge/bridge-options';
import { pollUntil } from '../../src/util/wait';
import { FAST_TUNING } from '../helpers/mcp';
import { testTemporalConfig } from '../helpers/temporal';
import { startStack } from '../helpers/test-stack';
import { FIXTURES, startDecisionTask, type FixtureStack } from '../fixtures/stack';
import { TOOLS_WITH_FIXTURES } from '../fixtures/tools';

const REQUESTER = 'bridge-defaults-requester';
let stack: FixtureStack;
let dir: string;
const bridges: Bridge[] = [];

beforeAll(async () => {
  stack = await startStack({ name: 'bridge-defaults', app: FIXTURES });
  dir = mkdtempSync(path.join(os.tmpdir(), 'bridge-defaults-'));
}, 60_000);

afterAll(async () => {
  await Promise.all(bridges.map((bridge) => bridge.close()));
  await stack?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A bridge as a team builds it in code: no approvals options but those given; every request acts for `principal`. */
async function bridgeOf(principal: string, roles: string[], approvals?: Partial<CreateBridgeOptions['approvals']>): Promise<McpClient> {
  const fromEnv = bridgeOptionsFromEnv();
  const bridge = await createBridge({
    ...fromEnv,
    temporal: testTemporalConfig(stack.taskQueue),
    client: stack.temporal,
    tuning: FAST_TUNING,
    tools: TOOLS_WITH_FIXTURES,
    principalOf: () => principal,
    rolesOf: () => roles,
    approvals: { ...fromEnv.approvals, ...approvals },
  });
  bridges.push(bridge);
  const client = new McpClient({ name: `bridge-defaults-${principal}`, version: '1.0.0' }, { capabilities: { tasks: {} } });
  await stack.connect(client, bridge);
  return client;
}

/** Asks for a decision one spend-approver makes, has `approver` approve it once it is open; returns the task id. */
async function approvedDecision(requester: McpClient, approver: McpClient): Promise<string> {
  const taskId = await startDecisionTask(requester, { subject: 'defaults', roles: ['spend-approver'] });
  const answered = await pollUntil(
    async () => {
      const result = (await approver.callTool({
        name: 'approvals_answer',
        arguments: { taskId, key: 'approval', action: 'accept', content: { decision: 'approve' } },
      })) as CallToolResult;
      return result.isError ? undefined : result;
    },
    { timeoutMs: 30_000, intervalMs: 200, what: `the approval of ${taskId} to be taken` },
  );
  expect(answered.isError).toBeFalsy();
  return taskId;
}

/** The records the bridge's default store (MCP_DECISION_STORE of this run) holds for `taskId`. */
async function recordsOf(taskId: string) {
  const store = decisionStoreFromEnv();
  try {
    return await store.records(taskId);
  } finally {
    await store.close();
  }
}

test('createBridge reads MCP_APPROVERS_DIRECTORY as serve does: the record names the person behind the principal', async () => {
  const file = path.join(dir, 'approvers.json');
  writeFileSync(file, JSON.stringify({ people: [{ name: 'carol', principals: ['carol-laptop'], roles: ['spend-approver'] }] }));
  const before = process.env.MCP_APPROVERS_DIRECTORY;
  process.env.MCP_APPROVERS_DIRECTORY = file;
  let approver: McpClient;
  try {
    approver = await bridgeOf('carol-laptop', ['spend-approver']);
  } finally {
    if (before === undefined) delete process.env.MCP_APPROVERS_DIRECTORY;
    else process.env.MCP_APPROVERS_DIRECTORY = before;
  }
  const taskId = await approvedDecision(await bridgeOf(REQUESTER, []), approver);
  const records = await recordsOf(taskId);
  expect(records.map((record) => ({ decision: record.body.decision, person: record.body.by.person, signed: !!record.signature }))).toEqual([
    { decision: 'approve', person: 'carol', signed: true },
    { decision: 'close', person: 'carol', signed: true },
  ]);
});

test("a directory of one's own (approvals.people) keeps the decision records on", async () => {
  const people = { personOf: (principal: string) => `person-of-${principal}`, rolesOf: () => undefined };
  const approver = await bridgeOf('erin', ['spend-approver'], { people });
  const taskId = await approvedDecision(await bridgeOf(REQUESTER, []), approver);
  const records = await recordsOf(taskId);
  expect(records.map((record) => ({ person: record.body.by.person, signed: !!record.signature }))).toEqual([
    { person: 'person-of-erin', signed: true },
    { person: 'person-of-erin', signed: true },
  ]);
});

test('approvals.decisions: null turns the records off, and nothing is recorded', async () => {
  const approver = await bridgeOf('frank', ['spend-approver'], { decisions: null });
  const taskId = await approvedDecision(await bridgeOf(REQUESTER, []), approver);
  expect(await recordsOf(taskId)).toEqual([]);
});

test('createBridge reads nothing from the environment: without what it needs it says where to get it', async () => {
  const { marker: _marker, ...withoutMarker } = bridgeOptionsFromEnv();
  await expect(createBridge(withoutMarker as CreateBridgeOptions)).rejects.toThrow(
    'createBridge needs options.marker; bridgeOptionsFromEnv() reads every option from the environment, as serve does',
  );
});

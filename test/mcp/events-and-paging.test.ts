/**
 * Waiting by Temporal's events, tasks/list paging with the visibility store's own tokens, and RPC deadlines when
 * Temporal is gone. Behaviour only: timings are the benchmark's business.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { ErrorCode, McpError, type Task } from '@modelcontextprotocol/sdk/types.js';
import { Client, Connection } from '@temporalio/client';
import type { Bridge } from '../../src/mcp/bridge';
import { freePort, temporalDev } from '../helpers/dev-server';
import { APPROVE, errorCodeOf, FAST_TUNING, startBridge, taskResult } from '../helpers/mcp';
import { startStack } from '../helpers/test-stack';
import { FIXTURES, startAskTask, type FixtureStack } from '../fixtures/stack';
import { eventually } from '../helpers/temporal';

let stack: FixtureStack;

beforeAll(async () => {
  stack = await startStack({ name: 'events', app: FIXTURES });
});

afterEach(() => stack.closeClients());

afterAll(() => stack?.stop());

const connect = (bridge: Bridge) => stack.person('events-test', { answer: () => APPROVE, bridge });

describe('waiting by events', () => {
  test('with a poll interval of ten minutes, tasks/result still asks the question and returns the result: it waits on history events', async () => {
    const slow = { ...FAST_TUNING, core: { ...FAST_TUNING.core, pollIntervalMs: 600_000, reads: { keepMs: 500 } } };
    const bridge = await stack.addBridge({ tuning: slow });
    const { client, user } = await connect(bridge);
    const task = await startAskTask(client);
    const result = await taskResult(client, task.taskId, 30_000);
    expect(result.structuredContent).toMatchObject({ outcome: 'approved' });
    expect(user.asked).toHaveLength(1);
    // No watch outlives the wait that needed it and the reads that keep it.
    await eventually(async () => (bridge.core.watchStats().watching === 0 ? true : undefined), 'every history watch ended');
  });

  test('one history watch per task is shared by every request waiting on it', async () => {
    const briefReads = { ...FAST_TUNING, core: { ...FAST_TUNING.core, reads: { keepMs: 500 } } };
    const bridge = await stack.addBridge({ tuning: briefReads });
    const { client } = await connect(bridge);
    const task = await startAskTask(client);
    const view = await bridge.core.get(task.taskId, bridge.localPrincipal);
    const waits = new AbortController();
    const pending = [1, 2, 3].map(() => bridge.core.changed({ ...view, historyLength: Number.MAX_SAFE_INTEGER }, 60_000, waits.signal));
    expect(bridge.core.watchStats().watching).toBe(1);
    waits.abort();
    await Promise.all(pending);
    await eventually(async () => (bridge.core.watchStats().watching === 0 ? true : undefined), 'the watch ended with its waiters');
    await client.experimental.tasks.cancelTask(task.taskId);
  });
});

describe('tasks/list pages with the visibility store', () => {
  test('pages cover every task once, without duplicates or gaps, while more tasks are being created', async () => {
    const principal = `pager-${randomUUID().slice(0, 8)}`;
    const paged = { ...FAST_TUNING, core: { ...FAST_TUNING.core, pageSize: 7 } };
    const bridge = await stack.addBridge({ taskQueue: `${stack.taskQueue}-idle`, principal, tuning: paged });
    const { client } = await connect(bridge);
    const created: string[] = [];
    for (let index = 0; index < 24; index++) created.push((await startAskTask(client)).taskId);

    const walk = async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.experimental.tasks.listTasks(cursor);
        expect(page.tasks.length).toBeLessThanOrEqual(7);
        seen.push(...page.tasks.map((task: Task) => task.taskId));
        cursor = page.nextCursor;
      } while (cursor);
      return seen;
    };
    // Visibility is eventually consistent: wait until the store lists them all.
    await eventually(async () => ((await walk()).length >= created.length ? true : undefined), 'all tasks listed', 30_000);

    let more = 0;
    const creating = (async () => {
      for (; more < 6; more++) await startAskTask(client);
    })();
    const seen = await walk();
    await creating;
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining(created));
  });

  test('a cursor is bound to its principal: another principal, or a made-up one, gets -32602', async () => {
    const paged = { ...FAST_TUNING, core: { ...FAST_TUNING.core, pageSize: 2 } };
    const alice = await stack.addBridge({
      taskQueue: `${stack.taskQueue}-idle`,
      principal: `alice-${randomUUID()}`,
      tuning: paged,
    });
    const bob = await stack.addBridge({ taskQueue: `${stack.taskQueue}-idle`, principal: `bob-${randomUUID()}`, tuning: paged });
    const { client: aliceClient } = await connect(alice);
    const { client: bobClient } = await connect(bob);
    for (let index = 0; index < 3; index++) await startAskTask(aliceClient);
    // Visibility catches up: wait for a cursor whose page has tasks on it.
    const cursor = await eventually(async () => {
      const { nextCursor } = await aliceClient.experimental.tasks.listTasks();
      if (!nextCursor) return undefined;
      return (await aliceClient.experimental.tasks.listTasks(nextCursor)).tasks.length > 0 ? nextCursor : undefined;
    }, 'a second page with tasks');
    expect(await errorCodeOf(bobClient.experimental.tasks.listTasks(cursor))).toBe(ErrorCode.InvalidParams);
    for (const forged of ['x', Buffer.from('{"v":1,"b":"zz","t":"AA"}').toString('base64url'), 'A'.repeat(5000)]) {
      expect(await errorCodeOf(aliceClient.experimental.tasks.listTasks(forged))).toBe(ErrorCode.InvalidParams);
    }
  });
});

describe('Temporal down', () => {
  test('tasks/get and tasks/list answer a retryable error within the RPC deadline', async () => {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-down-'));
    const port = await freePort();
    await temporalDev('start', port, stateDir);
    const connection = await Connection.connect({ address: `127.0.0.1:${port}` });
    let bridge: Bridge | undefined;
    try {
      const client = new Client({ connection });
      const tuning = { ...FAST_TUNING, core: { ...FAST_TUNING.core, rpcTimeoutMs: 2000 } };
      bridge = await startBridge({ client, taskQueue: `${stack.taskQueue}-down`, tuning, tools: FIXTURES.tools });
      const { client: mcp } = await connect(bridge);
      const task = await startAskTask(mcp);
      await temporalDev('stop', port, stateDir);
      for (const call of [mcp.experimental.tasks.getTask(task.taskId), mcp.experimental.tasks.listTasks()] as Promise<unknown>[]) {
        const error = await call.then(
          () => undefined,
          (failure: unknown) => failure,
        );
        expect(error).toBeInstanceOf(McpError);
        expect((error as McpError).code).toBe(ErrorCode.InternalError);
        expect((error as McpError).data).toMatchObject({ retryable: true });
        expect((error as McpError).message).toMatch(/Temporal is unavailable/);
      }
    } finally {
      await stack.closeClients().catch(() => undefined);
      await bridge?.close();
      await temporalDev('stop', port, stateDir).catch(() => undefined);
      await connection.close();
    }
  }, 120_000);
});

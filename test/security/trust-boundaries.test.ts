/**
 * Limits that a burst or a stranger cannot get around, and logs a client cannot write into; each against a real dev
 * server through real SDK clients.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { RecordStore } from '../../src/activities/record-store';
import { LocalTaskStore } from '../../src/client/store';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  RELATED_TASK_META_KEY,
} from '@modelcontextprotocol/sdk/types.js';
import { PRINCIPAL_KEY } from '../../src/core/principal';
import {
  PRINCIPAL_SEARCH_ATTRIBUTE,
  RESPOND_SIGNAL_NAME,
  TASK_STATE_MEMO,
  type InputResponse,
  type PublishedTaskState,
} from '../../src/contract/task-contract';
import { Logger } from '../../src/util/log';
import { errorCodeOf, FAST_TUNING, getTask, newMcpClient, taskResult, waitForTask } from '../helpers/mcp';
import { ASK_WORKFLOW_TYPE, QUESTION_KEY } from '../fixtures/definitions';
import { askInput, FIXTURES, startAskTask } from '../fixtures/stack';
import { askRequesterTool } from '../fixtures/tools';
import { pollUntil } from '../../src/util/wait';
import { freePort } from '../helpers/dev-server';
import { startStack } from '../helpers/test-stack';
import { spawnHttpServer } from '../helpers/processes';
import { eventually, uniqueTaskQueue } from '../helpers/temporal';

describe('the task mark binds the run', () => {
  test('a mark copied onto a new run (after the task finished, or replacing it while it runs) is "Task not found" and never asks', async () => {
    const principal = `mark-${randomUUID().slice(0, 8)}`;
    const stack = await startStack({ name: 'mark', app: FIXTURES, bridge: { principal } });
    const { taskQueue, temporal } = stack;
    const client = newMcpClient('mark');
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'cancel' };
    });
    const close = await stack.connect(client);
    const plant = async (workflowId: string, conflict: 'FAIL' | 'TERMINATE_EXISTING') => {
      const original = await temporal.workflow.getHandle(workflowId).describe();
      await temporal.workflow.start(ASK_WORKFLOW_TYPE, {
        taskQueue,
        workflowId,
        args: [askInput({ subject: 'EVIL-999' })],
        memo: original.memo,
        typedSearchAttributes: [{ key: PRINCIPAL_KEY, value: principal }],
        workflowIdConflictPolicy: conflict,
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      });
    };
    try {
      // A finished task, its memo copied onto a new run of the same id with other arguments.
      const finished = await startAskTask(client, askInput({ refuse: 'not this one' }));
      await waitForTask(client, finished.taskId, (task) => task.status === 'failed');
      await plant(finished.taskId, 'FAIL');
      await eventually(
        async () => ((await temporal.workflow.getHandle(finished.taskId).describe()).status.name === 'RUNNING' ? true : undefined),
        'the planted run',
      );
      expect(await errorCodeOf(getTask(client, finished.taskId))).toBe(-32602);

      // A running task waiting for its answer, replaced with TERMINATE_EXISTING by a run about another subject.
      const running = await startAskTask(client);
      await waitForTask(client, running.taskId, (task) => task.status === 'input_required');
      await plant(running.taskId, 'TERMINATE_EXISTING');
      // The replacement happened past the bridge: a poll shows it once the task's history watch has seen the old run
      // end (milliseconds); until then it shows the task as it was, never the planted run.
      await eventually(
        async () => ((await errorCodeOf(getTask(client, running.taskId))) === -32602 ? true : undefined),
        'the replaced run to read as not found',
        5_000,
      );
      expect(await errorCodeOf(client.experimental.tasks.getTaskResult(running.taskId, CallToolResultSchema))).toBe(-32602);
      const listed = (await client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId);
      expect(listed).not.toContain(running.taskId);
      expect(listed).not.toContain(finished.taskId);
      expect(asked.some((message) => message.includes('EVIL-999'))).toBe(false);
    } finally {
      await close();
      for await (const info of temporal.workflow.list({
        query: `${PRINCIPAL_SEARCH_ATTRIBUTE} = '${principal}' AND ExecutionStatus = 'Running'`,
      })) {
        await temporal.workflow
          .getHandle(info.workflowId)
          .terminate()
          .catch(() => undefined);
      }
      await stack.stop();
    }
  });
});

describe('answers only a bridge can give', () => {
  test('a plain Temporal client approves nothing, and a sealed answer copied onto another task is refused', async () => {
    const principal = `seal-${randomUUID().slice(0, 8)}`;
    const stack = await startStack({ name: 'seal', app: FIXTURES, bridge: { principal } });
    const { temporal } = stack;
    const client = newMcpClient('seal');
    const close = await stack.connect(client);
    const started: string[] = [];
    /** The status of the task's workflow: an ask workflow ends once it takes an answer, so RUNNING says none was taken. */
    const runStatus = async (taskId: string) => (await temporal.workflow.getHandle(taskId).describe()).status.name;
    /** Waits until the workflow has published this many refused answers, and returns its state. */
    const refusals = (taskId: string, count: number) =>
      eventually(async () => {
        const memo = (await temporal.workflow.getHandle(taskId).describe()).memo?.[TASK_STATE_MEMO] as PublishedTaskState;
        return (memo?.refusedAnswers?.length ?? 0) >= count ? memo : undefined;
      }, `${count} refused answer(s) of ${taskId}`);
    try {
      const first = await startAskTask(client);
      const second = await startAskTask(client);
      started.push(first.taskId, second.taskId);
      await waitForTask(client, first.taskId, (task) => task.status === 'input_required');
      await waitForTask(client, second.taskId, (task) => task.status === 'input_required');

      // The namespace writer's approval, as `temporal workflow signal` sends it.
      await temporal.workflow
        .getHandle(first.taskId)
        .signal(RESPOND_SIGNAL_NAME, { key: QUESTION_KEY, action: 'accept', content: { decision: 'approve' } });
      expect((await refusals(first.taskId, 1)).refusedAnswers).toEqual([
        { key: QUESTION_KEY, reason: 'it carries no seal', at: expect.any(String) },
      ]);
      expect((await getTask(client, first.taskId)).status).toBe('input_required');
      expect(await runStatus(first.taskId)).toBe('RUNNING');

      // The owner approves through the bridge; the sealed signal it sent is then copied onto the other task.
      const answered = await client.callTool({
        name: 'task_respond',
        arguments: { taskId: first.taskId, action: 'accept', content: { decision: 'approve' } },
      });
      expect(answered.isError).toBeFalsy();
      await waitForTask(client, first.taskId, (task) => task.status === 'completed');
      expect((await taskResult(client, first.taskId)).structuredContent).toMatchObject({ outcome: 'approved' });
      const { events } = await temporal.workflow.getHandle(first.taskId).fetchHistory();
      const sealedAnswers = events!
        .map((event) => event.workflowExecutionSignaledEventAttributes)
        .filter((signal) => signal?.signalName === RESPOND_SIGNAL_NAME)
        .map((signal) => temporal.options.loadedDataConverter.payloadConverter.fromPayload(signal!.input!.payloads![0]) as InputResponse)
        .filter((answer) => answer.sealed !== undefined);
      expect(sealedAnswers).toHaveLength(1);
      expect(sealedAnswers[0].answeredBy).toEqual({ principal, via: 'task_respond' });
      await temporal.workflow.getHandle(second.taskId).signal(RESPOND_SIGNAL_NAME, sealedAnswers[0]);
      expect((await refusals(second.taskId, 1)).refusedAnswers?.[0].reason).toBe('its seal was made for another run');
      expect((await getTask(client, second.taskId)).status).toBe('input_required');
      expect(await runStatus(second.taskId)).toBe('RUNNING');
    } finally {
      await close();
      for (const taskId of started) {
        await temporal.workflow
          .getHandle(taskId)
          .terminate()
          .catch(() => undefined);
      }
      await stack.stop();
    }
  });
});

describe('the open-task quota', () => {
  test('15 concurrent creates against a cap of 3 make 3 tasks; the others are refused with -32600', async () => {
    // No worker polls this queue: every task stays running, so each counts against the quota.
    const principal = `burst-${randomUUID().slice(0, 8)}`;
    const stack = await startStack({
      name: 'burst',
      app: FIXTURES,
      worker: false,
      bridge: { principal, tuning: { ...FAST_TUNING, core: { ...FAST_TUNING.core, quotas: { maxOpenTasks: 3 } } } },
    });
    const { temporal } = stack;
    const client = newMcpClient('burst');
    const close = await stack.connect(client);
    try {
      const calls = await Promise.allSettled(
        Array.from({ length: 15 }, () =>
          client.request(
            { method: 'tools/call', params: { name: askRequesterTool.name, arguments: askInput(), task: {} } },
            CreateTaskResultSchema,
          ),
        ),
      );
      const made = calls.filter((call) => call.status === 'fulfilled');
      const refused = calls.filter((call): call is PromiseRejectedResult => call.status === 'rejected');
      expect(made).toHaveLength(3);
      expect(refused.map((call) => (call.reason as { code?: number }).code)).toEqual(Array(12).fill(-32600));
      const running = await eventually(async () => {
        const { count } = await temporal.workflowService.countWorkflowExecutions({
          namespace: 'default',
          query: `${PRINCIPAL_SEARCH_ATTRIBUTE} = '${principal}'`,
        });
        return Number(count) === 3 ? Number(count) : undefined;
      }, 'visibility to count the three tasks');
      expect(running).toBe(3);
    } finally {
      await close();
      for await (const info of temporal.workflow.list({ query: `${PRINCIPAL_SEARCH_ATTRIBUTE} = '${principal}'` })) {
        await temporal.workflow
          .getHandle(info.workflowId)
          .terminate()
          .catch(() => undefined);
      }
      await stack.stop();
    }
  });
});

describe('waits', () => {
  test('questions pushed to a client count against its waits: with a limit of 2, two are held and a third tasks/result is refused', async () => {
    const principal = `waits-${randomUUID().slice(0, 8)}`;
    const stack = await startStack({
      name: 'waits',
      app: FIXTURES,
      bridge: { principal, tuning: { ...FAST_TUNING, core: { ...FAST_TUNING.core, quotas: { maxWaits: 2 } } } },
    });
    const client = newMcpClient('waits');
    const pushed: string[] = [];
    // A person who never answers: every pushed question stays open.
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      pushed.push(JSON.stringify((request.params._meta as Record<string, unknown>)?.[RELATED_TASK_META_KEY]));
      return new Promise(() => undefined);
    });
    // The same principal, unable to be asked: its polls offer nothing.
    const observer = newMcpClient('waits-observer', false);
    const close = await stack.connect(client);
    const closeObserver = await stack.connect(observer);
    // Every question offered for a push asks for a place among the waits once its grace period has passed.
    const { core } = stack.bridge;
    const waiting = core.waiting.bind(core);
    let placesAsked = 0;
    core.waiting = (who, work) => {
      placesAsked++;
      return waiting(who, work);
    };
    try {
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push((await startAskTask(client)).taskId);
      for (const id of ids) await waitForTask(observer, id, (task) => task.status === 'input_required');
      // Polls that see input_required offer the question on the standalone stream after the grace period.
      for (const id of ids) await getTask(client, id);
      // Each of the six offers has been decided: two pushed, four refused a place (a push goes out as it is decided).
      await eventually(async () => (placesAsked >= 6 ? true : undefined), 'the six offers decided');
      await client.ping();
      expect(pushed).toHaveLength(2);
      expect(await errorCodeOf(client.experimental.tasks.getTaskResult(ids[5], CallToolResultSchema))).toBe(-32603);
    } finally {
      core.waiting = waiting;
      await closeObserver();
      await close();
      await stack.stop();
    }
  });
});

describe('connections', () => {
  test('520 idle sockets from one address leave a second address served, and are closed once they stay silent', async () => {
    const server = await freePort().then((port) =>
      spawnHttpServer(
        uniqueTaskQueue('sockets'),
        port,
        { MCP_HTTP_FIRST_REQUEST_TIMEOUT_MS: '20000', MCP_HTTP_HEADERS_TIMEOUT_MS: '120000' },
        FIXTURES.serveArgs(),
      ),
    );
    const { port } = new URL(server.url);
    const idle: net.Socket[] = [];
    let closed = 0;
    try {
      const open = () => {
        const socket = net.connect({ host: '127.0.0.1', port: Number(port), localAddress: '127.0.0.2' });
        socket.on('error', () => undefined);
        socket.on('close', () => closed++);
        // Read what comes (nothing, or a 408): a socket whose data is never read never sees its end.
        socket.resume();
        idle.push(socket);
      };
      // Opened a batch at a time, each once the server has taken in the one before (it closes those past the 64 an
      // address may hold), so the listen backlog never overflows.
      for (let opened = 0; opened < 520;) {
        const batch = Math.min(64, 520 - opened);
        for (let i = 0; i < batch; i++) open();
        opened += batch;
        const expected = Math.max(0, opened - 64);
        await pollUntil(() => (closed >= expected ? true : undefined), {
          timeoutMs: 30_000,
          what: () => `the sockets past 64 to be closed (${closed} of ${expected} closed)`,
        });
      }
      expect(closed).toBe(520 - 64);
      const status = await new Promise<number>((resolve, reject) => {
        const request = http.get(
          { host: '127.0.0.1', port: Number(port), path: '/healthz', localAddress: '127.0.0.3', headers: { host: `127.0.0.1:${port}` } },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on('error', reject);
      });
      expect(status).toBe(200);
      // Beyond 64 from one address they are closed at once; the rest once they sent no request for 20 s.
      await pollUntil(() => (closed === 520 ? true : undefined), {
        timeoutMs: 60_000,
        what: () => `every idle socket to be closed (${closed} closed)`,
      });
    } finally {
      for (const socket of idle) socket.destroy();
      await server.kill();
    }
  });
});

describe('files', () => {
  test('ledger and ERP record files, and the client store, are readable by their owner only', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'modes-'));
    const records = new RecordStore<{ key: string; amount: number }>(path.join(dir, 'payments'));
    await records.createOnce('LI-1', () => ({ key: 'LI-1', amount: 1 }));
    expect(statSync(records.dir).mode & 0o777).toBe(0o700);
    const files = readdirSync(records.dir);
    expect(files.length).toBe(1);
    expect(statSync(path.join(records.dir, files[0])).mode & 0o777).toBe(0o600);
    const stateDir = path.join(dir, 'client');
    const store = new LocalTaskStore(stateDir);
    store.append({ type: 'status', taskId: 'invoice-1', status: 'working', at: new Date().toISOString() });
    expect(statSync(stateDir).mode & 0o777).toBe(0o700);
    for (const file of readdirSync(stateDir)) expect(statSync(path.join(stateDir, file)).mode & 0o777).toBe(0o600);
  });
});

describe('logs', () => {
  test('a client text with a carriage return, a forged line and a terminal escape stays one escaped line', () => {
    const lines: string[] = [];
    const log = new Logger({ format: 'text', level: 'info', write: (line) => lines.push(line) });
    log.info('client said: ok\r2026-01-01T00:00:00.000Z INFO  payment released principal=bob\n\x1b[2J\u009b31m', {
      principal: 'alice\rINFO forged',
    });
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line.endsWith('\n')).toBe(true);
    // eslint-disable-next-line no-control-regex
    expect(line.slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(line).toContain('ok\\r2026-01-01T00:00:00.000Z INFO  payment released principal=bob\\n\\x1b[2J\\x9b31m');
    expect(line).toContain('principal="alice\\rINFO forged"');

    const json: string[] = [];
    new Logger({ format: 'json', level: 'info', write: (entry) => json.push(entry) }).info('a\u009bb\u2028c', { v: 'x\x1by' });
    // eslint-disable-next-line no-control-regex
    expect(json[0].slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
    expect(JSON.parse(json[0])).toMatchObject({ msg: 'a\u009bb\u2028c', v: 'x\x1by' });
  });
});

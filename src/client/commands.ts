/**
 * The commands: call, tasks, resume, cancel.
 */
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { randomUUID } from 'node:crypto';
import { type CallToolResult, ErrorCode, McpError, type Task } from '@modelcontextprotocol/sdk/types.js';
import { EXIT, Options, UsageError, parseToolArgs } from './args';
import { Session, Target, UnreachableError, plainMessage, targetName } from './connection';
import { Runner } from './follow';
import { printable } from './printable';
import type { StoredTask } from './store';

/** `call <tool>`: runs the tool, as a task when it can, and follows it to its end. */
export async function call(runner: Runner, tool: string | undefined, options: Options): Promise<number> {
  if (!tool) throw new UsageError('call needs a tool name, e.g. call process_invoice --args @invoice.json');
  const args = parseToolArgs(options.args);
  const target = runner.target();
  const tools = await runner.retrying(target, 'tools/list', async (session) => (await session.client.listTools()).tools);
  const declared = tools.find((candidate) => candidate.name === tool);
  if (!declared) throw new UsageError(`the server has no tool "${tool}"; it has: ${tools.map((t) => t.name).join(', ')}`);
  const taskSupport = declared.execution?.taskSupport ?? 'forbidden';
  if (taskSupport === 'forbidden') {
    const once = (session: Session) =>
      session.client.callTool({ name: tool, arguments: args }, undefined, { timeout: 600_000 }) as Promise<CallToolResult>;
    // Only a tool that says repeating it is harmless is sent again after a lost connection.
    const repeatable = declared.annotations?.idempotentHint === true || declared.annotations?.readOnlyHint === true;
    const result = repeatable
      ? await runner.retrying(target, `tools/call ${tool}`, once)
      : await runner.connect(target).then(async (session) => {
          try {
            return await once(session);
          } finally {
            await session.close();
          }
        });
    return runner.report({ taskId: '-', status: 'completed', result });
  }
  const server = targetName(target);
  // The same call run again (its first run was killed, say) adopts the earlier call's task rather than making a second.
  const earlier = options.new || options.idempotencyKey !== undefined ? undefined : runner.store.openCall(server, tool, args);
  let key = options.idempotencyKey;
  if (earlier?.call.taskId !== undefined) {
    const adopted = await followAdopted(runner, target, tool, earlier.call.taskId, earlier.task);
    if (adopted !== undefined) return adopted;
  } else if (earlier) {
    runner.progress.note(
      `adopting the call of ${tool} with the same arguments sent at ${earlier.call.at}, whose answer never came: sending it again ` +
        `with its idempotency key ${earlier.call.key} gets the task it started, if it started one; --new starts another task`,
    );
    key = earlier.call.key;
  }
  if (key === undefined || key === options.idempotencyKey) {
    key ??= randomUUID();
    // The intent is on disk before the call is sent: a crash before the answer leaves a call that resume, or the same
    // call run again, can adopt. (An adopted call's intent is there already.)
    runner.store.append({ type: 'intent', key, server, tool, arguments: args, at: new Date().toISOString() });
  }
  const { task, replayed } = await runner.createTask(target, { key, tool, arguments: args }, options.ttl);
  runner.progress.note(
    `task ${task.taskId} ${replayed ? 'found again (an earlier call with this idempotency key made it)' : 'created'} ` +
      `(ttl ${task.ttl === null ? 'unlimited' : `${task.ttl} ms`})`,
  );
  return runner.report(await runner.follow(task.taskId, target));
}

/**
 * Follows the task of an earlier call with the same tool and arguments, saying so first. Resolves to the exit code, or
 * to undefined when the server no longer knows the task (it is then marked gone in the store, and a new call is due).
 */
async function followAdopted(
  runner: Runner,
  target: Target,
  tool: string,
  taskId: string,
  stored: StoredTask | undefined,
): Promise<number | undefined> {
  runner.progress.note(
    `adopting task ${taskId}, started at ${stored?.createdAt ?? 'an unknown time'} by an earlier call of ${tool} with the same ` +
      `arguments (last seen ${stored?.status ?? 'just created'}); --new starts another task`,
  );
  try {
    return runner.report(await runner.follow(taskId, target));
  } catch (error) {
    if (!(error instanceof McpError && error.code === ErrorCode.InvalidParams)) throw error;
    const reason = plainMessage(error);
    runner.store.append({ type: 'gone', taskId, reason, at: new Date().toISOString() });
    runner.progress.note(`task ${taskId} is gone from the server (${reason}); starting a new task`);
    return undefined;
  }
}

/** Every task of the caller's on `target`, all pages of tasks/list (re-read after a lost connection). */
function serverTasks(runner: Runner, target: Target): Promise<Task[]> {
  return runner.retrying(target, 'tasks/list', async (session) => {
    const tasks: Task[] = [];
    let cursor: string | undefined;
    do {
      const page = await session.client.experimental.tasks.listTasks(cursor);
      tasks.push(...page.tasks);
      cursor = page.nextCursor;
    } while (cursor);
    return tasks;
  });
}

/** `tasks`: the caller's tasks from the server, merged with the local store. */
export async function listTasks(runner: Runner, options: Options): Promise<number> {
  const target = runner.target();
  const rows = new Map<string, { taskId: string; status: string; tool: string; createdAt: string; message: string; server: string }>();
  for (const stored of runner.store.tasks()) {
    rows.set(stored.taskId, {
      taskId: stored.taskId,
      status: stored.gone !== undefined ? 'gone' : (stored.status ?? 'unknown'),
      tool: stored.tool,
      createdAt: stored.createdAt,
      message: stored.gone ?? stored.statusMessage ?? '',
      server: stored.server,
    });
  }
  // A call whose answer never came: its task, if the server started one, is adopted by resume.
  for (const call of runner.store.unfinishedCalls()) {
    rows.set(`call:${call.key}`, {
      taskId: '-',
      status: 'unanswered',
      tool: call.tool,
      createdAt: call.at,
      message: `call sent with idempotency key ${call.key} got no answer; resume adopts its task if the server started one`,
      server: call.server,
    });
  }
  let unreachable: string | undefined;
  try {
    for (const task of await serverTasks(runner, target)) {
      const known = rows.get(task.taskId);
      rows.set(task.taskId, {
        taskId: task.taskId,
        status: task.status,
        tool: known?.tool ?? '',
        createdAt: task.createdAt,
        message: task.statusMessage ?? '',
        server: targetName(target),
      });
    }
  } catch (error) {
    if (!(error instanceof UnreachableError)) throw error;
    unreachable = (error as Error).message;
  }
  const sorted = [...rows.values()].sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
  if (options.json) process.stdout.write(`${JSON.stringify(sorted)}\n`);
  else if (sorted.length === 0) process.stdout.write('no tasks\n');
  else {
    for (const row of sorted) {
      process.stdout.write(`${printable(`${row.taskId}  ${row.status.padEnd(14)}  ${row.createdAt}  ${row.tool}  ${row.message}`)}\n`);
    }
  }
  if (unreachable) {
    runner.progress.note(`${unreachable}; showing the local store only`);
    return EXIT.unreachable;
  }
  return EXIT.completed;
}

/** How long after sending a call "no task for this key" may still mean "its start is under way". */
const ADOPT_GRACE_MS = 120_000;

/**
 * Finds the tasks of calls that never got their answer (the client or the server died in between) by asking the
 * server for the task of each call's idempotency key, without starting anything. Returns the adopted task ids.
 */
async function adoptUnfinishedCalls(runner: Runner): Promise<Map<string, Target>> {
  const adopted = new Map<string, Target>();
  for (const call of runner.store.unfinishedCalls()) {
    const where = runner.target(call);
    try {
      const { task } = await runner.createTask(where, call, undefined, true);
      runner.progress.note(`task ${task.taskId}: adopted; the call of ${call.tool} sent at ${call.at} had started it`);
      adopted.set(task.taskId, where);
    } catch (error) {
      if (!(error instanceof McpError && error.code === ErrorCode.InvalidParams)) throw error;
      if (/No task was started/.test(error.message) && Date.now() - Date.parse(call.at) < ADOPT_GRACE_MS) {
        runner.progress.note(`the call of ${call.tool} sent at ${call.at} has no task yet; resume again to adopt it`);
        continue;
      }
      const reason = plainMessage(error);
      runner.store.append({ type: 'abandoned', key: call.key, reason, at: new Date().toISOString() });
      runner.progress.note(`the call of ${call.tool} sent at ${call.at} started nothing (${reason}); call it again if it is still wanted`);
    }
  }
  return adopted;
}

/** `resume [taskId]`: follows one task, or every open one. */
export async function resume(runner: Runner, taskId: string | undefined): Promise<number> {
  if (taskId) {
    const stored = runner.store.task(taskId);
    return runner.report(await runner.follow(taskId, runner.target(stored)));
  }
  const open = await adoptUnfinishedCalls(runner);
  for (const stored of runner.store.tasks()) {
    if (stored.gone === undefined && (!stored.status || !isTerminal(stored.status))) open.set(stored.taskId, runner.target(stored));
  }
  const target = runner.target();
  for (const task of await serverTasks(runner, target)) {
    if (!isTerminal(task.status) && !open.has(task.taskId)) open.set(task.taskId, target);
  }
  if (open.size === 0) {
    runner.progress.note('no open tasks to resume');
    return EXIT.completed;
  }
  let code: number = EXIT.completed;
  for (const [id, where] of open) {
    let outcome: number;
    try {
      outcome = runner.report(await runner.follow(id, where));
    } catch (error) {
      if (error instanceof McpError && error.code === ErrorCode.InvalidParams) {
        runner.progress.note(`task ${id}: ${error.message}`);
        outcome = EXIT.error;
      } else throw error;
    }
    if (code === EXIT.completed) code = outcome;
  }
  return code;
}

/** `cancel <taskId>`: cancels a task. */
export async function cancel(runner: Runner, taskId: string | undefined): Promise<number> {
  if (!taskId) throw new UsageError('cancel needs a task id');
  const task = await runner.retrying(runner.target(runner.store.task(taskId)), `tasks/cancel ${taskId}`, async (session) => {
    try {
      return await session.client.experimental.tasks.cancelTask(taskId);
    } catch (error) {
      // A cancel repeated after a lost answer finds the task cancelled by the first one.
      if (error instanceof McpError && error.code === ErrorCode.InvalidParams && /already cancelled/.test(error.message)) {
        return session.client.experimental.tasks.getTask(taskId);
      }
      throw error;
    }
  });
  runner.store.append({ type: 'status', taskId, status: task.status, statusMessage: task.statusMessage, at: new Date().toISOString() });
  if (runner.options.json) process.stdout.write(`${JSON.stringify(task)}\n`);
  else process.stdout.write(`task ${taskId} ${task.status}\n`);
  return EXIT.completed;
}

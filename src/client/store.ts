import { mkdirSync, openSync, closeSync, writeSync, fsyncSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isTerminal } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { ElicitResult, Task } from '@modelcontextprotocol/sdk/types.js';
import { argumentsDigest } from '../util/arguments-digest';

/** Where answers came from: a person at the terminal, a flag or file, or the store itself (given again). */
export type AnswerSource = 'terminal' | 'flag' | 'file' | 'store';

/** One line of the client's task log. */
export type StoreEvent =
  | { type: 'intent'; key: string; server: string; tool: string; arguments: Record<string, unknown>; at: string }
  | { type: 'created'; taskId: string; server: string; tool: string; createdAt: string; key?: string; at: string }
  | { type: 'abandoned'; key: string; reason: string; at: string }
  | { type: 'status'; taskId: string; status: Task['status']; statusMessage?: string; at: string }
  | { type: 'asked'; taskId: string; key?: string; message: string; at: string }
  | { type: 'answered'; taskId: string; key?: string; response: ElicitResult; source: AnswerSource; at: string }
  | { type: 'gone'; taskId: string; reason: string; at: string };

/** What the store knows of one task. */
export interface StoredTask {
  taskId: string;
  server: string;
  tool: string;
  createdAt: string;
  status?: Task['status'];
  statusMessage?: string;
  /** Answers given, by input key. */
  answers: Map<string, ElicitResult>;
  /** How many answers came from a person or from flags/files, by input key: more than one means asked twice. */
  humanAnswers: Map<string, number>;
  /** How many times the server asked, by input key. */
  asked: Map<string, number>;
  /** Set when the server no longer knows the task (its ttl passed, or it belongs to another principal). */
  gone?: string;
}

/**
 * A task-tool call the client sent (or was about to send) with an idempotency key. `taskId` is set once the server
 * answered with its task; an unfinished call has none, and sending it again with the same key is safe.
 */
export interface StoredCall {
  key: string;
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  at: string;
  taskId?: string;
  /** Set when the call was given up: the server started nothing for it. */
  abandoned?: string;
}

/** The default state directory: $XDG_STATE_HOME/temporal-mcp-tasks, else ~/.local/state/temporal-mcp-tasks. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state'), 'temporal-mcp-tasks');
}

/**
 * The client's durable task log: an append-only JSON-lines file, each line fsync'ed before the call returns, so a
 * task id is on disk before anything else happens with it. Lines torn by a crash are skipped when read.
 */
export class LocalTaskStore {
  readonly file: string;

  constructor(stateDir: string) {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    this.file = path.join(stateDir, 'tasks.jsonl');
  }

  /** Appends an event durably. */
  append(event: StoreEvent): void {
    // Readable by its user only: the store holds task ids and the answers given.
    const fd = openSync(this.file, 'a', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(event)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** Every event in the log, oldest first; lines torn by a crash are skipped. */
  private events(): StoreEvent[] {
    let text = '';
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const events: StoreEvent[] = [];
    for (const line of text.split('\n')) {
      try {
        events.push(JSON.parse(line) as StoreEvent);
      } catch {
        // torn or empty line
      }
    }
    return events;
  }

  /** Every call made with an idempotency key, oldest first, with the task it made if the server answered. */
  calls(): StoredCall[] {
    const calls = new Map<string, StoredCall>();
    for (const event of this.events()) {
      if (event.type === 'intent')
        calls.set(event.key, { key: event.key, server: event.server, tool: event.tool, arguments: event.arguments, at: event.at });
      else if (event.type === 'created' && event.key !== undefined) {
        const call = calls.get(event.key);
        if (call) call.taskId = event.taskId;
      } else if (event.type === 'abandoned') {
        const call = calls.get(event.key);
        if (call) call.abandoned = event.reason;
      }
    }
    return [...calls.values()];
  }

  /** Calls that never got their task and were not given up: the ones `resume` tries to adopt. */
  unfinishedCalls(): StoredCall[] {
    return this.calls().filter((call) => call.taskId === undefined && call.abandoned === undefined);
  }

  /**
   * The latest call of `tool` on `server` with the same arguments (compared by {@link argumentsDigest}) that is still
   * open: its task has not ended as far as the log knows, or the server's answer never came and the call was not
   * given up. Undefined when there is none. `task` is what the log knows of the call's task.
   */
  openCall(server: string, tool: string, args: Record<string, unknown>): { call: StoredCall; task?: StoredTask } | undefined {
    const digest = argumentsDigest(args);
    const tasks = new Map(this.tasks().map((task) => [task.taskId, task]));
    const calls = this.calls().filter(
      (call) => call.server === server && call.tool === tool && call.abandoned === undefined && argumentsDigest(call.arguments) === digest,
    );
    for (const call of calls.reverse()) {
      if (call.taskId === undefined) return { call };
      const task = tasks.get(call.taskId);
      if (task?.gone === undefined && (!task?.status || !isTerminal(task.status))) return { call, task };
    }
    return undefined;
  }

  /** Every task in the log, oldest first. */
  tasks(): StoredTask[] {
    const tasks = new Map<string, StoredTask>();
    for (const event of this.events()) {
      if (event.type === 'intent' || event.type === 'abandoned') continue;
      if (event.type === 'created') {
        // A call sent again with its key finds its task again: what the log knew of it stays.
        if (tasks.has(event.taskId)) continue;
        tasks.set(event.taskId, {
          taskId: event.taskId,
          server: event.server,
          tool: event.tool,
          createdAt: event.createdAt,
          answers: new Map(),
          humanAnswers: new Map(),
          asked: new Map(),
        });
        continue;
      }
      const task = tasks.get(event.taskId);
      if (!task) continue;
      if (event.type === 'gone') task.gone = event.reason;
      else if (event.type === 'status') {
        task.status = event.status;
        task.statusMessage = event.statusMessage;
      } else if (event.key !== undefined) {
        const key = event.key;
        if (event.type === 'asked') task.asked.set(key, (task.asked.get(key) ?? 0) + 1);
        if (event.type === 'answered') {
          task.answers.set(key, event.response);
          if (event.source !== 'store') task.humanAnswers.set(key, (task.humanAnswers.get(key) ?? 0) + 1);
        }
      }
    }
    return [...tasks.values()];
  }

  /** One task, if the log has it. */
  task(taskId: string): StoredTask | undefined {
    return this.tasks().find((task) => task.taskId === taskId);
  }
}

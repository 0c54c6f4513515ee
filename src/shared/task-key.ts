/**
 * The bridge's secret key, shared by every replica and every worker: the bridge marks the tasks it starts with it
 * (see the marker) and seals the answers it hands to workflows (see answer-proof); workers check those seals with it.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Thrown when the key cannot be had; the message says what to set. */
export class TaskKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TaskKeyError';
  }
}

export const MIN_KEY_LENGTH = 32;

/**
 * The key: `MCP_TASK_MARKER_KEY` (at least 32 characters; give every replica and worker the same), else the file
 * `MCP_TASK_MARKER_KEY_FILE`, else a key generated once for this machine and user in
 * `$XDG_CONFIG_HOME/temporal-mcp-tasks/task-marker.key` (mode 0600), which every local process shares.
 */
export function taskKeyFromEnv(env: NodeJS.ProcessEnv = process.env): Buffer {
  const inline = env.MCP_TASK_MARKER_KEY;
  if (inline !== undefined && inline !== '') {
    if (Buffer.byteLength(inline) < MIN_KEY_LENGTH)
      throw new TaskKeyError(`MCP_TASK_MARKER_KEY must be at least ${MIN_KEY_LENGTH} characters`);
    return Buffer.from(inline);
  }
  return readOrCreateKey(taskKeyFile(env));
}

/** Where the key is kept when MCP_TASK_MARKER_KEY is not set. */
export function taskKeyFile(env: NodeJS.ProcessEnv = process.env): string {
  return (
    env.MCP_TASK_MARKER_KEY_FILE ||
    path.join(env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'temporal-mcp-tasks', 'task-marker.key')
  );
}

function readOrCreateKey(file: string): Buffer {
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    // Created exclusively: of two processes starting at once, one writes the key and both read it.
    const fd = openSync(file, 'wx', 0o600);
    try {
      writeSync(fd, `${randomBytes(32).toString('hex')}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new TaskKeyError(`cannot create the task marker key ${file}: ${(error as Error).message}; set MCP_TASK_MARKER_KEY`);
    }
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new TaskKeyError(`cannot read the task marker key ${file}: ${(error as Error).message}; set MCP_TASK_MARKER_KEY`);
  }
  // A file being written by another process right now reads empty: its key is the one to use, so wait for it.
  for (let attempt = 0; text.length < MIN_KEY_LENGTH && attempt < 50; attempt++) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    text = readFileSync(file, 'utf8').trim();
  }
  if (text.length < MIN_KEY_LENGTH)
    throw new TaskKeyError(`the task marker key in ${file} is too short; delete it or set MCP_TASK_MARKER_KEY`);
  return Buffer.from(text);
}

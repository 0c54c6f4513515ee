/**
 * The mark of a task this bridge started: an HMAC over the workflow id, the principal, the tool, the digest of the
 * workflow's input and the creation time, kept in the `mcpMeta` memo at start and checked on every read, together with
 * what Temporal reports of the run (its input and its start time: see the repository). Anyone who can write the
 * namespace can start a workflow with any memo and search attributes; without the key they cannot make a mark that
 * passes, and a mark copied onto another run (other arguments, another start) does not pass either, so what they plant
 * is "Task not found" like a task that does not exist. Every replica needs the same key.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, openSync, readFileSync, writeSync, closeSync, fsyncSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Thrown when the marker key cannot be had; the message says what to set. */
export class MarkerKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MarkerKeyError';
  }
}

const MIN_KEY_LENGTH = 32;

/** What a mark binds: the task, whose it is, and the start that made it. */
export interface MarkedStart {
  workflowId: string;
  principal: string;
  tool: string;
  /** SHA-256 of the workflow's input (canonical JSON). */
  argumentsDigest: string;
  /** The creation time the bridge announced (ISO 8601), close to the run's start time in Temporal. */
  createdAt: string;
}

/** Signs and checks task marks with one key. */
export class TaskMarker {
  constructor(private readonly key: Buffer) {
    if (key.length < MIN_KEY_LENGTH) throw new MarkerKeyError(`the task marker key must be at least ${MIN_KEY_LENGTH} bytes`);
  }

  /** The mark of the task `start` describes. */
  sign(start: MarkedStart): string {
    const { workflowId, principal, tool, argumentsDigest, createdAt } = start;
    const mac = createHmac('sha256', this.key).update(`v2\n${workflowId}\n${principal}\n${tool}\n${argumentsDigest}\n${createdAt}`);
    return `v2.${mac.digest('base64url')}`;
  }

  /** True when `mark` is the mark of the task `start` describes (constant-time comparison); marks of older versions are not. */
  verify(mark: unknown, start: Partial<MarkedStart> & Pick<MarkedStart, 'workflowId' | 'principal' | 'tool'>): boolean {
    if (typeof mark !== 'string' || mark.length > 100) return false;
    if (typeof start.argumentsDigest !== 'string' || typeof start.createdAt !== 'string') return false;
    const expected = Buffer.from(this.sign(start as MarkedStart));
    const given = Buffer.from(mark);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

/**
 * The marker key: `MCP_TASK_MARKER_KEY` (at least 32 characters; give every replica the same), else the file
 * `MCP_TASK_MARKER_KEY_FILE`, else a key generated once for this machine and user in
 * `$XDG_CONFIG_HOME/temporal-mcp-tasks/task-marker.key` (mode 0600), which every local process shares.
 */
export function markerFromEnv(env: NodeJS.ProcessEnv = process.env): TaskMarker {
  const inline = env.MCP_TASK_MARKER_KEY;
  if (inline !== undefined && inline !== '') {
    if (Buffer.byteLength(inline) < MIN_KEY_LENGTH)
      throw new MarkerKeyError(`MCP_TASK_MARKER_KEY must be at least ${MIN_KEY_LENGTH} characters`);
    return new TaskMarker(Buffer.from(inline));
  }
  const file =
    env.MCP_TASK_MARKER_KEY_FILE ||
    path.join(env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'temporal-mcp-tasks', 'task-marker.key');
  return new TaskMarker(readOrCreateKey(file));
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
      throw new MarkerKeyError(`cannot create the task marker key ${file}: ${(error as Error).message}; set MCP_TASK_MARKER_KEY`);
    }
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new MarkerKeyError(`cannot read the task marker key ${file}: ${(error as Error).message}; set MCP_TASK_MARKER_KEY`);
  }
  // A file being written by another process right now reads empty: its key is the one to use, so wait for it.
  for (let attempt = 0; text.length < MIN_KEY_LENGTH && attempt < 50; attempt++) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    text = readFileSync(file, 'utf8').trim();
  }
  if (text.length < MIN_KEY_LENGTH)
    throw new MarkerKeyError(`the task marker key in ${file} is too short; delete it or set MCP_TASK_MARKER_KEY`);
  return Buffer.from(text);
}

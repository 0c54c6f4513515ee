/**
 * The mark of a task this bridge started: an HMAC over the workflow id, the principal, the tool, the digest of the
 * workflow's input and the creation time, kept in the `mcpMeta` memo at start and checked on every read, together with
 * what Temporal reports of the run (its input and its start time: see the repository). Anyone who can write the
 * namespace can start a workflow with any memo and search attributes; without the key they cannot make a mark that
 * passes, and a mark copied onto another run (other arguments, another start) does not pass either, so what they plant
 * is "Task not found" like a task that does not exist. Every replica needs the same key.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { MIN_KEY_LENGTH, TaskKeyError, taskKeyFromEnv } from '../../shared/task-key';

export { TaskKeyError as MarkerKeyError } from '../../shared/task-key';

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
    if (key.length < MIN_KEY_LENGTH) throw new TaskKeyError(`the task marker key must be at least ${MIN_KEY_LENGTH} bytes`);
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
  return new TaskMarker(taskKeyFromEnv(env));
}

/**
 * The mark of a task this bridge started: an HMAC over the workflow id, the principal, the tool, the digest of the
 * workflow's input and the creation time, kept in the `mcpMeta` memo at start and checked on every read, together with
 * what Temporal reports of the run (its input and its start time: see the repository). Anyone who can write the
 * namespace can start a workflow with any memo and search attributes; without the key they cannot make a mark that
 * passes, and a mark copied onto another run (other arguments, another start, or a run that is not the one the bridge
 * bound: see {@link RunBinding}) does not pass either, so what they plant is "Task not found" like a task that does not
 * exist. Every replica needs the same key.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { uuidShaped } from './idempotency';
import type { RunBinding } from '../contract/task-contract';
import { MIN_KEY_LENGTH, TaskKeyError, taskKeyFromEnv } from '../shared/task-key';

export { TaskKeyError as MarkerKeyError } from '../shared/task-key';

/** What a mark binds: the task, whose it is, and the start that made it. */
export interface MarkedStart {
  workflowId: string;
  principal: string;
  tool: string;
  /** SHA-256 of the workflow's input (canonical JSON). */
  argumentsDigest: string;
  /** The creation time the bridge announced (ISO 8601), close to the run's start time in Temporal. */
  createdAt: string;
  /** Whether the bridge binds the run with a {@link RunBinding} (marks since the binding; older marks are not). */
  bound?: boolean;
}

/** Derives the key of run bindings from the task key: a binding's MAC is never a mark's. */
const BINDING_KEY_LABEL = 'temporal-mcp-tasks run binding key v1';

/** Derives the key of the task ids of idempotency keys from the task key. */
const KEYED_ID_KEY_LABEL = 'temporal-mcp-tasks keyed task id key v1';

/** Signs and checks task marks with one key. */
export class TaskMarker {
  private readonly bindingKey: Buffer;
  private readonly keyedIdKey: Buffer;

  constructor(private readonly key: Buffer) {
    if (key.length < MIN_KEY_LENGTH) throw new TaskKeyError(`the task marker key must be at least ${MIN_KEY_LENGTH} bytes`);
    this.bindingKey = createHmac('sha256', key).update(BINDING_KEY_LABEL).digest();
    this.keyedIdKey = createHmac('sha256', key).update(KEYED_ID_KEY_LABEL).digest();
  }

  /**
   * The UUID of the task a call with an idempotency key makes: an HMAC of principal, tool and key under a key derived
   * from the task key, so every replica finds the same task for a repeated call, and nobody without the key can tell
   * the id of someone else's call.
   */
  keyedUuid(principal: string, tool: string, idempotencyKey: string): string {
    return uuidShaped(createHmac('sha256', this.keyedIdKey).update(`${principal}\0${tool}\0${idempotencyKey}`).digest());
  }

  /**
   * The mark of the task `start` describes. A bound mark (`v3`) says, under the MAC, that the bridge binds the run; an
   * unbound one (`v2`) is what versions before the binding made.
   */
  sign(start: MarkedStart): string {
    const { workflowId, principal, tool, argumentsDigest, createdAt } = start;
    const version = start.bound ? 'v3' : 'v2';
    const mac = createHmac('sha256', this.key).update(`${version}\n${workflowId}\n${principal}\n${tool}\n${argumentsDigest}\n${createdAt}`);
    return `${version}.${mac.digest('base64url')}`;
  }

  /**
   * True when `mark` is the mark of the task `start` describes, bound or not as the mark says (constant-time
   * comparison); marks of versions before `v2` are not.
   */
  verify(mark: unknown, start: Partial<MarkedStart> & Pick<MarkedStart, 'workflowId' | 'principal' | 'tool'>): boolean {
    if (typeof mark !== 'string' || mark.length > 100) return false;
    if (typeof start.argumentsDigest !== 'string' || typeof start.createdAt !== 'string') return false;
    const expected = Buffer.from(this.sign({ ...(start as MarkedStart), bound: TaskMarker.isBound(mark) }));
    const given = Buffer.from(mark);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** Whether a mark says its run is bound; trust it only for a mark that {@link verify} passed (the MAC covers it). */
  static isBound(mark: unknown): boolean {
    return typeof mark === 'string' && mark.startsWith('v3.');
  }

  /** The binding of the run `runId` of `workflowId`, which the bridge signals to the run it just started. */
  bind(workflowId: string, runId: string): RunBinding {
    return { v: 1, workflowId, runId, proof: `v1.${this.bindingMac(workflowId, runId)}` };
  }

  /** True when `binding` is this key's binding of `runId` of `workflowId` (constant-time comparison). */
  verifyBinding(binding: unknown, workflowId: string, runId: string): boolean {
    const proof = (binding as Partial<RunBinding> | null)?.proof;
    if (typeof proof !== 'string' || proof.length > 100) return false;
    const expected = Buffer.from(`v1.${this.bindingMac(workflowId, runId)}`);
    const given = Buffer.from(proof);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private bindingMac(workflowId: string, runId: string): string {
    return createHmac('sha256', this.bindingKey).update(`${workflowId}\n${runId}`).digest('base64url');
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

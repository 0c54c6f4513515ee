import type { Client } from '@temporalio/client';
import type { PublishedTaskState } from '../../src/shared/task-contract';
import type { Managed } from '../lib/processes';

/** What the soak needs of a stack: the dev-server rig, or the production-shaped cluster. */
export interface SoakStack {
  readonly dir: string;
  readonly ledgerDir: string;
  readonly taskQueue: string;
  readonly client?: Client;
  /** What can be killed besides a client (`client` is always a victim). */
  readonly victims: readonly string[];
  up(): Promise<void>;
  down(keep: boolean): Promise<void>;
  clientProcess(stateDir: string, args: string[], answersFile: string, logFile: string, answerDelayMs?: number): Managed;
  state(taskId: string): Promise<{ published?: PublishedTaskState; closed: boolean } | undefined>;
  mark(text: string): void;
  /** Kills `victim` (with the clients `alsoKilling` kills), restarts it, resolves once it serves again. */
  killAndRestart(victim: string, alsoKilling: Promise<unknown>[]): Promise<void>;
}

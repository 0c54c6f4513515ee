/**
 * What a test stack runs (see test-stack.ts): the workflows and activities of its worker, the tools its bridges and
 * spawned servers serve, and where the activities keep their files. The library's tests run the fixtures of
 * test/fixtures.
 */
import type { NativeConnection } from '@temporalio/worker';
import type { ToolDefinition } from '../../src/mcp/tools/types';
import type { RunningWorker, TestWorkerOptions } from './temporal';

/** The files every stack's activities keep, which its bridges and servers are given too. */
export interface StackFiles {
  /** The decision store: a directory. */
  decisionStore: string;
  /** The JSON-lines file notifications go to. */
  notificationOutbox: string;
}

/** One thing a stack can run; `Config` is the configuration of its activities. */
export interface StackApp<Config extends StackFiles> {
  /** The tools a bridge of the stack serves unless it is given others. */
  readonly tools: readonly ToolDefinition[];
  /** Arguments of a spawned `serve` that make it serve the same tools (after the helper's own). */
  serveArgs(): string[];
  /** The activities' configuration, with files in a fresh temporary folder, and `overrides`. */
  config(overrides?: Partial<Config>): Config;
  /** Starts a worker on `taskQueue` with `config`, on `shared` or a connection of its own. */
  startWorker(taskQueue: string, config: Config, shared: NativeConnection | undefined, options: TestWorkerOptions): Promise<RunningWorker>;
  /** The environment of a worker process of the app (see processes.ts `spawnWorker`) on `config`'s files; none: no such process. */
  workerEnv?(config: Config): Record<string, string>;
  /** The arguments of `node` that run the app's worker process (with {@link workerEnv}). */
  readonly workerArgs?: readonly string[];
}

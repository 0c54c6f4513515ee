import { spawn, type ChildProcess } from 'node:child_process';
import { ROOT } from './dev-server';
import { testAddress } from './temporal';

/** Environment for a spawned server of this run: the test dev server, a task queue, quick polls. */
export function serverEnv(taskQueue: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    TEMPORAL_ADDRESS: testAddress(),
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: taskQueue,
    MCP_TASK_POLL_INTERVAL_MS: '200',
    MCP_INPUT_PUSH_GRACE_MS: '300',
    ...extra,
  };
}

/** A spawned `npm run -s serve -- --http …` process. */
export interface HttpServerProcess {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  /** Kills the whole process group (npm and node) with `signal`. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Spawns the HTTP server through npm, as a user would, and waits until it listens. */
export function spawnHttpServer(
  taskQueue: string,
  port: number,
  extraEnv: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<HttpServerProcess> {
  const child = spawn('npm', ['run', '-s', 'serve', '--', '--http', `127.0.0.1:${port}`], {
    cwd: ROOT,
    env: serverEnv(taskQueue, extraEnv),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stderr = '';
  let stdout = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
      await exited;
    }
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void kill('SIGKILL');
      reject(new Error(`the HTTP server did not start within ${timeoutMs} ms:\n${stderr}`));
    }, timeoutMs);
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
      const match = /MCP Streamable HTTP on (http:\/\/[^\s,]+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1], child, stderr: () => `${stderr}${stdout ? `\nstdout: ${stdout}` : ''}`, kill });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the HTTP server exited with ${code} before listening:\n${stderr}`));
    });
  });
}

/** A spawned worker process (`node --import tsx src/worker.ts`) in its own process group. */
export interface WorkerProcess {
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Spawns a worker process for `taskQueue` and waits until it polls. */
export function spawnWorker(taskQueue: string, env: Record<string, string>, timeoutMs = 60_000): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
    cwd: ROOT,
    env: serverEnv(taskQueue, env),
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
      await exited;
    }
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void kill('SIGKILL');
      reject(new Error(`the worker did not start within ${timeoutMs} ms:\n${stderr}`));
    }, timeoutMs);
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
      if (stderr.includes('worker: polling')) {
        clearTimeout(timer);
        resolve({ kill });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the worker exited with ${code} before polling:\n${stderr}`));
    });
  });
}

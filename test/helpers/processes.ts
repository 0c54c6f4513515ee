import { spawn } from 'node:child_process';
import { freePort, ROOT } from './dev-server';
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

/** How a spawned process ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A spawned process in its own process group. */
export interface SpawnedProcess {
  /** Kills the whole process group (npm and node) with `signal`, and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Resolves when it has exited, however. */
  exited: Promise<ProcessExit>;
  /** Everything it wrote on stderr so far. */
  stderr(): string;
}

/** A spawned `npm run -s serve -- --http …` process. */
export interface HttpServerProcess extends SpawnedProcess {
  url: string;
}

/** Spawns `command` in a process group of its own and resolves once its stderr matches `ready`. */
function spawnUntilReady(what: string, command: string, args: string[], env: Record<string, string>, ready: RegExp, timeoutMs: number) {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  let started = false;
  let killing = false;
  const exited = new Promise<ProcessExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  // A process that ends on its own once started leaves its last words in the test output: the failures that follow (a
  // refused connection) do not say why it is gone.
  void exited.then(({ code, signal }) => {
    if (started && !killing) {
      process.stderr.write(`[test] ${what} (${args.join(' ')}) exited on its own (${signal ?? `code ${code}`}):\n${stderr.slice(-4000)}\n`);
    }
  });
  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    killing = true;
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
    }
    await exited;
  };
  return new Promise<{ match: RegExpExecArray } & SpawnedProcess>((resolve, reject) => {
    const timer = setTimeout(() => {
      void kill('SIGKILL');
      reject(new Error(`${what} did not start within ${timeoutMs} ms:\n${stderr}`));
    }, timeoutMs);
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
      const match = ready.exec(stderr);
      if (match && !started) {
        started = true;
        clearTimeout(timer);
        resolve({ match, kill, exited, stderr: () => stderr });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code} before it was ready:\n${stderr}`));
    });
  });
}

/**
 * Spawns the HTTP server through npm, as a user would, with the tools `extraArgs` name (`--tools FILE`, e.g. the
 * fixtures' `FIXTURES.serveArgs()`) and no sample (`--no-samples`), and waits until it listens (on loopback unless
 * `host` says).
 * With `via: 'node'` the server is the spawned process itself, as a process manager runs it: its own exit code and
 * its last lines are seen (npm does not wait for its child when it is signalled).
 */
export async function spawnHttpServer(
  taskQueue: string,
  port: number,
  extraEnv: Record<string, string> = {},
  extraArgs: string[] = [],
  host = '127.0.0.1',
  via: 'npm' | 'node' = 'npm',
): Promise<HttpServerProcess> {
  const serve = ['--http', `${host}:${port}`, '--no-samples', ...extraArgs];
  const { match, ...spawned } = await spawnUntilReady(
    'the HTTP server',
    via === 'npm' ? 'npm' : process.execPath,
    via === 'npm' ? ['run', '-s', 'serve', '--', ...serve] : ['--import', 'tsx', 'src/mcp/serve/main.ts', ...serve],
    serverEnv(taskQueue, extraEnv),
    /MCP Streamable HTTP on (http:\/\/[^\s,]+)/,
    60_000,
  );
  return { url: match[1], ...spawned };
}

/**
 * `start(port)` on a free port: when another process takes the port between the look and the bind (EADDRINUSE), on
 * another one, up to three times.
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePort());
    } catch (error) {
      if (attempt >= 3 || !/EADDRINUSE/.test((error as Error).message)) throw error;
    }
  }
}

/** {@link spawnHttpServer} on a free port, another one when it was taken first (see {@link onFreePort}). */
export function spawnHttpServerOnFreePort(
  taskQueue: string,
  extraEnv: Record<string, string> = {},
  extraArgs: string[] = [],
  host = '127.0.0.1',
  via: 'npm' | 'node' = 'npm',
): Promise<HttpServerProcess> {
  return onFreePort((port) => spawnHttpServer(taskQueue, port, extraEnv, extraArgs, host, via));
}

/** Spawns a worker process (`node` with `args`, e.g. `FIXTURE_WORKER_ARGS`) for `taskQueue` and waits until it polls. */
export async function spawnWorker(taskQueue: string, env: Record<string, string>, args: readonly string[]): Promise<SpawnedProcess> {
  const { match: _ready, ...spawned } = await spawnUntilReady(
    'the worker',
    process.execPath,
    [...args],
    serverEnv(taskQueue, env),
    /worker: polling/,
    60_000,
  );
  return spawned;
}

/** Spawns `python script` (a Temporal worker of another SDK) for `taskQueue`, with `env` added, and waits until it says it polls. */
export async function spawnPythonWorker(
  python: string,
  script: string,
  taskQueue: string,
  env: Record<string, string> = {},
): Promise<SpawnedProcess> {
  const { match: _ready, ...spawned } = await spawnUntilReady(
    'the Python worker',
    python,
    [script],
    serverEnv(taskQueue, env),
    /worker: polling/,
    60_000,
  );
  return spawned;
}

/**
 * Runs `npm run -s serve -- ARGS` expecting it to refuse to start: its exit code and stderr. Its stdin stays open, so
 * a server that starts after all (on stdio) shows as killed after 60 s (`code` null) instead of exiting 0.
 */
export function runServeToExit(
  taskQueue: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '-s', 'serve', '--', ...args], {
      cwd: ROOT,
      env: serverEnv(taskQueue, env),
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    // 'close', not 'exit': its stderr has been read to the end.
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

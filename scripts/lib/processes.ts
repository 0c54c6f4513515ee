/**
 * Process helpers shared by the scripts (drill, soak, bench) and the tests: free ports and child processes in process groups of their own that can be SIGKILLed whole and whose output is kept in a log file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { pollUntil } from '../../src/util/wait';

/** The repository root. */
export const ROOT = path.resolve(__dirname, '..', '..');

/**
 * A TCP port on 127.0.0.1 that nobody listens on right now, chosen at random from 10000-19999: below the range the
 * kernel hands out for outgoing connections (32768 and up on Linux), where any process's outgoing connection could take
 * it before the caller binds it, and below the cluster stacks' ports (21000 and up) with room for a dev server's Web UI
 * at port + 1000. The kernel's choice when none of 20 tries is free.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * 10_000);
    if (await listensOn(port)) return port;
  }
  return listenOnce(0);
}

/** Whether `port` can be listened on now (and is let go at once). */
async function listensOn(port: number): Promise<boolean> {
  try {
    await listenOnce(port);
    return true;
  } catch {
    return false;
  }
}

/** Listens on `port` of 127.0.0.1 (0: any), lets it go, and resolves to the port. */
function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as net.AddressInfo;
      server.close(() => resolve(bound));
    });
  });
}

/** Whether process `pid` is alive: it exists and is not a zombie (a SIGKILLed child nobody has reaped yet). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** How much of a process's output is kept in memory; all of it goes to the log file. */
const OUTPUT_KEPT = 1 << 20;

/**
 * A child process in a process group of its own, so that SIGKILL takes all of it. Its output is kept in memory (the
 * last MiB, from its latest start) and, when `logFile` is set, appended to that file across restarts.
 */
export class Managed {
  child?: ChildProcess;
  output = '';
  private closed?: Promise<number | null>;

  constructor(
    readonly name: string,
    private readonly command: string,
    private readonly args: () => string[],
    private readonly env: NodeJS.ProcessEnv,
    readonly logFile?: string,
    /** The folder it runs in; default the repository root. */
    private readonly cwd: string = ROOT,
  ) {}

  start(): this {
    this.output = '';
    this.log(`\n=== ${new Date().toISOString()} start: ${this.command} ${this.args().join(' ')}\n`);
    const child = spawn(this.command, this.args(), { cwd: this.cwd, env: this.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const take = (chunk: Buffer) => {
      const text = chunk.toString();
      this.output += text;
      if (this.output.length > OUTPUT_KEPT) this.output = this.output.slice(-OUTPUT_KEPT);
      this.log(text);
    };
    child.stdout!.on('data', take);
    child.stderr!.on('data', take);
    // Its end is when its output has ended too ('close'), so that its last words are in `output` when it is read.
    this.closed = new Promise((resolve) =>
      child.once('close', (code, signal) => {
        this.log(`\n=== ${new Date().toISOString()} exit: ${signal ?? code}\n`);
        resolve(code);
      }),
    );
    this.child = child;
    return this;
  }

  /** Appends a line to the log file (a marker between drill cells, for example). */
  log(text: string): void {
    if (!this.logFile) return;
    try {
      appendFileSync(this.logFile, text);
    } catch (error) {
      // Output still in the pipe of a process killed after its run's folder was removed: nobody reads it any more.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  async waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<void> {
    await pollUntil(
      () => {
        if (pattern.test(this.output)) return true;
        if (!this.running) throw new Error(`${this.name} exited before it was ready:\n${this.output.slice(-2000)}`);
        return undefined;
      },
      { timeoutMs, what: () => `${this.name} to be ready (${timeoutMs} ms):\n${this.output.slice(-2000)}` },
    );
  }

  /** Resolves with its exit code (null when a signal ended it) once it has exited and its output has ended. */
  exited(): Promise<number | null> {
    return this.closed!;
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.running) return;
    try {
      process.kill(-this.child!.pid!, signal);
    } catch {
      // already gone
    }
    await this.exited();
  }
}

/** The sample worker's files under `dir`, with no ERP or payment delay and no failing payment: as benchmarks run it. */
export function quickSampleWorkerEnv(dir: string): Record<string, string> {
  return {
    PAYMENTS_LEDGER: path.join(dir, 'payments'),
    ERP_REGISTRY: path.join(dir, 'erp'),
    ERP_DELAY_MS: '0',
    PAYMENT_DELAY_MS: '0',
    PAYMENT_FAIL_ATTEMPTS: '0',
  };
}

/**
 * What the bench needs of the processes it measures, whether one dev server with one MCP server (scripts/bench.ts) or
 * the production-shaped cluster (scripts/cluster/bench-stack.ts): where the MCP servers answer and with which
 * credentials, their processes, Temporal's request counters, the hold tool's workflows and the in-memory MCP server
 * the poller rows compare with.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { freePort, Managed } from './processes';

/** A tool declared for the run: its workflows stay running (see {@link holdToolsFile}) and cost nothing. */
export const HOLD_TOOL = 'bench_hold';
export const HOLD_WORKFLOW_TYPE = 'benchHoldWorkflow';
export const HOLD_ID_PREFIX = 'bench-hold';

/**
 * Writes the tools file that declares the hold tool on `taskQueue` into `dir`; returns its path. Unless a hold worker
 * (scripts/lib/hold-worker.ts) polls that queue, nobody does and the workflows never run.
 */
export function holdToolsFile(dir: string, taskQueue: string): string {
  const file = path.join(dir, 'bench-tools.json');
  writeFileSync(
    file,
    JSON.stringify({
      tools: [
        {
          name: HOLD_TOOL,
          description: 'Starts a workflow that publishes once and then waits: the task stays working.',
          workflowType: HOLD_WORKFLOW_TYPE,
          taskQueue,
          taskSupport: 'required',
          idPrefix: HOLD_ID_PREFIX,
          inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
        },
      ],
    }),
  );
  return file;
}

export abstract class BenchStack {
  readonly dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-bench-'));
  abstract readonly holdQueue: string;
  abstract readonly pageSize: number;
  abstract client: Client;
  /** The MCP endpoint clients use (http://…/mcp). */
  abstract readonly url: string;
  /** Temporal's frontend address for the bench's own raw calls. */
  abstract readonly address: string;
  /** What every MCP request carries besides the protocol's headers (credentials). */
  get mcpHeaders(): Record<string, string> {
    return {};
  }
  /** The ports of Temporal's Prometheus metrics: every frontend's. */
  abstract readonly metricsPorts: readonly number[];
  /** A short description of what runs, for the bench's first line. */
  abstract readonly shape: string;
  private inMemory?: Managed;
  private inMemoryUrl?: string;

  abstract up(): Promise<void>;
  abstract down(): Promise<void>;
  /** Stops everything at once (a signal arrived). */
  abstract killNow(): void;
  /** The node processes of the MCP servers measured: their CPU and memory are summed. */
  abstract serverPids(): number[];
  /** The log files of the MCP servers and workers, searched for Temporal's refusals. */
  abstract logFiles(): string[];

  /** The in-memory MCP task server the poller rows compare with; started on first use. */
  async inMemoryServer(): Promise<{ url: string; pid: number }> {
    if (!this.inMemory) {
      const port = await freePort();
      this.inMemory = new Managed(
        'the in-memory MCP server',
        process.execPath,
        () => ['--import', 'tsx', 'scripts/lib/in-memory-tasks-server.ts', '--port', String(port)],
        process.env,
        path.join(this.dir, 'in-memory.log'),
      );
      await this.inMemory.start().waitFor(/in-memory task server on/);
      this.inMemoryUrl = `http://127.0.0.1:${port}/mcp`;
    }
    return { url: this.inMemoryUrl!, pid: this.inMemory.child!.pid! };
  }

  protected async stopInMemory(): Promise<void> {
    await this.inMemory?.kill('SIGTERM');
  }

  protected killInMemoryNow(): void {
    if (!this.inMemory?.running) return;
    try {
      process.kill(-this.inMemory.child!.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  /** Copies {@link logFiles} into `dir` (made when missing), and says where. */
  saveLogs(dir: string): void {
    mkdirSync(dir, { recursive: true });
    const files = this.logFiles().filter((file) => existsSync(file));
    for (const file of files) copyFileSync(file, path.join(dir, path.basename(file)));
    process.stderr.write(`bench: ${files.length} logs copied into ${dir}\n`);
  }

  /** How many lines of the servers' and workers' logs tell of Temporal refusing with RESOURCE_EXHAUSTED. */
  resourceExhausted(): number {
    let count = 0;
    for (const file of this.logFiles()) {
      try {
        count += readFileSync(file, 'utf8')
          .split('\n')
          .filter((line) => line.includes('RESOURCE_EXHAUSTED')).length;
      } catch {
        // not written (yet)
      }
    }
    return count;
  }
}

/** The node process among the members of process group `group` whose command line holds `script`. */
export function nodeProcessOf(group: number, script: string): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name may hold spaces: the fields after it (state, ppid, pgrp, …) start after the last ")".
      const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      if (pgrp !== group) continue;
      // The node process itself, not a shell npm ran it through.
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (path.basename(argv[0]) === 'node' && argv.includes(script)) return Number(entry);
    } catch {
      // the process ended while the table was read
    }
  }
  throw new Error(`no process running ${script} in process group ${group}`);
}

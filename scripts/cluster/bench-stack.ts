/**
 * The bench's processes on the production-shaped stack (`npm run bench -- --cluster`): the cluster of
 * scripts/cluster/stack.ts in a folder of the run's own (two Temporal frontends on PostgreSQL behind HAProxy, two MCP
 * replicas behind it, the sample's workers), its replicas declaring the hold tool too, and a worker of the hold
 * workflow. The MCP side is reached through the balancer with the submitter's token.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { BenchStack, holdToolsFile } from '../lib/bench-stack';
import { Managed } from '../lib/processes';
import { BRIDGE_PROCESSES, ClusterStack, randomBasePort, TEMPORAL_SERVICES, type Part } from './stack';

const REPLICAS = ['mcp-1', 'mcp-2'] as const;

export class ClusterBenchStack extends BenchStack {
  readonly holdQueue = 'bench-hold';
  readonly shape = 'the cluster: two Temporal frontends on PostgreSQL and two MCP replicas behind HAProxy';
  client!: Client;
  private readonly cluster: ClusterStack;
  private readonly basePort = randomBasePort();
  private holdWorker?: Managed;
  private connection?: Connection;

  constructor(
    readonly pageSize: number,
    /** The replicas' environment for the run: limits off, watch keep, change feed. */
    replicaEnv: Record<string, string>,
  ) {
    super();
    // PostgreSQL runs as its own user when the bench runs as root: it must pass through the run's folder.
    chmodSync(this.dir, 0o711);
    this.cluster = new ClusterStack({
      dir: path.join(this.dir, 'cluster'),
      basePort: this.basePort,
      say: (line) => process.stderr.write(`bench: cluster: ${line}\n`),
      replicaArgs: ['--tools', holdToolsFile(this.dir, this.holdQueue)],
      replicaEnv: { MCP_TASK_PAGE_SIZE: String(pageSize), ...replicaEnv },
    });
  }

  get url(): string {
    return this.cluster.mcpUrl;
  }

  get address(): string {
    return this.cluster.temporalAddress;
  }

  get metricsPorts(): number[] {
    return [this.cluster.ports.services['frontend-a'].metrics, this.cluster.ports.services['frontend-b'].metrics];
  }

  override get mcpHeaders(): Record<string, string> {
    return { authorization: `Bearer ${this.cluster.tokenOf('submitter')}` };
  }

  async up(): Promise<void> {
    await this.cluster.up();
    this.holdWorker = new Managed(
      'the hold worker',
      process.execPath,
      () => ['--import', 'tsx', 'scripts/lib/hold-worker.ts', this.holdQueue],
      { ...process.env, TEMPORAL_ADDRESS: this.address, TEMPORAL_NAMESPACE: 'default', MCP_PAYLOAD_KEYS: this.cluster.payloadKeysFile },
      path.join(this.dir, 'hold-worker.log'),
    );
    await this.holdWorker.start().waitFor(/hold worker: polling/, 180_000);
    this.connection = await Connection.connect({ address: this.address });
    this.client = new Client({ connection: this.connection, namespace: 'default', dataConverter: this.cluster.dataConverter() });
  }

  serverPids(): number[] {
    return REPLICAS.map((part) => {
      const pid = this.cluster.pidOf(part);
      if (pid === undefined) throw new Error(`the cluster's ${part} is not running`);
      return pid;
    });
  }

  logFiles(): string[] {
    return [...BRIDGE_PROCESSES.map((part) => this.cluster.logOf(part)), path.join(this.dir, 'hold-worker.log')];
  }

  override saveLogs(dir: string): void {
    super.saveLogs(dir);
    for (const part of TEMPORAL_SERVICES) copyFileSync(this.cluster.logOf(part), path.join(dir, `${part}.log`));
  }

  async down(): Promise<void> {
    await Promise.all([this.holdWorker?.kill('SIGTERM'), this.stopInMemory()]);
    await this.connection?.close().catch(() => undefined);
    await this.cluster.down(true);
    rmSync(this.dir, { recursive: true, force: true });
  }

  killNow(): void {
    this.killInMemoryNow();
    const parts: Part[] = [...BRIDGE_PROCESSES, 'haproxy', 'ui', ...TEMPORAL_SERVICES];
    for (const pid of [this.holdWorker?.child?.pid, ...parts.map((part) => this.cluster.pidOf(part))]) {
      if (pid === undefined) continue;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    // PostgreSQL last, and the folder with it.
    spawnSync(process.execPath, ['--import', 'tsx', 'scripts/cluster/cluster.ts', 'down', '--purge'], {
      env: { ...process.env, CLUSTER_DIR: path.join(this.dir, 'cluster'), CLUSTER_BASE_PORT: String(this.basePort) },
      stdio: 'ignore',
    });
    rmSync(this.dir, { recursive: true, force: true });
  }
}

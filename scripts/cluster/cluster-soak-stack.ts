/**
 * The production-shaped stack as the soak's stack: what it kills is a Temporal frontend, the history or the matching
 * service, an MCP replica, a worker (each at random among its kind), or PostgreSQL (restarted), besides clients. The
 * submitter and the approvers are the principals of the stack's token file (`submitter`, `approver-a`, `approver-b`).
 */
import { mkdtempSync, appendFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { PublishedTaskState } from '../../src/contract/task-contract';
import type { Managed } from '../lib/processes';
import { sleep } from '../../src/util/wait';
import { cliClient, taskState } from '../lib/rig';
import type { FaultableNetwork } from '../soak/network-faults';
import type { SoakStack, StackPerson } from '../soak/soak-stack';
import { ClusterStack, randomBasePort, type Part } from './stack';

const VICTIMS = ['client', 'mcp-replica', 'worker', 'frontend', 'history', 'matching', 'postgres'] as const;

export class ClusterSoakStack implements SoakStack {
  readonly victims = VICTIMS;
  readonly stack: ClusterStack;
  client?: Client;
  private connection?: Connection;

  constructor(options: { workerEnv: Record<string, string>; networkFaults: boolean; say?: (line: string) => void }) {
    this.stack = new ClusterStack({
      dir: mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-soak-cluster-')),
      basePort: randomBasePort(),
      workerEnv: options.workerEnv,
      networkFaults: options.networkFaults,
      ...(options.say && { say: (line: string) => options.say!(`cluster: ${line}`) }),
    });
  }

  get dir(): string {
    return this.stack.dir;
  }

  /** Toxiproxy's links: the MCP replicas to Temporal's frontends, Temporal's services to PostgreSQL. */
  get network(): FaultableNetwork | undefined {
    const { stack } = this;
    return stack.networkFaults ? { api: stack.toxiproxy, proxies: stack.proxies.map((proxy) => proxy.name) } : undefined;
  }

  get ledgerDir(): string {
    return this.stack.ledgerDir;
  }

  get decisionStore(): string {
    return this.stack.decisionStore;
  }

  get taskQueue(): string {
    return this.stack.taskQueue;
  }

  get mcpUrl(): string {
    return this.stack.mcpUrl;
  }

  submitter(): StackPerson {
    return { principal: 'submitter', token: this.stack.tokenOf('submitter') };
  }

  approvers(): StackPerson[] {
    return ['approver-a', 'approver-b'].map((principal) => ({ principal, token: this.stack.tokenOf(principal) }));
  }

  async up(): Promise<void> {
    await this.stack.up();
    this.connection = await Connection.connect({ address: this.stack.temporalAddress });
    this.client = new Client({ connection: this.connection, dataConverter: this.stack.dataConverter() });
  }

  async down(keep: boolean): Promise<void> {
    await this.connection?.close().catch(() => undefined);
    await this.stack.down(!keep);
  }

  clientProcess(stateDir: string, args: string[], answersFile: string, logFile: string, answerDelayMs = 2500): Managed {
    return cliClient(this.stack.mcpUrl, {
      stateDir,
      args,
      answersFile,
      logFile,
      answerDelayMs,
      env: process.env,
      token: this.submitter().token,
    });
  }

  state(taskId: string): Promise<{ published?: PublishedTaskState; closed: boolean } | undefined> {
    return taskState(this.client!, taskId);
  }

  mark(text: string): void {
    appendFileSync(path.join(this.stack.dir, 'logs', 'soak-marks.log'), `${new Date().toISOString()} ${text}\n`);
  }

  async killAndRestart(victim: string, alsoKilling: Promise<unknown>[]): Promise<void> {
    await Promise.all(alsoKilling);
    if (victim === 'client') return;
    if (victim === 'postgres') {
      await this.stack.restartPostgres();
      return;
    }
    const kinds: Record<string, Part[]> = {
      'mcp-replica': ['mcp-1', 'mcp-2'],
      worker: ['worker-1', 'worker-2'],
      frontend: ['frontend-a', 'frontend-b'],
      history: ['history'],
      matching: ['matching'],
    };
    const choices = kinds[victim];
    if (!choices) throw new Error(`the cluster has no victim "${victim}"`);
    const part = choices[Math.floor(Math.random() * choices.length)];
    this.mark(`kill ${part}`);
    await this.stack.kill(part);
    await this.supervisedStart(part);
    if (part.startsWith('mcp') || part.startsWith('frontend')) await this.stack.balancerReady();
  }

  /**
   * Starts `part` again as a supervisor would (systemd's Restart=on-failure): a part that stops during its start (a
   * Temporal service that cannot reach PostgreSQL through a fault of the network) is started again, for 5 minutes.
   */
  private async supervisedStart(part: Part): Promise<void> {
    const deadline = Date.now() + 5 * 60_000;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.stack.start(part);
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        this.mark(`start ${part} failed (attempt ${attempt}): ${(error as Error).message.split('\n')[0]}; starting it again`);
        await this.stack.kill(part);
        await sleep(2_000);
      }
    }
  }
}

/**
 * The stack of real processes the drill and the soak run the invoice flow on: a Temporal dev server, a worker and an
 * MCP server on Streamable HTTP, each of which can be killed with SIGKILL and started again, plus CLI clients. Every
 * process logs into the rig's folder, which is kept when a run fails and removed when it passes.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { TASK_STATE_MEMO, type PublishedTaskState } from '../../src/contract/task-contract';
import { pollUntil, sleep } from '../../src/util/wait';
import { freePort, Managed, pidAlive, ROOT } from './processes';
import { tokenIn, writeTokensFile } from './tokens-file';

/** Tuning that makes each step of the flow take long enough to be hit by a kill. */
export const WORKER_ENV = { ERP_DELAY_MS: '2500', PAYMENT_DELAY_MS: '1500', PAYMENT_FAIL_ATTEMPTS: '1' };

/** The line items of every drill and soak invoice; LI-3 is scheduled months out and released by an operator. */
export const LINE_ITEMS = ['LI-1', 'LI-2', 'LI-3'];

/** What the rig's processes are told besides the defaults. */
export interface RigOptions {
  /** Prefix of the rig's temporary folder. */
  name: string;
  workerEnv?: Record<string, string>;
  /** Settings of the MCP server besides the defaults (e.g. a token file). */
  serverEnv?: Record<string, string>;
  /**
   * People of a token file the rig writes and gives the MCP server (MCP_AUTH_TOKENS_FILE), each `principal` or
   * `principal role,role`; each gets a fresh token ({@link Rig.tokenOf}).
   */
  people?: readonly string[];
  /** The arguments of `node` that run the worker; default the invoice example's worker. */
  workerArgs?: readonly string[];
  /** What the server serves, after `--http`; default the sample tools (`--samples`). */
  serveArgs?: readonly string[];
}

/** The processes of one run, and how to kill and restart each. */
export class Rig {
  readonly dir: string;
  readonly logDir: string;
  readonly ledgerDir: string;
  readonly taskQueue = `rig-${Date.now().toString(36)}`;
  temporalPort = 0;
  serverPort = 0;
  worker!: Managed;
  server!: Managed;
  private connection?: Connection;
  client?: Client;

  constructor(private readonly options: RigOptions) {
    this.dir = mkdtempSync(path.join(os.tmpdir(), `temporal-mcp-${options.name}-`));
    this.logDir = path.join(this.dir, 'logs');
    mkdirSync(this.logDir);
    this.ledgerDir = path.join(this.dir, 'payments');
  }

  get address(): string {
    return `127.0.0.1:${this.temporalPort}`;
  }

  get url(): string {
    return `http://127.0.0.1:${this.serverPort}/mcp`;
  }

  /** The worker's notification outbox (JSON lines). */
  get outbox(): string {
    return path.join(this.dir, 'notifications.jsonl');
  }

  /** The decision store the MCP server and the worker share: signed decision records, one folder per task. */
  get decisionStore(): string {
    return path.join(this.dir, 'decisions');
  }

  /** The token file of {@link RigOptions.people}. */
  get tokensFile(): string {
    return path.join(this.dir, 'tokens');
  }

  /** The token of `principal` in the rig's token file (written by `up`). */
  tokenOf(principal: string): string {
    return tokenIn(this.tokensFile, principal);
  }

  /** The dev server's own log (written by temporal-dev.sh). */
  get temporalLog(): string {
    return path.join(this.dir, `dev-${this.temporalPort}.log`);
  }

  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      ...process.env,
      TEMPORAL_ADDRESS: this.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: this.taskQueue,
      PAYMENTS_LEDGER: this.ledgerDir,
      ERP_REGISTRY: path.join(this.dir, 'erp'),
      NOTIFICATION_OUTBOX: this.outbox,
      // In the rig's folder, not the checkout's .data: the server appends decision records, the worker checks them.
      MCP_DECISION_STORE: this.decisionStore,
      MCP_TASK_POLL_INTERVAL_MS: '300',
      // Every simulated client acts for one local principal: its rate limit would measure the crowd, not the faults.
      MCP_TASK_OPS_PER_SECOND: '0',
      ...extra,
    };
  }

  private temporalDev(command: 'start' | 'stop'): void {
    const run = spawnSync(path.join(ROOT, 'temporal-dev.sh'), [command], {
      env: {
        ...process.env,
        TEMPORAL_PORT: String(this.temporalPort),
        TEMPORAL_STATE_DIR: this.dir,
        TEMPORAL_HEADLESS: '1',
        TEMPORAL_DB_FILE: '',
      },
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`./temporal-dev.sh ${command} failed:\n${run.stderr}`);
  }

  async up(): Promise<void> {
    this.temporalPort = await freePort();
    this.serverPort = await freePort();
    const people = this.options.people ?? [];
    if (people.length > 0) {
      writeTokensFile(this.tokensFile, people);
    }
    this.temporalDev('start');
    this.connection = await Connection.connect({ address: this.address });
    this.client = new Client({ connection: this.connection });
    const node = process.execPath;
    this.worker = new Managed(
      'worker',
      node,
      () => [...(this.options.workerArgs ?? ['--import', 'tsx', 'examples/invoice-approval/src/worker.ts'])],
      // The drill answers every approval as the submitter, so its books count one question per invoice; the soak
      // sets a role of its own.
      this.env({ INVOICE_APPROVER_ROLE: 'requester', ...(this.options.workerEnv ?? WORKER_ENV) }),
      path.join(this.logDir, 'worker.log'),
    );
    this.server = new Managed(
      'server',
      node,
      () => [
        '--import',
        'tsx',
        'src/mcp/serve/main.ts',
        '--http',
        `127.0.0.1:${this.serverPort}`,
        ...(this.options.serveArgs ?? ['--samples']),
      ],
      this.env({ ...(people.length > 0 && { MCP_AUTH_TOKENS_FILE: this.tokensFile }), ...this.options.serverEnv }),
      path.join(this.logDir, 'server.log'),
    );
    await Promise.all([this.startWorker(), this.startServer()]);
  }

  async startWorker(): Promise<void> {
    await this.worker.start().waitFor(/worker: polling/);
  }

  async startServer(): Promise<void> {
    await this.server.start().waitFor(/MCP Streamable HTTP on/);
  }

  /** SIGKILLs the dev server and resolves once its process is gone (or a zombie): a restart must not find it alive. */
  async killTemporal(): Promise<void> {
    const pid = Number(readFileSync(path.join(this.dir, `dev-${this.temporalPort}.pid`), 'utf8'));
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return;
    }
    await pollUntil(() => (pidAlive(pid) ? undefined : true), { what: `the dev server (pid ${pid}) to die`, timeoutMs: 30_000 });
  }

  restartTemporal(): void {
    this.temporalDev('start');
  }

  /**
   * SIGKILLs the chosen parts of the stack, together with whatever `alsoKilling` kills (clients), then starts the
   * parts again and resolves once they serve.
   */
  async killAndRestart(
    parts: { server: boolean; worker: boolean; temporal: boolean },
    alsoKilling: Promise<unknown>[] = [],
  ): Promise<void> {
    await Promise.all([
      ...alsoKilling,
      parts.server ? this.server.kill() : undefined,
      parts.worker ? this.worker.kill() : undefined,
      parts.temporal ? this.killTemporal() : undefined,
    ]);
    await sleep(500);
    if (parts.temporal) this.restartTemporal();
    await Promise.all([parts.worker ? this.startWorker() : undefined, parts.server ? this.startServer() : undefined]);
  }

  /** Writes a marker into the server's and worker's logs, so a failed cell's lines can be found. */
  mark(text: string): void {
    const line = `\n=== ${new Date().toISOString()} ${text}\n`;
    this.server?.log(line);
    this.worker?.log(line);
  }

  /** A CLI client against the rig's MCP server, logging to `logFile`; answers come from `answersFile`. */
  clientProcess(stateDir: string, args: string[], answersFile: string, logFile: string, answerDelayMs = 2500): Managed {
    return cliClient(this.url, { stateDir, args, answersFile, logFile, answerDelayMs, env: this.env() });
  }

  /** The task's published state and whether it is closed; undefined while Temporal is unreachable. */
  state(taskId: string): Promise<{ published?: PublishedTaskState; closed: boolean } | undefined> {
    return taskState(this.client!, taskId);
  }

  /** Stops everything; removes the folder unless `keep` (a failed run keeps its logs for diagnosis). */
  async down(keep: boolean): Promise<void> {
    await Promise.all([this.worker?.kill('SIGTERM'), this.server?.kill('SIGTERM')]);
    await this.connection?.close().catch(() => undefined);
    try {
      this.temporalDev('stop');
    } finally {
      if (!keep) rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

/** Writes a drill/soak invoice (three line items, the last one due in three months) to `file`. */
export function writeInvoice(file: string): void {
  const payOn = new Date(Date.now() + 90 * 86_400_000).toISOString().slice(0, 10);
  writeFileSync(
    file,
    JSON.stringify({
      vendorId: 'V-100',
      invoiceNumber: `INV-RIG-${Math.random().toString(36).slice(2, 10).toUpperCase()}`,
      currency: 'EUR',
      lineItems: [
        { lineItemId: 'LI-1', description: 'Paid at once', amount: 100 },
        { lineItemId: 'LI-2', description: 'Paid at once', amount: 20.5 },
        { lineItemId: 'LI-3', description: 'Paid in three months', amount: 7.25, payOn },
      ],
    }),
  );
}

/** The last JSON line a client printed (its --json outcome), or undefined. */
export function printedOutcome(output: string): { status?: string; result?: any } | undefined {
  const line = output
    .trim()
    .split('\n')
    .filter((candidate) => candidate.startsWith('{'))
    .pop();
  if (!line) return undefined;
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** A CLI client process (`src/client/main.ts`) against `url`, answering from `answersFile`, printing its outcome as JSON. */
export function cliClient(
  url: string,
  options: {
    stateDir: string;
    args: string[];
    answersFile: string;
    logFile: string;
    answerDelayMs: number;
    env: NodeJS.ProcessEnv;
    token?: string;
  },
): Managed {
  const common = ['--url', url, '--state-dir', options.stateDir, '--answers-file', options.answersFile, '--no-input', '--json'];
  const extra = [
    '--answer-delay-ms',
    String(options.answerDelayMs),
    '--reconnect-timeout',
    '150',
    ...(options.token ? ['--token', options.token] : []),
  ];
  return new Managed(
    'client',
    process.execPath,
    () => ['--import', 'tsx', 'src/client/main.ts', ...options.args, ...common, ...extra],
    options.env,
    options.logFile,
  );
}

/** A task's published state and whether it is closed; undefined while Temporal is unreachable. */
export async function taskState(client: Client, taskId: string): Promise<{ published?: PublishedTaskState; closed: boolean } | undefined> {
  try {
    const description = await client.workflow.getHandle(taskId).describe();
    return {
      published: description.memo?.[TASK_STATE_MEMO] as PublishedTaskState | undefined,
      closed: description.status.name !== 'RUNNING',
    };
  } catch {
    return undefined;
  }
}

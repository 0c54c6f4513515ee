/**
 * The fault drill: npm run drill [-- --quick] [-- --help]
 *
 * Runs the invoice flow with real processes (Temporal dev server, worker, MCP server on HTTP, CLI client), kills
 * some of them with SIGKILL at a chosen moment, restarts them, and checks that the task still ends exactly as an
 * undisturbed run: completed and paid, each line item paid once in the ledger, the approval asked of the human once.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { PaymentsLedger } from './activities/payments';
import { LocalTaskStore } from './mcp/client/store';
import { TASK_STATE_MEMO, type PublishedTaskState } from './workflows/task-contract';

const ROOT = path.resolve(__dirname, '..');

/** Moments of the invoice flow at which the drill kills. */
export const MOMENTS = ['before-approval', 'approval-in-flight', 'during-payment', 'timer-wait'] as const;
export type Moment = (typeof MOMENTS)[number];

/** What the drill kills. */
export const VICTIMS = ['client', 'server', 'worker', 'temporal', 'all'] as const;
export type Victim = (typeof VICTIMS)[number];

/** One cell of the matrix. */
export interface DrillCell {
  moment: Moment | 'undisturbed';
  victim: Victim | 'none';
}

/** The verdict on one cell. */
export interface DrillResult extends DrillCell {
  ok: boolean;
  outcome: string;
  /** Ledger lines for the task, and whether each line item appears exactly once. */
  ledger: string;
  /** How often the human was asked for the approval (must be 1). */
  humanAsks: number;
  /** From the restart of what was killed to the task's completion, in ms. */
  recoverMs?: number;
  totalMs: number;
  problems: string[];
}

/** The reduced matrix run by `npm test`: every victim once, every moment at least once. */
export const QUICK_CELLS: DrillCell[] = [
  { moment: 'before-approval', victim: 'worker' },
  { moment: 'approval-in-flight', victim: 'client' },
  { moment: 'approval-in-flight', victim: 'server' },
  { moment: 'during-payment', victim: 'temporal' },
  { moment: 'timer-wait', victim: 'all' },
];

/** Every moment × every victim. */
export const FULL_CELLS: DrillCell[] = MOMENTS.flatMap((moment) => VICTIMS.map((victim) => ({ moment, victim })));

const LINE_ITEMS = ['LI-1', 'LI-2', 'LI-3'];

/** Tuning that opens each moment wide enough to hit it. */
const WORKER_ENV = { ERP_DELAY_MS: '2500', PAYMENT_DELAY_MS: '1500', PAYMENT_FAIL_ATTEMPTS: '1' };
const ANSWER_DELAY_MS = 2500;
const CELL_TIMEOUT_MS = 180_000;

/** A TCP port on 127.0.0.1 that nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A child process in a process group of its own, so that SIGKILL takes all of it. */
class Managed {
  child?: ChildProcess;
  output = '';

  constructor(
    readonly name: string,
    private readonly command: string,
    private readonly args: () => string[],
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  start(): this {
    this.output = '';
    const child = spawn(this.command, this.args(), { cwd: ROOT, env: this.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    child.stdout!.on('data', (chunk) => (this.output += chunk));
    child.stderr!.on('data', (chunk) => (this.output += chunk));
    this.child = child;
    return this;
  }

  get running(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  async waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(this.output)) {
      if (!this.running) throw new Error(`${this.name} exited before it was ready:\n${this.output.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`${this.name} was not ready within ${timeoutMs} ms:\n${this.output.slice(-2000)}`);
      await sleep(50);
    }
  }

  exited(): Promise<number | null> {
    const child = this.child!;
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
    return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
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

/** The processes of one drill, and how to kill and restart each. */
class Rig {
  readonly dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-drill-'));
  readonly ledgerFile = path.join(this.dir, 'payments.jsonl');
  readonly taskQueue = `drill-${Date.now().toString(36)}`;
  temporalPort = 0;
  serverPort = 0;
  worker!: Managed;
  server!: Managed;
  private connection?: Connection;
  client?: Client;

  get address(): string {
    return `127.0.0.1:${this.temporalPort}`;
  }

  get url(): string {
    return `http://127.0.0.1:${this.serverPort}/mcp`;
  }

  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      ...process.env,
      TEMPORAL_ADDRESS: this.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: this.taskQueue,
      PAYMENTS_LEDGER: this.ledgerFile,
      ERP_REGISTRY: path.join(this.dir, 'erp.jsonl'),
      MCP_TASK_POLL_INTERVAL_MS: '300',
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
    this.temporalDev('start');
    this.connection = await Connection.connect({ address: this.address });
    this.client = new Client({ connection: this.connection });
    const node = process.execPath;
    this.worker = new Managed('worker', node, () => ['--import', 'tsx', 'src/worker.ts'], this.env(WORKER_ENV));
    this.server = new Managed(
      'server',
      node,
      () => ['--import', 'tsx', 'src/mcp/main.ts', '--http', `127.0.0.1:${this.serverPort}`],
      this.env(),
    );
    await Promise.all([this.startWorker(), this.startServer()]);
  }

  async startWorker(): Promise<void> {
    await this.worker.start().waitFor(/worker: polling/);
  }

  async startServer(): Promise<void> {
    await this.server.start().waitFor(/MCP Streamable HTTP on/);
  }

  killTemporal(): void {
    const pid = Number(readFileSync(path.join(this.dir, `dev-${this.temporalPort}.pid`), 'utf8'));
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  restartTemporal(): void {
    this.temporalDev('start');
  }

  /** The task's published state and whether it is closed; undefined while Temporal is unreachable. */
  async state(taskId: string): Promise<{ published?: PublishedTaskState; closed: boolean } | undefined> {
    try {
      const description = await this.client!.workflow.getHandle(taskId).describe();
      return {
        published: description.memo?.[TASK_STATE_MEMO] as PublishedTaskState | undefined,
        closed: description.status.name !== 'RUNNING',
      };
    } catch {
      return undefined;
    }
  }

  async down(): Promise<void> {
    await Promise.all([this.worker?.kill('SIGTERM'), this.server?.kill('SIGTERM')]);
    await this.connection?.close().catch(() => undefined);
    try {
      this.temporalDev('stop');
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

function clientProcess(rig: Rig, stateDir: string, args: string[], answersFile: string): Managed {
  const common = ['--url', rig.url, '--state-dir', stateDir, '--answers-file', answersFile, '--no-input', '--json'];
  const extra = ['--answer-delay-ms', String(ANSWER_DELAY_MS), '--reconnect-timeout', '150'];
  return new Managed(
    'client',
    process.execPath,
    () => ['--import', 'tsx', 'src/mcp/client/cli.ts', ...args, ...common, ...extra],
    rig.env(),
  );
}

async function waitUntil<T>(check: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Runs one cell: a fresh invoice, a kill at the moment, restarts, and the checks. */
async function runCell(rig: Rig, cell: DrillCell): Promise<DrillResult> {
  const started = Date.now();
  const problems: string[] = [];
  const cellDir = mkdtempSync(path.join(rig.dir, 'cell-'));
  const stateDir = path.join(cellDir, 'client-state');
  const answersFile = path.join(cellDir, 'answers.json');
  const invoiceFile = path.join(cellDir, 'invoice.json');
  writeFileSync(answersFile, JSON.stringify({ approval: { decision: 'approve', comment: 'drill' } }));
  const payOn = new Date(Date.now() + 90 * 86_400_000).toISOString().slice(0, 10);
  writeFileSync(
    invoiceFile,
    JSON.stringify({
      vendorId: 'V-100',
      invoiceNumber: `INV-DRILL-${Math.random().toString(36).slice(2, 10).toUpperCase()}`,
      currency: 'EUR',
      lineItems: [
        { lineItemId: 'LI-1', description: 'Paid at once', amount: 100 },
        { lineItemId: 'LI-2', description: 'Paid at once', amount: 20.5 },
        { lineItemId: 'LI-3', description: 'Paid in three months', amount: 7.25, payOn },
      ],
    }),
  );

  let client = clientProcess(rig, stateDir, ['call', 'process_invoice', '--args', `@${invoiceFile}`], answersFile).start();
  try {
    return await driveCell(rig, cell, {
      started,
      problems,
      cellDir,
      stateDir,
      answersFile,
      client: () => client,
      replace: (next) => (client = next),
    });
  } finally {
    await client.kill();
  }
}

interface CellContext {
  started: number;
  problems: string[];
  cellDir: string;
  stateDir: string;
  answersFile: string;
  client(): Managed;
  replace(client: Managed): void;
}

async function driveCell(rig: Rig, cell: DrillCell, context: CellContext): Promise<DrillResult> {
  const { started, problems, cellDir, stateDir, answersFile } = context;
  const store = new LocalTaskStore(stateDir);
  const taskId = await waitUntil(() => store.tasks()[0]?.taskId, 'the task id in the client store', 60_000);

  const atMoment = async (moment: Moment): Promise<boolean> => {
    const state = await rig.state(taskId);
    const message = state?.published?.statusMessage ?? '';
    switch (moment) {
      case 'before-approval':
        return message.startsWith('Checking invoice');
      case 'approval-in-flight':
        return (store.task(taskId)?.asked.size ?? 0) > 0 && !state?.closed && state?.published?.status === 'input_required';
      case 'during-payment':
        return /paying line item/.test(message);
      case 'timer-wait':
        return state?.published?.status === 'working' && /scheduled:/.test(message);
    }
  };

  // The operator releases the scheduled line item once the task waits on its timer (after any recovery).
  let released = false;
  const release = async () => {
    if (released) return;
    const state = await rig.state(taskId);
    if (!(state?.published?.status === 'working' && /scheduled:/.test(state.published.statusMessage ?? ''))) return;
    const operator = clientProcess(
      rig,
      path.join(cellDir, 'operator-state'),
      ['call', 'release_scheduled_payment', '--args', JSON.stringify({ taskId, lineItemId: 'LI-3' })],
      answersFile,
    ).start();
    if ((await operator.exited()) === 0) released = true;
  };

  let recoverFrom: number | undefined;
  if (cell.moment !== 'undisturbed' && cell.victim !== 'none') {
    const moment = cell.moment;
    await waitUntil(async () => ((await atMoment(moment)) ? true : undefined), `the moment ${moment}`, 60_000);
    const victim = cell.victim;
    const hit = (name: Victim) => victim === name || victim === 'all';
    await Promise.all([
      hit('client') ? context.client().kill() : undefined,
      hit('server') ? rig.server.kill() : undefined,
      hit('worker') ? rig.worker.kill() : undefined,
      hit('temporal') ? rig.killTemporal() : undefined,
    ]);
    await sleep(500);
    if (hit('temporal')) rig.restartTemporal();
    await Promise.all([hit('worker') ? rig.startWorker() : undefined, hit('server') ? rig.startServer() : undefined]);
    if (hit('client')) context.replace(clientProcess(rig, stateDir, ['resume', taskId], answersFile).start());
    recoverFrom = Date.now();
  }

  const client = context.client();
  const deadline = Date.now() + CELL_TIMEOUT_MS;
  while (client.running && Date.now() < deadline) {
    await release();
    await sleep(200);
  }
  if (client.running) {
    problems.push(`the client did not finish within ${CELL_TIMEOUT_MS / 1000} s`);
    await client.kill();
  }
  const code = await client.exited();
  let outcome = 'none';
  try {
    const printed = JSON.parse(
      client.output
        .trim()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .pop() ?? '{}',
    );
    outcome = printed.result?.structuredContent?.outcome ?? printed.status ?? 'none';
    if (printed.status !== 'completed') problems.push(`task ended ${printed.status}`);
    const paid = (printed.result?.structuredContent?.payments ?? []).map((p: { lineItemId: string }) => p.lineItemId).sort();
    if (JSON.stringify(paid) !== JSON.stringify(LINE_ITEMS)) problems.push(`result lists payments ${paid.join(',') || 'none'}`);
  } catch {
    problems.push('the client printed no result');
  }
  if (code !== 0) problems.push(`client exit code ${code}: ${client.output.trim().split('\n').slice(-3).join(' | ')}`);
  if (outcome !== 'paid') problems.push(`outcome ${outcome}, expected paid`);

  const entries = (await new PaymentsLedger(rig.ledgerFile).entries()).filter((entry) => entry.taskId === taskId);
  const keys = entries.map((entry) => entry.lineItemId).sort();
  const once = JSON.stringify(keys) === JSON.stringify(LINE_ITEMS);
  if (!once) problems.push(`ledger holds ${keys.join(',') || 'nothing'} for the task`);
  const humanAsks = store.task(taskId)?.humanAnswers.get('approval') ?? 0;
  if (humanAsks !== 1) problems.push(`the human answered the approval ${humanAsks} times`);

  return {
    ...cell,
    ok: problems.length === 0,
    outcome,
    ledger: `${entries.length}/${LINE_ITEMS.length} ${once ? 'once' : 'WRONG'}`,
    humanAsks,
    ...(recoverFrom !== undefined && { recoverMs: Date.now() - recoverFrom }),
    totalMs: Date.now() - started,
    problems,
  };
}

/** Runs the cells one after another on one rig, and returns their verdicts. */
export async function runDrill(cells: DrillCell[], log: (line: string) => void = () => undefined): Promise<DrillResult[]> {
  const rig = new Rig();
  const results: DrillResult[] = [];
  log(`drill: starting a dev server, a worker and an MCP server (work dir ${rig.dir})`);
  await rig.up();
  try {
    for (const cell of [{ moment: 'undisturbed', victim: 'none' } as DrillCell, ...cells]) {
      log(`drill: ${cell.moment} × kill ${cell.victim} …`);
      let result: DrillResult;
      try {
        result = await runCell(rig, cell);
      } catch (error) {
        result = { ...cell, ok: false, outcome: 'error', ledger: '-', humanAsks: 0, totalMs: 0, problems: [(error as Error).message] };
        // Bring every process back for the next cell.
        if (!rig.worker.running) await rig.startWorker().catch(() => undefined);
        if (!rig.server.running) await rig.startServer().catch(() => undefined);
      }
      log(`drill:   ${result.ok ? 'pass' : 'FAIL'} ${result.problems.join('; ')}`);
      results.push(result);
    }
  } finally {
    await rig.down();
  }
  return results;
}

/** The matrix as text: moment × killed → outcome, ledger check, human asks, time to recover. */
export function formatMatrix(results: DrillResult[]): string {
  const rows = [
    ['moment', 'killed', 'verdict', 'outcome', 'ledger', 'approval asked', 'restart→done', 'total'],
    ...results.map((r) => [
      r.moment,
      r.victim,
      r.ok ? 'pass' : 'FAIL',
      r.outcome,
      r.ledger,
      String(r.humanAsks),
      r.recoverMs === undefined ? '-' : `${(r.recoverMs / 1000).toFixed(1)} s`,
      `${(r.totalMs / 1000).toFixed(1)} s`,
    ]),
  ];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column])).join('  ')).join('\n');
}

const HELP = `Usage: npm run drill [-- --quick] [-- --help]

Kills parts of the system with SIGKILL at four moments of the invoice flow (before approval is asked, while the
approval elicitation is in flight, during payments, while a scheduled payment's timer waits), restarts them, and
checks that every run ends completed and paid, each line item paid once in the ledger, the approval asked once.
Victims: the client, the MCP server, the worker, the Temporal dev server, and all of them at once.

  --quick   the reduced matrix that npm test runs (${QUICK_CELLS.length} cells instead of ${FULL_CELLS.length})

It starts its own dev server, worker and MCP server in a temporary directory, and removes them at the end.
Exit code 0 when every cell passes, 1 otherwise.
`;

if (require.main === module) {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const unknown = argv.find((arg) => arg !== '--quick');
  if (unknown) {
    process.stderr.write(`drill: unknown argument "${unknown}"; see --help\n`);
    process.exit(2);
  }
  const cells = argv.includes('--quick') ? QUICK_CELLS : FULL_CELLS;
  runDrill(cells, (line) => process.stderr.write(`${line}\n`)).then(
    (results) => {
      process.stdout.write(`${formatMatrix(results)}\n`);
      const failed = results.filter((r) => !r.ok);
      for (const r of failed) process.stdout.write(`FAIL ${r.moment} × ${r.victim}: ${r.problems.join('; ')}\n`);
      process.stdout.write(`drill: ${results.length - failed.length} passed, ${failed.length} failed\n`);
      process.exit(failed.length === 0 ? 0 : 1);
    },
    (error: Error) => {
      process.stderr.write(`drill: ${error.stack ?? error.message}\n`);
      process.exit(1);
    },
  );
}

/**
 * Benchmarks: npm run bench [-- --tasks N] [-- --help]
 *
 * One run against one Temporal dev server it starts itself, with a worker and the MCP server (`npm run serve --
 * --http`) as processes of their own. The MCP side is driven by the MCP SDK client over Streamable HTTP; where a
 * figure has a raw Temporal counterpart (start, describe, signal), that is measured in the same run and the ratio
 * printed. Figures, not assertions: see --help for what each row measures.
 */
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Agent } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client, Connection } from '@temporalio/client';
import { PaymentsLedger } from '../examples/invoice-approval/src/activities/payments';
import { argumentsDigest } from '../src/util/arguments-digest';
import { markerFromEnv } from '../src/core/marker';
import { answerSealFromEnv } from '../src/shared/answer-proof';
import { localPrincipal } from '../src/core/principal';
import { PRINCIPAL_KEY } from '../src/core/principal';
import {
  pendingInputsOf,
  respondSignal,
  TASK_META_MEMO,
  TASK_STATE_MEMO,
  type InputContent,
  type PublishedTaskState,
  type TaskMeta,
} from '../src/contract/task-contract';
import { pollUntil, sleep } from '../src/util/wait';
import { writePlot } from './lib/plot';
import { mcp2026Post, mcp2026TaskGet, pollerAgent, runFleet, type FleetFigures, type Read } from './lib/poller-fleet';
import { InboxRig, type InboxSample } from './lib/inbox-delay';
import { heapGrowth, summarizeHeapSnapshot, takeHeapSnapshot } from './lib/heap-snapshot';
import { freePort, Managed, quickSampleWorkerEnv, ROOT } from './lib/processes';
import { ClusterBenchStack } from './cluster/bench-stack';
import { BenchStack, HOLD_ID_PREFIX, HOLD_TOOL, HOLD_WORKFLOW_TYPE, holdToolsFile, nodeProcessOf } from './lib/bench-stack';

/** Starts of each kind in the creation row, and how many are in flight at once. */
const CREATE_STARTS = 200;
const CREATE_IN_FLIGHT = 8;
/** Tasks in flight while the N listed tasks are created. */
const BULK_IN_FLIGHT = 16;
/** tasks/get and describe() pairs per task state. */
const GET_SAMPLES = 200;
/** How long the heap row leaves the server idle after its snapshot before it reads the RSS again. */
const HEAP_IDLE_MS = 60_000;
/** Creates each followed at once by a read: through the bridge, and raw. */
const CREATED_READ_SAMPLES = 100;
/** Answers timed through each path, and closes timed against a blocked tasks/result. */
const ANSWER_SAMPLES = 20;
const CLOSE_SAMPLES = 20;
/** Answers through one replica read through another, idle and with one core kept busy. */
const CROSS_SAMPLES = 50;
/** Invoices whose approval question is timed into the approver's inbox, idle and with one core kept busy. */
const INBOX_SAMPLES = 20;
/** Blocked tasks/result calls while Temporal's request counters are read, and for how long. */
const IDLE_WAITS = 100;
const IDLE_WINDOW_MS = 60_000;
/** Pause between two reads while waiting for a change to show (both paths alike). */
const READ_INTERVAL_MS = 5;
/**
 * Tasks the server watches for reads at most (MCP_WATCH_LIMIT, 10,000 for the run unless set: the dev server holds
 * 20,000 long polls of a namespace at once), how long it keeps a watch after a read (MCP_WATCH_KEEP_MS, set for the
 * run), and reads in flight while they are read.
 */
const WATCH_LIMIT = Number(process.env.MCP_WATCH_LIMIT ?? 10_000) || 10_000;
const WATCH_KEEP_MS = 30_000;
const READ_IN_FLIGHT = 32;
/** The page of tasks/list timed besides the first. */
const FAR_PAGE = 100;

/** The ttl the server grants when the client asks for none (24 h, within the dev server's retention). */
const DEFAULT_TTL_MS = 24 * 3600_000;
const APPROVE: InputContent = { decision: 'approve' };

/** The rows, printed in this order whatever order they were measured in. */
const ROW_ORDER = [
  'create',
  'get',
  'get-input',
  'get-created',
  'codec',
  'answer',
  'close',
  'cross',
  'inbox',
  'bulk',
  'list',
  'rss',
  'watched',
  'heap',
  'rpcs',
  'pollers',
  'ledger',
] as const;
type RowKey = (typeof ROW_ORDER)[number];
/**
 * A figure's goal, printed beside it: `[goal ≥ 0.90: met]` or `[goal ≥ 0.90: NOT MET]` (the goals of issue-sized
 * targets: creation at 0.9 × a raw start, reads no slower than a describe, 0.05 Temporal requests a poll, a closed task
 * in its waiting client within 100 ms).
 */
function goal(value: number, op: '≥' | '≤' | '<', target: number, digits = 2): string {
  const met = op === '≥' ? value >= target : op === '≤' ? value <= target : value < target;
  return `[goal ${op} ${target.toFixed(digits)}: ${met ? 'met' : 'NOT MET'}]`;
}

/** The rows --rows names (get-input comes with get). */
const SELECTABLE_ROWS = ROW_ORDER.filter((key) => key !== 'get-input' && key !== 'get-created');
/** Tasks created and read through each server of the codec row. */
const CODEC_SAMPLES = 200;
/** The rows the cluster runs: those of creating, listing, following and polling tasks. */
const CLUSTER_ROWS: readonly RowKey[] = ['create', 'bulk', 'list', 'rss', 'watched', 'pollers'];

/** What each row measures, for --help: the row's label and its explanation, a line at a time. */
const ROW_HELP: [string, string[]][] = [
  [
    `create, ${CREATE_IN_FLIGHT} in flight`,
    [
      `${CREATE_STARTS} task-augmented tools/call of a tool whose workflow runs on a task queue no`,
      `worker polls, against ${CREATE_STARTS} raw client.workflow.start of the same workflow type with`,
      'the same options (memo, McpPrincipal, task queue, id policies), in alternating blocks;',
      "tasks/s of each, their ratio, and the MCP server's CPU time per call.",
    ],
  ],
  [
    'tasks/get vs describe',
    [
      'tasks/get against a raw describe() of the same task, alternately, one at a time, as a',
      `client polls: each task read once before (timed apart: "first read"), then measured; on`,
      `${GET_SAMPLES} running tasks, and on ${IDLE_WAITS} tasks waiting for input (whose first read also reads`,
      "the newest history events); p50/p95, the ratio of the p50s, and the MCP server's CPU",
      'time per call.',
      `Then a read right after a create (on ${CREATED_READ_SAMPLES} more tasks of each): tools/call then at`,
      'once tasks/get, against a raw start then at once describe(); the p50s of the reads.',
    ],
  ],
  [
    'payload codec on vs off',
    [
      `${CODEC_SAMPLES} task-augmented tools/call of the hold tool through a second MCP server whose payloads are`,
      `encrypted (MCP_PAYLOAD_KEYS) against as many through the plain one, ${CREATE_IN_FLIGHT} in flight, in alternating`,
      "blocks: tasks/s and their ratio. Then each task's first tasks/get (its watch, which the create",
      'started, decodes the memo) and a second one, alternately on either server: p50s and ratios.',
    ],
  ],
  [
    'answer → working',
    [
      'from sending an answer until the task stops reading input_required: task_respond,',
      'then tasks/get; against a raw signal of the same answer, then describe() until the',
      `published memo changes (which needs the worker). Both read every ${READ_INTERVAL_MS} ms;`,
      `${ANSWER_SAMPLES} answers each.`,
    ],
  ],
  [
    'close → tasks/result',
    [
      `${CLOSE_SAMPLES} tasks with a tasks/result already blocked on each (the client declared no`,
      'elicitation, so nothing is asked), answered one by one with task_respond; from the',
      "workflow's close time (describe().closeTime) to the moment tasks/result returned.",
    ],
  ],
  [
    'cross-replica read delay',
    [
      `${CROSS_SAMPLES} tasks waiting for input, each read through one replica until its watch serves it, then`,
      'answered with task_respond through a second replica (another client, as an approver on',
      'another replica is); from the moment that answer returned until a tasks/get through the',
      'first replica, repeated without pause, no longer reads input_required. p50/p99/max, and how',
      'many answers the first read after them still missed; idle, then again with a CPU hog',
      'keeping one of the cores busy.',
    ],
  ],
  [
    'inbox: question shown',
    [
      `${INBOX_SAMPLES} invoices submitted as tasks one at a time by a submitter, on a worker and an MCP server of their`,
      'own (INVOICE_APPROVER_ROLE=ap-approver on a second task queue; bearer tokens for the submitter',
      'and for an approver holding ap-approver); the approver calls approvals_inbox every',
      `${READ_INTERVAL_MS} ms until the question shows, then approves it, and the invoice is awaited to its end`,
      "before the next. p50/p95/max from the question's askedAt (the workflow publishing it) to the",
      'first inbox call that listed it, and from the submit; idle (after one unmeasured invoice),',
      `then with a CPU hog keeping one of the cores busy, then while the bench's server creates`,
      `hold tasks ${BULK_IN_FLIGHT} at a time (the load of "create N"). Then the p50 of each step, from the`,
      "workflow's history: submit → WorkflowExecutionStarted → first workflow task completed →",
      'validation activity completed → the workflow task that published the question (memo and',
      'McpAwaiting) completed → a raw ListWorkflowExecutions of the inbox query (repeated beside the',
      'inbox, at the same pace) listed it → approvals_inbox listed it.',
    ],
  ],
  [`create N, ${BULK_IN_FLIGHT} in flight`, ['how long creating the N tasks of the next rows took, through tools/call.']],
  [
    `tasks/list page 1 / ${FAR_PAGE}`,
    [
      `ms for the first page and the ${FAR_PAGE}th (or the last, when there are fewer), walking the`,
      'pages of the one principal that owns the N tasks; with the p50 of all pages and the slowest.',
    ],
  ],
  [
    'server RSS',
    ["VmRSS of the MCP server's node process (/proc/<pid>/status) when idle and after the N", 'tasks were created, with its peak (VmHWM).'],
  ],
  [
    'server RSS, N watched',
    [
      'each of the N tasks (at most 10,000, the watch limit) read once with tasks/get; VmRSS after,',
      'and its growth per watched task (a read keeps its task watched for 30 s).',
    ],
  ],
  [
    'server heap',
    [
      "the MCP server's live heap (a V8 heap snapshot, which collects first) when idle and after",
      'the N tasks were created, listed, read once and their watches ended; its growth per task, and',
      'the kinds of objects that grew most (own sizes): what holds the memory RSS shows; the RSS',
      `right after the snapshot's collection and ${HEAP_IDLE_MS / 1000} s later.`,
    ],
  ],
  [
    `Temporal RPCs, ${IDLE_WAITS} waits`,
    [
      `${IDLE_WAITS} tasks/result blocked on ${IDLE_WAITS} tasks waiting for input nobody gives, worker`,
      `stopped: frontend requests of namespace "default" per second over ${IDLE_WINDOW_MS / 1000} s, from the`,
      "dev server's own service_requests counters, with the busiest operations.",
    ],
  ],
  ['ledger', ['500 concurrent payments into one payments ledger file (in this process).']],
  [
    'pollers N',
    [
      'N pollers (--pollers), each reading its own working task with tasks/get of 2026-07-28 once a',
      'second over Streamable HTTP (keep-alive connections), for --poll-seconds after 10 s of',
      'warm-up; the same fleet against an in-memory MCP task server (same SDK, same HTTP glue,',
      'tasks in a Map), and as raw describe() calls. get p50/p99 against describe and in-memory;',
      "Temporal requests per poll and per second from the dev server's counters (the workers'",
      "task-queue polls left out); the MCP server's CPU per get against the in-memory server's;",
      "the server's RSS growth over the fleet, per polled (watched) task.",
    ],
  ],
];

const HELP = `Usage: npm run bench [-- --tasks N] [-- --help]

Starts a Temporal dev server (./temporal-dev.sh, a temporary state folder, free ports, Prometheus metrics on), a
worker and the MCP server (npm run serve -- --http 127.0.0.1:<port>, the local principal) as processes of their own, drives
the server with the MCP SDK client over Streamable HTTP, and prints one row per figure. Where a figure wraps a raw
Temporal call, that call is measured in the same run and the ratio printed. Everything it started is stopped at
the end, on error and on Ctrl-C.

Options:
  --tasks N            tasks created for the tasks/list and memory rows (default 1000)
  --pollers N[,N…]     sizes of the poller fleets (default 100,1000; at most the tasks there are, plus 200);
                       none: no fleets
  --poll-seconds S     seconds each fleet is measured (default 60)
  --logs DIR           copy the logs of the processes the run started (servers, workers, Temporal's services on
                       the cluster) into DIR at the end, before the run's folder is removed
  --plot FILE          also draw get latency and Temporal requests/s against the pollers into FILE (PNG)
  --rows KEY[,KEY…]    measure only these rows (default all), of: ${SELECTABLE_ROWS.slice(0, 7).join(', ')},
                       ${SELECTABLE_ROWS.slice(7).join(', ')}; the tasks a row needs are created for it all the
                       same (get needs create's tasks, pollers the N tasks and create's); e.g. --rows inbox
  --change-feed MS     run the servers with the change feed (MCP_CHANGE_FEED_MS=MS): polled tasks followed by one
                       visibility query per MS for all of them, not a history long poll each; the hold tool's
                       workflows then run on a worker of their own, so that they stamp their state as workflows do
  --quotas             keep the rate limit and the open-task quota on (at bounds the bench never reaches), so that
                       each request pays for them; with MCP_SHARED_STATE in the environment, in PostgreSQL
  --cluster            on the production-shaped stack of 'npm run cluster' instead (started in a folder of the
                       run's own and removed after it): Temporal's two frontends on PostgreSQL, two MCP replicas
                       behind HAProxy, reached with a token; its replicas follow polled tasks with the change feed
                       (every 500 ms unless --change-feed says otherwise) and the hold tool's workflows run on a
                       worker of their own. Rows ${CLUSTER_ROWS.join(', ')} only; CPU and memory are
                       the two replicas' summed, Temporal's requests the two frontends' summed
  -h, --help           show this help

MCP_TASK_PAGE_SIZE (default 20) is passed to the server. Rows, in order:

${ROW_HELP.map(([label, lines]) => `  ${label.padEnd(28)}${lines.join(`\n${' '.repeat(30)}`)}`).join('\n')}
`;

interface Args {
  help: boolean;
  rows: Set<RowKey>;
  tasks: number;
  pollers: number[];
  pollSeconds: number;
  plot?: string;
  /** A folder the processes' logs are copied into at the end. */
  logs?: string;
  quotas: boolean;
  /** The servers' MCP_CHANGE_FEED_MS; none: the feed is off. */
  changeFeedMs?: number;
  /** On the production-shaped cluster (ClusterBenchStack) rather than one dev server. */
  cluster: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    help: false,
    rows: new Set(SELECTABLE_ROWS),
    tasks: 1000,
    pollers: [100, 1000],
    pollSeconds: 60,
    quotas: false,
    cluster: false,
  };
  let rowsNamed = false;
  const wholeNumber = (name: string, value: string | undefined) => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`${name} needs a whole number above 0 (got "${value ?? ''}")`);
    return parsed;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [name, inline] =
      arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg];
    const value = () => inline ?? argv[++i];
    if (name === '--help' || name === '-h') args.help = true;
    else if (name === '--tasks') args.tasks = wholeNumber('--tasks', value());
    else if (name === '--quotas') args.quotas = true;
    else if (name === '--cluster') args.cluster = true;
    else if (name === '--change-feed') args.changeFeedMs = wholeNumber('--change-feed', value());
    else if (name === '--pollers') {
      const list = value();
      args.pollers = list === 'none' ? [] : (list ?? '').split(',').map((each) => wholeNumber('--pollers', each.trim()));
      if (args.pollers.includes(0)) throw new Error('--pollers takes fleet sizes from 1 up, or "none"');
    } else if (name === '--rows') {
      const list = (value() ?? '').split(',').map((each) => each.trim());
      const unknown = list.filter((each) => !(SELECTABLE_ROWS as readonly string[]).includes(each));
      if (unknown.length > 0 || list.length === 0)
        throw new Error(`--rows takes row keys separated by commas, of ${SELECTABLE_ROWS.join(', ')} (got "${unknown.join(',')}")`);
      args.rows = new Set(list as RowKey[]);
      rowsNamed = true;
    } else if (name === '--poll-seconds') args.pollSeconds = wholeNumber('--poll-seconds', value());
    else if (name === '--logs') {
      args.logs = value();
      if (!args.logs) throw new Error('--logs needs a folder, e.g. --logs /tmp/bench-logs');
    } else if (name === '--plot') {
      args.plot = value();
      if (!args.plot) throw new Error('--plot needs a file name, e.g. --plot docs/images/bench-pollers.png');
    } else throw new Error(`unknown argument "${arg}"; see --help`);
  }
  if (args.cluster) {
    const elsewhere = [...args.rows].filter((key) => !CLUSTER_ROWS.includes(key));
    if (rowsNamed && elsewhere.length > 0)
      throw new Error(`--cluster measures the rows ${CLUSTER_ROWS.join(', ')}; not ${elsewhere.join(', ')}`);
    if (args.quotas) throw new Error('--cluster runs with the limits off; --quotas is for one dev server');
    if (!rowsNamed) args.rows = new Set(CLUSTER_ROWS);
    args.changeFeedMs ??= 500;
  }
  const most = Math.max(0, ...args.pollers);
  if (most > args.tasks + CREATE_STARTS)
    throw new Error(`--pollers ${most} needs at least ${most - CREATE_STARTS} tasks: add --tasks ${most - CREATE_STARTS}`);
  return args;
}

/** The processes of one run: the dev server, a worker and the MCP server, and a Temporal client of the bench's own. */
class Stack extends BenchStack {
  readonly taskQueue = `bench-${Date.now().toString(36)}`;
  readonly holdQueue = `${this.taskQueue}-hold`;
  temporalPort = 0;
  metricsPort = 0;
  serverPort = 0;
  replicaPort = 0;
  worker?: Managed;
  /** The hold workflow's worker, with the change feed on. */
  holdWorker?: Managed;
  server?: Managed;
  replica?: Managed;
  /** The codec row's MCP server, whose payloads are encrypted; started by that row. */
  encrypting?: Managed;
  encryptingPort = 0;
  inbox?: InboxRig;
  private keys?: ReturnType<Stack['decisionKeys']>;
  client!: Client;
  private connection?: Connection;

  constructor(
    readonly pageSize: number,
    /** Keeps the rate limit and the open-task quota on, at bounds the bench never reaches: each request pays for them. */
    readonly quotas = false,
    /** The servers' MCP_CHANGE_FEED_MS (none: off). */
    readonly changeFeedMs?: number,
  ) {
    super();
  }

  readonly shape = 'one dev server, one MCP server';

  get metricsPorts(): number[] {
    return [this.metricsPort];
  }

  get address(): string {
    return `127.0.0.1:${this.temporalPort}`;
  }

  get url(): string {
    return `http://127.0.0.1:${this.serverPort}/mcp`;
  }

  get replicaUrl(): string {
    return `http://127.0.0.1:${this.replicaPort}/mcp`;
  }

  async up(): Promise<void> {
    // One after another: ports asked for at the same time could come back equal.
    this.temporalPort = await freePort();
    this.metricsPort = await freePort();
    this.serverPort = await freePort();
    this.replicaPort = await freePort();
    this.dev('start');
    this.keys = this.decisionKeys();
    this.connection = await Connection.connect({ address: this.address });
    this.client = new Client({ connection: this.connection, namespace: 'default' });
    const toolsFile = holdToolsFile(this.dir, this.holdQueue);
    const env = this.processEnv();
    this.worker = new Managed(
      'the worker',
      process.execPath,
      () => ['--import', 'tsx', 'examples/invoice-approval/src/worker.ts'],
      {
        ...env,
        ...quickSampleWorkerEnv(this.dir),
        // The bench answers approvals as the submitter: it measures the bridge, not how long approvers take.
        INVOICE_APPROVER_ROLE: 'requester',
      },
      path.join(this.dir, 'worker.log'),
    );
    this.server = this.mcpServer('the MCP server', this.serverPort, toolsFile, env, 'server.log');
    // A second replica on the same Temporal, for the cross-replica row: started now, it stays idle until then.
    this.replica = this.mcpServer('the second MCP replica', this.replicaPort, toolsFile, env, 'replica.log');
    if (this.changeFeedMs !== undefined) {
      this.holdWorker = new Managed(
        'the hold worker',
        process.execPath,
        () => ['--import', 'tsx', 'scripts/lib/hold-worker.ts', this.holdQueue],
        env,
        path.join(this.dir, 'hold-worker.log'),
      );
    }
    await Promise.all([
      this.holdWorker?.start().waitFor(/hold worker: polling/, 180_000),
      this.worker.start().waitFor(/worker: polling/, 180_000),
      this.server.start().waitFor(/MCP Streamable HTTP on/),
      this.replica.start().waitFor(/MCP Streamable HTTP on/),
    ]);
  }

  /** The environment of the run's servers and workers: its dev server, task queue and decision keys. */
  private processEnv(): NodeJS.ProcessEnv {
    return {
      ...process.env,
      TEMPORAL_ADDRESS: this.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: this.taskQueue,
      ...this.keys,
    };
  }

  /**
   * A decision key pair of the run's own (the servers sign decision records with its private half, the workers check
   * them with its public half), so that a machine without the default pair in ~/.config runs the bench all the same
   * and the bench leaves no key behind.
   */
  private decisionKeys(): { MCP_DECISION_SIGNING_KEY: string; MCP_DECISION_PUBLIC_KEY: string } {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const signing = path.join(this.dir, 'decision-signing-key.pem');
    const verifying = path.join(this.dir, 'decision-signing-key.pub.pem');
    writeFileSync(signing, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    writeFileSync(verifying, publicKey.export({ type: 'spki', format: 'pem' }));
    return { MCP_DECISION_SIGNING_KEY: signing, MCP_DECISION_PUBLIC_KEY: verifying };
  }

  /** An MCP server process (`npm run serve -- --http`) on `port`, with the sample tools, the bench's tools and settings. */
  private mcpServer(name: string, port: number, toolsFile: string, env: NodeJS.ProcessEnv, log: string): Managed {
    return new Managed(
      name,
      'npm',
      () => ['run', '-s', 'serve', '--', '--http', `127.0.0.1:${port}`, '--samples', '--tools', toolsFile],
      // N open tasks of one principal is the point of the list rows: the open-task quota is off for the bench (on, with
      // --quotas, at a bound it never reaches).
      {
        ...env,
        MCP_TASK_PAGE_SIZE: String(this.pageSize),
        MCP_MAX_OPEN_TASKS_PER_PRINCIPAL: this.quotas ? '1000000' : '0',
        MCP_TASK_OPS_PER_SECOND: this.quotas ? '1000000' : '0',
        MCP_WATCH_KEEP_MS: String(WATCH_KEEP_MS),
        MCP_WATCH_LIMIT: process.env.MCP_WATCH_LIMIT ?? String(WATCH_LIMIT),
        ...(this.changeFeedMs !== undefined && { MCP_CHANGE_FEED_MS: String(this.changeFeedMs) }),
        // The poller fleets come from one address, up to 256 connections per endpoint.
        MCP_HTTP_MAX_CONNECTIONS: '2048',
        MCP_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0',
        // The heap row has the server write heap snapshots into the bench's folder.
        NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${this.dir}`,
      },
      path.join(this.dir, log),
    );
  }

  /** The MCP server's node process: the member of npm's process group that runs src/mcp/serve/main.ts. */
  serverPid(): number {
    const group = this.server?.child?.pid;
    if (group === undefined) throw new Error('the MCP server is not running');
    return nodeProcessOf(group, 'src/mcp/serve/main.ts');
  }

  serverPids(): number[] {
    return [this.serverPid()];
  }

  logFiles(): string[] {
    return ['server.log', 'replica.log', 'encrypting.log', 'worker.log', 'hold-worker.log'].map((file) => path.join(this.dir, file));
  }

  async stopWorker(): Promise<void> {
    await this.worker?.kill('SIGTERM');
  }

  /**
   * A second MCP server on the same Temporal and tools whose payloads are encrypted (MCP_PAYLOAD_KEYS, a key of the
   * run's own), for the codec row; its endpoint. Stopped by {@link down}.
   */
  async startEncryptingServer(): Promise<string> {
    const keys = path.join(this.dir, 'payload-keys');
    writeFileSync(keys, `bench ${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    this.encryptingPort = await freePort();
    const env = { ...this.processEnv(), MCP_PAYLOAD_KEYS: keys };
    this.encrypting = this.mcpServer(
      'the encrypting MCP server',
      this.encryptingPort,
      holdToolsFile(this.dir, this.holdQueue),
      env,
      'encrypting.log',
    );
    await this.encrypting.start().waitFor(/MCP Streamable HTTP on/);
    return `http://127.0.0.1:${this.encryptingPort}/mcp`;
  }

  /** The approver-inbox row's worker and server ({@link InboxRig}), started; stopped by the row or by {@link down}. */
  async startInbox(): Promise<InboxRig> {
    this.inbox = new InboxRig({ dir: this.dir, address: this.address, taskQueue: this.taskQueue, client: this.client, env: this.keys });
    await this.inbox.start();
    return this.inbox;
  }

  async down(): Promise<void> {
    await Promise.all([
      this.inbox?.stop(),
      this.worker?.kill('SIGTERM'),
      this.holdWorker?.kill('SIGTERM'),
      this.server?.kill('SIGTERM'),
      this.replica?.kill('SIGTERM'),
      this.encrypting?.kill('SIGTERM'),
      this.stopInMemory(),
    ]);
    await this.connection?.close().catch(() => undefined);
    this.stopDev();
  }

  /** Stops everything at once (a signal arrived): SIGKILL to the process groups, then the dev server. */
  killNow(): void {
    this.inbox?.killNow();
    this.killInMemoryNow();
    for (const managed of [this.worker, this.holdWorker, this.server, this.replica, this.encrypting]) {
      if (!managed?.running) continue;
      try {
        process.kill(-managed.child!.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    this.stopDev();
  }

  private stopDev(): void {
    try {
      if (this.temporalPort !== 0) this.dev('stop');
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  private dev(command: 'start' | 'stop'): void {
    const run = spawnSync(path.join(ROOT, 'temporal-dev.sh'), [command], {
      env: {
        ...process.env,
        TEMPORAL_PORT: String(this.temporalPort),
        TEMPORAL_METRICS_PORT: String(this.metricsPort),
        TEMPORAL_STATE_DIR: this.dir,
        TEMPORAL_HEADLESS: '1',
        TEMPORAL_DB_FILE: '',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (run.status !== 0) throw new Error(`./temporal-dev.sh ${command} failed`);
  }
}

/** An MCP SDK client over Streamable HTTP that declares tasks and no elicitation: the server never asks it anything. */
async function connectMcp(url: string, name: string, headers: Record<string, string> = {}): Promise<McpClient> {
  const client = new McpClient({ name, version: '1.0.0' }, { capabilities: { tasks: { list: {}, cancel: {} } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

/** Runs `work(0…count-1)` with `inFlight` calls at a time; returns the elapsed ms. */
async function inParallel(count: number, inFlight: number, work: (index: number) => Promise<void>, onDone?: (done: number) => void) {
  const started = performance.now();
  let next = 0;
  let done = 0;
  const lane = async () => {
    while (next < count) {
      await work(next++);
      onDone?.(++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, lane));
  return performance.now() - started;
}

async function timed(samples: number[], work: () => Promise<unknown>): Promise<void> {
  const started = performance.now();
  await work();
  samples.push(performance.now() - started);
}

/** The nearest-rank percentile. */
function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

const ms = (value: number) => `${value.toFixed(1)} ms`;
const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;

/** VmRSS and VmHWM (peak) of a process, in KiB. */
function memoryOf(pids: number | readonly number[]): { rss: number; peak: number } {
  if (typeof pids !== 'number') {
    return pids
      .map((pid) => memoryOf(pid))
      .reduce((sum, each) => ({ rss: sum.rss + each.rss, peak: sum.peak + each.peak }), { rss: 0, peak: 0 });
  }
  const pid = pids;
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/** Clock ticks per second, the unit of the CPU times in /proc/<pid>/stat. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/** CPU time (user and system) a process has used so far, in ms. */
function cpuMsOf(pids: number | readonly number[]): number {
  if (typeof pids !== 'number') return pids.reduce((sum, pid) => sum + cpuMsOf(pid), 0);
  const pid = pids;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // utime and stime are fields 14 and 15; the fields after the command name start at field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** Temporal's count of frontend requests in namespace "default", by operation (service_requests), over every frontend. */
async function frontendRequests(metricsPorts: readonly number[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const port of metricsPorts) await addFrontendRequests(port, counts);
  return counts;
}

async function addFrontendRequests(metricsPort: number, counts: Map<string, number>): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  if (!response.ok) throw new Error(`Temporal's metrics on port ${metricsPort} answered ${response.status}`);
  for (const line of (await response.text()).split('\n')) {
    if (!line.startsWith('service_requests{')) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1], match[2]]));
    if (labels.namespace !== 'default' || labels.service_name !== 'frontend') continue;
    const value = Number(/\}\s+(\S+)/.exec(line)?.[1]);
    counts.set(labels.operation, (counts.get(labels.operation) ?? 0) + value);
  }
}

/** Non-worker frontend requests per second over a window of `ms`. */
async function requestRate(metricsPorts: readonly number[], ms: number): Promise<number> {
  const before = await frontendRequests(metricsPorts);
  const started = performance.now();
  await sleep(ms);
  const after = await frontendRequests(metricsPorts);
  let total = 0;
  for (const [operation, value] of after) {
    if (!WORKER_POLLS.has(operation) && !FEED_QUERIES.has(operation)) total += value - (before.get(operation) ?? 0);
  }
  return total / ((performance.now() - started) / 1000);
}

/**
 * Waits until what earlier rows left behind has stopped asking Temporal: the watches their reads kept end
 * {@link WATCH_KEEP_MS} after the last read, plus the server's 5 s linger (a kept watch is silent for most of that
 * time, between long polls, so only its end tells), then a window of {@link SETTLE_WINDOW_MS} with no request besides
 * the workers' polls, or {@link SETTLE_TIMEOUT_MS}. Returns the rate of the last window (0 when settled).
 */
async function settle(metricsPorts: readonly number[]): Promise<number> {
  process.stderr.write(`bench: waiting ${(WATCH_KEEP_MS + 6000) / 1000} s for the watches earlier reads kept to end…\n`);
  await sleep(WATCH_KEEP_MS + 6000);
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  let rate = await requestRate(metricsPorts, SETTLE_WINDOW_MS);
  while (rate > 0 && Date.now() < deadline) rate = await requestRate(metricsPorts, SETTLE_WINDOW_MS);
  return rate;
}

function progress(what: string, total: number): (done: number) => void {
  const step = Math.max(1, Math.round(total / 10));
  return (done) => {
    if (done % step === 0 || done === total) process.stderr.write(`bench: ${what}… ${done}/${total}\n`);
  };
}

/** A task of the hold tool, created by a 2026-07-28 tools/call through the MCP server. */
async function createHoldTask2026(stack: BenchStack, agent: Agent, n: number): Promise<string> {
  const created = await mcp2026Post(stack.url, agent, 'tools/call', { name: HOLD_TOOL, arguments: { n } }, HOLD_TOOL, stack.mcpHeaders);
  if (typeof created.taskId !== 'string')
    throw new Error(`tools/call ${HOLD_TOOL} answered no task: ${JSON.stringify(created).slice(0, 200)}`);
  return created.taskId;
}

/** A task of the hold tool, created through the MCP server. */
async function createHoldTask(mcp: McpClient, n: number): Promise<string> {
  const created = await mcp.request(
    { method: 'tools/call', params: { name: HOLD_TOOL, arguments: { n }, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

const RAW_MARKER = markerFromEnv();
const RAW_SEAL = answerSealFromEnv();

/** The same start the server makes for the hold tool, made directly. */
async function startHoldWorkflow(stack: BenchStack, n: number): Promise<string> {
  const workflowId = `${HOLD_ID_PREFIX}-${randomUUID()}`;
  // What the server writes too: its principal for this user and host, and its HMAC mark.
  const principal = localPrincipal();
  const input = { n };
  const createdAt = new Date().toISOString();
  const digest = argumentsDigest(input);
  const meta: TaskMeta = {
    tool: HOLD_TOOL,
    ttl: DEFAULT_TTL_MS,
    pollInterval: 1000,
    createdAt,
    argumentsDigest: digest,
    marker: RAW_MARKER.sign({ workflowId, principal, tool: HOLD_TOOL, argumentsDigest: digest, createdAt }),
  };
  await stack.client.workflow.start(HOLD_WORKFLOW_TYPE, {
    taskQueue: stack.holdQueue,
    workflowId,
    args: [input],
    memo: { [TASK_META_MEMO]: meta },
    typedSearchAttributes: [{ key: PRINCIPAL_KEY, value: principal }],
    workflowIdConflictPolicy: 'FAIL',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
  });
  return workflowId;
}

/** An invoice task (process_invoice) created through the MCP server; it asks for approval once the worker got to it. */
async function createInvoiceTask(mcp: McpClient, n: number): Promise<string> {
  const invoice = {
    vendorId: 'V-100',
    invoiceNumber: `INV-B${n}-${randomUUID().slice(0, 8)}`,
    currency: 'EUR',
    lineItems: [{ lineItemId: 'LI-1', description: 'Bench', amount: 1 }],
  };
  const created = await mcp.request(
    { method: 'tools/call', params: { name: 'process_invoice', arguments: invoice, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

async function publishedState(stack: BenchStack, taskId: string): Promise<PublishedTaskState | undefined> {
  const description = await stack.client.workflow.getHandle(taskId).describe();
  return description.memo?.[TASK_STATE_MEMO] as PublishedTaskState | undefined;
}

async function respond(mcp: McpClient, taskId: string): Promise<void> {
  const result = (await mcp.callTool({
    name: 'task_respond',
    arguments: { taskId, action: 'accept', content: APPROVE },
  })) as CallToolResult;
  if (result.isError) throw new Error(`task_respond on ${taskId}: ${JSON.stringify(result.content)}`);
}

/**
 * For each task (waiting for input): read through `reader` until its replica serves it from its watch, answer it
 * through `writer` (another replica), then read through `reader` without pause until it no longer reads
 * input_required. The delays from the answer's return to that read's, and how many first reads still missed it.
 */
async function crossReplicaDelays(
  reader: McpClient,
  writer: McpClient,
  ids: readonly string[],
): Promise<{ delays: number[]; stale: number }> {
  const delays: number[] = [];
  let stale = 0;
  for (const id of ids) {
    await reader.experimental.tasks.getTask(id);
    // The watch has read the history and answers again within this: the next read comes from it.
    await sleep(300);
    await reader.experimental.tasks.getTask(id);
    await respond(writer, id);
    const answered = performance.now();
    let reads = 0;
    await pollUntil(
      async () => {
        reads++;
        return (await reader.experimental.tasks.getTask(id)).status !== 'input_required' ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 0, what: `task ${id} to leave input_required through the other replica` },
    );
    delays.push(performance.now() - answered);
    if (reads > 1) stale++;
  }
  return { delays, stale };
}

/** Seconds each fleet runs before its window. */
const FLEET_WARMUP_SECONDS = 10;
/** The workers' own long polls of their task queues: not requests the bridge makes. */
const WORKER_POLLS = new Set(['PollWorkflowTaskQueue', 'PollActivityTaskQueue', 'PollNexusTaskQueue']);
/**
 * With the change feed on, its queries (ListWorkflowExecutions) go on as long as reads are kept: a quiet window before a
 * row waits for everything else. They are counted in the rows like any request.
 */
const FEED_QUERIES = new Set<string>();
/** A quiet window before a row that counts Temporal's requests, and how long to wait for one. */
const SETTLE_WINDOW_MS = 3000;
const SETTLE_TIMEOUT_MS = 90_000;

/** What one fleet size measured, for its row and the plot. */
interface FleetPoint {
  pollers: number;
  getP50: number;
  getP99: number;
  describeP50: number;
  inMemoryP50: number;
  rpcPerSecond: number;
}

/** A fleet's run with the CPU a process used in its window and the dev server's requests in it. */
async function measuredFleet(
  ids: readonly string[],
  read: Read,
  seconds: number,
  pids: readonly number[] | undefined,
  metricsPorts: readonly number[],
): Promise<FleetFigures & { cpuMs: number; requests: Map<string, number>; rss?: number }> {
  let cpu = 0;
  let before = new Map<string, number>();
  const requests = new Map<string, number>();
  let rss: number | undefined;
  const figures = await runFleet(ids, read, {
    warmupSeconds: FLEET_WARMUP_SECONDS,
    seconds,
    onWindowStart: async () => {
      if (pids !== undefined) cpu = cpuMsOf(pids);
      before = await frontendRequests(metricsPorts);
    },
    onWindowEnd: async () => {
      if (pids !== undefined) {
        cpu = cpuMsOf(pids) - cpu;
        rss = memoryOf(pids).rss;
      }
      for (const [operation, value] of await frontendRequests(metricsPorts)) {
        const delta = value - (before.get(operation) ?? 0);
        if (delta > 0 && !WORKER_POLLS.has(operation)) requests.set(operation, delta);
      }
    },
  });
  return { ...figures, cpuMs: cpu, requests, ...(rss !== undefined && { rss }) };
}

/** The poller rows: for each fleet size, the bridge, the in-memory server and raw describes under the same load. */
async function pollerRows(args: Args, stack: BenchStack, servers: number[], ids: string[]): Promise<string> {
  const lines: string[] = [];
  const points: FleetPoint[] = [];
  const agent = pollerAgent();
  const memory = await stack.inMemoryServer();
  const memoryIds: string[] = [];
  const most = Math.max(...args.pollers);
  await inParallel(most, BULK_IN_FLIGHT, async () => {
    const created = await mcp2026Post(memory.url, agent, 'tools/call', { name: 'hold', arguments: {} }, 'hold');
    memoryIds.push(String(created.taskId));
  });
  const seconds = args.pollSeconds;
  for (const pollers of args.pollers) {
    process.stderr.write(`bench: ${pollers} pollers, ${seconds} s each on the bridge, the in-memory server and raw describe…
`);
    const residual = await settle(stack.metricsPorts);
    const rssBefore = memoryOf(servers).rss;
    const bridge = await measuredFleet(
      ids.slice(0, pollers),
      mcp2026TaskGet(stack.url, agent, stack.mcpHeaders),
      seconds,
      servers,
      stack.metricsPorts,
    );
    const inMemory = await measuredFleet(
      memoryIds.slice(0, pollers),
      mcp2026TaskGet(memory.url, agent),
      seconds,
      [memory.pid],
      stack.metricsPorts,
    );
    const describe = await measuredFleet(
      ids.slice(0, pollers),
      async (id) => void (await stack.client.workflow.getHandle(id).describe()),
      seconds,
      undefined,
      stack.metricsPorts,
    );
    const reads = bridge.latencies.length + bridge.failures;
    const requests = [...bridge.requests.values()].reduce((sum, value) => sum + value, 0);
    const busiest = [...bridge.requests]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 2)
      .map(([operation, value]) => `${operation} ${(value / (bridge.windowMs / 1000)).toFixed(1)}/s`)
      .join(', ');
    const cpuPerGet = bridge.cpuMs / Math.max(reads, 1);
    const memoryCpuPerGet = inMemory.cpuMs / Math.max(inMemory.latencies.length, 1);
    const point: FleetPoint = {
      pollers,
      getP50: percentile(bridge.latencies, 50),
      getP99: percentile(bridge.latencies, 99),
      describeP50: percentile(describe.latencies, 50),
      inMemoryP50: percentile(inMemory.latencies, 50),
      rpcPerSecond: requests / (bridge.windowMs / 1000),
    };
    points.push(point);
    const grown = (bridge.rss ?? rssBefore) - rssBefore;
    const unsettled = residual > 0 ? `; ${residual.toFixed(1)} req/s before the fleet started` : '';
    const failed = [bridge, inMemory, describe].some((fleet) => fleet.failures > 0)
      ? `; failed reads ${bridge.failures} / ${inMemory.failures} / ${describe.failures} (${bridge.firstFailure ?? inMemory.firstFailure ?? describe.firstFailure})`
      : '';
    lines.push(
      `${`pollers ${pollers}, 1/s, ${seconds} s`.padEnd(32)}get p50 ${ms(point.getP50)} p99 ${ms(point.getP99)} vs describe p50 ${ms(point.describeP50)}  ratio ${(point.getP50 / point.describeP50).toFixed(2)}` +
        `   in-memory server p50 ${ms(point.inMemoryP50)} p99 ${ms(percentile(inMemory.latencies, 99))}  (${reads} gets${failed})`,
      `${''.padEnd(32)}Temporal ${(requests / Math.max(reads, 1)).toFixed(3)} req/poll ${goal(requests / Math.max(reads, 1), '≤', 0.05)}, ${point.rpcPerSecond.toFixed(1)} req/s (${busiest || 'none'})` +
        `   server CPU ${cpuPerGet.toFixed(2)} ms/get vs in-memory ${memoryCpuPerGet.toFixed(2)} ms/get  ratio ${(cpuPerGet / memoryCpuPerGet).toFixed(2)} ${goal(cpuPerGet / memoryCpuPerGet, '≤', 1)}` +
        `   RSS ${grown >= 0 ? '+' : ''}${mib(grown)} (${(grown / pollers).toFixed(1)} KiB per polled task${unsettled})`,
    );
  }
  agent.destroy();
  const refused = stack.resourceExhausted();
  lines.push(
    `${"Temporal's refusals".padEnd(32)}RESOURCE_EXHAUSTED ${refused} times in the MCP servers' and workers' logs over the run ${goal(refused, '≤', 0, 0)}`,
  );
  if (args.plot) {
    const xs = points.map((point) => point.pollers);
    await writePlot(
      args.plot,
      xs,
      [
        {
          title: 'tasks/get latency',
          yLabel: 'ms (log scale)',
          logY: true,
          series: [
            { label: 'bridge get p50', color: '#1f6feb', values: points.map((point) => point.getP50) },
            { label: 'bridge get p99', color: '#1f6feb', dashed: true, values: points.map((point) => point.getP99) },
            { label: 'raw describe p50', color: '#d29922', values: points.map((point) => point.describeP50) },
            { label: 'in-memory server p50', color: '#57ab5a', values: points.map((point) => point.inMemoryP50) },
          ],
        },
        {
          title: 'Temporal requests while polling',
          yLabel: 'requests/s (log scale)',
          logY: true,
          series: [
            { label: 'bridge', color: '#1f6feb', values: points.map((point) => point.rpcPerSecond) },
            { label: 'one describe per poll', color: '#d29922', dashed: true, values: points.map((point) => point.pollers) },
          ],
        },
      ],
      `npm run bench: each poller reads its own working task once a second over Streamable HTTP; ${os.cpus().length} cores, ${seconds} s per point`,
    );
    process.stderr.write(`bench: plot written to ${args.plot}\n`);
  }
  return lines.join('\n');
}

/**
 * The approver-inbox row: {@link INBOX_SAMPLES} invoices, one at a time, on the stack's {@link InboxRig}, idle, with
 * one core kept busy, and while the bench's server creates tasks {@link BULK_IN_FLIGHT} at a time (the load of the
 * "create N" row); the rig is stopped at the end.
 */
async function inboxRow(stack: Stack, mcp: McpClient): Promise<string> {
  process.stderr.write('bench: starting the approvals worker and server for the inbox row…\n');
  const rig = await stack.startInbox();
  let next = 0;
  const phase = async (what: string) => {
    process.stderr.write(`bench: ${INBOX_SAMPLES} invoices into the approver's inbox, ${what}…\n`);
    const load = os.loadavg()[0];
    const taken: InboxSample[] = [];
    for (let i = 0; i < INBOX_SAMPLES; i++) taken.push(await rig.sample(next++, READ_INTERVAL_MS));
    return { what, taken, load };
  };
  const phases: Awaited<ReturnType<typeof phase>>[] = [];
  let createdMeanwhile = 0;
  let creation: string | undefined;
  try {
    // The first invoice meets cold paths (the server's first visibility query, the worker's first run of the flow).
    await rig.sample(next++, READ_INTERVAL_MS);
    phases.push(await phase('idle'));
    const hog = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
    try {
      phases.push(await phase('one core busy'));
    } finally {
      hog.kill('SIGKILL');
    }
    let creating = true;
    const started = performance.now();
    const lane = async () => {
      while (creating) {
        await createHoldTask(mcp, createdMeanwhile);
        createdMeanwhile++;
      }
    };
    const lanes = Array.from({ length: BULK_IN_FLIGHT }, lane);
    try {
      phases.push(await phase(`creating tasks`));
    } finally {
      creating = false;
      await Promise.all(lanes);
      creation = `${createdMeanwhile} tasks created meanwhile, ${(createdMeanwhile / ((performance.now() - started) / 1000)).toFixed(1)}/s`;
    }
  } finally {
    await rig.stop();
    stack.inbox = undefined;
  }
  const spread = (values: number[]) => `p50 ${ms(percentile(values, 50))} p95 ${ms(percentile(values, 95))} max ${ms(Math.max(...values))}`;
  const p50 = (taken: InboxSample[], span: (sample: InboxSample) => number) => ms(percentile(taken.map(span), 50));
  const lines = phases.flatMap(({ what, taken, load }) => [
    `${what}: askedAt → inbox ${spread(taken.map((s) => s.seen - s.asked))}   submit → inbox ${spread(taken.map((s) => s.seen - s.submitted))}` +
      `  (an inbox call p50 ${ms(
        percentile(
          taken.flatMap((s) => s.inboxCalls),
          50,
        ),
      )}; load average ${load.toFixed(1)})`,
    `  steps p50: submit → started ${p50(taken, (s) => s.started - s.submitted)}, → first workflow task ${p50(taken, (s) => s.firstTask - s.started)}, ` +
      `→ validated ${p50(taken, (s) => s.validated - s.firstTask)}, → question committed ${p50(taken, (s) => s.committed - s.validated)} ` +
      `(askedAt → committed ${p50(taken, (s) => s.committed - s.asked)}), → raw listing ${p50(taken, (s) => s.visible - s.committed)}, ` +
      `→ inbox ${p50(taken, (s) => s.seen - s.committed)} (max ${ms(Math.max(...taken.map((s) => s.seen - s.committed)))})`,
  ]);
  lines.push(`(${INBOX_SAMPLES} invoices each, one at a time; inbox and raw listing read every ${READ_INTERVAL_MS} ms; ${creation})`);
  return lines.map((line, index) => (index === 0 ? line : `${''.padEnd(32)}${line}`)).join('\n');
}

/** The rows that only one dev server runs get its stack (parseArgs keeps them off the cluster). */
function oneDevServer(stack: BenchStack): Stack {
  if (!(stack instanceof Stack)) throw new Error('this row runs on one dev server only, not with --cluster');
  return stack;
}

/** The cluster's replicas as the bench runs its servers: no limit it would reach, its watch keep, its change feed. */
function clusterReplicaEnv(args: Args): Record<string, string> {
  return {
    MCP_MAX_OPEN_TASKS_PER_PRINCIPAL: '0',
    MCP_TASK_OPS_PER_SECOND: '0',
    MCP_HTTP_MAX_REQUESTS_PER_PRINCIPAL: '0',
    MCP_WATCH_KEEP_MS: String(WATCH_KEEP_MS),
    MCP_CHANGE_FEED_MS: String(args.changeFeedMs),
    // The poller fleets come through the balancer: every connection from its one address.
    MCP_HTTP_MAX_CONNECTIONS: '2048',
    MCP_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '0',
  };
}

async function run(args: Args, stack: BenchStack, rows: Map<RowKey, string>): Promise<void> {
  const row = (key: RowKey, label: string, figures: string) => rows.set(key, `${label.padEnd(32)}${figures}`);
  const count = args.tasks;
  const wants = (...keys: RowKey[]) => keys.some((key) => args.rows.has(key));

  process.stderr.write('bench: starting the dev server, the worker and the MCP server…\n');
  await stack.up();
  const mcp = await connectMcp(stack.url, 'bench', stack.mcpHeaders);
  // The N tasks are created and read once as 2026-07-28 clients do, a request each: behind a balancer, each goes to
  // the replica its task's id hashes to (a 2025-11-25 session stays on one replica).
  const agent = pollerAgent();
  try {
    const servers = stack.serverPids();
    await mcp.listTools();
    await mcp.experimental.tasks.listTasks();
    await sleep(1000);
    const idle = memoryOf(servers);
    const heapSnapshot = async () =>
      summarizeHeapSnapshot(await takeHeapSnapshot(servers[0], stack.dir, () => fetch(stack.url.replace(/\/mcp$/, '/healthz'))));
    const idleHeap = wants('heap') ? await heapSnapshot() : undefined;

    // The N tasks first, so that the listing holds exactly them.
    const bulkIds: string[] = [];
    if (wants('bulk', 'list', 'rss', 'watched', 'heap', 'pollers')) {
      const created = await inParallel(
        count,
        BULK_IN_FLIGHT,
        async (index) => void bulkIds.push(await createHoldTask2026(stack, agent, index)),
        progress(`creating ${count} tasks`, count),
      );
      row(
        'bulk',
        `create N, ${BULK_IN_FLIGHT} in flight`,
        `${count} tasks in ${(created / 1000).toFixed(1)} s (${(count / (created / 1000)).toFixed(1)}/s)`,
      );
      await sleep(2000);
      const loaded = memoryOf(servers);
      row(
        'rss',
        'server RSS',
        `idle ${mib(idle.rss)} → after ${count} tasks ${mib(loaded.rss)}  (+${mib(loaded.rss - idle.rss)}; peak ${mib(loaded.peak)})`,
      );

      process.stderr.write(`bench: walking tasks/list up to page ${FAR_PAGE}…\n`);
      const pages: number[] = [];
      let listed = 0;
      let cursor: string | undefined;
      do {
        const started = performance.now();
        const page = await mcp.experimental.tasks.listTasks(cursor);
        pages.push(performance.now() - started);
        listed += page.tasks.length;
        cursor = page.nextCursor;
      } while (cursor && pages.length < FAR_PAGE);
      const far = pages.length === FAR_PAGE ? `${FAR_PAGE}` : `${pages.length} (last)`;
      row(
        'list',
        `tasks/list page 1 / ${far}`,
        `${ms(pages[0])} / ${ms(pages[pages.length - 1])}  (p50 ${ms(percentile(pages, 50))}, slowest ${ms(Math.max(...pages))}; ${count} tasks, page size ${stack.pageSize}, ` +
          `${listed} listed in ${pages.length} pages)`,
      );

      // Each task read once: the server keeps each read, and its task's watch (or the feed's following), for the polls
      // that follow.
      const watched = Math.min(count, WATCH_LIMIT);
      const followedAs = args.changeFeedMs !== undefined ? 'kept (feed)' : process.env.MCP_WATCH_LIMIT === '0' ? 'read' : 'watched';
      // A read Temporal did not answer in time is counted and the row goes on: at the largest sizes the dev server is
      // what gives out first, and the row says how often it did.
      let failedReads = 0;
      let firstFailure = '';
      const readOnce = mcp2026TaskGet(stack.url, agent, stack.mcpHeaders);
      const reading = await inParallel(
        watched,
        READ_IN_FLIGHT,
        async (index) => {
          try {
            await readOnce(bulkIds[index]);
          } catch (error) {
            failedReads++;
            firstFailure ||= (error as Error).message;
          }
        },
        progress(`reading ${watched} tasks once`, watched),
      );
      const failedNote = failedReads > 0 ? `; ${failedReads} reads failed (${firstFailure})` : '';
      await sleep(2000);
      const watching = memoryOf(servers);
      row(
        'watched',
        `server RSS, ${watched} ${followedAs}`,
        `${mib(watching.rss)}  (+${mib(watching.rss - loaded.rss)} over the row above: ${((watching.rss - loaded.rss) / watched).toFixed(1)} KiB ` +
          `per ${followedAs} task; each task read once by tasks/get in ${(reading / 1000).toFixed(1)} s, ${READ_IN_FLIGHT} in flight; peak ${mib(watching.peak)}${failedNote})`,
      );

      // The watches those reads keep end first: their polls would take the CPU the next rows measure.
      await settle(stack.metricsPorts);
      if (idleHeap) {
        const heap = await heapSnapshot();
        const rss = memoryOf(servers).rss;
        // V8 gives pages back to the system a while after a collection, once the process is idle.
        await sleep(HEAP_IDLE_MS);
        const rssIdle = memoryOf(servers).rss;
        const grown = heapGrowth(idleHeap, heap, 6)
          .map(({ kind, count, size }) => `${kind} ${count >= 0 ? '+' : ''}${count} (${(size / 1024 / 1024).toFixed(1)} MiB)`)
          .join(', ');
        row(
          'heap',
          'server heap',
          `idle ${(idleHeap.total / 1024 / 1024).toFixed(1)} MiB → after ${count} tasks ${(heap.total / 1024 / 1024).toFixed(1)} MiB ` +
            `(${((heap.total - idleHeap.total) / count).toFixed(0)} bytes a task; RSS ${mib(rss)} after the snapshot's collection, ` +
            `${mib(rssIdle)} ${HEAP_IDLE_MS / 1000} s later)\n${''.padEnd(32)}grew most: ${grown}`,
        );
      }
    }

    const holdIds: string[] = [];
    if (wants('create', 'get', 'pollers')) {
      process.stderr.write(`bench: ${CREATE_STARTS} tools/call against ${CREATE_STARTS} raw starts, ${CREATE_IN_FLIGHT} in flight…\n`);
      let bridgeMs = 0;
      let rawMs = 0;
      let serverCpuMs = 0;
      const block = CREATE_STARTS / 4;
      for (let round = 0; round < 4; round++) {
        const cpuBefore = cpuMsOf(servers);
        bridgeMs += await inParallel(block, CREATE_IN_FLIGHT, async (index) => void holdIds.push(await createHoldTask(mcp, index)));
        serverCpuMs += cpuMsOf(servers) - cpuBefore;
        rawMs += await inParallel(block, CREATE_IN_FLIGHT, async (index) => void (await startHoldWorkflow(stack, index)));
      }
      const bridgeRate = CREATE_STARTS / (bridgeMs / 1000);
      const rawRate = CREATE_STARTS / (rawMs / 1000);
      row(
        'create',
        `create, ${CREATE_IN_FLIGHT} in flight`,
        `bridge ${bridgeRate.toFixed(1)}/s   raw start ${rawRate.toFixed(1)}/s   ratio ${(bridgeRate / rawRate).toFixed(2)} ${goal(bridgeRate / rawRate, '≥', 0.9)}` +
          `  (MCP server CPU ${(serverCpuMs / CREATE_STARTS).toFixed(1)} ms a call)`,
      );
    }

    if (wants('codec')) {
      const encryptingUrl = await oneDevServer(stack).startEncryptingServer();
      const encrypted = await connectMcp(encryptingUrl, 'bench-codec');
      try {
        process.stderr.write(`bench: payload codec: ${CODEC_SAMPLES} tools/call through each server…\n`);
        const plainIds: string[] = [];
        const encryptedIds: string[] = [];
        let plainMs = 0;
        let encryptedMs = 0;
        const block = CODEC_SAMPLES / 4;
        for (let round = 0; round < 4; round++) {
          plainMs += await inParallel(block, CREATE_IN_FLIGHT, async (index) => void plainIds.push(await createHoldTask(mcp, index)));
          encryptedMs += await inParallel(
            block,
            CREATE_IN_FLIGHT,
            async (index) => void encryptedIds.push(await createHoldTask(encrypted, index)),
          );
        }
        const plainRate = CODEC_SAMPLES / (plainMs / 1000);
        const encryptedRate = CODEC_SAMPLES / (encryptedMs / 1000);
        const reads = { plainFirst: [] as number[], encryptedFirst: [] as number[], plain: [] as number[], encrypted: [] as number[] };
        for (const [index, id] of plainIds.entries()) {
          const viaPlain = () => timed(reads.plainFirst, () => mcp.experimental.tasks.getTask(id));
          const viaEncrypted = () => timed(reads.encryptedFirst, () => encrypted.experimental.tasks.getTask(encryptedIds[index]));
          if (index % 2 === 0) await viaPlain().then(viaEncrypted);
          else await viaEncrypted().then(viaPlain);
        }
        for (const [index, id] of plainIds.entries()) {
          const viaPlain = () => timed(reads.plain, () => mcp.experimental.tasks.getTask(id));
          const viaEncrypted = () => timed(reads.encrypted, () => encrypted.experimental.tasks.getTask(encryptedIds[index]));
          if (index % 2 === 0) await viaPlain().then(viaEncrypted);
          else await viaEncrypted().then(viaPlain);
        }
        const p50 = (samples: number[]) => percentile(samples, 50);
        row(
          'codec',
          'payload codec on vs off',
          `create ${encryptedRate.toFixed(1)}/s vs ${plainRate.toFixed(1)}/s  ratio ${(encryptedRate / plainRate).toFixed(2)}   ` +
            `first tasks/get p50 ${ms(p50(reads.encryptedFirst))} vs ${ms(p50(reads.plainFirst))}  ratio ${(p50(reads.encryptedFirst) / p50(reads.plainFirst)).toFixed(2)}   ` +
            `next tasks/get p50 ${ms(p50(reads.encrypted))} vs ${ms(p50(reads.plain))}  ratio ${(p50(reads.encrypted) / p50(reads.plain)).toFixed(2)}`,
        );
      } finally {
        await encrypted.close();
      }
    }

    if (wants('get', 'answer', 'close', 'cross', 'rpcs')) {
      const dev = oneDevServer(stack);
      const invoiceCount = 2 * ANSWER_SAMPLES + CLOSE_SAMPLES + 2 * CROSS_SAMPLES + IDLE_WAITS;
      const invoiceIds: string[] = [];
      await inParallel(
        invoiceCount,
        CREATE_IN_FLIGHT,
        async (index) => void invoiceIds.push(await createInvoiceTask(mcp, index)),
        progress(`creating ${invoiceCount} invoice tasks`, invoiceCount),
      );
      process.stderr.write('bench: waiting until every invoice task asks for approval…\n');
      await pollUntil(
        async () => {
          const states = await Promise.all(invoiceIds.map((id) => publishedState(stack, id)));
          return states.every((state) => state?.status === 'input_required') ? true : undefined;
        },
        { timeoutMs: 180_000, intervalMs: 500, what: 'every invoice task to ask for approval' },
      );
      const bridgeAnswered = invoiceIds.slice(0, ANSWER_SAMPLES);
      const rawAnswered = invoiceIds.slice(ANSWER_SAMPLES, 2 * ANSWER_SAMPLES);
      const closing = invoiceIds.slice(2 * ANSWER_SAMPLES, 2 * ANSWER_SAMPLES + CLOSE_SAMPLES);
      const crossing = invoiceIds.slice(2 * ANSWER_SAMPLES + CLOSE_SAMPLES, 2 * ANSWER_SAMPLES + CLOSE_SAMPLES + 2 * CROSS_SAMPLES);
      const waiting = invoiceIds.slice(2 * ANSWER_SAMPLES + CLOSE_SAMPLES + 2 * CROSS_SAMPLES);

      process.stderr.write('bench: tasks/get against describe()…\n');
      const getAgainstDescribe = async (ids: string[], what: string) => {
        // A client polls: its first read of a task asks Temporal (and starts the task's watch), the next ones are served
        // from the watch. The first reads are timed apart.
        const first: number[] = [];
        for (const id of ids) await timed(first, () => mcp.experimental.tasks.getTask(id));
        await sleep(1000);
        const get: number[] = [];
        const describe: number[] = [];
        const cpuBefore = cpuMsOf(servers);
        for (const [index, id] of ids.entries()) {
          const viaMcp = () => timed(get, () => mcp.experimental.tasks.getTask(id));
          const raw = () => timed(describe, () => stack.client.workflow.getHandle(id).describe());
          // Alternating which goes first, so neither always finds the connection warm.
          if (index % 2 === 0) await viaMcp().then(raw);
          else await raw().then(viaMcp);
        }
        const ratio = percentile(get, 50) / percentile(describe, 50);
        const firstRatio = percentile(first, 50) / percentile(describe, 50);
        return (
          `p50 ${ms(percentile(get, 50))} vs ${ms(percentile(describe, 50))}  ratio ${ratio.toFixed(2)} ${goal(ratio, '≤', 1)}   ` +
          `p95 ${ms(percentile(get, 95))} vs ${ms(percentile(describe, 95))}  (MCP server CPU ${((cpuMsOf(servers) - cpuBefore) / ids.length).toFixed(1)} ms a call; ` +
          `${ids.length} ${what}; a task's first read with no watch p50 ${ms(percentile(first, 50))}, ${firstRatio.toFixed(2)} × a describe)`
        );
      };
      if (wants('get')) {
        row('get', 'tasks/get vs describe', await getAgainstDescribe(holdIds.slice(0, GET_SAMPLES), 'working'));
        row('get-input', '', await getAgainstDescribe(waiting, 'input_required'));
        // A client that polls its task at once: the create's own state against a describe right after a raw start.
        const afterCreate: number[] = [];
        const afterStart: number[] = [];
        for (let index = 0; index < CREATED_READ_SAMPLES; index++) {
          const viaMcp = async () => {
            const taskId = await createHoldTask(mcp, index);
            await timed(afterCreate, () => mcp.experimental.tasks.getTask(taskId));
          };
          const raw = async () => {
            const workflowId = await startHoldWorkflow(stack, index);
            await timed(afterStart, () => stack.client.workflow.getHandle(workflowId).describe());
          };
          if (index % 2 === 0) await viaMcp().then(raw);
          else await raw().then(viaMcp);
        }
        const createdRatio = percentile(afterCreate, 50) / percentile(afterStart, 50);
        row(
          'get-created',
          '',
          `a read right after its create p50 ${ms(percentile(afterCreate, 50))} vs a describe right after a raw start ` +
            `${ms(percentile(afterStart, 50))}  ratio ${createdRatio.toFixed(2)} ${goal(createdRatio, '≤', 1)}   ` +
            `p95 ${ms(percentile(afterCreate, 95))} vs ${ms(percentile(afterStart, 95))}`,
        );
      }

      if (wants('answer')) {
        process.stderr.write('bench: answer → working…\n');
        const viaRespond: number[] = [];
        const viaSignal: number[] = [];
        const respondCall: number[] = [];
        const signalCall: number[] = [];
        const whatFor = { timeoutMs: 30_000, intervalMs: READ_INTERVAL_MS };
        for (let i = 0; i < ANSWER_SAMPLES; i++) {
          const mcpTask = bridgeAnswered[i];
          await timed(viaRespond, async () => {
            await timed(respondCall, () => respond(mcp, mcpTask));
            await pollUntil(async () => ((await mcp.experimental.tasks.getTask(mcpTask)).status !== 'input_required' ? true : undefined), {
              ...whatFor,
              what: `task ${mcpTask} to leave input_required`,
            });
          });
          const rawTask = rawAnswered[i];
          const handle = stack.client.workflow.getHandle(rawTask);
          const [input] = pendingInputsOf(await publishedState(stack, rawTask));
          // Never reset here: the original run id is the run id.
          const run = { workflowId: rawTask, originalRunId: (await handle.describe()).runId };
          await timed(viaSignal, async () => {
            // The baseline is the signal a bridge sends: the answer sealed for the run.
            const answer = RAW_SEAL.seal(run, { key: input.key, action: 'accept', content: APPROVE }, { principal: 'bench' });
            await timed(signalCall, () => handle.signal(respondSignal, answer));
            await pollUntil(async () => ((await publishedState(stack, rawTask))?.status !== 'input_required' ? true : undefined), {
              ...whatFor,
              what: `the memo of ${rawTask} to change`,
            });
          });
        }
        row(
          'answer',
          'answer → working',
          `p50 ${ms(percentile(viaRespond, 50))} vs signal ${ms(percentile(viaSignal, 50))}   ` +
            `p95 ${ms(percentile(viaRespond, 95))} vs ${ms(percentile(viaSignal, 95))}  (read every ${READ_INTERVAL_MS} ms; ` +
            `the task_respond call itself p50 ${ms(percentile(respondCall, 50))}, the signal itself ${ms(percentile(signalCall, 50))})`,
        );
      }

      if (wants('close')) {
        process.stderr.write('bench: close → tasks/result…\n');
        const results = closing.map((id) =>
          mcp.experimental.tasks
            .getTaskResult(id, CallToolResultSchema, { timeout: 600_000 })
            .then((result) => ({ result, at: Date.now() })),
        );
        // Every tasks/result is waiting on its task's history before the first answer goes out.
        await sleep(2000);
        const closeToResult: number[] = [];
        for (const [index, id] of closing.entries()) {
          await respond(mcp, id);
          const { result, at } = await results[index];
          if (result.isError) throw new Error(`task ${id} ended with a tool error: ${JSON.stringify(result.content)}`);
          const description = await stack.client.workflow.getHandle(id).describe();
          if (!description.closeTime) throw new Error(`tasks/result of ${id} returned before its workflow closed`);
          closeToResult.push(at - description.closeTime.getTime());
        }
        row(
          'close',
          'close → tasks/result',
          `p50 ${ms(percentile(closeToResult, 50))}  max ${ms(Math.max(...closeToResult))} ${goal(Math.max(...closeToResult), '<', 100, 0)}  (${CLOSE_SAMPLES} tasks)`,
        );
      }

      if (wants('cross')) {
        process.stderr.write('bench: cross-replica read delay, idle and with one core busy…\n');
        const writer = await connectMcp(dev.replicaUrl, 'bench-other-replica');
        try {
          const idleDelays = await crossReplicaDelays(mcp, writer, crossing.slice(0, CROSS_SAMPLES));
          const hog = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
          try {
            const busyDelays = await crossReplicaDelays(mcp, writer, crossing.slice(CROSS_SAMPLES));
            const figures = ({ delays, stale }: { delays: number[]; stale: number }) =>
              `p50 ${ms(percentile(delays, 50))} p99 ${ms(percentile(delays, 99))} max ${ms(Math.max(...delays))} (${stale}/${delays.length} first reads before)`;
            row('cross', 'cross-replica read delay', `idle ${figures(idleDelays)}   one core busy ${figures(busyDelays)}`);
          } finally {
            hog.kill('SIGKILL');
          }
        } finally {
          await writer.close();
        }
      }

      if (wants('rpcs')) {
        process.stderr.write(`bench: ${IDLE_WAITS} blocked tasks/result for ${IDLE_WINDOW_MS / 1000} s, worker stopped…\n`);
        await dev.stopWorker();
        const residual = await settle(stack.metricsPorts);
        const waiter = await connectMcp(stack.url, 'bench-waiter');
        const stopWaiting = new AbortController();
        // Every blocked request listens on this one signal.
        setMaxListeners(IDLE_WAITS + 10, stopWaiting.signal);
        let returned = 0;
        const waits = waiting.map((id) =>
          waiter.experimental.tasks.getTaskResult(id, CallToolResultSchema, { timeout: 600_000, signal: stopWaiting.signal }).then(
            () => void returned++,
            () => undefined,
          ),
        );
        try {
          // The waits settle into their long polls; the counters are published about once a second.
          await sleep(3000);
          const before = await frontendRequests(stack.metricsPorts);
          const started = performance.now();
          await sleep(IDLE_WINDOW_MS);
          const after = await frontendRequests(stack.metricsPorts);
          const seconds = (performance.now() - started) / 1000;
          const rates = [...after]
            .map(([operation, value]) => [operation, (value - (before.get(operation) ?? 0)) / seconds] as const)
            .filter(([, rate]) => rate > 0)
            .sort((a, b) => b[1] - a[1]);
          const total = rates.reduce((sum, [, rate]) => sum + rate, 0);
          const top = rates
            .slice(0, 4)
            .map(([operation, rate]) => `${operation} ${rate.toFixed(2)}/s`)
            .join(', ');
          row(
            'rpcs',
            `Temporal RPCs, ${IDLE_WAITS} waits`,
            `${total.toFixed(2)} req/s  (${top || 'none'}; over ${seconds.toFixed(0)} s${returned > 0 ? `; ${returned} waits returned early` : ''}` +
              `${residual > 0 ? `; ${residual.toFixed(1)} req/s before the waits began` : ''})`,
          );
        } finally {
          stopWaiting.abort();
          await Promise.all(waits);
          await waiter.close();
        }
      }
    }

    if (wants('inbox')) row('inbox', 'inbox: question shown', await inboxRow(oneDevServer(stack), mcp));

    if (wants('pollers') && args.pollers.length > 0) rows.set('pollers', await pollerRows(args, stack, servers, [...bulkIds, ...holdIds]));
  } finally {
    agent.destroy();
    await mcp.close();
  }

  if (!wants('ledger')) return;
  const ledger = new PaymentsLedger(path.join(stack.dir, 'ledger-bench'));
  const payments = 500;
  const payStarted = performance.now();
  await Promise.all(
    Array.from({ length: payments }, (_, i) =>
      ledger.pay({ taskId: `t${i % 50}`, vendorId: 'V', invoiceNumber: 'I', currency: 'EUR', lineItemId: `LI-${i}`, amount: 1 }),
    ),
  );
  const seconds = (performance.now() - payStarted) / 1000;
  row(
    'ledger',
    `ledger, ${payments} payments`,
    `${(payments / seconds).toFixed(0)} payments/s  (a record file per payment, created by link(), fsync each)`,
  );
}

async function main(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  if (args.help) {
    process.stdout.write(HELP);
    return;
  }
  // Node's fetch (under the MCP SDK client) lets go of a request's abort listener only once the request is garbage
  // collected: thousands of requests on one client pass the warning's limit without leaking. Other warnings show.
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (warning.name === 'MaxListenersExceededWarning' && warning.message.includes('[AbortSignal]')) return;
    process.stderr.write(`${warning.name}: ${warning.message}\n`);
  });
  const pageSize = Number(process.env.MCP_TASK_PAGE_SIZE ?? 20);
  const stack = args.cluster
    ? new ClusterBenchStack(pageSize, clusterReplicaEnv(args))
    : new Stack(pageSize, args.quotas, args.changeFeedMs);
  if (args.changeFeedMs !== undefined) FEED_QUERIES.add('ListWorkflowExecutions');
  const rows = new Map<RowKey, string>();
  const printRows = () => {
    for (const key of ROW_ORDER) if (rows.has(key)) process.stdout.write(`${rows.get(key)}\n`);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`bench: ${signal}; stopping what it started\n`);
    printRows();
    stack.killNow();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const limits = args.quotas ? `quotas on${process.env.MCP_SHARED_STATE ? ', shared in PostgreSQL' : ''}` : 'quotas off';
  const reads = args.changeFeedMs !== undefined ? `change feed every ${args.changeFeedMs} ms` : 'reads kept by watches';
  process.stdout.write(
    `bench: N=${args.tasks}, page size ${pageSize}, ${limits}, ${reads}, ${stack.shape}, node ${process.version}, ${os.cpus().length} cores\n`,
  );
  try {
    await run(args, stack, rows);
  } finally {
    printRows();
    if (args.logs) stack.saveLogs(args.logs);
    await stack.down();
  }
}

main(process.argv.slice(2)).catch((error: Error) => {
  process.stderr.write(`bench: ${error.message}\n`);
  process.exit(1);
});

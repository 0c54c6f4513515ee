/**
 * A production-shaped stack on one machine: PostgreSQL (Debian's packages) holding Temporal's persistence and
 * visibility, applied by Temporal's own SQL tool; Temporal's server built from its Go module at a pinned release, each
 * service a process of its own (two frontends, history, matching, the worker service) from scripts/cluster/config;
 * HAProxy in front of the frontends (gRPC) and of two MCP server replicas (HTTP, 2025-11-25 sessions kept on their
 * replica by `Mcp-Session-Id`, 2026-07-28 requests of a task sent to one replica by the task id in `Mcp-Name` or
 * `Mcp-Param-TaskId`); two workers. Every process runs detached, with its pid and log in the stack's folder,
 * so `up`, `status` and `down` are separate commands, and any part can be killed and started again.
 */
import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { CHANGED_AT_SEARCH_ATTRIBUTE, PRINCIPAL_SEARCH_ATTRIBUTE } from '../../src/contract/task-contract';
import { AWAITING_SEARCH_ATTRIBUTE } from '../../src/contract/approvals';
import { pollUntil } from '../../src/util/wait';
import { findPostgresBin, LocalPostgres } from '../lib/postgres';
import { pidAlive, ROOT } from '../lib/processes';
import { tokenIn, writeTokensFile } from '../lib/tokens-file';
import { toolCacheDir } from '../lib/tool-cache';
import { aptInstallSync } from '../lib/apt';
import { TOXIPROXY_PACKAGE, TOXIPROXY_VERSION, ToxiproxyApi, toxiproxyArgs, writeProxiesFile, type ProxySpec } from '../lib/toxiproxy';
import type { DataConverter } from '@temporalio/common';
import { encryptingDataConverter } from '../../src/shared/payload-codec';
import { readPayloadKeys } from '../../src/shared/payload-keys';

/** The Temporal server release the stack builds and runs. */
export const SERVER_VERSION = 'v1.29.1';
/** The Web UI server release (the one the Temporal CLI v1.5.1 embeds). */
export const UI_VERSION = 'v2.42.1';
const SERVER_MODULE = 'go.temporal.io/server';
const NAMESPACE = 'default';
const RETENTION_HOURS = 72;

/** The proxy between the MCP replicas and Temporal's frontends (the balancer's gRPC port). */
export const PROXY_TEMPORAL = 'replicas-temporal';
/** The proxy between Temporal's services and PostgreSQL. */
export const PROXY_POSTGRES = 'temporal-postgres';

/** The Temporal services, each a process; two frontends so that one can die while the other serves. */
export const TEMPORAL_SERVICES = ['frontend-a', 'frontend-b', 'history', 'matching', 'worker-service'] as const;
export type TemporalService = (typeof TEMPORAL_SERVICES)[number];
/** The database of the MCP replicas' shared state. */
const SHARED_STATE_DB = 'temporal_mcp';

/** The bridge's processes: two workers and two MCP server replicas. */
export const BRIDGE_PROCESSES = ['worker-1', 'worker-2', 'mcp-1', 'mcp-2'] as const;
export type BridgeProcess = (typeof BRIDGE_PROCESSES)[number];
export type Part = TemporalService | BridgeProcess | 'haproxy' | 'ui' | 'toxiproxy';

/** Where each part listens, from one base port. */
export function portsOf(base: number) {
  const service = (index: number) => ({ grpc: base + 101 + index, membership: base + 111 + index, metrics: base + 121 + index });
  return {
    postgres: base + 1,
    /** Toxiproxy's proxy of PostgreSQL, which Temporal's services use with network faults on. */
    postgresProxy: base + 2,
    /** The balancer's gRPC port for Temporal clients (workers, MCP servers). */
    temporal: base + 33,
    /** Toxiproxy's proxy of the balancer's gRPC port, which the MCP replicas use with network faults on. */
    temporalProxy: base + 34,
    /** The balancer's HTTP port for MCP clients: http://127.0.0.1:<mcp>/mcp. */
    mcp: base + 80,
    /** Temporal's Web UI. */
    ui: base + 40,
    haproxyStats: base + 90,
    /** Toxiproxy's HTTP API. */
    toxiproxy: base + 95,
    services: {
      'frontend-a': service(0),
      'frontend-b': service(1),
      history: service(2),
      matching: service(3),
      'worker-service': service(4),
    } satisfies Record<TemporalService, unknown>,
    replicas: { 'mcp-1': base + 81, 'mcp-2': base + 82 } as Record<'mcp-1' | 'mcp-2', number>,
  };
}

/**
 * A base port for a throw-away stack (tests, the soak): its ports (base+1 .. base+125) lie below the range the kernel
 * hands out for outgoing connections and the dev servers' random ports, and rarely meet another stack's.
 */
export function randomBasePort(): number {
  return 21000 + Math.floor(Math.random() * 50) * 200;
}

export interface StackOptions {
  /** The stack's folder: data, logs, pids, keys. */
  dir: string;
  basePort: number;
  /** Progress lines go here. */
  say?: (line: string) => void;
  /** Extra environment of the workers (e.g. invoice approval settings). */
  workerEnv?: Record<string, string>;
  /** Extra environment of the MCP replicas (e.g. limits), over the stack's own. */
  replicaEnv?: Record<string, string>;
  /** Extra arguments of the MCP replicas' `serve` (e.g. `--tools FILE`). */
  replicaArgs?: string[];
  /** The arguments of `node` (from the checkout's root) that run each worker; default the invoice example's worker. */
  workerArgs?: readonly string[];
  /** What the MCP replicas serve, before `replicaArgs`; default the sample tools (`--samples`). */
  serveArgs?: readonly string[];
  /**
   * Toxiproxy between the MCP replicas and Temporal's frontends (the balancer), and between Temporal's services and
   * PostgreSQL, so that faults of the network can be injected there ({@link networkFaults}). Default: as the stack in
   * `dir` was started, else off.
   */
  networkFaults?: boolean;
}

/** What `up` wrote down for `status`, `down` and the kill/start of one part. */
interface StackState {
  basePort: number;
  pids: Partial<Record<Part, number>>;
  /** Started with Toxiproxy in its links: later commands go on that way. */
  networkFaults?: boolean;
}

const run = promisify(execFile);

export class ClusterStack {
  readonly dir: string;
  readonly ports: ReturnType<typeof portsOf>;
  private readonly say: (line: string) => void;

  /** Whether Toxiproxy sits in the stack's links (see {@link StackOptions.networkFaults}). */
  private readonly faults: boolean;

  constructor(private readonly options: StackOptions) {
    this.dir = path.resolve(options.dir);
    this.ports = portsOf(options.basePort);
    this.say = options.say ?? ((line) => process.stderr.write(`[cluster] ${line}\n`));
    this.faults = options.networkFaults ?? this.readState()?.networkFaults === true;
  }

  get temporalAddress(): string {
    return `127.0.0.1:${this.ports.temporal}`;
  }

  get webUiUrl(): string {
    return `http://127.0.0.1:${this.ports.ui}`;
  }

  get mcpUrl(): string {
    return `http://127.0.0.1:${this.ports.mcp}/mcp`;
  }

  /** The proxies faults are injected into, by name: {@link PROXY_TEMPORAL} and {@link PROXY_POSTGRES}. */
  get proxies(): ProxySpec[] {
    return [
      { name: PROXY_TEMPORAL, listen: this.ports.temporalProxy, upstream: this.ports.temporal },
      { name: PROXY_POSTGRES, listen: this.ports.postgresProxy, upstream: this.ports.postgres },
    ];
  }

  /** Whether Toxiproxy stands between the replicas and Temporal, and between Temporal and PostgreSQL. */
  get networkFaults(): boolean {
    return this.faults;
  }

  /** Toxiproxy's API (a stack started with `networkFaults`). */
  get toxiproxy(): ToxiproxyApi {
    if (!this.faults) throw new Error('this stack runs no Toxiproxy: start it with networkFaults');
    return new ToxiproxyApi(this.ports.toxiproxy);
  }

  /** Where Temporal's services reach PostgreSQL: through Toxiproxy with network faults on. */
  private get servicesPostgresPort(): number {
    return this.faults ? this.ports.postgresProxy : this.ports.postgres;
  }

  /** Where the MCP replicas reach Temporal: through Toxiproxy with network faults on, else the balancer. */
  private get replicasTemporalAddress(): string {
    return `127.0.0.1:${this.faults ? this.ports.temporalProxy : this.ports.temporal}`;
  }

  /** The task queue of the stack's workers and servers. */
  readonly taskQueue = 'temporal-mcp';

  get ledgerDir(): string {
    return path.join(this.dir, 'data', 'payments');
  }

  /** The decision store every MCP replica appends signed decision records to and every worker checks payments against. */
  get decisionStore(): string {
    return path.join(this.dir, 'data', 'decisions');
  }

  get tokensFile(): string {
    return path.join(this.dir, 'tokens');
  }

  private get logDir(): string {
    return path.join(this.dir, 'logs');
  }

  private get pgData(): string {
    return path.join(this.dir, 'postgres');
  }

  /** Brings every part up that is not running; builds and installs what is missing first. */
  async up(): Promise<void> {
    const before = this.readState();
    const running = Object.keys(before?.pids ?? {}).some((part) => this.alive(part as Part));
    if (running && (before?.networkFaults === true) !== this.faults) {
      throw new Error(
        `the stack in ${this.dir} runs ${before?.networkFaults ? 'with' : 'without'} Toxiproxy in its links; stop it first (down) to start it ${this.faults ? 'with' : 'without'}`,
      );
    }
    mkdirSync(this.logDir, { recursive: true });
    const binaries = await this.serverBinaries();
    const haproxy = this.haproxyBin();
    await this.startPostgres();
    await this.applySchemas(binaries.sql);
    this.writeState({ basePort: this.options.basePort, pids: this.readState()?.pids ?? {}, ...(this.faults && { networkFaults: true }) });
    if (this.faults && !this.alive('toxiproxy')) await this.startToxiproxy();
    // One at a time: services that start together race to write the cluster's metadata, and one of them loses.
    for (const service of ['history', 'matching', 'frontend-a', 'frontend-b', 'worker-service'] as const) {
      if (!this.alive(service)) await this.startService(service, binaries.server);
    }
    if (!this.alive('haproxy')) this.startHaproxy(haproxy);
    await this.prepareNamespace();
    if (!this.alive('ui')) await this.startUi(binaries.ui);
    this.writeSecrets();
    await Promise.all(BRIDGE_PROCESSES.filter((part) => !this.alive(part)).map((part) => this.startBridge(part)));
    await this.balancerReady();
    const down = (await this.status()).filter((row) => !row.running).map((row) => row.part);
    if (down.length > 0) throw new Error(`not running after start: ${down.join(', ')}; see ${this.logDir}`);
    this.say(`up: MCP at ${this.mcpUrl} (two replicas behind HAProxy), Temporal at ${this.temporalAddress} (two frontends)`);
  }

  /** The balancer's view of its servers (frontends and MCP replicas), from its stats page: name to UP/DOWN/... */
  async balancerServers(): Promise<Record<string, string>> {
    const csv = await fetch(`http://127.0.0.1:${this.ports.haproxyStats}/;csv`).then((response) => response.text());
    const servers: Record<string, string> = {};
    for (const line of csv.split('\n')) {
      const fields = line.split(',');
      if ((fields[0] === 'frontends' || fields[0] === 'replicas') && !['FRONTEND', 'BACKEND'].includes(fields[1])) {
        servers[fields[1]] = fields[17];
      }
    }
    return servers;
  }

  /** Resolves once the balancer's health checks have every frontend and replica up. */
  async balancerReady(timeoutMs = 60_000): Promise<void> {
    await pollUntil(
      async () => {
        const servers = await this.balancerServers().catch(() => ({}) as Record<string, string>);
        const names = Object.keys(servers);
        return names.length === 4 && names.every((name) => servers[name].startsWith('UP')) ? true : undefined;
      },
      { timeoutMs, intervalMs: 250, what: 'the balancer to see every frontend and replica up' },
    );
  }

  /** Stops every part (PostgreSQL last); keeps the data unless `purge`. */
  async down(purge = false): Promise<void> {
    const state = this.readState();
    const order: Part[] = [...BRIDGE_PROCESSES, 'ui', 'haproxy', ...TEMPORAL_SERVICES, 'toxiproxy'];
    await Promise.all(order.map((part) => this.stop(part, state)));
    if (existsSync(path.join(this.pgData, 'postmaster.pid'))) this.postgres().stop('fast');
    if (purge) rmSync(this.dir, { recursive: true, force: true });
    this.say(purge ? `down: stopped, and ${this.dir} removed` : `down: stopped (data kept in ${this.dir})`);
  }

  /** One line per part: running or not, and where. */
  async status(): Promise<{ part: string; running: boolean; detail: string }[]> {
    const rows: { part: string; running: boolean; detail: string }[] = [];
    const pgUp = await portOpen(this.ports.postgres);
    rows.push({ part: 'postgres', running: pgUp, detail: `127.0.0.1:${this.ports.postgres}` });
    for (const service of TEMPORAL_SERVICES) {
      rows.push({ part: service, running: this.alive(service), detail: `gRPC 127.0.0.1:${this.ports.services[service].grpc}` });
    }
    rows.push({ part: 'haproxy', running: this.alive('haproxy'), detail: `Temporal ${this.temporalAddress}, MCP ${this.mcpUrl}` });
    if (this.faults) {
      const proxies = this.proxies.map((proxy) => `${proxy.name} ${proxy.listen}→${proxy.upstream}`).join(', ');
      rows.push({ part: 'toxiproxy', running: this.alive('toxiproxy'), detail: `API ${this.ports.toxiproxy}; ${proxies}` });
    }
    rows.push({ part: 'ui', running: this.alive('ui'), detail: `Web UI ${this.webUiUrl}` });
    for (const part of BRIDGE_PROCESSES) {
      const where = part.startsWith('mcp') ? `http://127.0.0.1:${this.ports.replicas[part as 'mcp-1']}/mcp` : 'polls the task queue';
      rows.push({ part, running: this.alive(part), detail: where });
    }
    return rows;
  }

  /** SIGKILLs one part (as a crash would); resolves once it is gone. */
  async kill(part: Part): Promise<void> {
    const pid = this.readState()?.pids[part];
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await pollUntil(() => (pidAlive(pid) ? undefined : true), { timeoutMs: 15_000, what: `${part} (pid ${pid}) to die` });
  }

  /** Starts one part again (after {@link kill}); resolves once it serves. */
  async start(part: Part): Promise<void> {
    if (part === 'haproxy') this.startHaproxy(this.haproxyBin());
    else if (part === 'toxiproxy') await this.startToxiproxy();
    else if (part === 'ui') await this.startUi((await this.serverBinaries()).ui);
    else if ((TEMPORAL_SERVICES as readonly string[]).includes(part))
      await this.startService(part as TemporalService, (await this.serverBinaries()).server);
    else await this.startBridge(part as BridgeProcess);
  }

  /** Restarts PostgreSQL (fast shutdown, then start): every connection of every service breaks. */
  async restartPostgres(): Promise<void> {
    this.postgres().stop('immediate');
    await this.startPostgres();
  }

  // --- building and installing -------------------------------------------------------------------------------------

  /** Temporal's server, SQL tool and Web UI server, built with `go install` into the cache beside the CLI (once). */
  private async serverBinaries(): Promise<{ server: string; sql: string; ui: string }> {
    const cache = toolCacheDir();
    const bin = path.join(cache, `server-${SERVER_VERSION}`);
    const uiBin = path.join(cache, `ui-server-${UI_VERSION}`);
    const server = path.join(bin, 'server');
    const sql = path.join(bin, 'sql');
    const ui = path.join(uiBin, 'server');
    if (!existsSync(server) || !existsSync(sql)) {
      this.say(`building Temporal's server and SQL tool ${SERVER_VERSION} with 'go install' into ${bin} (once; about 5 minutes)`);
      await goInstall(bin, [`${SERVER_MODULE}/cmd/server@${SERVER_VERSION}`, `${SERVER_MODULE}/cmd/tools/sql@${SERVER_VERSION}`]);
    }
    if (!existsSync(ui)) {
      this.say(`building Temporal's Web UI server ${UI_VERSION} with 'go install' into ${uiBin} (once; a few minutes)`);
      await goInstall(uiBin, [`github.com/temporalio/ui-server/v2/cmd/server@${UI_VERSION}`]);
    }
    return { server, sql, ui };
  }

  /** Toxiproxy's server, built with `go install` into the tool cache (once; seconds). */
  private async toxiproxyBin(): Promise<string> {
    const bin = path.join(toolCacheDir(), `toxiproxy-${TOXIPROXY_VERSION}`);
    const server = path.join(bin, 'server');
    if (!existsSync(server)) {
      this.say(`building Toxiproxy ${TOXIPROXY_VERSION} with 'go install' into ${bin} (once)`);
      await goInstall(bin, [TOXIPROXY_PACKAGE]);
    }
    return server;
  }

  /** The folder of the schema files of the server module (in the Go module cache; downloaded if it is not). */
  private async schemaDir(): Promise<string> {
    const { stdout } = await run('go', ['mod', 'download', '-json', `${SERVER_MODULE}@${SERVER_VERSION}`], { maxBuffer: 16 * 1024 * 1024 });
    return path.join((JSON.parse(stdout) as { Dir: string }).Dir, 'schema', 'postgresql', 'v12');
  }

  /** PostgreSQL's binaries; Debian's package is installed when they are missing (as root). */
  private postgresBin(): string {
    const bin = findPostgresBin() ?? (this.aptInstall('postgresql', 'ls /usr/lib/postgresql/*/bin/initdb'), findPostgresBin());
    if (!bin) throw new Error('PostgreSQL is not installed and could not be installed: apt-get install postgresql');
    return bin;
  }

  /** The stack's PostgreSQL server, in its folder. */
  private postgres(): LocalPostgres {
    return new LocalPostgres({ dataDir: this.pgData, port: this.ports.postgres, bin: this.postgresBin(), say: this.say });
  }

  private haproxyBin(): string {
    const which = () => spawnSync('sh', ['-c', 'command -v haproxy'], { encoding: 'utf8' }).stdout.trim() || undefined;
    const bin = which() ?? (this.aptInstall('haproxy', 'command -v haproxy'), which());
    if (!bin) throw new Error('HAProxy is not installed and could not be installed: apt-get install haproxy');
    return bin;
  }

  private aptInstall(pkg: string, present: string): void {
    this.say(`${pkg} is missing: installing Debian's package (apt-get install ${pkg})`);
    aptInstallSync(pkg, present);
  }

  // --- PostgreSQL ----------------------------------------------------------------------------------------------------

  private async startPostgres(): Promise<void> {
    if (!(await portOpen(this.ports.postgres))) this.postgres().start();
    this.psql(
      `DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'temporal') THEN CREATE ROLE temporal LOGIN CREATEDB PASSWORD '${this.pgPassword()}'; END IF; END $$;`,
    );
    // The database the MCP replicas share their rate limit and recent creations in (MCP_SHARED_STATE).
    if (this.psql(`SELECT 1 FROM pg_database WHERE datname = '${SHARED_STATE_DB}'`).trim() !== '1') {
      this.psql(`CREATE DATABASE ${SHARED_STATE_DB} OWNER temporal`);
    }
  }

  /** The URL of the database the MCP replicas share (MCP_SHARED_STATE). */
  get sharedStateUrl(): string {
    return `postgresql://temporal:${this.pgPassword()}@127.0.0.1:${this.ports.postgres}/${SHARED_STATE_DB}`;
  }

  private psql(sql: string): string {
    return this.postgres().psql(sql);
  }

  /** Runs `sql` in the replicas' shared-state database (for tests and operators), its rows as psql prints them. */
  sharedStateQuery(sql: string): string {
    return this.postgres().psql(sql, SHARED_STATE_DB);
  }

  private pgPassword(): string {
    const file = path.join(this.dir, 'pg-password');
    if (!existsSync(file)) writeFileSync(file, randomBytes(18).toString('base64url'), { mode: 0o600 });
    return readFileSync(file, 'utf8').trim();
  }

  /** Temporal's databases and schemas, by Temporal's own SQL tool; idempotent (update-schema applies what is missing). */
  private async applySchemas(sqlTool: string): Promise<void> {
    const schemas = await this.schemaDir();
    for (const [db, folder] of [
      ['temporal', 'temporal'],
      ['temporal_visibility', 'visibility'],
    ]) {
      const base = [
        '--plugin',
        'postgres12',
        '--ep',
        '127.0.0.1',
        '-p',
        String(this.ports.postgres),
        '-u',
        'temporal',
        '--pw',
        this.pgPassword(),
        '--db',
        db,
      ];
      const exists = this.psql(`SELECT 1 FROM pg_database WHERE datname = '${db}'`).trim() === '1';
      if (!exists) {
        this.say(`creating database ${db} and its schema with Temporal's SQL tool`);
        await run(sqlTool, [...base, 'create-database']);
        await run(sqlTool, [...base, 'setup-schema', '-v', '0.0']);
      }
      await run(sqlTool, [...base, 'update-schema', '-d', path.join(schemas, folder, 'versioned')]);
    }
  }

  // --- Temporal's services -------------------------------------------------------------------------------------------

  /** Starts a Temporal service and resolves once it listens on its gRPC port. */
  private async startService(service: TemporalService, serverBin: string): Promise<void> {
    const ports = this.ports.services[service];
    const name = service.startsWith('frontend') ? 'frontend' : service === 'worker-service' ? 'worker' : service;
    this.spawnDetached(
      service,
      serverBin,
      [
        '--root',
        path.join(ROOT, 'scripts', 'cluster'),
        '--config',
        'config',
        '--env',
        'cluster',
        '--allow-no-auth',
        'start',
        '--service',
        name,
      ],
      {
        CLUSTER_PG_PORT: String(this.servicesPostgresPort),
        CLUSTER_PG_PASSWORD: this.pgPassword(),
        CLUSTER_TEMPORAL_PORT: String(this.ports.temporal),
        CLUSTER_DYNAMIC_CONFIG: path.join(ROOT, 'scripts', 'cluster', 'config', 'dynamicconfig.yaml'),
        SERVICE_GRPC_PORT: String(ports.grpc),
        SERVICE_MEMBERSHIP_PORT: String(ports.membership),
        SERVICE_METRICS_PORT: String(ports.metrics),
      },
    );
    // The worker service serves no gRPC API: its membership port says it has joined.
    const port = service === 'worker-service' ? ports.membership : ports.grpc;
    await this.listening(service, port, 90_000);
  }

  /** Toxiproxy with the stack's proxies; resolves once its API answers. */
  private async startToxiproxy(): Promise<void> {
    const file = path.join(this.dir, 'toxiproxy.json');
    writeProxiesFile(file, this.proxies);
    this.spawnDetached('toxiproxy', await this.toxiproxyBin(), toxiproxyArgs(this.ports.toxiproxy, file), {});
    await pollUntil(
      async () => {
        if (!this.alive('toxiproxy')) throw new Error(`Toxiproxy exited during start-up; see ${path.join(this.logDir, 'toxiproxy.log')}`);
        const names = await this.toxiproxy.proxies().catch((): string[] => []);
        return this.proxies.every((proxy) => names.includes(proxy.name)) ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: 'Toxiproxy to serve its proxies' },
    );
  }

  private startHaproxy(bin: string): void {
    const { services, replicas } = this.ports;
    const config = [
      'global',
      '  maxconn 4096',
      'defaults',
      '  timeout connect 2s',
      '  timeout client 1h',
      '  timeout server 1h',
      '  timeout tunnel 1h',
      '  option redispatch',
      '  retries 2',
      '# Temporal clients (gRPC over HTTP/2, long polls): a connection to any live frontend.',
      'frontend temporal',
      `  bind 127.0.0.1:${this.ports.temporal}`,
      '  mode tcp',
      '  default_backend frontends',
      'backend frontends',
      '  mode tcp',
      '  balance leastconn',
      `  server frontend-a 127.0.0.1:${services['frontend-a'].grpc} check inter 1s fall 2 rise 2`,
      `  server frontend-b 127.0.0.1:${services['frontend-b'].grpc} check inter 1s fall 2 rise 2`,
      '# MCP clients: a 2025-11-25 session stays on the replica that created it. A 2026-07-28 request of a task names',
      '# it: tasks/get, tasks/update and tasks/cancel in Mcp-Name, a call of a task tool (task_status, task_respond,',
      '# approvals_answer, ...) in Mcp-Param-TaskId (its taskId argument, marked x-mcp-header). Both are hashed alike, so',
      '# every request of one task goes to one replica and a read after a write is answered where the write was made.',
      '# Other requests spread freely.',
      'frontend mcp',
      `  bind 127.0.0.1:${this.ports.mcp}`,
      '  mode http',
      '  acl in_session req.hdr(mcp-session-id) -m found',
      '  acl task_request req.hdr(mcp-method) -m beg tasks/',
      '  acl tool_call req.hdr(mcp-method) -m str tools/call',
      '  acl names_task req.hdr(mcp-param-taskid) -m found',
      '  http-request set-var(txn.task) req.hdr(mcp-name) if task_request !in_session',
      '  http-request set-var(txn.task) req.hdr(mcp-param-taskid) if tool_call names_task !in_session',
      '  use_backend replicas_by_task if { var(txn.task) -m found }',
      '  default_backend replicas',
      'backend replicas',
      '  mode http',
      '  balance roundrobin',
      // A TCP check: /healthz is tied to Temporal, and checked here it would take every replica out at once while
      // Temporal blips, when the replicas can still answer (with retryable errors) better than the balancer's 503.
      '  # Which replica answered, for operators and for the tests that kill it.',
      '  http-response set-header X-Served-By %s',
      '  stick-table type string len 128 size 100k expire 2h',
      '  stick on req.hdr(mcp-session-id)',
      '  stick store-response res.hdr(mcp-session-id)',
      `  server mcp-1 127.0.0.1:${replicas['mcp-1']} check inter 1s fall 2 rise 2`,
      `  server mcp-2 127.0.0.1:${replicas['mcp-2']} check inter 1s fall 2 rise 2`,
      '# The same replicas, chosen by a consistent hash of the task id; up or down as checked above.',
      'backend replicas_by_task',
      '  mode http',
      '  balance hash var(txn.task)',
      '  hash-type consistent',
      '  http-response set-header X-Served-By %s',
      `  server mcp-1 127.0.0.1:${replicas['mcp-1']} track replicas/mcp-1`,
      `  server mcp-2 127.0.0.1:${replicas['mcp-2']} track replicas/mcp-2`,
      'listen stats',
      `  bind 127.0.0.1:${this.ports.haproxyStats}`,
      '  mode http',
      '  stats enable',
      '  stats uri /',
      '',
    ].join('\n');
    const file = path.join(this.dir, 'haproxy.cfg');
    writeFileSync(file, config);
    execFileSync(bin, ['-c', '-q', '-f', file]);
    this.spawnDetached('haproxy', bin, ['-db', '-f', file], {});
  }

  /** Temporal's Web UI server, reaching the frontends through the balancer. */
  private async startUi(bin: string): Promise<void> {
    this.spawnDetached('ui', bin, ['--root', path.join(ROOT, 'scripts', 'cluster'), '--config', 'ui', '--env', 'cluster', 'start'], {
      CLUSTER_TEMPORAL_PORT: String(this.ports.temporal),
      CLUSTER_UI_PORT: String(this.ports.ui),
    });
    await waitForPort(this.ports.ui, 60_000, 'the Web UI');
  }

  /** The namespace with its retention and the search attributes the bridge needs, through the frontends' APIs. */
  private async prepareNamespace(): Promise<void> {
    const connection = await pollUntil(
      async () => {
        try {
          const candidate = await Connection.connect({ address: this.temporalAddress, connectTimeout: '2s' });
          await candidate.workflowService.getSystemInfo({});
          return candidate;
        } catch {
          return undefined;
        }
      },
      { timeoutMs: 120_000, intervalMs: 1000, what: `Temporal's frontends to answer at ${this.temporalAddress}` },
    );
    try {
      const exists = await connection.workflowService.describeNamespace({ namespace: NAMESPACE }).then(
        () => true,
        () => false,
      );
      if (!exists) {
        this.say(`registering namespace ${NAMESPACE} (retention ${RETENTION_HOURS} h)`);
        await connection.workflowService.registerNamespace({
          namespace: NAMESPACE,
          workflowExecutionRetentionPeriod: msToTs(`${RETENTION_HOURS} hours`),
        });
      }
      const types = temporal.api.enums.v1.IndexedValueType;
      const wanted = {
        [PRINCIPAL_SEARCH_ATTRIBUTE]: types.INDEXED_VALUE_TYPE_KEYWORD,
        [AWAITING_SEARCH_ATTRIBUTE]: types.INDEXED_VALUE_TYPE_KEYWORD_LIST,
        [CHANGED_AT_SEARCH_ATTRIBUTE]: types.INDEXED_VALUE_TYPE_DATETIME,
      };
      const listed = await pollUntil(
        () => connection.operatorService.listSearchAttributes({ namespace: NAMESPACE }).catch(() => undefined),
        { timeoutMs: 60_000, intervalMs: 1000, what: `namespace ${NAMESPACE} to be known to every frontend` },
      );
      const missing = Object.fromEntries(Object.entries(wanted).filter(([name]) => !(name in (listed.customAttributes ?? {}))));
      if (Object.keys(missing).length > 0) {
        this.say(`registering search attributes ${Object.keys(missing).join(', ')} through the operator API`);
        await connection.operatorService.addSearchAttributes({
          namespace: NAMESPACE,
          searchAttributes: missing,
        });
      }
      // Usable once a visibility query on each is accepted.
      const client = new Client({ connection, namespace: NAMESPACE });
      await pollUntil(
        async () => {
          try {
            await client.workflow.count(`${PRINCIPAL_SEARCH_ATTRIBUTE} = '-' AND ${AWAITING_SEARCH_ATTRIBUTE} = '-'`);
            return true;
          } catch {
            return undefined;
          }
        },
        { timeoutMs: 60_000, intervalMs: 1000, what: 'the search attributes to be queryable' },
      );
    } finally {
      await connection.close();
    }
  }

  // --- the bridge ----------------------------------------------------------------------------------------------------

  /** Keys every replica and worker shares, and the token file of the stack's principals. */
  private writeSecrets(): void {
    for (const [name, bytes] of [
      ['marker-key', 32],
      ['request-state-key', 32],
    ] as const) {
      const file = path.join(this.dir, name);
      if (!existsSync(file)) writeFileSync(file, randomBytes(bytes).toString('base64url'), { mode: 0o600 });
    }
    if (!existsSync(this.tokensFile)) {
      writeTokensFile(this.tokensFile, ['submitter', 'approver-a ap-approver', 'approver-b ap-approver']);
    }
    // Payloads are encrypted as a deployment with financial data encrypts them: the operator's keys, else the stack's own.
    if (!process.env.MCP_PAYLOAD_KEYS && !existsSync(this.payloadKeysFile)) {
      writeFileSync(this.payloadKeysFile, `cluster-1 ${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    }
  }

  /** The keys file the replicas and workers encrypt payloads with: MCP_PAYLOAD_KEYS, else one of the stack's own. */
  get payloadKeysFile(): string {
    return process.env.MCP_PAYLOAD_KEYS || path.join(this.dir, 'payload-keys');
  }

  /** The data converter of the stack's replicas and workers, for a client of its own that reads their payloads. */
  dataConverter(): DataConverter {
    return encryptingDataConverter(readPayloadKeys(this.payloadKeysFile));
  }

  /**
   * The rows of Temporal's databases (persistence and visibility) as pg_dump writes them, each bytea value also decoded
   * beside it: what a copy of the database shows someone without the payload keys.
   */
  temporalRows(): string {
    const dump = ['temporal', 'temporal_visibility'].map((database) => this.postgres().dumpData(database)).join('\n');
    const decoded = [...dump.matchAll(/\\\\x([0-9a-f]+)/g)].map((match) => Buffer.from(match[1], 'hex').toString('latin1'));
    return `${dump}\n${decoded.join('\n')}`;
  }

  /** The token of `principal` in the stack's token file. */
  tokenOf(principal: string): string {
    return tokenIn(this.tokensFile, principal);
  }

  private bridgeEnv(): Record<string, string> {
    return {
      TEMPORAL_ADDRESS: this.temporalAddress,
      TEMPORAL_NAMESPACE: NAMESPACE,
      TEMPORAL_TASK_QUEUE: this.taskQueue,
      MCP_TASK_MARKER_KEY_FILE: path.join(this.dir, 'marker-key'),
      MCP_REQUEST_STATE_KEY: readFileSync(path.join(this.dir, 'request-state-key'), 'utf8').trim(),
      PAYMENTS_LEDGER: this.ledgerDir,
      ERP_REGISTRY: path.join(this.dir, 'data', 'erp'),
      NOTIFICATION_OUTBOX: path.join(this.dir, 'data', 'notifications.jsonl'),
      MCP_DECISION_STORE: this.decisionStore,
      MCP_PAYLOAD_KEYS: this.payloadKeysFile,
      TEMPORAL_WEB_UI_URL: this.webUiUrl,
    };
  }

  private async startBridge(part: BridgeProcess): Promise<void> {
    const env = { ...this.bridgeEnv(), ...(part.startsWith('worker') ? this.options.workerEnv : {}) };
    if (part.startsWith('worker')) {
      this.spawnDetached(
        part,
        process.execPath,
        [...(this.options.workerArgs ?? ['--import', 'tsx', path.join(ROOT, 'examples', 'invoice-approval', 'src', 'worker.ts')])],
        env,
      );
      await this.waitForLog(part, /worker: polling/, 90_000);
      return;
    }
    const port = this.ports.replicas[part as 'mcp-1'];
    this.spawnDetached(
      part,
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(ROOT, 'src', 'mcp', 'serve', 'main.ts'),
        '--http',
        `127.0.0.1:${port}`,
        ...(this.options.serveArgs ?? ['--samples']),
        ...(this.options.replicaArgs ?? []),
      ],
      {
        ...env,
        TEMPORAL_ADDRESS: this.replicasTemporalAddress,
        // A replica restarted while its link to Temporal is down waits for it, as a supervised one in production would.
        MCP_TEMPORAL_STARTUP_WAIT_MS: '120000',
        MCP_AUTH_TOKENS_FILE: this.tokensFile,
        MCP_SHARED_STATE: this.sharedStateUrl,
        // Polled tasks are followed by one visibility query per replica, not a history long poll each.
        MCP_CHANGE_FEED_MS: '500',
        // Clients reach the replicas by the balancer's address (DNS rebinding protection answers only these hosts).
        MCP_ALLOWED_HOSTS: `127.0.0.1:${this.ports.mcp},localhost:${this.ports.mcp},127.0.0.1:${port}`,
        ...this.options.replicaEnv,
      },
    );
    // It listens once Temporal answered (MCP_TEMPORAL_STARTUP_WAIT_MS above), and it takes some seconds to load.
    await this.listening(part, port, 240_000);
  }

  // --- processes -------------------------------------------------------------------------------------------------------

  private spawnDetached(part: Part, command: string, args: string[], env: Record<string, string>): void {
    const log = openSync(path.join(this.logDir, `${part}.log`), 'a');
    writeFileSync(path.join(this.logDir, `${part}.log`), `\n=== ${new Date().toISOString()} start: ${command} ${args.join(' ')}\n`, {
      flag: 'a',
    });
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, ...env },
      detached: true,
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    child.unref();
    const state = this.readState() ?? { basePort: this.options.basePort, pids: {} };
    state.pids[part] = child.pid;
    this.writeState(state);
  }

  /** Resolves once `part` listens on `port`; throws at once if it exits first, or after `timeoutMs`. */
  private async listening(part: Part, port: number, timeoutMs: number): Promise<void> {
    await pollUntil(
      async () => {
        if (await portOpen(port)) return true;
        if (!this.alive(part)) throw new Error(`${part} exited during start-up; see ${path.join(this.logDir, `${part}.log`)}`);
        return undefined;
      },
      { timeoutMs, intervalMs: 250, what: `${part} to listen on ${port}` },
    );
  }

  private async waitForLog(part: Part, pattern: RegExp, timeoutMs: number): Promise<void> {
    const file = path.join(this.logDir, `${part}.log`);
    const from = readFileSync(file, 'utf8').lastIndexOf('=== ');
    await pollUntil(
      () => {
        const text = readFileSync(file, 'utf8').slice(from);
        if (pattern.test(text)) return true;
        if (!this.alive(part)) throw new Error(`${part} exited during start-up; see ${file}:\n${text.slice(-2000)}`);
        return undefined;
      },
      { timeoutMs, intervalMs: 250, what: `${part} to start (${file})` },
    );
  }

  /** The process of `part` as `up` started it (undefined when it never was). */
  pidOf(part: Part): number | undefined {
    return this.readState()?.pids[part];
  }

  /** The log file of `part`. */
  logOf(part: Part): string {
    return path.join(this.logDir, `${part}.log`);
  }

  alive(part: Part): boolean {
    const pid = this.pidOf(part);
    return pid !== undefined && pidAlive(pid);
  }

  private async stop(part: Part, state: StackState | undefined): Promise<void> {
    const pid = state?.pids[part];
    if (pid === undefined || !pidAlive(pid)) return;
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      return;
    }
    const gone = await pollUntil(() => (pidAlive(pid) ? undefined : true), { timeoutMs: 15_000, what: `${part} to stop` }).catch(
      () => false,
    );
    if (!gone) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }

  private readState(): StackState | undefined {
    const file = path.join(this.dir, 'state.json');
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as StackState) : undefined;
  }

  private writeState(state: StackState): void {
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(path.join(this.dir, 'state.json'), `${JSON.stringify(state, null, 2)}\n`);
  }
}

async function goInstall(bin: string, packages: string[]): Promise<void> {
  mkdirSync(bin, { recursive: true });
  await run('go', ['install', ...packages], {
    env: { ...process.env, GOBIN: bin, GOFLAGS: `${process.env.GOFLAGS ?? ''} -mod=mod`.trim() },
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { stderr?: string; message: string }) => {
    throw new Error(
      `go install ${packages.join(' ')} failed (Go 1.25+ and the Go module proxy are needed):\n${error.stderr ?? error.message}`,
    );
  });
}

export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(false);
    });
  });
}

async function waitForPort(port: number, timeoutMs: number, what: string): Promise<void> {
  await pollUntil(async () => ((await portOpen(port)) ? true : undefined), {
    timeoutMs,
    intervalMs: 250,
    what: `${what} to listen on ${port}`,
  });
}

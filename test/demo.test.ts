/**
 * `npm run demo`, the README's first command, as a new user runs it: a home folder with no keys, tokens or marks of
 * earlier runs (an empty HOME and XDG_CONFIG_HOME; only the cache of built tools is kept), no Temporal answering at the
 * address, no worker. The demo starts the dev server and the worker itself, and the approvals it prints must verify.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, ROOT } from '../scripts/lib/processes';
import { freshHome, type FreshHome } from '../scripts/lib/tool-cache';
import { temporalDev } from './helpers/dev-server';

const DEMO_TIMEOUT_MS = 6 * 60_000;

/** Runs `npm run demo` in the checkout with `env` alone; resolves with how it ended and what it printed. */
function runDemo(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', 'demo'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      process.kill(-child.pid!, 'SIGKILL');
      reject(new Error(`npm run demo did not end within ${DEMO_TIMEOUT_MS / 1000} s:\n${stdout.slice(-4000)}\n${stderr.slice(-4000)}`));
    }, DEMO_TIMEOUT_MS);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Each `npm run -s approvals -- verify …` command the demo printed for the auditor, as its words. */
function printedVerifyCommands(stdout: string): string[][] {
  return [...stdout.matchAll(/the auditor[^:]*: (npm run -s approvals -- verify .+)$/gm)].map((match) => match[1].trim().split(/\s+/));
}

describe('npm run demo on a machine that never ran the project', () => {
  let home: FreshHome;
  let work: string;
  let port: number;
  let demo: { code: number | null; stdout: string; stderr: string };
  let env: Record<string, string>;

  beforeAll(async () => {
    home = freshHome();
    work = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-demo-test-'));
    port = await freePort();
    // Nothing of this run's processes: a new user's shell has PATH, a home, and what the README says to set (nothing).
    env = {
      PATH: process.env.PATH!,
      ...home.env,
      TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
      TEMPORAL_HEADLESS: '1',
      TEMPORAL_STATE_DIR: path.join(work, 'temporal'),
      // The demo's ledger, ERP and decisions out of the checkout's .data, which other runs may hold.
      PAYMENTS_LEDGER: path.join(work, 'payments'),
      ERP_REGISTRY: path.join(work, 'erp-invoices'),
      NOTIFICATION_OUTBOX: path.join(work, 'notifications.jsonl'),
      NOTIFICATION_LEDGER: path.join(work, 'notifications-sent'),
      MCP_DECISION_STORE: path.join(work, 'decisions'),
    };
    expect(readdirSync(path.join(home.dir, '.config'))).toEqual([]);
    demo = await runDemo(env);
  }, DEMO_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    // The demo leaves its dev server running, as the README says; this one is the test's to stop.
    if (port) await temporalDev('stop', port, path.join(work, 'temporal')).catch(() => undefined);
    home?.remove();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('exits 0 after starting the dev server and a worker itself', () => {
    if (demo.code !== 0)
      throw new Error(`npm run demo exited with ${demo.code}:\n${demo.stdout.slice(-4000)}\n${demo.stderr.slice(-4000)}`);
    expect(demo.stdout).toMatch(/starting the dev server/);
    expect(demo.stdout).toMatch(/no worker polls task queue .*: starting one/);
    expect(demo.stdout).toMatch(/worker started/);
  });

  test('prints the approvals and both line items paid once each', () => {
    expect(demo.stdout).toMatch(/tries to approve their own invoice: This is your own request: someone else must approve it/);
    expect(demo.stdout).toMatch(/approve by demo-approver-ann/);
    expect(demo.stdout).toMatch(/approve by demo-approver-bob/);
    expect(demo.stdout).toMatch(/paid LI-1: EUR 8,400\.00 as \S+/);
    expect(demo.stdout).toMatch(/paid LI-2: EUR 2,980\.00 as \S+/);
    expect(demo.stdout).toMatch(/: 2 payment\(s\) for this task/);
  });

  test('made the key pair in the empty home, and the approvals verify commands it prints pass', () => {
    expect(existsSync(path.join(home.env.XDG_CONFIG_HOME, 'temporal-mcp-tasks', 'decision-signing-key.pub.pem'))).toBe(true);
    const commands = printedVerifyCommands(demo.stdout);
    expect(commands).toHaveLength(2);
    expect(commands.map((words) => words.slice(6).find((word) => word.startsWith('--')))).toEqual(['--export', '--receipt']);
    for (const [command, ...args] of commands) {
      const run = spawnSync(command, args, { cwd: ROOT, env, encoding: 'utf8' });
      if (run.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${run.status}:\n${run.stdout}\n${run.stderr}`);
      expect(run.stdout).toMatch(/^VALID: /m);
      expect(run.stdout).toMatch(/approved by 2 distinct people/);
    }
  });
});

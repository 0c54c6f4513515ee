/**
 * docs/client.md's recorded kill-and-resume session, run as the page prints it: its commands, one after the other, in
 * one bash with job control (as a terminal has), in a folder that holds the checkout's files by symbolic link (so the
 * session's `.temporal/` and `.data/` are its own), on ports of its own. What each command prints is compared with the
 * page's lines, in order: task ids stand for the ids of this run (the first time a page id is seen it is bound to the
 * run's id, and later commands use the run's id), and times, process ids, payment ids and the checkout's path are not
 * compared. Lines the run prints and the page leaves out (a retry while the server starts, bash's job messages) are
 * allowed; a page line the run does not print fails the test.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pollUntil } from '../../src/util/wait';
import { freePort, ROOT, temporalDev } from '../helpers/dev-server';

const PAGE = path.join(ROOT, 'docs', 'client.md');
const MARKER = '<!-- test/docs/client-session.test.ts runs the next block -->';
/** What the session's folder links to: all that `npm run worker|serve|client` and `./temporal-dev.sh` need. */
const LINKED = ['package.json', 'node_modules', 'src', 'examples', 'temporal-dev.sh', 'tsconfig.json'];
/** How long one command may take to print what the page shows (a worker's first start bundles the workflows). */
const COMMAND_TIMEOUT_MS = 5 * 60_000;
/** Page lines that show a passing state: printed only when a poll happens to see it. */
const TRANSIENT = /^task \S+: working$/;

/** One `$ command` of the page and the lines the page shows after it. */
interface Step {
  command: string;
  expected: string[];
}

/** The session block of the page: the fenced block right after {@link MARKER}. */
function sessionSteps(page: string): Step[] {
  const at = page.indexOf(MARKER);
  if (at < 0) throw new Error(`${PAGE} has no line "${MARKER}"`);
  const fence = /```console\n([\s\S]*?)\n```/.exec(page.slice(at));
  if (!fence) throw new Error(`no \`\`\`console block after "${MARKER}" in ${PAGE}`);
  const steps: Step[] = [];
  for (const line of fence[1].split('\n')) {
    if (line.startsWith('$ ')) steps.push({ command: line.slice(2), expected: [] });
    else if (steps.length === 0) throw new Error(`the session block starts with output, not a command: ${line}`);
    else steps[steps.length - 1].expected.push(line);
  }
  return steps;
}

/** The page's ports and the run's. */
interface Ports {
  temporal: number;
  webUi: number;
  mcp: number;
}
const PAGE_PORTS: Ports = { temporal: 7233, webUi: 8233, mcp: 3300 };

/** `text` with the ports of `from` written as those of `to` (`:7233`, and `dev-7233.` in the dev server's file names). */
function swapPorts(text: string, from: Ports, to: Ports): string {
  let out = text;
  for (const name of ['temporal', 'webUi', 'mcp'] as const) {
    out = out
      .replace(new RegExp(`:${from[name]}(?!\\d)`, 'g'), `:${to[name]}`)
      .replace(new RegExp(`dev-${from[name]}\\.`, 'g'), `dev-${to[name]}.`);
  }
  return out;
}

/** A line with what differs from run to run replaced: times, process ids, payment ids, the folder of `.temporal/`. */
function normalized(line: string): string {
  return line
    .trimEnd()
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/\(pid \d+\)/g, '(pid <pid>)')
    .replace(/PAY-[0-9a-f-]{36}/g, 'PAY-<id>')
    .replace(/\S*\/\.temporal\//g, '.temporal/');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Finds the page's lines, in order, among the run's (both normalized), binding the page's task ids to the run's.
 * Returns the bindings it added, or the first page line it could not find.
 */
function matchLines(expected: string[], actual: string[], ids: Map<string, string>): { bound: Map<string, string> } | { missing: string } {
  const bound = new Map(ids);
  let next = 0;
  for (const line of expected) {
    const unbound: string[] = [];
    const pattern = normalized(line)
      .split(/(invoice-[0-9a-f-]{36})/)
      .map((part, i) => {
        if (i % 2 === 0) return escapeRegExp(part);
        const known = bound.get(part);
        if (known) return escapeRegExp(known);
        const seen = unbound.indexOf(part);
        if (seen >= 0) return `\\${seen + 1}`;
        unbound.push(part);
        return `(invoice-[0-9a-f-]{36})`;
      })
      .join('');
    const regex = new RegExp(`^${pattern}$`);
    let found = -1;
    for (let i = next; i < actual.length && found < 0; i++) {
      const match = regex.exec(normalized(actual[i]));
      if (!match) continue;
      found = i;
      unbound.forEach((pageId, k) => bound.set(pageId, match[k + 1]));
    }
    if (found < 0) {
      if (TRANSIENT.test(line)) continue;
      return { missing: line };
    }
    next = found + 1;
  }
  return { bound };
}

/** A free port whose neighbour 1000 above (the dev server's Web UI) is free too. */
async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 1000 > 65535) continue;
    const free = await new Promise<boolean>((resolve) => {
      const probe = net.createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port + 1000, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** Ports for the run, none of them one the page names (the swap between them would be ambiguous). */
async function sessionPorts(): Promise<Ports> {
  const taken = new Set(Object.values(PAGE_PORTS));
  for (;;) {
    const temporal = await freePortPair();
    const mcp = await freePort();
    const ports = { temporal, webUi: temporal + 1000, mcp };
    if (Object.values(ports).every((port) => !taken.has(port)) && mcp !== ports.webUi) return ports;
  }
}

/** The environment of the session: this machine's, without the settings of the checkout's own runs and of npm. */
function sessionEnv(dir: string, ports: Ports): Record<string, string> {
  const inherited = Object.entries(process.env).filter(
    ([name, value]) =>
      value !== undefined &&
      // Where the Temporal CLI is found stays; every other setting of the checkout's own runs goes.
      (/^TEMPORAL_(CLI|MCP_CACHE)$/.test(name) || !/^(npm_|TEMPORAL_|MCP_|INVOICE_|PAYMENT|ERP_|NOTIFICATION_|TEST_)/i.test(name)) &&
      name !== 'INIT_CWD' &&
      name !== 'XDG_STATE_HOME',
  ) as [string, string][];
  return {
    ...Object.fromEntries(inherited),
    // The page's `./temporal-dev.sh start` and the processes that connect to it, on this run's port.
    TEMPORAL_PORT: String(ports.temporal),
    TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal}`,
    // The client's store, in the session's folder rather than the user's home.
    XDG_STATE_HOME: path.join(dir, 'state'),
  };
}

/**
 * A bash fed one command at a time, its stdout and stderr in one stream as on a terminal. It reads its commands from a
 * named pipe of its own: the commands it starts get no stdin to share with it (a Node process that sets its stdin
 * non-blocking would make the shell's next read fail).
 */
class Shell {
  private text = '';
  /** The process groups of the jobs it started (job control puts each in its own). */
  readonly jobs = new Set<number>();
  private count = 0;

  private constructor(
    private readonly child: ChildProcess,
    private readonly commands: FileHandle,
  ) {
    this.child.stdout!.on('data', (chunk) => (this.text += chunk));
    this.child.stderr!.on('data', (chunk) => (this.text += chunk));
  }

  /** Starts bash in `cwd` with `env`, reading its commands from a named pipe made at `fifo`. */
  static async start(cwd: string, env: Record<string, string>, fifo: string): Promise<Shell> {
    execFileSync('mkfifo', [fifo]);
    const child = spawn('bash', [fifo], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const shell = new Shell(child, await open(fifo, 'w'));
    await shell.commands.write('set -m; exec 2>&1\n');
    return shell;
  }

  /** Everything printed so far. */
  get output(): string {
    return this.text;
  }

  /** Runs `command`; for a command in the foreground, resolves when it has ended. Resolves to where its output starts. */
  async run(command: string): Promise<number> {
    const start = this.text.length;
    const done = `@@done-${++this.count}@@`;
    // The exit status is kept for the page's `echo $?`; the job list is kept for the cleanup.
    await this.commands.write(`${command}\n__status=$?; echo "${done} $(jobs -p | tr '\\n' ' ')"; (exit $__status)\n`);
    const marker = await pollUntil(() => new RegExp(`${done} ([\\d ]*)\\n`).exec(this.text.slice(start)) ?? undefined, {
      timeoutMs: COMMAND_TIMEOUT_MS,
      what: () => `the end of "${command}"; the session printed:\n${this.text}`,
      intervalMs: 50,
      maxIntervalMs: 250,
    });
    for (const pid of marker[1].trim().split(/\s+/).filter(Boolean)) this.jobs.add(Number(pid));
    return start;
  }

  /** Kills the jobs it started and the shell itself. */
  async kill(): Promise<void> {
    await this.commands.close().catch(() => undefined);
    for (const group of [...this.jobs, this.child.pid!]) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  }
}

describe('docs/client.md', () => {
  test(
    'the recorded kill-and-resume session runs as printed and prints what the page shows',
    async () => {
      const steps = sessionSteps(readFileSync(PAGE, 'utf8'));
      const base = mkdtempSync(path.join(os.tmpdir(), 'client-session-'));
      const dir = path.join(base, 'session');
      mkdirSync(dir);
      for (const name of LINKED) symlinkSync(path.join(ROOT, name), path.join(dir, name));
      const ports = await sessionPorts();
      const shell = await Shell.start(dir, sessionEnv(dir, ports), path.join(base, 'commands'));
      const ids = new Map<string, string>();
      let passed = false;
      const lines = (from: number) => swapPorts(shell.output.slice(from), ports, PAGE_PORTS).split('\n').slice(0, -1);
      try {
        for (const { command, expected } of steps) {
          let run = swapPorts(command, PAGE_PORTS, ports);
          for (const [pageId, runId] of ids) run = run.split(pageId).join(runId);
          const start = await shell.run(run);
          // A command in the background has printed what the page shows when the page shows the next command.
          const outcome = command.trimEnd().endsWith('&')
            ? await pollUntil(
                () => {
                  const matched = matchLines(expected, lines(start), ids);
                  return 'bound' in matched ? matched : undefined;
                },
                {
                  timeoutMs: COMMAND_TIMEOUT_MS,
                  what: () => `the lines the page shows after "$ ${command}"; the session printed:\n${shell.output}`,
                },
              ).catch((error: Error) => ({ missing: error.message }))
            : matchLines(expected, lines(start), ids);
          if ('missing' in outcome) {
            throw new Error(
              `after "$ ${command}" (in ${dir}) the page shows a line the session did not print:\n${outcome.missing}\n\nthe session printed:\n${shell.output}`,
            );
          }
          for (const [pageId, runId] of outcome.bound) ids.set(pageId, runId);
        }
        passed = true;
      } finally {
        await shell.kill();
        await temporalDev('stop', ports.temporal, path.join(dir, '.temporal')).catch(() => undefined);
        // A failed session's folder stays for its logs (worker.log, server.log, .temporal/).
        if (passed) rmSync(base, { recursive: true, force: true });
      }
    },
    20 * 60_000,
  );
});

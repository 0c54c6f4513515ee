/**
 * `npm run demo -- --web`, as the README gives it to a newcomer: it starts a worker and the HTTP server with the
 * approvals page, submits the invoice through MCP and prints a one-time sign-in link per approver. Both approvers sign
 * in with their link and approve through the page's own calls; the demo releases the scheduled line, reports the task
 * completed, and on Ctrl-C stops the server it started.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pollUntil } from '../src/util/wait';
import { ROOT } from './helpers/dev-server';
import { serverEnv } from './helpers/processes';
import { uniqueTaskQueue } from './helpers/temporal';

const work = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-demo-web-test-'));

/** Signs in with a one-time link the way the page does (its button POSTs the token); returns the session's cookie and CSRF token. */
async function signIn(link: string): Promise<{ cookie: string; csrf: string; origin: string }> {
  const url = new URL(link);
  const redeemed = await fetch(new URL('/approvals/sign-in/link/redeem', url), {
    method: 'POST',
    headers: { origin: url.origin, 'content-type': 'application/json' },
    body: JSON.stringify({ token: url.searchParams.get('signin') }),
  });
  expect(redeemed.status).toBe(200);
  const cookie = redeemed.headers.get('set-cookie')!.split(';')[0];
  const session = (await (await fetch(new URL('/approvals/session', url), { headers: { cookie } })).json()) as { csrf: string };
  return { cookie, csrf: session.csrf, origin: url.origin };
}

test('npm run demo -- --web prints a sign-in link per approver; both approve on the page, the task completes, Ctrl-C stops it', async () => {
  const env = {
    ...serverEnv(uniqueTaskQueue('demo-web')),
    INVOICE_APPROVER_ROLE: 'ap-approver',
    PAYMENTS_LEDGER: path.join(work, 'payments'),
    ERP_REGISTRY: path.join(work, 'erp-invoices'),
    NOTIFICATION_OUTBOX: path.join(work, 'notifications.jsonl'),
    NOTIFICATION_LEDGER: path.join(work, 'notifications-sent'),
  };
  const demo = spawn('npm', ['run', '-s', 'demo', '--', '--web'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  demo.stdout.on('data', (chunk) => (stdout += chunk));
  demo.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => demo.once('exit', () => resolve()));
  try {
    const links = await pollUntil(
      () => {
        if (demo.exitCode !== null) throw new Error(`the demo exited with ${demo.exitCode}:\n${stdout}\n${stderr}`);
        const found = [...stdout.matchAll(/ {2}(demo-approver-\w+): (http:\/\/localhost:\d+\/approvals\?signin=\S+)/g)];
        return found.length === 2 ? found.map((match) => ({ name: match[1], link: match[2] })) : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 250, what: () => `two sign-in links printed by the demo:\n${stdout}\n${stderr}` },
    );
    expect(links.map((entry) => entry.name)).toEqual(['demo-approver-ann', 'demo-approver-bob']);
    const taskId = /task created: (\S+)/.exec(stdout)![1];

    for (const { link } of links) {
      const { cookie, csrf, origin } = await signIn(link);
      // The invoice shows in the approver's inbox once visibility has it.
      const item = await pollUntil(
        async () => {
          const inbox = (await (await fetch(`${origin}/approvals/inbox`, { headers: { cookie } })).json()) as {
            items: { taskId: string; version: string }[];
          };
          return inbox.items.find((entry) => entry.taskId === taskId);
        },
        { timeoutMs: 60_000, intervalMs: 500, what: () => `the invoice in the inbox of ${link}` },
      );
      const answered = await fetch(`${origin}/approvals/answer`, {
        method: 'POST',
        headers: { origin, cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
        body: JSON.stringify({ taskId, key: 'approval', version: item.version, action: 'accept', content: { decision: 'approve' } }),
      });
      expect([answered.status, await answered.json()]).toEqual([200, { message: 'Your approval is recorded.' }]);
    }
    await pollUntil(() => (/sees task completed/.test(stdout) ? true : undefined), {
      timeoutMs: 120_000,
      intervalMs: 250,
      what: () => `the demo to report the task completed:\n${stdout}`,
    });
  } finally {
    try {
      process.kill(-demo.pid!, 'SIGINT');
    } catch {
      // already gone
    }
  }
  // npm itself ends by the signal, as at a terminal's Ctrl-C; the demo stops what it started before it ends.
  await exited;
  await pollUntil(() => (/^\S+ {2}done\./m.test(stdout) ? true : undefined), {
    timeoutMs: 30_000,
    intervalMs: 100,
    what: () => `the demo to stop what it started:\n${stdout}\n${stderr}`,
  });
  expect(stdout).toMatch(/stopping the server; the task goes on in Temporal/);
  const page = /page at (http:\/\/localhost:\d+)\/approvals/.exec(stdout)![1];
  await expect(fetch(`${page}/approvals/session`)).rejects.toThrow();
}, 360_000);

/**
 * The approvals page in a real headless Chromium, against the real stack (Temporal dev server, the worker with mail to
 * a real SMTP receiver, `serve --http` as a user runs it): the submitter submits through MCP; carol follows the link in
 * her mail, signs in with her passkey (a virtual authenticator, the DevTools WebAuthn domain) and approves, signing in
 * the same ceremony because the directory says she must; dave signs in with a one-time link and approves; the decision's
 * effect is carried out once and `approvals verify` names both and the passkey signature. A person signs in through OpenID Connect
 * against a real provider (`oidc-provider`). What must be refused is refused, with nothing recorded.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ApprovalLinks } from '../../src/records/approval-links';
import { openDecisionStore } from '../../src/records/store';
import { taskKeyFromEnv } from '../../src/shared/task-key';
import { pollUntil } from '../../src/util/wait';
import type { DecisionResult } from '../fixtures/definitions';
import { effectsCarriedOut, FIXTURES, invoiceDecisionInput, startDecisionTask, type FixtureStack } from '../fixtures/stack';
import { ApprovalClients, approvalsCommand, makePeople, writeTokensFile } from '../helpers/approvals';
import { addVirtualAuthenticator, launchChromium } from '../helpers/browser';
import { ROOT } from '../helpers/dev-server';
import { taskResult } from '../helpers/mcp';
import { startOidcProvider } from '../helpers/oidc';
import { onFreePort, spawnHttpServer, type HttpServerProcess } from '../helpers/processes';
import { MailReceiver, type ReceivedMail } from '../helpers/receivers';
import { startStack } from '../helpers/test-stack';

/** Where the pictures go: a temporary folder, or docs/images when `npm run screenshots` sets WRITE_SCREENSHOTS. */
const SCREENSHOTS = process.env.WRITE_SCREENSHOTS
  ? path.resolve(ROOT, process.env.WRITE_SCREENSHOTS)
  : mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-screenshots-'));

const people = makePeople({ sam: '' });
const suffix = people.sam.principal.split('-').pop()!;
const principals = { carol: `carol-${suffix}`, dave: `dave-${suffix}`, erin: `erin-${suffix}`, dora: `oauth:dora-${suffix}` };
const mailOf = (name: string) => `${name}-${suffix}@example.com`;
const scratch = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-approvals-page-'));
const directoryFile = path.join(scratch, 'approvers.json');

/** Carol's passkey: a P-256 key the test makes and hands to the virtual authenticator, listed in the directory. */
const carolKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const carolCredential = randomBytes(16);

let stack: FixtureStack;
let browser: Browser;
let mailbox: MailReceiver;
let server: HttpServerProcess;
let oidc: { issuer: string; stop(): Promise<void> } | undefined;
let origin: string;
let sam: McpClient;
const clients = new ApprovalClients();
const contexts: BrowserContext[] = [];

function directory(pageOrigin: string): unknown {
  return {
    people: [
      { name: 'sam', principals: [people.sam.principal], email: mailOf('sam'), signInByMail: true },
      {
        name: 'carol',
        principals: [principals.carol],
        roles: ['ap-approver'],
        email: mailOf('carol'),
        mustSign: true,
        keys: [
          {
            passkey: {
              id: carolCredential.toString('base64url'),
              publicKey: carolKey.publicKey.export({ format: 'der', type: 'spki' }).toString('base64url'),
              rpId: 'localhost',
              origin: pageOrigin,
            },
          },
        ],
      },
      { name: 'dave', principals: [principals.dave], roles: ['ap-approver'], email: mailOf('dave'), signInByMail: true },
      { name: 'erin', principals: [principals.erin], email: mailOf('erin'), signInByMail: true },
      { name: 'dora', principals: [principals.dora], roles: ['ap-approver'], email: mailOf('dora') },
    ],
  };
}

beforeAll(async () => {
  [stack, browser, mailbox] = await Promise.all([
    startStack({ name: 'approvals-page', app: FIXTURES, worker: false }),
    launchChromium(),
    MailReceiver.start(),
  ]);
  // The page's origin names its port, which the directory (carol's passkey) and the provider (the redirect) name too.
  server = await onFreePort(async (port) => {
    origin = `http://localhost:${port}`;
    writeFileSync(directoryFile, JSON.stringify(directory(origin)));
    await oidc?.stop();
    oidc = await startOidcProvider({
      clients: [
        {
          client_id: 'approvals-page',
          client_secret: 'approvals-page-secret-0123456789',
          redirect_uris: [`${origin}/approvals/sign-in/oidc/callback`],
        },
      ],
      accounts: {
        [`dora-${suffix}`]: { sub: `dora-${suffix}`, email: mailOf('dora') },
        [`mallory-${suffix}`]: { sub: `mallory-${suffix}`, email: mailOf('mallory') },
      },
    });
    return spawnHttpServer(
      stack.taskQueue,
      port,
      {
        MCP_AUTH_TOKENS_FILE: writeTokensFile(people),
        MCP_APPROVERS_DIRECTORY: directoryFile,
        MCP_PUBLIC_URL: origin,
        MCP_PASSKEY_ORIGIN: origin,
        MCP_DECISION_STORE: stack.activities.decisionStore!,
        MCP_SMTP_URL: mailbox.url,
        MCP_NOTIFY_FROM: 'Approvals <approvals@example.com>',
        MCP_OIDC_ISSUER: oidc.issuer,
        MCP_OIDC_CLIENT_ID: 'approvals-page',
        MCP_OIDC_CLIENT_SECRET: 'approvals-page-secret-0123456789',
      },
      FIXTURES.serveArgs(),
    );
  });
  await stack.spawnWorker({
    MCP_APPROVERS_DIRECTORY: directoryFile,
    MCP_SMTP_URL: mailbox.url,
    MCP_NOTIFY_FROM: 'Approvals <approvals@example.com>',
    MCP_PUBLIC_URL: origin,
    NOTIFICATION_LEDGER: path.join(scratch, 'notifications-sent'),
  });
  sam = await clients.connect(server.url, people.sam);
}, 240_000);

afterAll(async () => {
  await clients.closeAll();
  await browser?.close();
  await server?.kill('SIGKILL');
  await Promise.all([oidc?.stop(), mailbox?.stop(), stack?.stop()]);
});

/** A browser of its own (its own cookies) at a phone's or a desk's size; with carol's passkey when asked. */
async function browserOf(options: { passkey?: boolean; phone?: boolean } = {}): Promise<Page> {
  const context = await browser.newContext({ viewport: options.phone ? { width: 375, height: 667 } : { width: 1280, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  if (options.passkey) {
    await addVirtualAuthenticator(page, { id: carolCredential, privateKey: carolKey.privateKey, rpId: 'localhost', userHandle: 'carol' });
  }
  return page;
}

/** The first mail to `address` whose text matches `pattern`, waited for; returns the mail and the match. */
async function mailTo(address: string, pattern: RegExp, after = 0): Promise<{ mail: ReceivedMail; match: RegExpExecArray }> {
  return pollUntil(
    async () => {
      for (const mail of mailbox.to(address).slice(after)) {
        const match = pattern.exec(mail.text);
        if (match) return { mail, match };
      }
      return undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200, what: () => `mail to ${address} matching ${pattern}` },
  );
}

/** Asks the page for a one-time sign-in link as `who`, follows it from the mail and signs in. */
async function signInByLink(page: Page, who: string, address: string): Promise<void> {
  const before = mailbox.to(address).length;
  await page.goto(`${origin}/approvals`);
  await page.getByLabel('Your name or email address').fill(who);
  await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
  await page.getByText(/a sign-in link is on its way/).waitFor({ timeout: 30_000 });
  const { match } = await mailTo(address, /(http:\/\/\S+signin=\S+)/, before);
  await page.goto(match[1]);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor({ timeout: 30_000 });
}

/** The decision records of `taskId` in the decision store. */
async function recordsOf(taskId: string): Promise<{ decision: string; by: { person: string; auth: string } }[]> {
  const store = openDecisionStore(stack.activities.decisionStore!);
  return (await store.records(taskId)).map(
    (record) => record.body as unknown as { decision: string; by: { person: string; auth: string } },
  );
}

/** axe-core run in the page: the serious and critical violations, by rule and target. */
async function accessibilityProblems(page: Page): Promise<string[]> {
  // Evaluated through DevTools: the page's Content Security Policy lets no script of anyone else's run, rightly.
  await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  const found = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> } }
    ).axe;
    return (await axe.run()).violations;
  });
  return found
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}

/** Submits, as sam, an invoice for two approvers of ap-approver; returns the task id and the invoice's number. */
async function submitInvoice(): Promise<{ taskId: string; invoiceNumber: string }> {
  const input = invoiceDecisionInput({ roles: ['ap-approver'], required: 2 });
  return { taskId: await startDecisionTask(sam, input), invoiceNumber: input.details.invoiceNumber };
}

/** Waits until the inbox on `page` lists a question whose text matches `text`, opening it. */
async function openFromInbox(page: Page, text: string): Promise<void> {
  const item = page.locator('#inbox').getByRole('button', { name: new RegExp(text) });
  // The page refreshes on its own; visibility lags behind the workflow's question.
  await pollUntil(async () => ((await item.count()) > 0 ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 500,
    what: () => `the inbox listing ${text}`,
  });
  await item.first().click();
  await page.locator('#question').getByRole('button', { name: 'Approve' }).waitFor({ timeout: 30_000 });
}

test('an invoice approved on the page: carol by her mail link and passkey, signing as she must; dave by a one-time link; carried out once, both on record', async () => {
  const { taskId, invoiceNumber } = await submitInvoice();

  // Carol's mail leads with the link to the question on the page.
  const { mail, match } = await mailTo(mailOf('carol'), /Answer on the approvals page: (\S+)/);
  const link = match[1];
  expect(link.startsWith(`${origin}/approvals?q=`)).toBe(true);
  expect(mail.text.indexOf('Answer on the approvals page')).toBeLessThan(mail.text.indexOf('MCP client'));

  const carol = await browserOf({ passkey: true });
  await carol.goto(link);
  await carol.getByText('Sign in as carol').waitFor({ timeout: 30_000 });
  await carol.getByRole('button', { name: 'Sign in with a passkey' }).click();
  const question = carol.locator('#question');
  await question.getByText(invoiceNumber).first().waitFor({ timeout: 60_000 });
  // The invoice as the task view shows it: its lines in a table, amounts in one format.
  await question.getByRole('table').getByRole('cell', { name: 'Printer paper', exact: true }).waitFor();
  await question
    .getByText(/Submitted by/)
    .first()
    .waitFor();
  expect(await accessibilityProblems(carol)).toEqual([]);
  await carol.screenshot({ path: path.join(SCREENSHOTS, 'approvals-page-question.png'), fullPage: true });

  await question.getByLabel('Comment').fill('Checked against the order.');
  await question.getByRole('button', { name: 'Approve' }).click();
  await carol.locator('#notice').getByText('Your approval is recorded, signed with your passkey.').waitFor({ timeout: 60_000 });

  // Dave asks for a sign-in link and approves from his inbox, on a phone.
  const dave = await browserOf({ phone: true });
  await signInByLink(dave, 'dave', mailOf('dave'));
  await openFromInbox(dave, invoiceNumber);
  expect(await accessibilityProblems(dave)).toEqual([]);
  await dave.locator('#question').getByRole('button', { name: 'Approve' }).click();
  await dave.locator('#notice').getByText('Your approval is recorded.').waitFor({ timeout: 60_000 });

  const result = (await taskResult(sam, taskId, 120_000)).structuredContent as unknown as DecisionResult;
  expect(result.outcome).toBe('approved');
  expect(await effectsCarriedOut(stack.temporal, taskId)).toBe(1);
  const records = await recordsOf(taskId);
  expect(records.filter((record) => record.decision === 'approve').map((record) => [record.by.person, record.by.auth])).toEqual([
    ['carol', 'passkey'],
    ['dave', 'mail-link'],
  ]);

  const verified = approvalsCommand(['verify', taskId, '--directory', directoryFile], {
    MCP_DECISION_STORE: stack.activities.decisionStore!,
  });
  expect(verified.code).toBe(0);
  expect(verified.out).toContain(`signed by carol with their own key ${carolCredential.toString('base64url')}`);
  expect(verified.out).toMatch(/dave/);
}, 300_000);

test('a person signs in through OpenID Connect and lands on the principal their tokens map to, with its inbox; an account the directory does not list gets no session', async () => {
  const { taskId, invoiceNumber } = await submitInvoice();
  const dora = await signInAtProvider(`dora-${suffix}`);
  await dora.getByRole('button', { name: 'Sign out' }).waitFor({ timeout: 30_000 });
  const session = (await dora.evaluate(async () => (await fetch('/approvals/session')).json())) as {
    principal: string;
    via: string;
    person: string;
  };
  expect(session).toMatchObject({ principal: principals.dora, via: 'oidc', person: 'dora' });
  const listed = dora.locator('#inbox').getByRole('button', { name: new RegExp(invoiceNumber) });
  await pollUntil(async () => ((await listed.count()) > 0 ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 500,
    what: () => `dora's inbox listing ${invoiceNumber}`,
  });
  await dora.screenshot({ path: path.join(SCREENSHOTS, 'approvals-page-inbox.png'), fullPage: true });
  await openFromInbox(dora, invoiceNumber);

  // Someone the provider knows but the approvers directory does not list gets no session.
  const mallory = await signInAtProvider(`mallory-${suffix}`);
  await mallory.getByText(/is not listed in the approvers directory/).waitFor({ timeout: 30_000 });
  await mallory.goto(`${origin}/approvals`);
  const refused = (await mallory.evaluate(async () => (await fetch('/approvals/session')).json())) as { signedIn: boolean };
  expect(refused.signedIn).toBe(false);
  await cancelTask(taskId);
}, 240_000);

/** A browser of its own that chose the company account on the page and signed in at the provider as `login`. */
async function signInAtProvider(login: string): Promise<Page> {
  const page = await browserOf();
  await page.goto(`${origin}/approvals`);
  await page.getByRole('link', { name: 'Sign in with your company account' }).click();
  // The provider's own sign-in and consent pages.
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  return page;
}

/** Cancels `taskId` through MCP, as its submitter. */
async function cancelTask(taskId: string): Promise<void> {
  await sam.experimental.tasks.cancelTask(taskId).catch(() => undefined);
}

test('refused with nothing recorded: the submitter approving, an outsider, a used or altered sign-in link, another person’s link, a cross-origin POST, a cookie sent from another origin, an answer to a question that closed while the page was open', async () => {
  const { taskId, invoiceNumber } = await submitInvoice();
  const { match } = await mailTo(mailOf('carol'), new RegExp(`Answer on the approvals page: (\\S+)[\\s\\S]*${invoiceNumber}`));
  const carolLink = match[1];

  // The submitter signs in and answers his own invoice: refused by the four-eyes rule.
  const samPage = await browserOf();
  await signInByLink(samPage, mailOf('sam'), mailOf('sam'));
  const own = await answerFrom(samPage, { taskId, key: 'approval', version: 'x', action: 'accept', content: { decision: 'approve' } });
  expect(own.status).toBe(422);

  // An outsider sees no question, and an answer from her is "not open for you".
  const erin = await browserOf();
  await signInByLink(erin, 'erin', mailOf('erin'));
  await erin
    .locator('#inbox')
    .getByText(/Nothing awaits/)
    .waitFor({ timeout: 30_000 });
  const outsider = await answerFrom(erin, { taskId, key: 'approval', version: 'x', action: 'accept', content: { decision: 'approve' } });
  expect(outsider.status).toBe(409);
  // Carol's link, opened by someone else, shows nothing of the question.
  await erin.goto(carolLink);
  await erin.getByText(/sent to someone else/).waitFor({ timeout: 30_000 });
  expect(await erin.getByText(invoiceNumber).count()).toBe(0);
  // A link past its question's due time opens nothing, for anyone.
  const expired = new ApprovalLinks(taskKeyFromEnv()).link(
    origin,
    { person: 'erin', taskId, key: 'approval' },
    new Date(Date.now() - 1_000).toISOString(),
  );
  await erin.goto(expired);
  await erin
    .locator('#problem')
    .getByText(/expired or is not valid/)
    .waitFor({ timeout: 30_000 });
  expect(await erin.getByText(invoiceNumber).count()).toBe(0);

  // A sign-in link works once; an altered one not at all.
  const before = mailbox.to(mailOf('dave')).length;
  const ask = await fetch(`${origin}/approvals/sign-in/link`, {
    method: 'POST',
    headers: { origin, 'content-type': 'application/json' },
    body: JSON.stringify({ who: 'dave' }),
  });
  expect(ask.status).toBe(202);
  const token = new URL((await mailTo(mailOf('dave'), /(http:\/\/\S+signin=\S+)/, before)).match[1]).searchParams.get('signin')!;
  const redeem = (value: string) =>
    fetch(`${origin}/approvals/sign-in/link/redeem`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json' },
      body: JSON.stringify({ token: value }),
    });
  const first = await redeem(token);
  expect(first.status).toBe(200);
  expect((await redeem(token)).status).toBe(401);
  expect((await redeem(`${token.slice(0, -2)}AA`)).status).toBe(401);
  // Asking for someone who does not exist answers the same as for someone who does.
  const nobody = await fetch(`${origin}/approvals/sign-in/link`, {
    method: 'POST',
    headers: { origin, 'content-type': 'application/json' },
    body: JSON.stringify({ who: 'nobody-at-all' }),
  });
  expect([nobody.status, await nobody.json()]).toEqual([202, await ask.json()]);

  // Dave's session, used from another origin: refused before anything is read.
  const cookie = first.headers.get('set-cookie')!.split(';')[0];
  const { csrf } = (await (await fetch(`${origin}/approvals/session`, { headers: { cookie } })).json()) as { csrf: string };
  const crossOrigin = await fetch(`${origin}/approvals/answer`, {
    method: 'POST',
    headers: { origin: 'http://127.0.0.1:1', cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
    body: JSON.stringify({ taskId, key: 'approval', version: 'x', action: 'accept', content: { decision: 'approve' } }),
  });
  expect(crossOrigin.status).toBe(403);

  // A page of another site, in a browser where dave is signed in, posts to the page's calls: the browser sends no cookie.
  const dave = await browserOf();
  await signInByLink(dave, 'dave', mailOf('dave'));
  const attacker = await serveAttackerPage(taskId);
  try {
    const posted = dave.waitForResponse((response) => response.url().endsWith('/approvals/answer'));
    await dave.goto(attacker.url);
    expect([401, 403]).toContain((await posted).status());
  } finally {
    attacker.close();
  }

  // A question that closes while dave's page shows it: the page says so and never sends its stale answer.
  await dave.goto(`${origin}/approvals`);
  await openFromInbox(dave, invoiceNumber);
  await cancelTask(taskId);
  await dave
    .locator('#question')
    .getByText(/closed meanwhile|answered or closed/)
    .waitFor({ timeout: 60_000 });
  const stale = await answerFrom(dave, { taskId, key: 'approval', version: 'x', action: 'accept', content: { decision: 'approve' } });
  expect(stale.status).toBe(409);

  expect(await recordsOf(taskId)).toEqual([]);
}, 300_000);

/** POSTs an answer from inside `page`, as the page would (its origin, its session's CSRF token). */
async function answerFrom(page: Page, body: Record<string, unknown>): Promise<{ status: number; body: { error?: string } }> {
  return page.evaluate(async (sent) => {
    const session = (await (await fetch('/approvals/session')).json()) as { csrf: string };
    const response = await fetch('/approvals/answer', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf },
      body: JSON.stringify(sent),
    });
    return { status: response.status, body: (await response.json()) as { error?: string } };
  }, body);
}

/** A page on another site (127.0.0.1, not localhost) that posts an approval to the approvals page with credentials. */
async function serveAttackerPage(taskId: string): Promise<{ url: string; close(): void }> {
  const script = `fetch(${JSON.stringify(`${origin}/approvals/answer`)}, { method: 'POST', credentials: 'include', mode: 'no-cors',
    headers: { 'content-type': 'text/plain' }, body: ${JSON.stringify(JSON.stringify({ taskId, key: 'approval', version: 'x', action: 'accept', content: { decision: 'approve' } }))} });`;
  const attacker = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><title>Prize</title><script>${script}</script>`);
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`, close: () => attacker.close() };
}

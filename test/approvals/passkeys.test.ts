/**
 * Passkeys as approvers' own keys, in a real headless Chromium with a virtual authenticator (the DevTools WebAuthn
 * domain): carol registers a passkey on the server's passkey page, the directory's keeper lists the entry the page
 * prints, and she signs her approval on the page; the bridge, the workflow before its effect and `approvals verify`
 * check the assertion against the directory. A signature of another decision is refused; the page's calls answer
 * only the page's own origin.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { Browser, Page } from 'playwright-core';
import { ApprovalClients, answer, approvalsCommand, awaitInInbox, inbox, makePeople, textOf, writeTokensFile } from '../helpers/approvals';
import { addVirtualAuthenticator, launchChromium } from '../helpers/browser';
import { taskResult } from '../helpers/mcp';
import { onFreePort, spawnHttpServer, spawnHttpServerOnFreePort, type HttpServerProcess } from '../helpers/processes';
import { startStack } from '../helpers/test-stack';
import type { DecisionResult } from '../fixtures/definitions';
import { effectsCarriedOut, FIXTURES, startDecisionTask, type FixtureStack } from '../fixtures/stack';

const people = makePeople({ sam: '', carol: 'ap-approver' });
const scratch = mkdtempSync(path.join(os.tmpdir(), 'temporal-mcp-passkeys-'));
const directoryFile = path.join(scratch, 'approvers.json');

let stack: FixtureStack;
let browser: Browser;
let page: Page;
/** Serves the passkey page at `origin`; the second server knows the directory and takes the answers. */
let pageServer: HttpServerProcess;
let answers: HttpServerProcess;
let origin: string;
const clients = new ApprovalClients();

beforeAll(async () => {
  [stack, browser] = await Promise.all([startStack({ name: 'passkeys', app: FIXTURES, worker: false }), launchChromium()]);
  // The page's origin names its port: a port another process takes before the server binds it is left for another.
  pageServer = await onFreePort((port) => {
    origin = `http://localhost:${port}`;
    return spawnHttpServer(
      stack.taskQueue,
      port,
      { MCP_PASSKEY_ORIGIN: origin, MCP_DECISION_STORE: stack.activities.decisionStore },
      FIXTURES.serveArgs(),
    );
  });
  page = await browser.newPage();
  await addVirtualAuthenticator(page);
}, 180_000);

afterAll(async () => {
  await clients.closeAll();
  await browser?.close();
  await Promise.all([answers, pageServer].map((process) => process?.kill('SIGKILL')));
  await stack?.stop();
});

/** Waits until the page shows the element `#output`; throws with the page's error when it shows `#error` instead. */
async function shownOrFailed(output: string, error: string): Promise<void> {
  await page.locator(`#${output}:not([hidden]), #${error}:not([hidden])`).first().waitFor({ timeout: 30_000 });
  const failed = page.locator(`#${error}`);
  if (await failed.isVisible()) throw new Error(`the passkey page says: ${await failed.textContent()}`);
}

/** Registers carol's passkey on the page; returns the directory entry the page prints. */
async function registerOnPage(): Promise<{ passkey: { id: string; publicKey: string; rpId: string; origin: string } }> {
  await page.goto(`${origin}/passkeys`);
  await page.getByLabel('Your name in the directory').fill('carol');
  await page.getByRole('button', { name: 'Register a passkey' }).click();
  const entry = page.getByLabel('Directory entry');
  await shownOrFailed('entry', 'register-error');
  return JSON.parse((await entry.textContent()) ?? '') as { passkey: { id: string; publicKey: string; rpId: string; origin: string } };
}

/** Signs `decision` on the page the inbox links to, as carol does; returns the signature the page prints. */
async function signOnPage(passkeyLink: string, decision: 'approve' | 'reject'): Promise<Record<string, unknown>> {
  await page.goto(`${passkeyLink}&decision=${decision}`);
  await page.getByText(`Decision: ${decision}`).waitFor({ timeout: 30_000 });
  // What is signed is shown: the decision's details themselves, not a digest.
  const shown = JSON.parse(Buffer.from(new URL(passkeyLink).searchParams.get('shown')!, 'base64url').toString('utf8')) as {
    order: string;
  };
  expect(await page.locator('#statement').textContent()).toContain(`"order": "${shown.order}"`);
  await page.getByRole('button', { name: 'Sign with my passkey' }).click();
  const signature = page.getByLabel('Signature');
  await shownOrFailed('signature', 'sign-error');
  return JSON.parse((await signature.textContent()) ?? '') as Record<string, unknown>;
}

test('carol registers a passkey, the keeper lists it, she signs her approval with it: the effect is carried out and the receipt names the passkey', async () => {
  const entry = await registerOnPage();
  expect(entry.passkey).toMatchObject({ rpId: 'localhost', origin });
  writeFileSync(
    directoryFile,
    JSON.stringify({
      mustSignRoles: ['ap-approver'],
      people: [
        { name: 'sam', principals: [people.sam.principal] },
        { name: 'carol', principals: [people.carol.principal], roles: ['ap-approver'], keys: [entry] },
      ],
    }),
  );
  const { activities } = stack;
  [answers] = await Promise.all([
    // Another replica of the same deployment: its inbox links to the passkey page at the deployment's origin.
    spawnHttpServerOnFreePort(
      stack.taskQueue,
      {
        MCP_AUTH_TOKENS_FILE: writeTokensFile(people),
        MCP_APPROVERS_DIRECTORY: directoryFile,
        MCP_PASSKEY_ORIGIN: origin,
        MCP_DECISION_STORE: activities.decisionStore,
      },
      FIXTURES.serveArgs(),
    ),
    stack.spawnWorker({
      NOTIFICATION_LEDGER: path.join(scratch, 'notifications-sent'),
      MCP_APPROVERS_DIRECTORY: directoryFile,
    }),
  ]);
  const [sam, carol]: McpClient[] = await Promise.all([
    clients.connect(answers.url, people.sam),
    clients.connect(answers.url, people.carol),
  ]);
  const order = `ORD-${randomUUID().slice(0, 8)}`;
  const taskId = await startDecisionTask(sam, { subject: `order ${order}`, roles: ['ap-approver'], details: { order, total: 200.75 } });
  await awaitInInbox(carol, taskId);
  const item = (await inbox(carol)).find((candidate) => candidate.taskId === taskId) as unknown as {
    subject: { order: string };
    subjectDigest: string;
    mustSign?: boolean;
    passkeyLink: string;
    run: string;
    challenge: string;
  };
  const shown = Buffer.from(JSON.stringify(item.subject)).toString('base64url');
  expect(item).toMatchObject({
    mustSign: true,
    run: expect.any(String),
    challenge: expect.any(String),
    passkeyLink: `${origin}/passkeys?${new URLSearchParams({
      task: taskId,
      key: 'approval',
      subject: item.subjectDigest,
      shown,
      run: item.run,
      challenge: item.challenge,
    }).toString()}`,
  });

  // A link that shows one order and asks for a signature over another's digest signs nothing (no blind signature).
  const other = Buffer.from(JSON.stringify({ ...item.subject, order: 'ORD-HARMLESS' })).toString('base64url');
  await page.goto(`${item.passkeyLink.replace(`shown=${shown}`, `shown=${other}`)}&decision=approve`);
  await expect(shownOrFailed('signature', 'sign-error')).rejects.toThrow(/What this link shows is not what it asks you to sign/);
  expect(await page.getByRole('button', { name: 'Sign with my passkey' }).isDisabled()).toBe(true);

  // Signed for a rejection, the assertion does not stand for an approval.
  const ofReject = await signOnPage(item.passkeyLink, 'reject');
  expect(ofReject).toMatchObject({ alg: 'webauthn', keyId: entry.passkey.id });
  expect(textOf(await answer(carol, taskId, 'approve', { signature: ofReject }))).toMatch(/^Your signature does not verify/);

  const signature = await signOnPage(item.passkeyLink, 'approve');
  expect(signature).toMatchObject({ v: 2, challenge: item.challenge });
  expect(textOf(await answer(carol, taskId, 'approve', { signature }))).toMatch(/is recorded\.$/);
  expect(((await taskResult(sam, taskId, 120_000)).structuredContent as unknown as DecisionResult).outcome).toBe('approved');
  expect(await effectsCarriedOut(stack.temporal, taskId)).toBe(1);

  const verified = approvalsCommand(['verify', taskId, '--directory', directoryFile], { MCP_DECISION_STORE: activities.decisionStore });
  expect(verified.code).toBe(0);
  expect(verified.out).toContain(`signed by carol with their own key ${entry.passkey.id}`);
}, 240_000);

test('a registration answers only a challenge the server issued, once: a forged challenge and a replay are refused', async () => {
  // A client that makes its own challenge (valid until 2100) instead of the server's.
  const deadline = Buffer.alloc(8);
  deadline.writeBigUInt64BE(BigInt(Date.parse('2100-01-01T00:00:00Z')));
  const forgedChallenge = Buffer.concat([randomBytes(16), deadline]).toString('base64url');
  await page.route('**/passkeys/registration-options', async (route) => {
    const response = await route.fetch();
    await route.fulfill({ response, json: { ...(await response.json()), challenge: forgedChallenge } });
  });
  try {
    await page.goto(`${origin}/passkeys`);
    await page.getByLabel('Your name in the directory').fill('carol');
    await page.getByRole('button', { name: 'Register a passkey' }).click();
    await expect(shownOrFailed('entry', 'register-error')).rejects.toThrow(/the registration does not check out/);
  } finally {
    await page.unroute('**/passkeys/registration-options');
  }

  // The server's own challenge, answered twice with the same response.
  let sent: string | undefined;
  page.on('request', (request) => {
    if (request.url().endsWith('/passkeys/registration') && request.method() === 'POST') sent = request.postData() ?? undefined;
  });
  await registerOnPage();
  expect(sent).toBeDefined();
  const again = await fetch(new URL('/passkeys/registration', pageServer.url), {
    method: 'POST',
    headers: { origin, 'content-type': 'application/json' },
    body: sent,
  });
  expect(again.status).toBe(400);
  expect(await again.json()).toEqual({ error: 'this registration was answered before: register again from the page' });
});

test("the page's calls answer the page's own origin only, and refuse what is not a registration", async () => {
  const call = (pathname: string, headers: Record<string, string>, body: string) =>
    fetch(new URL(pathname, pageServer.url), { method: 'POST', headers, body });
  const elsewhere = await call(
    '/passkeys/registration-options',
    { origin: 'https://evil.example', 'content-type': 'application/json' },
    '{"name":"carol"}',
  );
  expect(elsewhere.status).toBe(403);
  const options = await call('/passkeys/registration-options', { origin, 'content-type': 'application/json' }, '{"name":"carol"}');
  expect(options.status).toBe(200);
  expect(await options.json()).toMatchObject({ rp: { id: 'localhost' }, authenticatorSelection: { userVerification: 'required' } });
  const badName = await call('/passkeys/registration-options', { origin, 'content-type': 'application/json' }, '{"name":"a b"}');
  expect(badName.status).toBe(400);
  const forged = await call(
    '/passkeys/registration',
    { origin, 'content-type': 'application/json' },
    '{"response":{"id":"x","rawId":"x","type":"public-key","response":{}}}',
  );
  expect(forged.status).toBe(400);
  expect(await forged.json()).toMatchObject({ error: expect.stringMatching(/^the registration does not check out/) });
  const notJson = await call('/passkeys/registration', { origin, 'content-type': 'application/json' }, 'not json');
  expect(notJson.status).toBe(400);
});

/**
 * The task view (an MCP App) in a real headless Chromium, inside a test host built on ext-apps' AppBridge, against a
 * real server, worker and dev server. The host's MCP client is the SDK's, over Streamable HTTP; it declares the UI
 * extension, so a plain call of a task tool answers at once and the view follows the task. The test reads the page as
 * a person would: visible text, labels, buttons.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { RELATED_TASK_META_KEY, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { build } from 'esbuild';
import type { Browser, FrameLocator, Locator, Page } from 'playwright-core';
import { ApproversDirectory } from '../../src/records/directory';
import { generateApproverKey, signStatement, statementOf } from '../../src/records/approver-signatures';
import { APP_MIME_TYPE, TASK_VIEW_URI, UI_EXTENSION } from '../../src/mcp/app/ui';
import { awaitInInbox, makePeople, writeTokensFile } from '../helpers/approvals';
import { launchChromium } from '../helpers/browser';
import { ROOT } from '../helpers/dev-server';
import { startStack } from '../helpers/test-stack';
import { eventually } from '../helpers/temporal';
import type { AskInput } from '../fixtures/definitions';
import { askInput, effectsCarriedOut, FIXTURES, invoiceDecisionInput, ORDER_LINES, type FixtureStack } from '../fixtures/stack';
import { askRequesterTool, holdTool, releaseHoldTool, requestDecisionTool, TOOLS_WITH_FIXTURES } from '../fixtures/tools';

const ALICE = `alice-${randomUUID()}`;
const BOB = `bob-${randomUUID()}`;
/**
 * Where the screenshots go: a temporary folder of this run, so that a test run leaves the checkout as it was. `npm run
 * screenshots` sets WRITE_SCREENSHOTS to docs/images to make the README's pictures.
 */
const SCREENSHOTS = process.env.WRITE_SCREENSHOTS
  ? resolve(ROOT, process.env.WRITE_SCREENSHOTS)
  : mkdtempSync(join(os.tmpdir(), 'temporal-mcp-screenshots-'));
let stack: FixtureStack;
let browser: Browser;
let host: { url: string; close(): Promise<void> };

beforeAll(async () => {
  [stack, browser, host] = await Promise.all([
    startStack({
      name: 'view',
      app: FIXTURES,
      bridge: { tools: [holdTool, releaseHoldTool, ...TOOLS_WITH_FIXTURES] },
      servers: [{ env: { MCP_AUTH_TOKENS: `alice=${ALICE},bob=${BOB}` } }],
    }),
    launchChromium(),
    serveHostPage(),
  ]);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await host?.close();
  await stack?.stop();
});

/** The test host page: an empty chat column and the AppBridge host script, bundled for the browser. */
async function serveHostPage(): Promise<{ url: string; close(): Promise<void> }> {
  const bundle = await build({
    entryPoints: [join(ROOT, 'test/app/host/host-page.ts')],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    logLevel: 'error',
  });
  const script = bundle.outputFiles[0].text.replace(/<\/script/gi, '<\\/script');
  const page =
    '<!doctype html><html><head><meta charset="utf-8"><title>Test host</title><style>' +
    'body{font-family:system-ui,sans-serif;margin:0;padding:16px;background:#f4f4f5}' +
    '[data-theme=dark] body{background:#18181b}' +
    '#chat{width:360px}iframe{display:block;width:100%;height:480px;border:1px solid #d4d4d8;border-radius:10px;background:transparent}' +
    `</style></head><body><main id="chat"></main><script>${script}</script></body></html>`;
  const httpServer = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page);
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/`,
    close: () => new Promise((resolve) => httpServer.close(() => resolve())),
  };
}

/** The host's MCP client: it renders Apps and asks no questions itself. */
async function hostClient(token = ALICE, url = stack.server.url): Promise<Client> {
  const client = new Client(
    { name: 'test-host', version: '1.0.0' },
    { capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

interface Chat {
  page: Page;
  view: FrameLocator;
  client: Client;
  taskId: string;
  /** How many `task_status` calls the view has made through the host so far (its polls). */
  statusCalls(): number;
  /** Shows the view again from the same tool call, as a host does after a reload. */
  reload(): Promise<void>;
  close(): Promise<void>;
}

/** Calls `tool` as the host would for a model, then shows the view the tool declares with the call's result. */
async function chatCall(name: string, args: Record<string, unknown>, theme: 'light' | 'dark' = 'light', url?: string): Promise<Chat> {
  const client = await hostClient(ALICE, url);
  const tool = (await client.listTools()).tools.find((candidate) => candidate.name === name) as Tool;
  expect(tool._meta).toMatchObject({ ui: { resourceUri: TASK_VIEW_URI } });
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  // The host gets the task at once, not an error: the answer of a call that waited for nothing, the view follows the task.
  expect(result.isError).toBeFalsy();
  expect((result.content[0] as { text: string }).text).toMatch(/^Started task \S+; the task view shows its progress/);
  const taskId = (result._meta?.[RELATED_TASK_META_KEY] as { taskId: string }).taskId;
  expect(result.structuredContent).toMatchObject({ pendingTask: { taskId } });
  return show(client, tool, args, result, theme, taskId);
}

async function show(
  client: Client,
  tool: Tool,
  args: Record<string, unknown>,
  result: CallToolResult | undefined,
  theme: 'light' | 'dark',
  taskId: string,
  embedding: 'document' | 'body' = 'document',
) {
  const resource = await client.readResource({ uri: TASK_VIEW_URI });
  const { text: html, mimeType } = resource.contents[0] as { text: string; mimeType: string };
  expect(mimeType).toBe(APP_MIME_TYPE);
  const page = await browser.newPage({ viewport: { width: 420, height: 900 } });
  let statusCalls = 0;
  await page.exposeFunction('hostCallTool', (params: { name: string; arguments?: Record<string, unknown> }) => {
    if (params.name === 'task_status') statusCalls++;
    return client.callTool(params);
  });
  const mount = async () => {
    await page.goto(host.url);
    await page.evaluate((options) => (globalThis as unknown as { mountView(o: unknown): Promise<void> }).mountView(options), {
      html,
      tool,
      toolInput: args,
      toolResult: result,
      theme,
      embedding,
    } as never);
  };
  await mount();
  return {
    page,
    view: page.frameLocator('iframe[title="Task view"]'),
    client,
    taskId,
    statusCalls: () => statusCalls,
    reload: async () => {
      await page.reload();
      await page.evaluate((options) => (globalThis as unknown as { mountView(o: unknown): Promise<void> }).mountView(options), {
        html,
        tool,
        toolInput: args,
        toolResult: result,
        theme,
      } as never);
    },
    close: async () => {
      await page.close();
      await client.close();
    },
  };
}

/** How long a view waits for the task to move on: generous, since the whole suite may be loading the machine. */
const LONG = 60_000;
// Several such waits in one test.
jest.setTimeout(240_000);

/** `ask_requester` about an order of its own with {@link ORDER_LINES}. */
function orderInput(): AskInput {
  return askInput({ subject: `order ${randomUUID().slice(0, 8)} from Acme Office Supplies`, currency: 'EUR', lines: [...ORDER_LINES] });
}

/** A plain (task-less) ask_requester call of a host that follows its task itself: the tool, the input and the task. */
async function plainAskCall(input: AskInput = askInput()) {
  const client = await hostClient();
  const tool = (await client.listTools()).tools.find((candidate) => candidate.name === askRequesterTool.name) as Tool;
  const started = (await client.callTool({ name: askRequesterTool.name, arguments: input })) as CallToolResult;
  const taskId = (started.structuredContent as { pendingTask: { taskId: string } }).pendingTask.taskId;
  return { client, tool, input, taskId };
}

describe('the task view in a real browser', () => {
  test('approve an order through the form, see its lines and total in the result; a reload mid-flow resumes where it was', async () => {
    const input = orderInput();
    const chat = await chatCall(askRequesterTool.name, input);
    const { view, page } = chat;
    try {
      await view.getByText('Input required').first().waitFor({ timeout: LONG });
      await view.getByText(`Approve ${input.subject}?`).first().waitFor();
      // The question is said once (not again as the status), as the workflow wrote it; it has no subject to show.
      const asked = await view.locator('body').innerText();
      expect(occurrences(asked, `Approve ${input.subject}?`)).toBe(1);
      expect(asked).toContain('- LI-1 Printer paper: EUR 120.50');
      expect(await view.getByRole('region', { name: 'What this is about' }).count()).toBe(0);

      // A reload shows the same question again: the view asks the server, it keeps nothing.
      await chat.reload();
      await view.getByText('Input required').first().waitFor({ timeout: LONG });
      mkdirSync(SCREENSHOTS, { recursive: true });

      // An answer that does not fit is refused in the view, with the reason, and nothing is sent.
      await view.getByRole('radio', { name: 'Approve' }).check();
      await view.getByRole('textbox', { name: /Comment/ }).fill('x'.repeat(501));
      await view.getByRole('button', { name: 'Submit' }).click();
      await view
        .getByText(/at most 500 characters/)
        .first()
        .waitFor();
      expect((await chat.client.callTool({ name: 'task_status', arguments: { taskId: chat.taskId } })).structuredContent).toMatchObject({
        task: { status: 'input_required' },
      });
      // The server refuses it too.
      const refused = (await chat.client.callTool({
        name: 'task_respond',
        arguments: { taskId: chat.taskId, action: 'accept', content: { decision: 'approve', comment: 'x'.repeat(501) } },
      })) as CallToolResult;
      expect(refused.isError).toBe(true);

      // Someone typing is not interrupted by the view's polls: the field keeps the focus, and every key reaches it.
      const comment = view.getByRole('textbox', { name: /Comment/ });
      await comment.fill('Checked');
      await comment.focus();
      const polled = chat.statusCalls();
      await eventually(async () => (chat.statusCalls() >= polled + 2 ? true : undefined), 'two more polls of the view', LONG);
      expect(await comment.evaluate((field) => field === field.ownerDocument.activeElement)).toBe(true);
      await page.keyboard.type(' against the PO');
      expect(await comment.inputValue()).toBe('Checked against the PO');
      await page.locator('iframe').screenshot({ path: join(SCREENSHOTS, 'task-view-approval.png') });
      await view.getByRole('button', { name: 'Submit' }).click();

      await view
        .getByRole('heading', { name: 'Result' })
        .waitFor({ timeout: LONG })
        .catch(async (error: Error) => {
          // What the view and the task showed instead, so that a failure says where the flow stopped.
          const status = await chat.client
            .callTool({ name: 'task_status', arguments: { taskId: chat.taskId } })
            .catch((e: Error) => e.message);
          throw new Error(
            `${error.message}\nthe view showed: ${await view.locator('body').innerText()}\ntask_status: ${JSON.stringify(status)}`,
          );
        });
      await view.getByText('Completed').first().waitFor();
      const result = view.locator('body');
      await containsText(result, 'approved');
      await containsText(result, 'Checked against the PO');
      // Tall enough for the whole result: the host sizes the frame to what the view reports.
      await page.setViewportSize({ width: 420, height: 1800 });
      await view.getByRole('cell', { name: 'LI-2' }).waitFor();
      // Amounts in the result read as everywhere else: "EUR 120.50", never "120.5" or "980".
      await view.getByRole('cell', { name: 'EUR 120.50', exact: true }).waitFor();
      await view.getByRole('cell', { name: 'EUR 980.00', exact: true }).waitFor();
      await view
        .getByRole('definition')
        .filter({ hasText: /^EUR 1,100\.50$/ })
        .waitFor();
      expect(await view.locator('.result').innerText()).not.toMatch(/(^|\s)(120\.5|980|1,100\.5)(\s|$)/);
      await page.locator('iframe').screenshot({ path: join(SCREENSHOTS, 'task-view-result.png') });

      // Reopened after the end, it shows the result again.
      await chat.reload();
      await view.getByRole('heading', { name: 'Result' }).waitFor({ timeout: LONG });
    } finally {
      await chat.close();
    }
  });

  test('an action the workflow offers is a button: pressed, the bridge seals it, the workflow takes it, and the view shows the result', async () => {
    // The stack's own bridge, served here: it serves release_hold, a direct tool no tools file declares.
    const served = await stack.serve();
    const subject = `order ${randomUUID().slice(0, 8)}`;
    const chat = await chatCall(holdTool.name, { subject, holdMs: 86_400_000 }, 'light', served.url);
    try {
      const release = chat.view.getByRole('button', { name: 'Release now' });
      await release.waitFor({ timeout: LONG });
      await containsText(chat.view.locator('body'), `"${subject}" is held`);
      await release.click();
      await chat.view.getByRole('heading', { name: 'Result' }).waitFor({ timeout: LONG });
      await chat.view.getByText('Completed').first().waitFor();
      await containsText(chat.view.locator('body'), `"${subject}" was carried out`);
      await containsText(chat.view.locator('body'), releaseHoldTool.name);
      expect(await effectsCarriedOut(stack.temporal, chat.taskId)).toBe(1);
    } finally {
      await chat.close();
    }
  });

  test('a host that puts the view in its own body and follows the task itself: styled, and the final result alone is shown', async () => {
    const { client, tool, input, taskId } = await plainAskCall(askInput({ refuse: 'the vendor is on hold' }));
    // The host waited for the end itself: it hands the view the final result, which names no task.
    const final = (await client.callTool({ name: 'task_result', arguments: { taskId, waitSeconds: 30 } })) as CallToolResult;
    expect(final.isError).toBe(true);
    const { _meta: _dropped, ...bare } = final;
    expect(JSON.stringify(bare)).not.toContain(taskId);
    const chat = await show(client, tool, input, bare, 'light', taskId, 'body');
    try {
      await chat.view.getByText('Failed').first().waitFor({ timeout: LONG });
      await chat.view.getByRole('heading', { name: 'Result' }).waitFor({ timeout: LONG });
      await containsText(chat.view.locator('body'), 'on hold');
      expect(await chat.view.locator('body').innerText()).not.toMatch(/Waiting for the task/);
      // The view's own styles survived the host's embedding: the badge is a rounded pill with padding.
      const badge = chat.view.locator('.badge').first();
      const style = await badge.evaluate((element) => {
        type Computed = Record<'borderTopLeftRadius' | 'paddingLeft' | 'display', string>;
        const view = element.ownerDocument.defaultView as unknown as { getComputedStyle(target: unknown): Computed };
        const computed = view.getComputedStyle(element);
        return { radius: computed.borderTopLeftRadius, padding: computed.paddingLeft, display: computed.display };
      });
      expect(style).toEqual({ radius: '999px', padding: '10px', display: 'inline-block' });
    } finally {
      await chat.close();
    }
  });

  test('a host that follows the task itself and cancels the call: the view says the task was cancelled', async () => {
    const { client, tool, input, taskId } = await plainAskCall();
    // The host keeps the task to itself: the view gets the call's input and no result.
    const chat = await show(client, tool, input, undefined, 'light', taskId);
    try {
      await chat.view.getByText('Waiting for the task…').waitFor({ timeout: LONG });
      await client.callTool({ name: 'task_cancel', arguments: { taskId } });
      await chat.page.evaluate(() =>
        (globalThis as unknown as { cancelToolCall(reason: string): Promise<void> }).cancelToolCall('user action'),
      );
      await chat.view.getByText('Cancelled', { exact: true }).waitFor({ timeout: LONG });
      await containsText(chat.view.locator('body'), 'The task was cancelled (user action).');
      expect(await chat.view.locator('body').innerText()).not.toContain('Waiting for the task');
    } finally {
      await chat.close();
    }
  });

  test('a host that follows the task itself and cancels it without telling the view: the view finds the task and reads it cancelled', async () => {
    const { client, tool, input, taskId } = await plainAskCall();
    // The host hands the view the call's input only, never a result or a word of the cancel (MCP Inspector 2.12's way).
    const chat = await show(client, tool, input, undefined, 'light', taskId);
    try {
      // Found by its call (task_find), the task is followed as any other: its id shown, its question asked.
      await chat.view.getByText(taskId).waitFor({ timeout: LONG });
      await chat.view.getByText('Input required').first().waitFor({ timeout: LONG });
      await client.callTool({ name: 'task_cancel', arguments: { taskId } });
      await chat.view.getByText('Cancelled', { exact: true }).waitFor({ timeout: LONG });
      expect(await chat.view.locator('body').innerText()).not.toContain('Waiting for the task');
      await containsText(chat.view.locator('body'), `nothing was done about "${input.subject}"`);
    } finally {
      await chat.close();
    }
  });

  test('a reject ends the task as a tool error that gives the reason (dark theme)', async () => {
    const input = askInput();
    const chat = await chatCall(askRequesterTool.name, input, 'dark');
    try {
      await chat.view.getByText('Input required').first().waitFor({ timeout: LONG });
      await chat.view.getByRole('radio', { name: 'Reject' }).check();
      await chat.view.getByRole('textbox', { name: /Comment/ }).fill('wrong totals');
      await chat.view.getByRole('button', { name: 'Submit' }).click();
      await chat.view.getByRole('heading', { name: 'Result' }).waitFor({ timeout: LONG });
      await containsText(chat.view.locator('body'), `"${input.subject}" was rejected: wrong totals`);
      await containsText(chat.view.locator('body'), 'Completed with an error');
    } finally {
      await chat.close();
    }
  });

  test('cancel asks for confirmation, then the task reads cancelled', async () => {
    const chat = await chatCall(askRequesterTool.name, askInput());
    try {
      await chat.view.getByText('Input required').first().waitFor({ timeout: LONG });
      await chat.view.getByRole('button', { name: 'Cancel task' }).click();
      await chat.view.getByRole('button', { name: 'Keep it' }).click();
      expect((await chat.client.callTool({ name: 'task_status', arguments: { taskId: chat.taskId } })).structuredContent).toMatchObject({
        task: { status: 'input_required' },
      });
      await chat.view.getByRole('button', { name: 'Cancel task' }).click();
      await chat.view.getByRole('button', { name: 'Yes, cancel' }).click();
      await chat.view.getByText('Cancelled').first().waitFor({ timeout: LONG });
      await eventually(async () => {
        const status = (await chat.client.callTool({ name: 'task_status', arguments: { taskId: chat.taskId } })).structuredContent as {
          task: { status: string };
        };
        return status.task.status === 'cancelled' ? true : undefined;
      }, 'the task cancelled');
    } finally {
      await chat.close();
    }
  });

  test('inbox mode: an approver lists what awaits them, opens a decision with its details and approves it through the form', async () => {
    // A role of this test's own: the inbox lists every open question for the role in the namespace, and other suites
    // on the same Temporal leave questions for ap-approver open.
    const role = `ap-approver-${randomUUID().slice(0, 6)}`;
    const people = makePeople({ sam: '', ann: role });
    const approvals = await startStack({
      name: 'view-approvals',
      app: FIXTURES,
      servers: [{ env: { MCP_AUTH_TOKENS_FILE: writeTokensFile(people) } }],
    });
    const sam = await hostClient(people.sam.token, approvals.server.url);
    try {
      const input = invoiceDecisionInput({ roles: [role] });
      const started = (await sam.callTool({ name: requestDecisionTool.name, arguments: input })) as CallToolResult;
      const taskId = (started.structuredContent as { pendingTask: { taskId: string } }).pendingTask.taskId;
      const ann = await hostClient(people.ann.token, approvals.server.url);
      await awaitInInbox(ann, taskId);
      const tool = (await ann.listTools()).tools.find((candidate) => candidate.name === 'approvals_inbox') as Tool;
      expect(tool._meta).toMatchObject({ ui: { resourceUri: TASK_VIEW_URI } });
      const listed = (await ann.callTool({ name: 'approvals_inbox', arguments: {} })) as CallToolResult;
      const chat = await show(ann, tool, {}, listed, 'light', taskId);
      try {
        const { view, page } = chat;
        await view.getByRole('heading', { name: 'Approvals awaiting you' }).waitFor({ timeout: LONG });
        const item = view.getByRole('button', { name: new RegExp(`Approve ${input.subject}`) });
        await item.waitFor({ timeout: LONG });
        await containsText(item, 'One approval needed');
        await containsText(view.locator('body'), '1 question awaits your decision.');
        mkdirSync(SCREENSHOTS, { recursive: true });
        await page.locator('iframe').screenshot({ path: join(SCREENSHOTS, 'task-view-inbox.png') });

        await item.click();
        // The question's subject below its text, as any subject is shown: its fields, its lines as a table, amounts
        // written one way.
        await expectSubjectLines(view, [
          ['LI-1', 'Printer paper', 'EUR 120.50', 'on approval'],
          ['LI-2', 'Service contract', 'EUR 980.00', 'in 90 days'],
        ]);
        const subject = view.getByRole('region', { name: 'What this is about' });
        await subject
          .getByRole('definition')
          .filter({ hasText: /^EUR 1,100\.50$/ })
          .waitFor();
        await subject.getByRole('definition').filter({ hasText: /^INV-/ }).waitFor();
        expect(occurrences(await view.locator('body').innerText(), `Approve ${input.subject}?`)).toBe(1);
        await containsText(view.locator('body'), taskId);
        await view.getByRole('radio', { name: 'Approve' }).check();
        await view.getByRole('textbox', { name: /Comment/ }).fill('Matches the contract');
        // Tall enough for the whole question: the host sizes the frame to what the view reports.
        await page.setViewportSize({ width: 420, height: 1800 });
        await page.locator('iframe').screenshot({ path: join(SCREENSHOTS, 'task-view-inbox-question.png') });
        await view.getByRole('button', { name: 'Submit' }).click();
        // The answer moves someone else's task: the card says what was recorded and waits for nothing.
        await view.getByText('Your answer was recorded:').first().waitFor({ timeout: LONG });
        const card = view.locator('.sent');
        await containsText(card, 'Approve');
        await containsText(card, 'Matches the contract');
        expect(await view.locator('body').innerText()).not.toContain('Waiting for the task');

        await view.getByRole('button', { name: 'Back to the list' }).click();
        await containsText(view.locator('body'), 'Nothing awaits your decision.');
        // Approved: the task ends with who approved, and its effect was carried out once.
        const final = (await sam.callTool({ name: 'task_result', arguments: { taskId, waitSeconds: 30 } })) as CallToolResult;
        expect(final.structuredContent).toMatchObject({
          outcome: 'approved',
          approvers: [{ principal: people.ann.principal, decision: 'approve', via: 'approvals_answer' }],
        });
        expect(await effectsCarriedOut(approvals.temporal, taskId)).toBe(1);
      } finally {
        await chat.close();
      }
    } finally {
      await sam.close();
      await approvals.stop();
    }
  });

  test('inbox mode for someone who must sign: the view says so, offers the passkey page, and sends the signature pasted with the answer', async () => {
    const role = `ap-signer-${randomUUID().slice(0, 6)}`;
    const people = makePeople({ sam: '', ann: role });
    const key = generateApproverKey();
    const scratch = mkdtempSync(join(os.tmpdir(), 'temporal-mcp-view-signer-'));
    const directoryFile = join(scratch, 'approvers.json');
    writeFileSync(
      directoryFile,
      JSON.stringify({
        mustSignRoles: [role],
        people: [
          { name: 'sam', principals: [people.sam.principal] },
          { name: 'ann', principals: [people.ann.principal], roles: [role], keys: [{ ed25519: key.publicKey }] },
        ],
      }),
    );
    const approvals = await startStack({
      name: 'view-signer',
      app: FIXTURES,
      activities: {
        // The worker counts ann's approval only with her own signature: it reads the same directory.
        notificationDelivery: { directory: ApproversDirectory.load(directoryFile), ledgerDir: join(scratch, 'sent') },
      },
      servers: [
        {
          env: {
            MCP_AUTH_TOKENS_FILE: writeTokensFile(people),
            MCP_APPROVERS_DIRECTORY: directoryFile,
            MCP_PASSKEY_ORIGIN: 'https://approvals.example.com',
          },
        },
      ],
    });
    const sam = await hostClient(people.sam.token, approvals.server.url);
    try {
      const input = invoiceDecisionInput({ roles: [role] });
      const started = (await sam.callTool({ name: requestDecisionTool.name, arguments: input })) as CallToolResult;
      const taskId = (started.structuredContent as { pendingTask: { taskId: string } }).pendingTask.taskId;
      const ann = await hostClient(people.ann.token, approvals.server.url);
      await awaitInInbox(ann, taskId);
      const tool = (await ann.listTools()).tools.find((candidate) => candidate.name === 'approvals_inbox') as Tool;
      const listed = (await ann.callTool({ name: 'approvals_inbox', arguments: {} })) as CallToolResult;
      const item = (
        listed.structuredContent as { items: { taskId: string; subjectDigest: string; run: string; challenge: string }[] }
      ).items.find((entry) => entry.taskId === taskId)!;
      const chat = await show(ann, tool, {}, listed, 'light', taskId);
      try {
        const { view } = chat;
        await view
          .getByRole('button', { name: new RegExp(`Approve ${input.subject}`) })
          .first()
          .click();
        const panel = view.getByRole('region', { name: 'Your own signature' });
        await containsText(panel, 'Your approval counts only with your own signature of it.');
        await panel.getByRole('button', { name: 'Sign an approval with my passkey' }).waitFor({ timeout: LONG });
        // Without a signature the answer is refused, and says what to sign.
        await view.getByRole('radio', { name: 'Approve' }).check();
        await view.getByRole('button', { name: 'Submit' }).click();
        await view
          .getByText(/You must sign your approval with your own key/)
          .first()
          .waitFor({ timeout: LONG });
        expect(await effectsCarriedOut(approvals.temporal, taskId)).toBe(0);
        // Signed as `approvals sign` signs it, pasted, and sent with the answer.
        const signature = signStatement(
          statementOf(
            { taskId, run: item.run, question: { key: 'approval' }, subject: item.subjectDigest, decision: 'approve' },
            { version: 2, challenge: item.challenge },
          ),
          key.privateKeyPem,
        );
        await panel.getByRole('textbox', { name: 'Signature' }).fill(JSON.stringify(signature));
        await view.getByRole('radio', { name: 'Approve' }).check();
        await view.getByRole('button', { name: 'Submit' }).click();
        await view.getByText('Your answer was recorded:').first().waitFor({ timeout: LONG });
        const final = (await sam.callTool({ name: 'task_result', arguments: { taskId, waitSeconds: 30 } })) as CallToolResult;
        expect(final.structuredContent).toMatchObject({ outcome: 'approved' });
        expect(await effectsCarriedOut(approvals.temporal, taskId)).toBe(1);
      } finally {
        await chat.close();
      }
    } finally {
      await sam.close();
      await approvals.stop();
    }
  });

  test('a task id that is not the caller\'s shows only "not found"', async () => {
    const input = askInput();
    const alice = await chatCall(askRequesterTool.name, input);
    const bobClient = await hostClient(BOB);
    const tool = (await bobClient.listTools()).tools.find((candidate) => candidate.name === askRequesterTool.name) as Tool;
    // Bob's host shows a view for Alice's task (a forged or mixed-up tool result).
    const forged: CallToolResult = {
      content: [{ type: 'text', text: 'started' }],
      structuredContent: { pendingTask: { taskId: alice.taskId, status: 'working' } },
    };
    const bob = await show(bobClient, tool, {}, forged, 'light', alice.taskId);
    try {
      await bob.view
        .getByText(/not found/i)
        .first()
        .waitFor({ timeout: LONG });
      const text = await bob.view.locator('body').innerText();
      expect(text).not.toContain(alice.taskId.slice(-12));
      expect(text).not.toMatch(new RegExp(`Approve|Input required|${input.subject}`));
    } finally {
      await bob.close();
      await alice.client.callTool({ name: 'task_cancel', arguments: { taskId: alice.taskId } });
      await alice.close();
    }
  });
});

/** How often `needle` occurs in `text`. */
function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** Waits for the question's subject and checks the table of its lines (line, description, amount, pay on). */
async function expectSubjectLines(view: FrameLocator, rows: unknown[][]): Promise<void> {
  const section = view
    .getByRole('region', { name: 'What this is about' })
    .locator('section', { has: view.getByRole('heading', { name: 'Lines' }) });
  const table = section.getByRole('table');
  await table.waitFor({ timeout: LONG });
  const headers = await table.getByRole('columnheader').allInnerTexts();
  expect(headers.map((header) => header.trim())).toEqual(['Line', 'Description', 'Amount', 'Pay on']);
  const cells = await table
    .locator('tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) =>
        Array.from((tr as unknown as { cells: ArrayLike<{ textContent: string | null }> }).cells, (cell) => cell.textContent ?? ''),
      ),
    );
  expect(cells).toEqual(rows);
}

/** Waits until the locator's text contains `expected` (the page updates as the task moves on). */
function containsText(locator: Locator, expected: string): Promise<true> {
  return eventually(
    async () => ((await locator.innerText().catch(() => '')).includes(expected) ? true : undefined),
    `"${expected}" on the page`,
  );
}

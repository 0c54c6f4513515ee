/**
 * The task view inside a host nobody here wrote: MCP Inspector 2.12's web client, in headless Chromium, against a real
 * server, worker and dev server. In its 2025-11-25 mode the host hands the view the call's result (a pending task) and
 * the person approves through the view's form; in its 2026-07-28 mode the host follows the task itself, puts the
 * question in its own dialog and hands the view only the call's arguments and, at the end, the final result; the view
 * finds the task by its call and follows it, so a task the host cancels reads cancelled there too. In both the view
 * keeps its styles.
 */
import type { Browser, FrameLocator, Locator, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser';
import { startStack } from '../helpers/test-stack';
import { activityCompletions, askInput, FIXTURES, type FixtureStack } from '../fixtures/stack';
import { askRequesterTool } from '../fixtures/tools';
import { startInspector, type Inspector } from '../helpers/inspector';
import { eventually } from '../helpers/temporal';
import { pollUntil } from '../../src/util/wait';

const LONG = 45_000;
let stack: FixtureStack;
let browser: Browser;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startStack({ name: 'inspector', app: FIXTURES, servers: [{}] }), launchChromium()]);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/**
 * Turns the server's connection switch on as a person does: click it once the page shows it, see whether it took the
 * click (the switch turns on, the status leaves "Disconnected"), and click again if it did not. A page still starting
 * (its scripts loading on a busy machine, the first time after the Inspector was installed) shows the switch before
 * it acts on a click.
 */
async function connectServer(page: Page): Promise<void> {
  // The switch's track covers its input: clicked as a person's click would, through the track.
  const toggle = page.getByRole('switch', { name: /Connect or disconnect/ });
  const connected = page.getByText('Connected', { exact: true }).first();
  let clicks = 0;
  let refused: string | undefined;
  await pollUntil(
    async () => {
      if (await connected.isVisible()) return true;
      if (!(await toggle.isChecked())) {
        // A page still laying itself out may have no box for the switch yet: the click is tried again.
        try {
          await toggle.click({ force: true, timeout: 10_000 });
        } catch (error) {
          refused = (error as Error).message.split('\n')[0];
          return undefined;
        }
        clicks++;
      }
      // Either it connects, or the switch stays (or falls back) off and is clicked again.
      await Promise.race([connected.waitFor({ timeout: 10_000 }), untilUnchecked(toggle, 10_000)]).catch(() => undefined);
      return undefined;
    },
    {
      timeoutMs: LONG,
      intervalMs: 100,
      what: () => `the Inspector to connect (${clicks} click(s) on its switch${refused ? `; last refused: ${refused}` : ''})`,
    },
  );
}

/** Resolves when `toggle` is off, or after `timeoutMs`. */
async function untilUnchecked(toggle: Locator, timeoutMs: number): Promise<void> {
  await pollUntil(async () => ((await toggle.isChecked()) ? undefined : true), {
    timeoutMs,
    intervalMs: 100,
    what: 'the switch to be off',
  });
}

/** Connects the Inspector to the server, opens the ask_requester App with `input` as its arguments, and returns the view. */
async function openAskApp(page: Page, inspector: Inspector, input: unknown): Promise<FrameLocator> {
  await page.goto(inspector.url);
  await connectServer(page);
  await page.getByText('Apps', { exact: true }).first().click();
  await page.getByText(askRequesterTool.title!, { exact: true }).first().click();
  await page.getByLabel('Edit as JSON').check({ force: true });
  // The arguments editor is a code editor: its text is replaced as typed text, not filled.
  await page.locator('textarea').first().focus();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(JSON.stringify(input));
  await page.getByRole('button', { name: 'Open App' }).click();
  // The App runs in the Inspector's sandbox frame, which holds the view's own frame.
  return page.frameLocator('iframe').frameLocator('iframe');
}

/** The computed style of the view's first status badge: a rounded pill with padding when its stylesheet applies. */
async function badgeStyle(view: FrameLocator): Promise<{ radius: string; padding: string }> {
  return view
    .locator('.badge')
    .first()
    .evaluate((element) => {
      type Computed = Record<'borderTopLeftRadius' | 'paddingLeft', string>;
      const window = element.ownerDocument.defaultView as unknown as { getComputedStyle(target: unknown): Computed };
      const computed = window.getComputedStyle(element);
      return { radius: computed.borderTopLeftRadius, padding: computed.paddingLeft };
    });
}

/** How many of the task's steps (before its question, after its answer) were carried out. */
const stepsNoted = (taskId: string) => activityCompletions(stack.temporal, taskId, 'noteStep');

/** The task id the view shows. */
async function shownTaskId(view: FrameLocator): Promise<string> {
  const text = await view.locator('body').innerText();
  return /\b(ask-[\w-]+)/.exec(text)![1];
}

test('2025-11-25 mode: the view follows the task, styled, and the question is answered through its form', async () => {
  const inspector = await startInspector(stack.server.url, 'legacy');
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  try {
    const input = askInput({ noteSteps: true });
    const view = await openAskApp(page, inspector, input);
    await view.getByText('Input required').first().waitFor({ timeout: LONG });
    await view.getByText(`Approve ${input.subject}?`).first().waitFor();
    // The question once (not again as the task's status), as the workflow wrote it.
    const asked = await view.locator('body').innerText();
    expect(asked.split(`Approve ${input.subject}?`).length - 1).toBe(1);
    const taskId = await shownTaskId(view);
    expect(await badgeStyle(view)).toEqual({ radius: '999px', padding: '10px' });
    await view.getByRole('radio', { name: 'Approve' }).check();
    await view.getByRole('textbox', { name: /Comment/ }).fill('Approved in the Inspector');
    await view.getByRole('button', { name: 'Submit' }).click();
    await view.getByText('Completed').first().waitFor({ timeout: LONG });
    await view.getByRole('heading', { name: 'Result' }).waitFor({ timeout: LONG });
    const done = await view.locator('body').innerText();
    // The result as the tool returned it: its fields, with the comment given in the form.
    expect(done).toMatch(
      new RegExp(`Result\\s+Subject\\s+${input.subject}\\s+Outcome\\s+approved\\s+Comment\\s+Approved in the Inspector`),
    );
    expect(await stepsNoted(taskId)).toBe(2);
  } finally {
    await page.close();
    await inspector.stop();
  }
});

test('2026-07-28 mode: the host asks the question itself; the view shows the finished task from the final result, styled', async () => {
  const inspector = await startInspector(stack.server.url, 'modern');
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  try {
    const input = askInput({ noteSteps: true });
    const view = await openAskApp(page, inspector, input);
    // The host follows the task and puts the question (tasks/update, SEP-2663) in its own dialog.
    const dialog = page.getByRole('dialog');
    await dialog.getByText(`Approve ${input.subject}?`).first().waitFor({ timeout: LONG });
    // The view, handed the call's arguments only, has found the task by its call (task_find) before the answer.
    await view.getByText('Task ID').waitFor({ timeout: LONG });
    await dialog.getByRole('textbox', { name: /Decision/ }).click();
    await page.getByRole('option', { name: 'Approve' }).click();
    await dialog.getByRole('button', { name: 'Submit' }).click();

    await view.getByText('Completed').first().waitFor({ timeout: LONG });
    await view.getByRole('heading', { name: 'Result' }).waitFor({ timeout: LONG });
    const text = await view.locator('body').innerText();
    expect(text).toMatch(new RegExp(`Result\\s+Subject\\s+${input.subject}\\s+Outcome\\s+approved`));
    expect(text).not.toContain('Waiting for the task');
    expect(await badgeStyle(view)).toEqual({ radius: '999px', padding: '10px' });
    expect(await stepsNoted(await shownTaskId(view))).toBe(2);
  } finally {
    await page.close();
    await inspector.stop();
  }
});

test("2026-07-28 mode: the Cancel of the host's own dialog cancels the whole task; nothing after the question is done, and the view says so", async () => {
  const inspector = await startInspector(stack.server.url, 'modern');
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  try {
    const input = askInput({ noteSteps: true });
    const view = await openAskApp(page, inspector, input);
    const dialog = page.getByRole('dialog');
    await dialog.getByText(`Approve ${input.subject}?`).first().waitFor({ timeout: LONG });
    await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
    // The host sends tasks/cancel: its task list names the task, which Temporal holds cancelled.
    const id = page.getByText(/^ID: ask-/).first();
    await id.waitFor({ timeout: LONG });
    const taskId = (await id.innerText()).replace(/^ID: /, '').trim();
    await eventually(async () => {
      const { status } = await stack.temporal.workflow.getHandle(taskId).describe();
      return status.name === 'CANCELLED' ? true : undefined;
    }, 'the task cancelled');
    // The step before the question ran; the one after an answer never did.
    expect(await stepsNoted(taskId)).toBe(1);
    // The host hands the view the call's arguments only and tells it nothing of the cancel: the view found the task by
    // its call (task_find) and follows it to its end.
    await view.getByText(taskId).waitFor({ timeout: LONG });
    await view.getByText('Cancelled', { exact: true }).first().waitFor({ timeout: LONG });
    expect(await view.locator('body').innerText()).not.toContain('Waiting for the task');
  } finally {
    await page.close();
    await inspector.stop();
  }
});

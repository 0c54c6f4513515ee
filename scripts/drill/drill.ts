/**
 * The fault drill: kills parts of the system with SIGKILL at chosen moments of the invoice flow, restarts them, and
 * checks that the task still ends exactly as an undisturbed run: completed and paid, each line item paid once in the
 * ledger, the approval asked of the human once. `npm run drill` runs it (scripts/drill/main.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PaymentsLedger } from '../../examples/invoice-approval/src/activities/payments';
import { LocalTaskStore } from '../../src/client/store';
import { pollUntil, sleep } from '../../src/util/wait';
import type { Managed } from '../lib/processes';
import { LINE_ITEMS, printedOutcome, Rig, writeInvoice } from '../lib/rig';

/** Moments of the invoice flow at which the drill kills. */
export const MOMENTS = ['before-approval', 'approval-in-flight', 'during-payment', 'timer-wait'] as const;
export type Moment = (typeof MOMENTS)[number];

/** What the drill kills. */
export const VICTIMS = ['client', 'server', 'worker', 'temporal', 'all'] as const;
export type Victim = (typeof VICTIMS)[number];

/** One cell of the matrix. */
export interface DrillCell {
  moment: Moment | 'undisturbed';
  victim: Victim | 'none';
}

/** The verdict on one cell. */
export interface DrillResult extends DrillCell {
  ok: boolean;
  outcome: string;
  /** Ledger entries for the task, and whether each line item appears exactly once. */
  ledger: string;
  /** How often the human was asked for the approval (must be 1). */
  humanAsks: number;
  /** From the restart of what was killed to the task's completion, in ms. */
  recoverMs?: number;
  totalMs: number;
  problems: string[];
}

/**
 * The reduced matrix run by `npm test`: every victim once, every moment at least once, and everything killed at once
 * while the invoice waits for its approval (the restarted client reads the task it was told about: never "not found").
 */
export const QUICK_CELLS: DrillCell[] = [
  { moment: 'before-approval', victim: 'worker' },
  { moment: 'approval-in-flight', victim: 'client' },
  { moment: 'approval-in-flight', victim: 'server' },
  { moment: 'approval-in-flight', victim: 'all' },
  { moment: 'during-payment', victim: 'temporal' },
  { moment: 'timer-wait', victim: 'all' },
];

/** Every moment × every victim. */
export const FULL_CELLS: DrillCell[] = MOMENTS.flatMap((moment) => VICTIMS.map((victim) => ({ moment, victim })));

const CELL_TIMEOUT_MS = 180_000;

/** Runs one cell: a fresh invoice, a kill at the moment, restarts, and the checks. */
async function runCell(rig: Rig, cell: DrillCell): Promise<DrillResult> {
  const started = Date.now();
  const problems: string[] = [];
  const cellDir = mkdtempSync(path.join(rig.dir, `${cell.moment}-${cell.victim}-`));
  const stateDir = path.join(cellDir, 'client-state');
  const answersFile = path.join(cellDir, 'answers.json');
  const invoiceFile = path.join(cellDir, 'invoice.json');
  writeFileSync(answersFile, JSON.stringify({ approval: { decision: 'approve', comment: 'drill' } }));
  writeInvoice(invoiceFile);
  rig.mark(`cell ${cell.moment} × ${cell.victim} (${cellDir})`);

  let client = rig
    .clientProcess(stateDir, ['call', 'process_invoice', '--args', `@${invoiceFile}`], answersFile, path.join(cellDir, 'client.log'))
    .start();
  try {
    return await driveCell(rig, cell, {
      started,
      problems,
      cellDir,
      stateDir,
      answersFile,
      client: () => client,
      replace: (next) => (client = next),
    });
  } finally {
    await client.kill();
  }
}

interface CellContext {
  started: number;
  problems: string[];
  cellDir: string;
  stateDir: string;
  answersFile: string;
  client(): Managed;
  replace(client: Managed): void;
}

async function driveCell(rig: Rig, cell: DrillCell, context: CellContext): Promise<DrillResult> {
  const { started, problems, cellDir, stateDir, answersFile } = context;
  const store = new LocalTaskStore(stateDir);
  const taskId = await pollUntil(() => store.tasks()[0]?.taskId, { what: 'the task id in the client store', timeoutMs: 60_000 });

  const atMoment = async (moment: Moment): Promise<boolean> => {
    const state = await rig.state(taskId);
    const message = state?.published?.statusMessage ?? '';
    switch (moment) {
      case 'before-approval':
        return message.startsWith('Checking invoice');
      case 'approval-in-flight':
        return (store.task(taskId)?.asked.size ?? 0) > 0 && !state?.closed && state?.published?.status === 'input_required';
      case 'during-payment':
        return /paying line item/.test(message);
      case 'timer-wait':
        return state?.published?.status === 'working' && /scheduled:/.test(message);
    }
  };

  // The operator releases the scheduled line item once the task waits on its timer (after any recovery).
  let released = false;
  const release = async () => {
    if (released) return;
    const state = await rig.state(taskId);
    if (!(state?.published?.status === 'working' && /scheduled:/.test(state.published.statusMessage ?? ''))) return;
    const operator = rig
      .clientProcess(
        path.join(cellDir, 'operator-state'),
        ['call', 'release_scheduled_payment', '--args', JSON.stringify({ taskId, lineItemId: 'LI-3' })],
        answersFile,
        path.join(cellDir, 'operator.log'),
      )
      .start();
    if ((await operator.exited()) === 0) released = true;
  };

  let recoverFrom: number | undefined;
  if (cell.moment !== 'undisturbed' && cell.victim !== 'none') {
    const moment = cell.moment;
    await pollUntil(async () => ((await atMoment(moment)) ? true : undefined), { what: `the moment ${moment}`, timeoutMs: 60_000 });
    const victim = cell.victim;
    const hit = (name: Victim) => victim === name || victim === 'all';
    const parts = { server: hit('server'), worker: hit('worker'), temporal: hit('temporal') };
    await rig.killAndRestart(parts, hit('client') ? [context.client().kill()] : []);
    if (hit('client'))
      context.replace(rig.clientProcess(stateDir, ['resume', taskId], answersFile, path.join(cellDir, 'client.log')).start());
    recoverFrom = Date.now();
  }

  const client = context.client();
  const deadline = Date.now() + CELL_TIMEOUT_MS;
  while (client.running && Date.now() < deadline) {
    await release();
    await sleep(200);
  }
  if (client.running) {
    problems.push(`the client did not finish within ${CELL_TIMEOUT_MS / 1000} s`);
    await client.kill();
  }
  const code = await client.exited();
  const printed = printedOutcome(client.output);
  const outcome: string = printed?.result?.structuredContent?.outcome ?? printed?.status ?? 'none';
  if (!printed) problems.push('the client printed no result');
  else {
    if (printed.status !== 'completed') problems.push(`task ended ${printed.status}`);
    const paid = (printed.result?.structuredContent?.payments ?? []).map((p: { lineItemId: string }) => p.lineItemId).sort();
    if (JSON.stringify(paid) !== JSON.stringify(LINE_ITEMS)) problems.push(`result lists payments ${paid.join(',') || 'none'}`);
  }
  if (code !== 0) problems.push(`client exit code ${code}: ${client.output.trim().split('\n').slice(-3).join(' | ')}`);
  if (outcome !== 'paid') problems.push(`outcome ${outcome}, expected paid`);

  const entries = (await new PaymentsLedger(rig.ledgerDir).entries()).filter((entry) => entry.taskId === taskId);
  const keys = entries.map((entry) => entry.lineItemId).sort();
  const once = JSON.stringify(keys) === JSON.stringify(LINE_ITEMS);
  if (!once) problems.push(`ledger holds ${keys.join(',') || 'nothing'} for the task`);
  const humanAsks = store.task(taskId)?.humanAnswers.get('approval') ?? 0;
  if (humanAsks !== 1) problems.push(`the human answered the approval ${humanAsks} times`);

  return {
    ...cell,
    ok: problems.length === 0,
    outcome,
    ledger: `${entries.length}/${LINE_ITEMS.length} ${once ? 'once' : 'WRONG'}`,
    humanAsks,
    ...(recoverFrom !== undefined && { recoverMs: Date.now() - recoverFrom }),
    totalMs: Date.now() - started,
    problems,
  };
}

/** The verdicts of a drill, and where its logs are when a cell failed. */
export interface DrillRun {
  results: DrillResult[];
  /** The folder with every process's logs, kept when a cell failed; undefined when all passed (it was removed). */
  keptDir?: string;
}

/** Runs the cells one after another on one rig, and returns their verdicts. */
export async function runDrill(cells: DrillCell[], log: (line: string) => void = () => undefined): Promise<DrillRun> {
  const rig = new Rig({ name: 'drill' });
  const results: DrillResult[] = [];
  log(`drill: starting a dev server, a worker and an MCP server (work dir ${rig.dir})`);
  let failed = true;
  try {
    await rig.up();
    for (const cell of [{ moment: 'undisturbed', victim: 'none' } as DrillCell, ...cells]) {
      log(`drill: ${cell.moment} × kill ${cell.victim} …`);
      let result: DrillResult;
      try {
        result = await runCell(rig, cell);
      } catch (error) {
        result = { ...cell, ok: false, outcome: 'error', ledger: '-', humanAsks: 0, totalMs: 0, problems: [(error as Error).message] };
        // Bring every process back for the next cell.
        if (!rig.worker.running) await rig.startWorker().catch(() => undefined);
        if (!rig.server.running) await rig.startServer().catch(() => undefined);
      }
      log(`drill:   ${result.ok ? 'pass' : 'FAIL'} ${result.problems.join('; ')}`);
      results.push(result);
    }
    failed = results.some((result) => !result.ok);
  } finally {
    await rig.down(failed);
  }
  return { results, ...(failed && { keptDir: rig.dir }) };
}

/** The matrix as text: moment × killed → outcome, ledger check, human asks, time to recover. */
export function formatMatrix(results: DrillResult[]): string {
  const rows = [
    ['moment', 'killed', 'verdict', 'outcome', 'ledger', 'approval asked', 'restart→done', 'total'],
    ...results.map((r) => [
      r.moment,
      r.victim,
      r.ok ? 'pass' : 'FAIL',
      r.outcome,
      r.ledger,
      String(r.humanAsks),
      r.recoverMs === undefined ? '-' : `${(r.recoverMs / 1000).toFixed(1)} s`,
      `${(r.totalMs / 1000).toFixed(1)} s`,
    ]),
  ];
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column])).join('  ')).join('\n');
}

/**
 * The soak: many invoices in flight at once while random parts of the system are SIGKILLed and restarted, then the
 * books are checked. `npm run soak` runs it (scripts/soak/main.ts).
 *
 * Each slot runs invoices one after another through the CLI client, as the submitter (`call process_invoice` with an
 * idempotency key); holders of the approver role other than the submitter approve them from their inboxes
 * (scripts/soak/approver.ts), one approver for a small invoice and two distinct ones above the workers'
 * INVOICE_SECOND_APPROVER_ABOVE. Every other invoice has a line item months out that an operator releases with
 * `release_scheduled_payment` once the task waits on its timer. A killed client is restarted the way a person would:
 * `resume <taskId>` when its store has the task id, else the same `call` with the same idempotency key.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PaymentsLedger } from '../../examples/invoice-approval/src/activities/payments';
import { LocalTaskStore } from '../../src/client/store';
import { isTemporalUnavailable } from '../../src/core/errors';
import { retryWithBackoff, sleep } from '../../src/util/wait';
import { ClusterSoakStack } from '../cluster/cluster-soak-stack';
import type { Managed } from '../lib/processes';
import { cliClient, LINE_ITEMS, printedOutcome, Rig } from '../lib/rig';
import { COUNTED_FATES, SoakApprover } from './approver';
import { NetworkFaultInjector } from './network-faults';
import { SOAK_APPROVER_ROLE, type SoakStack, type StackPerson } from './soak-stack';

/** What the soak kills on the dev-server stack. */
export const SOAK_VICTIMS = ['client', 'server', 'worker', 'temporal', 'all'] as const;
export type SoakVictim = string;

/** How a soak runs. */
export interface SoakOptions {
  minutes: number;
  concurrency: number;
  killEverySeconds: number;
  /** `dev` (default): a dev server, a worker, an MCP server; `cluster`: the stack of `npm run cluster`. */
  stack?: 'dev' | 'cluster';
  /**
   * Seconds of whole links between two faults of the network (cluster only: Toxiproxy between the replicas and
   * Temporal, and between Temporal and PostgreSQL); 0 or absent: no faults of the network.
   */
  faultGapSeconds?: number;
  log?: (line: string) => void;
}

/** What a soak found. */
export interface SoakReport {
  tasks: number;
  kills: Record<SoakVictim, number>;
  /** Faults of the network injected, by kind (empty without them). */
  faults: Record<string, number>;
  /** Per victim: ms from the restart until every task in flight at the kill had moved on (a new event, or closed). */
  recoveryMs: Record<SoakVictim, number[]>;
  /** Invoices that did not end paid with every line item. */
  lost: number;
  /** Line items (or invoice numbers) in the ledger more than once. */
  paidTwice: number;
  /**
   * Questions asked more than once: of the submitter (from its client's answers file, which has none to give), or
   * listed again in an approver's inbox after that approver's answer was recorded.
   */
  askedTwice: number;
  /** Approvals the approvers gave, as the invoices' results list them. */
  approvals: number;
  /**
   * Answers sent again after a lost reply (a kill during the call): recorded on the retry, or refused then as answered
   * already because the lost attempt had been taken. Neither counts twice; the results check it.
   */
  answersRetried: number;
  /**
   * A person's answer counted twice in a result, or a repeat refused as "answered already" when that person's earlier
   * answer had its reply (so nothing was lost that a retry would explain).
   */
  answeredTwice: number;
  /** Invoices whose result lists other approvers than it should: too few or many, the submitter, or an answer missing. */
  wrongApprovers: number;
  /** Files in the decision store (signed decision records) at the end. */
  decisionRecords: number;
  /** Workflows of the soak that no client's store knows. */
  orphans: number;
  /** Clients that exited with an error by themselves (not killed). */
  clientErrors: number;
  /** Approvers' requests that had no reply by their deadline (the client gave up waiting). */
  lateReplies: number;
  problems: string[];
  /** The soak's folder, kept when a problem was found. */
  keptDir?: string;
}

/** Above this total an invoice needs two distinct approvers: every other pair of soak invoices is above it. */
const SECOND_APPROVER_ABOVE = 500;
/**
 * Faster steps than the drill's (the soak wants many invoices, each still slow enough to be hit mid-flight), and
 * approval by holders of the approver role, never the submitter.
 */
const SOAK_WORKER_ENV = {
  ERP_DELAY_MS: '1000',
  PAYMENT_DELAY_MS: '500',
  PAYMENT_FAIL_ATTEMPTS: '1',
  INVOICE_APPROVER_ROLE: SOAK_APPROVER_ROLE,
  INVOICE_SECOND_APPROVER_ABOVE: String(SECOND_APPROVER_ABOVE),
};
/** The people of the dev-server stack's token file: the submitter and three approvers. */
const DEV_PEOPLE = ['submitter', ...['approver-a', 'approver-b', 'approver-c'].map((name) => `${name} ${SOAK_APPROVER_ROLE}`)];
/** How long the in-flight invoices may take to finish once the soak stops killing. */
const DRAIN_MS = 300_000;
/** Restarts of one invoice's client after errors of its own before the soak gives up on it. */
const MAX_CLIENT_ERRORS = 5;

/** One invoice of the soak and its client. */
class Job {
  readonly dir: string;
  readonly stateDir: string;
  readonly answersFile: string;
  readonly invoiceFile: string;
  readonly invoiceNumber: string;
  readonly key = randomUUID();
  readonly store: LocalTaskStore;
  client?: Managed;
  killedBySoak = false;
  released = false;
  done = false;

  constructor(
    root: string,
    readonly index: number,
    readonly scheduled: boolean,
    /** Above SECOND_APPROVER_ABOVE: two distinct approvers. */
    readonly twoApprovers: boolean,
  ) {
    this.dir = path.join(root, `invoice-${String(index).padStart(4, '0')}`);
    mkdirSync(this.dir, { recursive: true });
    this.stateDir = path.join(this.dir, 'client-state');
    this.answersFile = path.join(this.dir, 'answers.json');
    this.invoiceFile = path.join(this.dir, 'invoice.json');
    this.invoiceNumber = `INV-SOAK-${index}-${randomUUID().slice(0, 8).toUpperCase()}`;
    this.store = new LocalTaskStore(this.stateDir);
    // The submitter has nothing to answer: a question put to it ends its client with exit code 6, a client error.
    writeFileSync(this.answersFile, JSON.stringify({}));
    const payOn = new Date(Date.now() + 120 * 86_400_000).toISOString().slice(0, 10);
    writeFileSync(
      this.invoiceFile,
      JSON.stringify({
        vendorId: 'V-200',
        invoiceNumber: this.invoiceNumber,
        currency: 'EUR',
        lineItems: [
          { lineItemId: 'LI-1', description: 'Paid at once', amount: twoApprovers ? SECOND_APPROVER_ABOVE + 10 : 10 },
          { lineItemId: 'LI-2', description: 'Paid at once', amount: 2.5 },
          {
            lineItemId: 'LI-3',
            description: scheduled ? 'Paid in four months' : 'Paid at once',
            amount: 1.25,
            ...(scheduled && { payOn }),
          },
        ],
      }),
    );
  }

  get taskId(): string | undefined {
    return this.store.tasks()[0]?.taskId;
  }
}

/** The dev-server rig as a soak stack: its victims are the server, the worker, the dev server, or all of them. */
class DevSoakStack extends Rig implements SoakStack {
  readonly victims = SOAK_VICTIMS;

  get mcpUrl(): string {
    return this.url;
  }

  submitter(): StackPerson {
    return { principal: 'submitter', token: this.tokenOf('submitter') };
  }

  approvers(): StackPerson[] {
    return ['approver-a', 'approver-b', 'approver-c'].map((principal) => ({ principal, token: this.tokenOf(principal) }));
  }

  override clientProcess(stateDir: string, args: string[], answersFile: string, logFile: string, answerDelayMs = 2500): Managed {
    const token = this.submitter().token;
    return cliClient(this.url, { stateDir, args, answersFile, logFile, answerDelayMs, env: this.env(), token });
  }

  override async killAndRestart(
    victim: string | { server: boolean; worker: boolean; temporal: boolean },
    alsoKilling: Promise<unknown>[] = [],
  ): Promise<void> {
    if (typeof victim !== 'string') return super.killAndRestart(victim, alsoKilling);
    const hit = (name: string) => victim === name || victim === 'all';
    await super.killAndRestart({ server: hit('server'), worker: hit('worker'), temporal: hit('temporal') }, alsoKilling);
  }
}

/** Runs the soak and returns what it found; the stack's folder is kept when anything is wrong. */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? (() => undefined);
  const rig: SoakStack =
    options.stack === 'cluster'
      ? new ClusterSoakStack({ workerEnv: SOAK_WORKER_ENV, networkFaults: (options.faultGapSeconds ?? 0) > 0, say: log })
      : new DevSoakStack({ name: 'soak', workerEnv: SOAK_WORKER_ENV, people: DEV_PEOPLE });
  const jobs: Job[] = [];
  const report: SoakReport = {
    tasks: 0,
    kills: Object.fromEntries(rig.victims.map((victim) => [victim, 0])),
    faults: {},
    recoveryMs: Object.fromEntries(rig.victims.map((victim) => [victim, []])),
    lost: 0,
    paidTwice: 0,
    askedTwice: 0,
    approvals: 0,
    answersRetried: 0,
    answeredTwice: 0,
    wrongApprovers: 0,
    decisionRecords: 0,
    orphans: 0,
    clientErrors: 0,
    lateReplies: 0,
    problems: [],
  };
  const jobsDir = path.join(rig.dir, 'invoices');
  let keep = true;
  const soakOver = new AbortController();
  let approving: Promise<unknown> = Promise.resolve();
  let faults: NetworkFaultInjector | undefined;
  let faulting: Promise<void> = Promise.resolve();
  try {
    await rig.up();
    const network = rig.network;
    log(
      `soak: ${options.concurrency} invoices in flight for ${options.minutes} min, a kill every ${options.killEverySeconds} s` +
        (network ? `, a fault of the network (10–60 s) after every ${options.faultGapSeconds} s of whole links` : '') +
        ` (work dir ${rig.dir})`,
    );
    const approvers = rig.approvers().map((person) => new SoakApprover(person, rig.mcpUrl, log));
    approving = Promise.all(approvers.map((approver) => approver.run(soakOver.signal)));
    const endAt = Date.now() + options.minutes * 60_000;
    if (network) {
      faults = new NetworkFaultInjector(network, log, (text) => rig.mark(text));
      faulting = faults.run(endAt, options.faultGapSeconds!, soakOver.signal);
    }
    const startClient = (job: Job) => {
      const taskId = job.taskId;
      const args = taskId ? ['resume', taskId] : ['call', 'process_invoice', '--args', `@${job.invoiceFile}`, '--idempotency-key', job.key];
      job.client = rig.clientProcess(job.stateDir, args, job.answersFile, path.join(job.dir, 'client.log'), 300).start();
    };

    /** Runs one invoice to its end, restarting its client after kills (and after errors, up to a limit). */
    const runJob = async (job: Job) => {
      let errors = 0;
      startClient(job);
      const operator = operate(rig, job);
      for (;;) {
        const code = await job.client!.exited();
        // Given up on after the drain: its client is not started again (it would outlive the soak).
        if (job.done) break;
        if (job.killedBySoak) {
          job.killedBySoak = false;
          await sleep(200);
          startClient(job);
          continue;
        }
        if (code === 0) break;
        report.clientErrors++;
        const lastLines = job.client!.output.trim().split('\n').slice(-2).join(' | ');
        report.problems.push(`invoice ${job.index} (${job.taskId ?? 'no task id yet'}): the client exited ${code}: ${lastLines}`);
        if (++errors > MAX_CLIENT_ERRORS) break;
        startClient(job);
      }
      job.done = true;
      await operator;
    };

    const slots = Array.from({ length: options.concurrency }, async (_, slot) => {
      while (Date.now() < endAt) {
        const index = jobs.length;
        const job = new Job(jobsDir, index, (index + slot) % 2 === 0, Math.floor(index / 2) % 2 === 0);
        jobs.push(job);
        await runJob(job);
      }
    });

    const killing = (async () => {
      let round = 0;
      while (Date.now() + options.killEverySeconds * 1000 < endAt) {
        await sleep(options.killEverySeconds * 1000);
        const victim = rig.victims[Math.floor(Math.random() * rig.victims.length)];
        round++;
        try {
          await killAndRestart(rig, jobs, victim, report, log, round, soakOver.signal);
        } catch (error) {
          // The stack could not be brought back: report it, stop killing, and still check what the invoices became.
          report.problems.push(`kill ${round} (${victim}): the restart failed: ${(error as Error).message}`);
          break;
        }
      }
    })();

    await killing;
    await faulting;
    if (faults) {
      await faults.heal();
      report.faults = { ...faults.injected };
      report.problems.push(...faults.problems);
    }
    log(`soak: no more kills${faults ? ' or faults' : ''}; waiting for the invoices in flight to finish`);
    // The drain's timer ends with the soak (soakOver), however soon the slots finish.
    await Promise.race([Promise.all(slots), sleep(Math.max(endAt - Date.now(), 0) + DRAIN_MS, soakOver.signal)]);
    for (const job of jobs.filter((candidate) => !candidate.done)) {
      const failing = job.taskId ? await lastWorkflowTaskFailure(rig, job.taskId) : undefined;
      report.problems.push(
        `invoice ${job.index} (${job.taskId ?? 'no task id'}) did not finish within ${DRAIN_MS / 1000} s after the last kill` +
          (failing ? `; its last workflow task failed: ${failing}` : ''),
      );
      job.done = true;
      await job.client?.kill();
    }
    soakOver.abort();
    await approving;
    await check(rig, jobs, approvers, report);
    keep = report.problems.length > 0;
  } finally {
    soakOver.abort();
    await approving;
    // Whatever became of the faults, they are taken away and the stack goes down.
    await faulting.catch(() => undefined);
    await faults?.heal();
    for (const job of jobs) await job.client?.kill();
    await rig.down(keep);
  }
  return { ...report, ...(keep && { keptDir: rig.dir }) };
}

/** Releases the job's scheduled line item once its task waits on the timer, as an operator would. */
async function operate(rig: SoakStack, job: Job): Promise<void> {
  if (!job.scheduled) return;
  const operatorState = path.join(job.dir, 'operator-state');
  while (!job.done && !job.released) {
    const taskId = job.taskId;
    const state = taskId ? await rig.state(taskId) : undefined;
    if (state && !state.closed && state.published?.status === 'working' && /scheduled:/.test(state.published.statusMessage ?? '')) {
      const args = ['call', 'release_scheduled_payment', '--args', JSON.stringify({ taskId, lineItemId: 'LI-3' })];
      const operator = rig.clientProcess(operatorState, args, job.answersFile, path.join(job.dir, 'operator.log'), 0).start();
      if ((await operator.exited()) === 0) job.released = true;
    }
    await sleep(500);
  }
}

/** Kills the victim, restarts it, and measures how long until every task in flight then has moved on. */
async function killAndRestart(
  rig: SoakStack,
  jobs: Job[],
  victim: SoakVictim,
  report: SoakReport,
  log: (line: string) => void,
  round: number,
  /** Ends the measuring once the soak is over (its Temporal connection closes then). */
  over: AbortSignal,
): Promise<void> {
  const running = jobs.filter((job) => !job.done && job.client?.running);
  const clients =
    victim === 'all' ? running : victim === 'client' && running.length > 0 ? [running[Math.floor(Math.random() * running.length)]] : [];
  // The tasks whose progress shows recovery: the killed client's, or every one in flight.
  const watched = (victim === 'client' ? clients : jobs.filter((job) => !job.done))
    .map((job) => job.taskId)
    .filter((id): id is string => id !== undefined);
  const before = new Map<string, number>();
  for (const id of watched) before.set(id, (await historyLength(rig, id)) ?? 0);

  rig.mark(`soak kill ${round}: ${victim}`);
  report.kills[victim]++;
  const killingClients = clients.map((job) => {
    job.killedBySoak = true;
    return job.client!.kill();
  });
  await rig.killAndRestart(victim, killingClients);
  const restartedAt = Date.now();
  log(`soak: kill ${round}: ${victim}${clients.length ? ` (${clients.length} client(s))` : ''}; restarted`);

  // Measured in the background: the next kill may come before every task has moved on.
  void (async () => {
    const pending = new Set(watched);
    const deadline = restartedAt + DRAIN_MS;
    while (pending.size > 0 && Date.now() < deadline && !over.aborted) {
      for (const id of [...pending]) {
        const length = await historyLength(rig, id);
        if (length === undefined) continue;
        if (length > (before.get(id) ?? 0) || length < 0) pending.delete(id);
      }
      if (pending.size > 0) await sleep(250, over);
    }
    if (pending.size === 0) report.recoveryMs[victim].push(Date.now() - restartedAt);
  })();
}

/** Why the task's last failed workflow task failed (a nondeterminism error, for instance), if one did. */
async function lastWorkflowTaskFailure(rig: SoakStack, taskId: string): Promise<string | undefined> {
  try {
    const history = await rig.client!.workflow.getHandle(taskId).fetchHistory();
    const failed = (history.events ?? []).filter((event) => event.workflowTaskFailedEventAttributes).pop();
    const failure = failed?.workflowTaskFailedEventAttributes?.failure?.message;
    return failed ? `event ${String(failed.eventId)}: ${failure ?? 'no message'}`.slice(0, 300) : undefined;
  } catch {
    return undefined;
  }
}

/** The workflow's history length, -1 once it is closed, undefined while Temporal cannot say. */
async function historyLength(rig: SoakStack, taskId: string): Promise<number | undefined> {
  try {
    const description = await rig.client!.workflow.getHandle(taskId).describe();
    return description.status.name === 'RUNNING' ? description.historyLength : -1;
  } catch {
    return undefined;
  }
}

/**
 * The books: every invoice paid once per line item, approved by as many distinct approvers as its total needs (never
 * the submitter, each answer the approvers know was taken in the result), nobody asked twice, no workflow nobody knows.
 */
async function check(rig: SoakStack, jobs: Job[], approvers: SoakApprover[], report: SoakReport): Promise<void> {
  report.tasks = jobs.length;
  const submitter = rig.submitter().principal;
  for (const approver of approvers) {
    report.askedTwice += approver.askedAgain;
    report.answeredTwice += approver.answeredTwice;
    report.lateReplies += approver.lateReplies;
    report.problems.push(...approver.problems);
    for (const fate of approver.fates.values()) {
      if (fate === 'recorded-on-retry' || fate === 'taken-before-lost-reply') report.answersRetried++;
    }
  }
  const ledger = await new PaymentsLedger(rig.ledgerDir).entries();
  const known = new Set<string>();
  for (const job of jobs) {
    const taskId = job.taskId;
    const stored = taskId ? job.store.task(taskId) : undefined;
    if (taskId) known.add(taskId);
    const printed = job.client ? printedOutcome(job.client.output) : undefined;
    const paid = (printed?.result?.structuredContent?.payments ?? []).map((p: { lineItemId: string }) => p.lineItemId).sort();
    if (printed?.status !== 'completed' || printed.result?.structuredContent?.outcome !== 'paid' || paid.join() !== LINE_ITEMS.join()) {
      report.lost++;
      report.problems.push(
        `invoice ${job.index} (${taskId ?? 'no task id'}) ended ${printed?.status ?? 'without an outcome'}, paid ${paid.join(',') || 'nothing'}` +
          (printed?.result?.structuredContent?.outcome ? ` (outcome ${printed.result.structuredContent.outcome})` : ''),
      );
    }
    if (taskId && printed?.result?.structuredContent) {
      const listed: { principal: string; decision: string }[] = printed.result.structuredContent.approval?.approvers ?? [];
      report.approvals += listed.filter((entry) => entry.decision === 'approve').length;
      checkApprovers(job, taskId, listed, submitter, approvers, report);
    }
    for (const [key, count] of stored?.humanAnswers ?? []) {
      if (count > 1) {
        report.askedTwice++;
        report.problems.push(`invoice ${job.index} (${taskId}): question "${key}" answered ${count} times from the answers file`);
      }
    }
    // The same goods must never be paid through two tasks, nor a line item twice in one.
    const forInvoice = ledger.filter((entry) => entry.invoiceNumber === job.invoiceNumber);
    const tasks = new Set(forInvoice.map((entry) => entry.taskId));
    const items = forInvoice.map((entry) => entry.lineItemId);
    if (tasks.size > 1 || new Set(items).size !== items.length) {
      report.paidTwice++;
      report.problems.push(`invoice ${job.index}: the ledger holds ${items.join(',')} through ${tasks.size} task(s)`);
    }
  }
  report.decisionRecords = countFiles(rig.decisionStore);
  // Every workflow the soak started must be known to its client: visibility is eventually consistent, so read twice.
  const listed = new Set<string>();
  for (let attempt = 0; attempt < 2; attempt++) {
    // A Temporal restarted by the last kill may still be coming up: asked again while it is unavailable.
    await retryWithBackoff(
      async () => {
        for await (const info of rig.client!.workflow.list({ query: `TaskQueue = '${rig.taskQueue}'` })) listed.add(info.workflowId);
      },
      { isRetryable: isTemporalUnavailable, deadline: Date.now() + 120_000 },
    );
    await sleep(2_000);
  }
  for (const id of listed) {
    if (!known.has(id)) {
      report.orphans++;
      report.problems.push(`workflow ${id} is known to no client (an orphan)`);
    }
  }
}

/**
 * One invoice's approvers against what it needs and what the approvers saw: as many distinct people as its total
 * needs, all holders of the role, never the submitter, nobody twice; every answer an approver knows was taken is listed,
 * and no answer an approver knows was refused is.
 */
function checkApprovers(
  job: Job,
  taskId: string,
  listed: { principal: string; decision: string }[],
  submitter: string,
  approvers: SoakApprover[],
  report: SoakReport,
): void {
  const principals = listed.map((entry) => entry.principal);
  const required = job.twoApprovers ? 2 : 1;
  const wrong: string[] = [];
  const twice = principals.filter((principal, at) => principals.indexOf(principal) !== at);
  if (twice.length > 0) {
    report.answeredTwice += twice.length;
    wrong.push(`${[...new Set(twice)].join(', ')} listed twice`);
  }
  const others = listed.filter((entry) => entry.decision !== 'approve');
  if (others.length > 0) wrong.push(`decisions nobody gave: ${others.map((entry) => `${entry.principal} ${entry.decision}`).join(', ')}`);
  if (new Set(principals).size !== required) wrong.push(`${new Set(principals).size} distinct approver(s) where ${required} are needed`);
  if (principals.includes(submitter)) wrong.push(`the submitter ${submitter} among them`);
  for (const principal of principals) {
    const approver = approvers.find((candidate) => candidate.principal === principal);
    if (!approver) wrong.push(`${principal}, who is not an approver of the soak`);
    else if (!approver.fates.has(taskId)) wrong.push(`${principal}, who never answered it`);
    else if (approver.fates.get(taskId) === 'refused') wrong.push(`${principal}, whose answer was refused`);
  }
  for (const approver of approvers) {
    const fate = approver.fates.get(taskId);
    if (fate && COUNTED_FATES.includes(fate) && !principals.includes(approver.principal)) {
      wrong.push(`not ${approver.principal}, whose answer was taken (${fate}): lost`);
    }
  }
  if (wrong.length > 0) {
    report.wrongApprovers++;
    report.problems.push(`invoice ${job.index} (${taskId}): approvers ${principals.join(', ') || 'none'}: ${wrong.join('; ')}`);
  }
}

/** How many files are under `dir` (0 when it does not exist). */
function countFiles(dir: string): number {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).length;
  } catch {
    return 0;
  }
}

/** The report as the lines the soak prints. */
export function formatSoak(report: SoakReport): string {
  const victims = Object.keys(report.kills).map((victim) => {
    const times = [...report.recoveryMs[victim]].sort((a, b) => a - b);
    const p50 = times.length ? `${(times[Math.floor((times.length - 1) / 2)] / 1000).toFixed(1)} s` : '-';
    const max = times.length ? `${(times[times.length - 1] / 1000).toFixed(1)} s` : '-';
    return `  ${victim.padEnd(14)} kills ${String(report.kills[victim]).padStart(3)}   recovery p50 ${p50.padStart(7)}  max ${max.padStart(7)}`;
  });
  const faults = Object.entries(report.faults).map(([kind, count]) => `${kind} ${count}`);
  return [
    `tasks ${report.tasks}`,
    ...victims,
    ...(faults.length > 0 ? [`faults of the network: ${faults.join(', ')}`] : []),
    `approvals ${report.approvals} (answers sent again after a lost reply ${report.answersRetried}), decision records ${report.decisionRecords}`,
    `lost ${report.lost}, paid twice ${report.paidTwice}, asked twice ${report.askedTwice}, answered twice ${report.answeredTwice}, ` +
      `wrong approvers ${report.wrongApprovers}, orphans ${report.orphans}, client errors ${report.clientErrors}, ` +
      `replies past their deadline ${report.lateReplies}`,
  ].join('\n');
}

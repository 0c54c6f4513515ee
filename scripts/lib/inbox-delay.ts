/**
 * The bench's approver-inbox row: how long a question a workflow addresses to a role takes to show in an approver's
 * `approvals_inbox`. Its own worker (on a task queue of its own, whose policy has holders of a role approve invoices)
 * and MCP server (with bearer tokens: a submitter, and an approver holding the role) run beside the bench's, which
 * answer approvals as the submitter and take no credentials.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { AWAITING_SEARCH_ATTRIBUTE } from '../../src/contract/approvals';
import { timestampToMs } from '../../src/core/temporal-access';
import { DEFAULT_INVOICE_APPROVER_ROLE } from '../../examples/invoice-approval/src/invoice';
import { pollUntil } from '../../src/util/wait';
import { freePort, Managed, quickSampleWorkerEnv } from './processes';

const EventType = temporal.api.enums.v1.EventType;

/** The approval question's key in the invoice workflow. */
const APPROVAL_KEY = 'approval';
/** How long one question may take to show before the row gives up. */
const SHOW_TIMEOUT_MS = 60_000;

/** When one question was asked, committed, visible and seen, in ms since the epoch (see {@link InboxRig.sample}). */
export interface InboxSample {
  taskId: string;
  /** The submitter's tools/call went out. */
  submitted: number;
  /** WorkflowExecutionStarted. */
  started: number;
  /** The first workflow task completed (it schedules the invoice's validation). */
  firstTask: number;
  /** The validation activity completed. */
  validated: number;
  /** `askedAt` of the inbox item: the workflow's clock when it published the question. */
  asked: number;
  /** The workflow task that published the question (memo and McpAwaiting) completed. */
  committed: number;
  /** A raw ListWorkflowExecutions of the inbox's own query, repeated every interval, first listed the task. */
  visible: number;
  /** An approvals_inbox call that listed the question returned (the first). */
  seen: number;
  /** How long each approvals_inbox call took while this question was awaited. */
  inboxCalls: number[];
}

/**
 * A worker on a task queue of its own whose invoices are approved by holders of {@link DEFAULT_INVOICE_APPROVER_ROLE},
 * an MCP server for that queue with static tokens, and two MCP SDK clients: the submitter and an approver.
 */
export class InboxRig {
  private worker?: Managed;
  private server?: Managed;
  private readonly open: McpClient[] = [];
  private submitter?: McpClient;
  private approver?: McpClient;
  private readonly dir: string;
  private readonly taskQueue: string;

  constructor(
    private readonly options: {
      /** A folder for the rig's files (removed by the caller). */
      dir: string;
      /** The Temporal frontend, host:port. */
      address: string;
      /** The bench's own task queue: the rig's is named after it. */
      taskQueue: string;
      /** The bench's Temporal client, for the raw visibility query and the histories. */
      client: Client;
      /** Settings both processes get besides the rig's own (the run's decision keys). */
      env?: Record<string, string>;
    },
  ) {
    this.dir = path.join(options.dir, 'inbox');
    this.taskQueue = `${options.taskQueue}-approvals`;
  }

  /** Starts the worker and the server, and connects the two clients. */
  async start(): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    const suffix = randomBytes(3).toString('hex');
    const people = {
      submitter: { principal: `bench-submitter-${suffix}`, token: randomBytes(24).toString('hex'), roles: '' },
      approver: { principal: `bench-approver-${suffix}`, token: randomBytes(24).toString('hex'), roles: DEFAULT_INVOICE_APPROVER_ROLE },
    };
    const tokensFile = path.join(this.dir, 'tokens');
    writeFileSync(
      tokensFile,
      `${Object.values(people)
        .map((p) => `${p.principal} ${p.token} ${p.roles}`.trim())
        .join('\n')}\n`,
      {
        mode: 0o600,
      },
    );
    const env = {
      ...process.env,
      ...this.options.env,
      TEMPORAL_ADDRESS: this.options.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: this.taskQueue,
      // Both sides of the decision records: the server writes them, the worker checks them before paying.
      MCP_DECISION_STORE: path.join(this.dir, 'decisions'),
    };
    this.worker = new Managed(
      'the approvals worker',
      process.execPath,
      () => ['--import', 'tsx', 'examples/invoice-approval/src/worker.ts'],
      {
        ...env,
        ...quickSampleWorkerEnv(this.dir),
        NOTIFICATION_OUTBOX: path.join(this.dir, 'notifications.jsonl'),
        NOTIFICATION_LEDGER: path.join(this.dir, 'notifications-sent'),
        INVOICE_APPROVER_ROLE: DEFAULT_INVOICE_APPROVER_ROLE,
      },
      path.join(this.options.dir, 'inbox-worker.log'),
    );
    const port = await freePort();
    this.server = new Managed(
      'the approvals MCP server',
      'npm',
      () => ['run', '-s', 'serve', '--', '--http', `127.0.0.1:${port}`, '--samples'],
      // The approver reads the inbox every few ms: far above the default rate of task requests.
      { ...env, MCP_AUTH_TOKENS_FILE: tokensFile, MCP_TASK_OPS_PER_SECOND: '0' },
      path.join(this.options.dir, 'inbox-server.log'),
    );
    await Promise.all([this.worker.start().waitFor(/worker: polling/, 180_000), this.server.start().waitFor(/MCP Streamable HTTP on/)]);
    const url = new URL(`http://127.0.0.1:${port}/mcp`);
    const connect = async (name: string, token: string) => {
      const client = new McpClient({ name, version: '1.0.0' }, { capabilities: { tasks: { requests: {} } } });
      this.open.push(client);
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      return client;
    };
    this.submitter = await connect('bench-submitter', people.submitter.token);
    this.approver = await connect('bench-approver', people.approver.token);
  }

  /**
   * One invoice submitted as a task by the submitter while the approver calls approvals_inbox every `intervalMs` and,
   * beside it, the bench's Temporal client lists the inbox's query raw at the same pace, until both show the question;
   * then the approver approves it and the invoice is awaited to its end, so that the next sample starts on a quiet
   * stack. The workflow's steps are read from its history afterwards.
   */
  async sample(n: number, intervalMs: number): Promise<InboxSample> {
    const submitter = this.submitter!;
    const approver = this.approver!;
    const submitted = Date.now();
    const created = await submitter.request(
      { method: 'tools/call', params: { name: 'process_invoice', arguments: invoiceOf(n), task: {} } },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    const inboxCalls: number[] = [];
    const seeing = pollUntil(
      async () => {
        const began = performance.now();
        const result = (await approver.callTool({ name: 'approvals_inbox', arguments: {} })) as CallToolResult;
        inboxCalls.push(performance.now() - began);
        if (result.isError) throw new Error(`approvals_inbox failed: ${JSON.stringify(result.content)}`);
        const items = (result.structuredContent as { items: { taskId: string; key: string; askedAt: string }[] }).items;
        const item = items.find((candidate) => candidate.taskId === taskId && candidate.key === APPROVAL_KEY);
        return item && { seen: Date.now(), asked: Date.parse(item.askedAt) };
      },
      { timeoutMs: SHOW_TIMEOUT_MS, intervalMs, what: `the question of task ${taskId} in the approver's inbox` },
    );
    const query = `${AWAITING_SEARCH_ATTRIBUTE} IN ('role:${DEFAULT_INVOICE_APPROVER_ROLE}') AND ExecutionStatus = 'Running'`;
    const listing = pollUntil(
      async () => {
        for await (const info of this.options.client.workflow.list({ query, pageSize: 20 })) {
          if (info.workflowId === taskId) return Date.now();
        }
        return undefined;
      },
      { timeoutMs: SHOW_TIMEOUT_MS, intervalMs, what: `task ${taskId} in a raw listing of the inbox's query` },
    );
    const [{ seen, asked }, visible] = await Promise.all([seeing, listing]);

    const answer = (await approver.callTool({
      name: 'approvals_answer',
      arguments: { taskId, key: APPROVAL_KEY, action: 'accept', content: { decision: 'approve' } },
    })) as CallToolResult;
    if (answer.isError) throw new Error(`approvals_answer on ${taskId}: ${JSON.stringify(answer.content)}`);
    const handle = this.options.client.workflow.getHandle(taskId);
    await handle.result();
    return { taskId, submitted, ...stepsOf((await handle.fetchHistory()).events ?? [], taskId), asked, visible, seen, inboxCalls };
  }

  /** Closes the clients and stops the worker and the server. */
  async stop(): Promise<void> {
    await Promise.all(this.open.map((client) => client.close().catch(() => undefined)));
    await Promise.all([this.worker?.kill('SIGTERM'), this.server?.kill('SIGTERM')]);
  }

  /** Stops both processes at once (a signal arrived). */
  killNow(): void {
    for (const managed of [this.worker, this.server]) {
      if (!managed?.running) continue;
      try {
        process.kill(-managed.child!.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

function invoiceOf(n: number) {
  return {
    vendorId: 'V-100',
    invoiceNumber: `INV-I${n}-${randomBytes(4).toString('hex')}`,
    currency: 'EUR',
    lineItems: [{ lineItemId: 'LI-1', description: 'Bench', amount: 1 }],
  };
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The times of the workflow's steps up to its question, from its history. */
function stepsOf(events: HistoryEvent[], taskId: string): Pick<InboxSample, 'started' | 'firstTask' | 'validated' | 'committed'> {
  const timeOf = (event: HistoryEvent | undefined, what: string) => {
    const at = timestampToMs(event?.eventTime);
    if (at === undefined) throw new Error(`the history of ${taskId} has no ${what}`);
    return at;
  };
  const byId = new Map(events.map((event) => [Number(event.eventId), event]));
  const upsert = events.find(
    (event) =>
      event.eventType === EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES &&
      event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.[AWAITING_SEARCH_ATTRIBUTE] !== undefined,
  );
  const completedId = Number(upsert?.upsertWorkflowSearchAttributesEventAttributes?.workflowTaskCompletedEventId ?? 0);
  return {
    started: timeOf(events[0], 'start event'),
    firstTask: timeOf(
      events.find((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
      'completed workflow task',
    ),
    validated: timeOf(
      events.find((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED),
      'completed activity',
    ),
    committed: timeOf(byId.get(completedId), `workflow task that set ${AWAITING_SEARCH_ATTRIBUTE}`),
  };
}

import {
  ActivityCancellationType,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type { InvoiceActivities } from '../activities';
import type { LedgerEntry } from '../activities/payments';
import {
  APPROVAL_INPUT_KEY,
  approvalRequest,
  formatAmount,
  invoiceSubject,
  RELEASE_SCHEDULED_PAYMENT_UPDATE,
  releaseScheduledPaymentUpdate,
  RELEASES_MEMO,
  SEALED_RELEASES_PATCH,
  sumAmounts,
  type Approver,
  type Invoice,
  type InvoiceApprovalPolicy,
  type InvoiceResult,
  type InvoiceSubject,
  type LineItem,
  type Payment,
  type PublishedReleases,
  type ReleasePaymentRequest,
  type ReleaseRecord,
  type ScheduledPayment,
} from '../invoice';
// The library as a workflow of a team's own imports it: through its workflow entry (temporal-mcp-tasks/workflow).
import {
  approvalDecisionOf,
  checkSealedAction,
  personOfAnswer,
  startWorkflowTask,
  verifyDecisions,
  type AnswerRecord,
  type WorkflowTask,
} from 'temporal-mcp-tasks/workflow';

/**
 * Patch: the invoice number is registered with the ERP once the invoice is approved, and a number that the validation
 * of an earlier version registered is released on reject or decline. Histories that passed the approval without this
 * marker took no ERP step between the answer and the first payment or the end.
 */
const ERP_REGISTERS_ON_APPROVAL = 'erp-registers-on-approval';

/**
 * Patch: payments started with this marker wait for their cancellation to complete, and a cancelled workflow reads
 * the ledger and reports what was paid before it rethrows. Histories without it closed as soon as they saw the cancel.
 */
const REPORTS_PAYMENTS_ON_CANCEL = 'reports-payments-on-cancel';

/**
 * Patch: the worker's approval policy decides who approves (holders of a role, never the submitter, two above an
 * amount). Histories without it asked the submitter.
 */
const APPROVERS_BY_POLICY = 'invoice-approvers-by-policy';

/**
 * Patch: approvals by role carry the invoice as their subject, and before each payment a worker activity checks the
 * decision records on file (signatures, chain, subject, distinct people, quorum, no rejection). Histories without it
 * paid on the answers in their history alone.
 */
const VERIFIES_DECISION_RECORDS = 'invoice-verifies-decision-records';

const { invoiceApprovalPolicy } = proxyLocalActivities<InvoiceActivities>({ startToCloseTimeout: '10 seconds' });

/** What the decision records say of a payment: allowed, or why not. */
type Verdict = { ok: true } | { ok: false; reason: string };

// Each ERP call and payment heartbeats while it waits on the outside world, so a worker that dies mid-call is noticed
// within the heartbeat timeout and the call is retried elsewhere, rather than after the whole start-to-close timeout.
const erpOptions = {
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
} as const;
const { validateInvoice, releaseInvoice, findPayments } = proxyActivities<InvoiceActivities>(erpOptions);
// A registration in flight when the cancel comes is waited for, so the workflow knows whether to release the number.
const { registerInvoice } = proxyActivities<InvoiceActivities>({
  ...erpOptions,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

// Payments are idempotent by key, so retrying forever is safe; a stuck gateway shows as a pending activity.
const paymentOptions = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
} as const;
const { payLineItem: payLineItemAbandonedOnCancel } = proxyActivities<InvoiceActivities>(paymentOptions);
// A payment in flight when the cancel comes is waited for: whether it was made belongs in the cancelled task's report.
const { payLineItem } = proxyActivities<InvoiceActivities>({
  ...paymentOptions,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/**
 * Validates an invoice against the ERP, asks a person to approve it, registers its number with the ERP, then pays
 * each line item exactly once, each on its `payOn` date (a durable timer) or at once. Returns the outcome; never fails
 * for business reasons. Cancelled, it says in its task state what was paid before the cancel, releases the invoice
 * number if nothing was, and ends cancelled.
 */
export async function invoiceWorkflow(invoice: Invoice): Promise<InvoiceResult> {
  const taskId = workflowInfo().workflowId;
  const task = startWorkflowTask(`Checking invoice ${invoice.invoiceNumber} with the ERP`);
  const state: InvoiceState = {
    paid: new Map(),
    releasedEarly: new Set(),
    inFlight: new Set(),
    approved: false,
    payable: false,
    mayHoldNumber: false,
  };
  try {
    return await processInvoice(invoice, taskId, task, state);
  } catch (error) {
    if (!isCancellation(error) || !patched(REPORTS_PAYMENTS_ON_CANCEL)) throw error;
    await CancellationScope.nonCancellable(async () => {
      await Promise.allSettled(state.inFlight);
      // The ledger, not what this run saw: a payment can be made by an attempt whose answer never arrived.
      const payments = await findPayments(
        taskId,
        invoice.lineItems.map((item) => item.lineItemId),
      );
      if (payments.length === 0 && state.mayHoldNumber) await releaseInvoice(taskId, invoice);
      task.reportCancelled(cancelledMessage(invoice, payments, state.approved));
    });
    throw error;
  }
}

/** What the workflow knows while it runs, kept outside {@link processInvoice} so the cancel handler can read it. */
interface InvoiceState {
  paid: Map<string, Payment>;
  /** Scheduled line items an operator released for payment before their date. */
  releasedEarly: Set<string>;
  /** Payments started and not settled. */
  inFlight: Set<Promise<void>>;
  /** The approver approved the invoice. */
  approved: boolean;
  /** Approved and registered: line items may be paid. */
  payable: boolean;
  /** Whether the ERP may hold the invoice number for this task. */
  mayHoldNumber: boolean;
}

async function processInvoice(invoice: Invoice, taskId: string, task: WorkflowTask, state: InvoiceState): Promise<InvoiceResult> {
  const total = sumAmounts(invoice.lineItems.map((item) => item.amount));
  const money = (amount: number) => formatAmount(amount, invoice.currency);
  const base = { vendorId: invoice.vendorId, invoiceNumber: invoice.invoiceNumber, currency: invoice.currency, total };
  const { paid, releasedEarly } = state;

  const releases: PublishedReleases = { released: [], refused: [] };
  setHandler(
    releaseScheduledPaymentUpdate,
    async (request) => {
      const { lineItemId } = request;
      // Histories from before sealed releases took any release as it came; they replay that way.
      const releasedBy = patched(SEALED_RELEASES_PATCH) ? await takeSealedRelease(request, releases) : undefined;
      const early = !paid.has(lineItemId);
      releasedEarly.add(lineItemId);
      await condition(() => paid.has(lineItemId));
      if (releasedBy && early) paid.set(lineItemId, { ...paid.get(lineItemId)!, releasedBy });
      return paid.get(lineItemId)!;
    },
    {
      validator: ({ lineItemId }) => {
        const item = invoice.lineItems.find((candidate) => candidate.lineItemId === lineItemId);
        if (!item) throw new Error(`invoice ${invoice.invoiceNumber} has no line item "${lineItemId}"`);
        if (!state.payable) throw new Error(`invoice ${invoice.invoiceNumber} is not approved, so nothing can be paid yet`);
        if (paid.has(lineItemId)) throw new Error(`line item ${lineItemId} is already paid`);
        if (!item.payOn) throw new Error(`line item ${lineItemId} is not scheduled; it is paid right after approval`);
      },
    },
  );

  const check = await validateInvoice(taskId, invoice);
  // Validations of earlier versions registered the number and answered without `registered`.
  state.mayHoldNumber = check.ok && check.registered !== false;
  if (!check.ok) {
    return {
      ...base,
      outcome: 'invalid',
      reason: check.reason,
      payments: [],
      scheduled: [],
      summary: `Invoice ${invoice.invoiceNumber} was not processed: ${check.reason}`,
    };
  }

  const policy: InvoiceApprovalPolicy = patched(APPROVERS_BY_POLICY) ? await invoiceApprovalPolicy() : { approvers: 'requester' };
  const subject =
    policy.approvers === 'role' && patched(VERIFIES_DECISION_RECORDS) ? invoiceSubject(invoice, total, check.vendorName) : undefined;
  const approval = await askForApproval(task, policy, approvalRequest(invoice, total, check.vendorName), total, subject);
  /** Whether the decision records on file still allow paying this invoice; always, for approvals without records. */
  const verify = async (): Promise<Verdict> => {
    if (!subject || policy.approvers !== 'role') return { ok: true };
    return verifyDecisions(APPROVAL_INPUT_KEY, { subject, required: requiredApprovals(policy, total) });
  };
  const { comment } = approval;
  const recorded = { ...(comment && { comment }), ...(approval.approvers && { approvers: approval.approvers }) };
  const registersOnApproval = patched(ERP_REGISTERS_ON_APPROVAL);
  if (approval.decision !== 'approve') {
    if (registersOnApproval && state.mayHoldNumber) await releaseInvoice(taskId, invoice);
    const reason = {
      reject: 'The approver rejected the invoice.',
      decline: 'The approver declined to approve the invoice.',
      overdue: 'Nobody approved the invoice in time.',
    }[approval.decision];
    return {
      ...base,
      outcome: 'rejected',
      reason: comment ? `${reason} Comment: ${comment}` : reason,
      approval: { decision: approval.decision, ...recorded },
      payments: [],
      scheduled: [],
      summary:
        approval.decision === 'overdue'
          ? `Invoice ${invoice.invoiceNumber} (${money(total)}) was not approved in time; nothing was paid.`
          : `Invoice ${invoice.invoiceNumber} (${money(total)}) was rejected; nothing was paid.`,
    };
  }
  state.approved = true;
  const unapproved = (reason: string): InvoiceResult => {
    const payments = invoice.lineItems.filter((item) => paid.has(item.lineItemId)).map((item) => paid.get(item.lineItemId)!);
    return {
      ...base,
      outcome: 'unapproved',
      reason: `The decision records on file do not allow this payment: ${reason}`,
      approval: { decision: 'approve', ...recorded },
      payments,
      scheduled: [],
      summary:
        payments.length === 0
          ? `Invoice ${invoice.invoiceNumber} (${money(total)}) was not paid: its approvals do not hold up (${reason}).`
          : `Invoice ${invoice.invoiceNumber}: payments stopped after ${payments.length} of ${invoice.lineItems.length} line item(s): its approvals do not hold up (${reason}).`,
    };
  };
  const first = await verify();
  if (!first.ok) {
    if (registersOnApproval && state.mayHoldNumber) await releaseInvoice(taskId, invoice);
    return unapproved(first.reason);
  }
  if (registersOnApproval) {
    task.setStatus(`Approved; registering invoice ${invoice.invoiceNumber} with the ERP`);
    state.mayHoldNumber = true;
    const registration = await registerInvoice(taskId, invoice);
    if (!registration.ok) {
      return {
        ...base,
        outcome: 'invalid',
        reason: registration.reason,
        approval: { decision: 'approve', ...recorded },
        payments: [],
        scheduled: [],
        summary: `Invoice ${invoice.invoiceNumber} was approved but not paid: ${registration.reason}`,
      };
    }
  }
  state.payable = true;

  const pay = async (item: LineItem) => {
    const request = {
      taskId,
      vendorId: invoice.vendorId,
      invoiceNumber: invoice.invoiceNumber,
      currency: invoice.currency,
      lineItemId: item.lineItemId,
      amount: item.amount,
    };
    const payment = (patched(REPORTS_PAYMENTS_ON_CANCEL) ? payLineItem : payLineItemAbandonedOnCancel)(request).then((entry) => {
      paid.set(item.lineItemId, { lineItemId: item.lineItemId, amount: entry.amount, paymentId: entry.paymentId, paidAt: entry.paidAt });
    });
    state.inFlight.add(payment);
    try {
      await payment;
    } finally {
      state.inFlight.delete(payment);
    }
  };
  const scheduled = (): ScheduledPayment[] =>
    invoice.lineItems
      .filter((item) => item.payOn && !paid.has(item.lineItemId))
      .map((item) => ({ lineItemId: item.lineItemId, amount: item.amount, payOn: item.payOn! }));
  const progress = () => {
    const waiting = scheduled();
    const head = `Approved; paid ${paid.size} of ${invoice.lineItems.length} line item(s)`;
    task.setStatus(
      waiting.length === 0
        ? head
        : `${head}; scheduled: ${waiting.map((s) => `${s.lineItemId} (${money(s.amount)}) on ${s.payOn}`).join(', ')}`,
      waiting.map((s) => ({
        tool: 'release_scheduled_payment',
        arguments: { lineItemId: s.lineItemId },
        title: `Pay ${s.lineItemId} now`,
        description: `${money(s.amount)}, scheduled for ${s.payOn}`,
      })),
    );
  };

  // A scheduled payment is checked again when its day comes: a rejection recorded meanwhile stops it.
  let stopped: string | undefined;
  const dueNow = invoice.lineItems.filter((item) => msUntil(item.payOn) <= 0);
  for (const item of dueNow) {
    task.setStatus(`Approved; paying line item ${item.lineItemId} (${money(item.amount)})`);
    await pay(item);
  }
  progress();
  await Promise.all(
    invoice.lineItems
      // Everything not paid above, decided once: an item whose date passes meanwhile must not fall between the lists.
      .filter((item) => !dueNow.includes(item))
      .map(async (item) => {
        // A durable timer: survives worker and server restarts, and wakes early on release.
        await condition(() => releasedEarly.has(item.lineItemId), Math.max(msUntil(item.payOn), 1));
        if (stopped) return;
        const verdict = await verify();
        if (!verdict.ok) {
          stopped ??= verdict.reason;
          return;
        }
        await pay(item);
        progress();
      }),
  );
  if (stopped) return unapproved(stopped);
  await condition(allHandlersFinished);

  const payments = invoice.lineItems.map((item) => paid.get(item.lineItemId)!);
  return {
    ...base,
    outcome: 'paid',
    approval: { decision: 'approve', ...recorded },
    payments,
    scheduled: [],
    summary: `Invoice ${invoice.invoiceNumber} from ${invoice.vendorId} was approved and paid: ${money(total)} in ${payments.length} payment(s).`,
  };
}

interface ApprovalOutcome {
  decision: 'approve' | 'reject' | 'decline' | 'overdue';
  comment?: string;
  /** Who answered, when the policy addresses approvers by role. */
  approvers?: Approver[];
}

/**
 * Puts the approval question to whom the policy names: the submitter (their answer on their own task), or holders of
 * the approver role other than the submitter, two distinct ones above the policy's amount, reminded, escalated and
 * expired on durable timers. Any rejection ends it.
 */
async function askForApproval(
  task: WorkflowTask,
  policy: InvoiceApprovalPolicy,
  request: ReturnType<typeof approvalRequest>,
  total: number,
  subject: InvoiceSubject | undefined,
): Promise<ApprovalOutcome> {
  if (policy.approvers === 'requester') {
    const answer = await task.requestInput(APPROVAL_INPUT_KEY, request);
    const comment = typeof answer.content?.comment === 'string' && answer.content.comment !== '' ? answer.content.comment : undefined;
    const decision = answer.action !== 'accept' ? 'decline' : answer.content?.decision === 'approve' ? 'approve' : 'reject';
    return { decision, ...(comment && { comment }) };
  }
  const asked = Date.now();
  const after = (ms: number | undefined) => (ms === undefined ? undefined : new Date(asked + ms));
  const escalates = policy.escalateTo !== undefined && policy.escalateAfterMs !== undefined;
  const dueAt = after(escalates ? policy.escalateAfterMs : policy.expireAfterMs);
  const followUpAt = after(policy.remindAfterMs);
  const outcome = await task.requestDecision(
    APPROVAL_INPUT_KEY,
    {
      ...request,
      ...(subject && { subject }),
      audience: { roles: [policy.role], required: requiredApprovals(policy, total) },
      ...(dueAt && { dueAt }),
      ...(followUpAt && { followUpAt }),
      ...(escalates && {
        escalation: { roles: [policy.escalateTo!], ...(policy.expireAfterMs !== undefined && { dueAt: after(policy.expireAfterMs) }) },
      }),
    },
    (answer) => answer.action === 'accept' && answer.content?.decision === 'reject',
  );
  const approvers = outcome.answers.map(approverOf);
  if (outcome.outcome === 'accepted') return { decision: 'approve', approvers };
  if (outcome.outcome === 'overdue') return { decision: 'overdue', approvers };
  // Declined: the last answer closed it, with a rejection or a refusal to answer.
  const closing = approvers[approvers.length - 1];
  return {
    decision: closing.decision === 'decline' ? 'decline' : 'reject',
    ...(closing.comment && { comment: closing.comment }),
    approvers,
  };
}

/** Distinct people who must approve an invoice of `total` under a policy by role. */
function requiredApprovals(policy: Extract<InvoiceApprovalPolicy, { approvers: 'role' }>, total: number): number {
  return total > policy.secondApproverAbove ? 2 : 1;
}

function approverOf(answer: AnswerRecord): Approver {
  const decision = approvalDecisionOf(answer);
  const comment =
    answer.comment ?? (typeof answer.content?.comment === 'string' && answer.content.comment !== '' ? answer.content.comment : undefined);
  return {
    principal: answer.principal,
    ...(answer.person !== undefined && { person: personOfAnswer(answer) }),
    roles: answer.roles,
    decision,
    ...(answer.delegatedTo !== undefined && { delegatedTo: answer.delegatedTo }),
    ...(comment !== undefined && { comment }),
    at: answer.at,
    ...(answer.via !== undefined && { via: answer.via }),
    ...(answer.record !== undefined && { record: answer.record.digest }),
  };
}

/** The cancelled task's status message: what was paid (per the ledger) and what was not. */
function cancelledMessage(invoice: Invoice, payments: LedgerEntry[], approved: boolean): string {
  const byItem = new Map(payments.map((payment) => [payment.lineItemId, payment]));
  if (byItem.size === 0) {
    return approved ? 'Cancelled after approval, before any payment; nothing was paid.' : 'Cancelled before approval; nothing was paid.';
  }
  const paidText = invoice.lineItems
    .filter((item) => byItem.has(item.lineItemId))
    .map((item) => `${item.lineItemId} (${formatAmount(byItem.get(item.lineItemId)!.amount, invoice.currency)})`)
    .join(', ');
  const unpaid = invoice.lineItems.filter((item) => !byItem.has(item.lineItemId)).map((item) => item.lineItemId);
  const rest = unpaid.length === 0 ? 'every line item was paid' : `${unpaid.join(', ')} ${unpaid.length === 1 ? 'was' : 'were'} not paid`;
  return `Cancelled after paying ${paidText}; ${rest}.`;
}

function msUntil(payOn: string | undefined): number {
  return payOn ? Date.parse(`${payOn}T00:00:00Z`) - Date.now() : 0;
}

/** Refused releases kept in {@link RELEASES_MEMO}. */
const REFUSED_RELEASES_KEPT = 5;

/**
 * Takes a release only with the bridge's seal for this run and this line item, checked by the worker: records who
 * released it (in `releases`, published in the memo) and returns that record. Any other release is refused: kept in
 * `releases.refused` and failed with `ReleaseRefused`, so that nothing is paid early for it.
 */
async function takeSealedRelease(request: ReleasePaymentRequest, releases: PublishedReleases): Promise<ReleaseRecord> {
  const opened = await checkSealedAction(request, RELEASE_SCHEDULED_PAYMENT_UPDATE, { lineItemId: request.lineItemId });
  const at = new Date().toISOString();
  if (typeof opened === 'string') {
    const refusal = opened;
    log.warn('refused a release', { lineItemId: request.lineItemId, reason: refusal });
    const refused = { update: RELEASE_SCHEDULED_PAYMENT_UPDATE, subject: String(request.lineItemId).slice(0, 200), reason: refusal, at };
    releases.refused = [...releases.refused, refused].slice(-REFUSED_RELEASES_KEPT);
    upsertMemo({ [RELEASES_MEMO]: releases });
    throw ApplicationFailure.nonRetryable(`Release refused: ${refusal}`, 'ReleaseRefused');
  }
  const { principal, via } = opened.requestedBy;
  const record: ReleaseRecord = { principal, ...(via !== undefined && { via }), at };
  releases.released.push({ lineItemId: request.lineItemId, ...record });
  upsertMemo({ [RELEASES_MEMO]: releases });
  return record;
}

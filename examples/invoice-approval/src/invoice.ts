/**
 * Definitions the invoice workflow shares with its activities and with the MCP tool that starts it:
 * input and output schemas, message definitions, and the approval form.
 */
import { defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';
import { formatAmount, type ActionSealFields, type FormInputRequest, type RefusedAction } from 'temporal-mcp-tasks/workflow';

export { formatAmount };

/** Workflow type name; stored in histories, never rename. */
export const INVOICE_WORKFLOW_TYPE = 'invoiceWorkflow';

/** Key of the approval input request; one approval per invoice. */
export const APPROVAL_INPUT_KEY = 'approval';

const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._/-]*$/;
const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
/**
 * Text on one line that reads as it is: no control characters (line breaks among them), no line or paragraph
 * separators, no bidirectional controls or other invisible format characters (which can make an amount read reversed).
 */
// eslint-disable-next-line no-control-regex
const ONE_LINE = /^[^\u0000-\u001f\u007f-\u009f\u2028\u2029\u00ad\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]*$/;

/** True for a real calendar date written YYYY-MM-DD. */
export function isCalendarDate(value: string): boolean {
  if (!DATE_PATTERN.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
}

/** True for an ISO 4217 code this runtime knows. */
function isCurrencyCode(value: string): boolean {
  return /^[A-Z]{3}$/.test(value) && Intl.supportedValuesOf('currency').includes(value);
}

/** One line of an invoice. */
export const LineItemSchema = z.object({
  lineItemId: z
    .string()
    .min(1)
    .max(64)
    .regex(ID_PATTERN, 'use letters, digits, ".", "_", "/" or "-"')
    .describe('Identifier of the line item, unique within the invoice, e.g. "LI-1".'),
  description: z
    .string()
    .min(1)
    .max(500)
    // The submitter's words are shown to approvers inside the question: one line, so they never pass for its own lines.
    .regex(ONE_LINE, 'one line of text, without line breaks, control characters or invisible format characters (bidirectional overrides)')
    .describe('What the line item pays for.'),
  amount: z
    .number()
    .positive()
    .max(1_000_000_000)
    .multipleOf(0.01, 'use at most 2 decimals')
    .describe('Amount to pay, in the invoice currency; greater than 0, at most 2 decimals.'),
  payOn: z
    .string()
    .refine(isCalendarDate, 'use a calendar date written YYYY-MM-DD')
    .optional()
    .describe('Pay on this date (YYYY-MM-DD, UTC) rather than right after approval. Omit to pay at once.'),
});
export type LineItem = z.infer<typeof LineItemSchema>;

/** The `process_invoice` tool's arguments and the invoice workflow's input. */
export const InvoiceSchema = z
  .object({
    vendorId: z
      .string()
      .min(1)
      .max(64)
      .regex(ID_PATTERN, 'use letters, digits, ".", "_", "/" or "-"')
      .describe('ERP vendor id of the supplier, e.g. "V-100".'),
    invoiceNumber: z
      .string()
      .min(1)
      .max(64)
      .regex(ID_PATTERN, 'use letters, digits, ".", "_", "/" or "-"')
      .describe("The supplier's invoice number; each may be processed once per vendor."),
    currency: z
      .string()
      .refine(isCurrencyCode, 'use an ISO 4217 currency code such as "EUR" or "USD"')
      .describe('ISO 4217 currency code of every amount, e.g. "EUR".'),
    lineItems: z
      .array(LineItemSchema)
      .min(1, 'an invoice needs at least one line item')
      .max(100)
      .describe('The line items to pay; at least one.'),
  })
  .superRefine((invoice, ctx) => {
    const seen = new Set<string>();
    invoice.lineItems.forEach((item, index) => {
      if (seen.has(item.lineItemId)) {
        ctx.addIssue({
          code: 'custom',
          path: ['lineItems', index, 'lineItemId'],
          message: `line item id "${item.lineItemId}" appears twice; ids must be unique within the invoice`,
        });
      }
      seen.add(item.lineItemId);
    });
  });
export type Invoice = z.infer<typeof InvoiceSchema>;

/** Who released a scheduled line item for payment before its date, as the workflow recorded it. */
export const ReleaseRecordSchema = z.object({
  principal: z.string().describe('The principal the bridge authenticated'),
  via: z.string().optional().describe('The tool it came through'),
  at: z.string().describe('ISO 8601 time the workflow took the release'),
});
export type ReleaseRecord = z.infer<typeof ReleaseRecordSchema>;

/** A line item that was paid. */
export const PaymentSchema = z.object({
  lineItemId: z.string(),
  amount: z.number(),
  paymentId: z.string(),
  paidAt: z.string().describe('ISO 8601 time of payment'),
  releasedBy: ReleaseRecordSchema.optional().describe('Who released it before its date, when someone did'),
});
export type Payment = z.infer<typeof PaymentSchema>;

/** A line item waiting for its pay date. */
export const ScheduledPaymentSchema = z.object({
  lineItemId: z.string(),
  amount: z.number(),
  payOn: z.string(),
});
export type ScheduledPayment = z.infer<typeof ScheduledPaymentSchema>;

/** One approver's answer, as the workflow recorded it. */
export const ApproverSchema = z.object({
  principal: z.string(),
  person: z.string().optional().describe('The person behind the principal: four eyes count people'),
  roles: z.array(z.string()).describe('Their roles when they answered'),
  decision: z.enum(['approve', 'reject', 'decline', 'delegate']),
  delegatedTo: z.string().optional(),
  comment: z.string().optional(),
  at: z.string().describe('ISO 8601 time the answer was taken'),
  via: z.string().optional().describe('The tool or request it came through'),
  record: z.string().optional().describe('Digest of the signed decision record (see `temporal-mcp-tasks approvals verify`)'),
});
export type Approver = z.infer<typeof ApproverSchema>;

/**
 * Outcomes of an invoice: paid in full, rejected by the approver, refused by the ERP check, or `unapproved`: the
 * decision records on file do not allow the payment (a rejection on record, too few approvals for what would be paid),
 * so what was not paid yet never is.
 */
export const INVOICE_OUTCOMES = ['paid', 'rejected', 'invalid', 'unapproved'] as const;

/** The invoice workflow's result, also the tool's `structuredContent`. */
export const InvoiceResultSchema = z.object({
  outcome: z.enum(INVOICE_OUTCOMES),
  vendorId: z.string(),
  invoiceNumber: z.string(),
  currency: z.string(),
  total: z.number().describe('Sum of all line items'),
  reason: z.string().optional().describe('Why the invoice was refused or rejected'),
  approval: z
    .object({
      decision: z.enum(['approve', 'reject', 'decline', 'overdue']),
      comment: z.string().optional(),
      approvers: z
        .array(ApproverSchema)
        .optional()
        .describe('Who answered the approval (by role), when and through what, as the workflow recorded it'),
    })
    .optional(),
  payments: z.array(PaymentSchema),
  scheduled: z.array(ScheduledPaymentSchema).describe('Line items still waiting for their pay date'),
  summary: z.string(),
});
export type InvoiceResult = z.infer<typeof InvoiceResultSchema>;

/** Wire name of {@link releaseScheduledPaymentUpdate}; stored in histories, never rename. */
export const RELEASE_SCHEDULED_PAYMENT_UPDATE = 'releaseScheduledPayment';

/**
 * Argument of {@link releaseScheduledPaymentUpdate}: the line item, and the bridge's seal of the request (a sealed
 * action for this run, this Update and `{ lineItemId }`). A release without a valid seal is refused.
 */
export interface ReleasePaymentRequest extends ActionSealFields {
  lineItemId: string;
}

/**
 * Pays a scheduled line item now instead of on its date; completes with the payment, which says who released it. Only a
 * request the bridge sealed is taken (see {@link SEALED_RELEASES_PATCH}).
 */
export const releaseScheduledPaymentUpdate = defineUpdate<Payment, [ReleasePaymentRequest]>(RELEASE_SCHEDULED_PAYMENT_UPDATE);

/** Patch id under which the invoice workflow takes only sealed releases; histories from before it took any and replay so. */
export const SEALED_RELEASES_PATCH = 'invoice-sealed-releases';

/**
 * Memo key where the invoice workflow keeps its releases: who released which line item and when, and the last few
 * releases it refused (no seal, a bad proof, another run's or another line item's), newest last.
 */
export const RELEASES_MEMO = 'invoiceReleases';

/** What the invoice workflow keeps in {@link RELEASES_MEMO}. */
export interface PublishedReleases {
  released: (ReleaseRecord & { lineItemId: string })[];
  refused: RefusedAction[];
}

/**
 * Who approves invoices: holders of a role, never the submitter, two distinct ones above an amount, with a reminder,
 * an escalation to another role, and an expiry on durable timers; or `requester`: the submitter approves (one person
 * running everything). The worker's setting; the workflow reads it once per invoice and keeps it in its history.
 */
export type InvoiceApprovalPolicy =
  | { approvers: 'requester' }
  | {
      approvers: 'role';
      role: string;
      /** Above this total (in the invoice's currency), two distinct approvers. */
      secondApproverAbove: number;
      remindAfterMs?: number;
      /** With `escalateTo`: after this long, holders of `escalateTo` are asked too. */
      escalateAfterMs?: number;
      escalateTo?: string;
      /** After this long (counted from the question, escalation included), the invoice ends unpaid as overdue. */
      expireAfterMs?: number;
    };

/** The role whose holders approve invoices unless INVOICE_APPROVER_ROLE says otherwise. */
export const DEFAULT_INVOICE_APPROVER_ROLE = 'ap-approver';

/**
 * The approval form: a required decision and an optional comment. The question shows what is approved: the vendor
 * as the ERP knows it, each line item with its amount and when it is paid, and the ERP's check.
 */
export function approvalRequest(invoice: Invoice, total: number, vendorName?: string): Omit<FormInputRequest, 'mode'> {
  const scheduled = invoice.lineItems.filter((item) => item.payOn).length;
  const vendor = vendorName ? `${invoice.vendorId} (${vendorName})` : invoice.vendorId;
  const lines = invoice.lineItems.map(
    (item) =>
      `- ${item.lineItemId} ${item.description}: ${formatAmount(item.amount, invoice.currency)}, ` +
      (item.payOn ? `scheduled for ${item.payOn}` : 'paid on approval'),
  );
  return {
    message:
      `Approve invoice ${invoice.invoiceNumber} from vendor ${vendor}: ` +
      `${formatAmount(total, invoice.currency)} in ${invoice.lineItems.length} line item(s)` +
      (scheduled ? `, ${scheduled} of them scheduled for later` : '') +
      '?' +
      (vendorName
        ? `\n${lines.join('\n')}\nERP check: vendor ${vendor} is active and invoice ${invoice.invoiceNumber} is not booked yet.`
        : ''),
    requestedSchema: {
      type: 'object',
      properties: {
        decision: {
          type: 'string',
          title: 'Decision',
          description: 'Approve to pay the invoice, reject to refuse it.',
          enum: ['approve', 'reject'],
          enumNames: ['Approve', 'Reject'],
        },
        comment: { type: 'string', title: 'Comment', description: 'Optional note for the record.', maxLength: 500 },
      },
      required: ['decision'],
    },
  };
}

/** Adds amounts in cents so that 0.1 + 0.2 is 0.3. */
export function sumAmounts(amounts: number[]): number {
  return amounts.reduce((cents, amount) => cents + Math.round(amount * 100), 0) / 100;
}

/** What an approver of an invoice is shown, as data: the subject of its approval question and of every decision record. */
export interface InvoiceSubject {
  kind: 'invoice';
  vendorId: string;
  vendorName?: string;
  invoiceNumber: string;
  currency: string;
  total: number;
  lines: { lineItemId: string; description: string; amount: number; payOn?: string }[];
  /** The ERP check the approver was told of: the vendor is active and the number not booked yet. */
  erp: { ok: true; vendorName?: string };
}

/**
 * The subject of an invoice's approval: exactly what is paid (vendor, number, currency, each line's amount and date).
 * The workflow shows it with the question and checks the decision records against it again before each payment.
 */
export function invoiceSubject(invoice: Invoice, total: number, vendorName?: string): InvoiceSubject {
  return {
    kind: 'invoice',
    vendorId: invoice.vendorId,
    ...(vendorName !== undefined && { vendorName }),
    invoiceNumber: invoice.invoiceNumber,
    currency: invoice.currency,
    total,
    lines: invoice.lineItems.map((item) => ({
      lineItemId: item.lineItemId,
      description: item.description,
      amount: item.amount,
      ...(item.payOn !== undefined && { payOn: item.payOn }),
    })),
    erp: { ok: true, ...(vendorName !== undefined && { vendorName }) },
  };
}

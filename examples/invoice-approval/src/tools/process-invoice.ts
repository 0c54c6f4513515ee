import {
  formatAmount,
  INVOICE_WORKFLOW_TYPE,
  InvoiceResultSchema,
  InvoiceSchema,
  sumAmounts,
  type Invoice,
  type InvoiceResult,
} from '../invoice';
import { defineWorkflowTool } from 'temporal-mcp-tasks';

/** `process_invoice`: validate, approve and pay an invoice, as a durable task. */
export const processInvoiceTool = defineWorkflowTool<Invoice, InvoiceResult>({
  name: 'process_invoice',
  title: 'Process an invoice',
  description:
    'Checks a supplier invoice against the ERP, has it approved, then pays each line item exactly once (line items ' +
    'with a payOn date are paid on that date). Approvers are people of the accounts-payable approver role other than ' +
    'the submitter (two of them above a threshold), who answer through approvals_inbox; a deployment may let the ' +
    'submitter approve instead. Runs as a long-lived task: it may wait for approval and for scheduled pay dates. The ' +
    'result lists who approved and the payments made; a rejection is an error saying nothing was paid.',
  inputSchema: InvoiceSchema,
  outputSchema: InvoiceResultSchema,
  taskSupport: 'optional',
  annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: true },
  workflowType: INVOICE_WORKFLOW_TYPE,
  idPrefix: 'invoice',
  toResult: (result) => ({
    content: [{ type: 'text', text: result.summary }],
    structuredContent: result,
    // Refused by the ERP or not approved: the work did not run, a tool error.
    isError: result.outcome !== 'paid',
  }),
  immediateResponse: (invoice, taskId) =>
    `Invoice ${invoice.invoiceNumber} (${formatAmount(sumAmounts(invoice.lineItems.map((i) => i.amount)), invoice.currency)}) ` +
    `is being processed as task ${taskId}; it needs approval before anything is paid.`,
});

import {
  formatAmount,
  INVOICE_WORKFLOW_TYPE,
  InvoiceResultSchema,
  InvoiceSchema,
  sumAmounts,
  type Invoice,
  type InvoiceResult,
} from '../../shared/invoice';
import { defineWorkflowTool } from './define';

/** `process_invoice`: validate, approve and pay an invoice, as a durable task. */
export const processInvoiceTool = defineWorkflowTool<Invoice, InvoiceResult>({
  name: 'process_invoice',
  title: 'Process an invoice',
  description:
    'Checks a supplier invoice against the ERP, asks a person to approve it, then pays each line item exactly once ' +
    '(line items with a payOn date are paid on that date). Runs as a long-lived task: it may wait for approval and for ' +
    'scheduled pay dates. The result lists the payments made.',
  inputSchema: InvoiceSchema,
  outputSchema: InvoiceResultSchema,
  taskSupport: 'optional',
  annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: true },
  workflowType: INVOICE_WORKFLOW_TYPE,
  idPrefix: 'invoice',
  toResult: (result) => ({
    content: [{ type: 'text', text: result.summary }],
    structuredContent: result,
    isError: result.outcome === 'invalid',
  }),
  immediateResponse: (invoice, taskId) =>
    `Invoice ${invoice.invoiceNumber} (${formatAmount(sumAmounts(invoice.lineItems.map((i) => i.amount)), invoice.currency)}) ` +
    `is being processed as task ${taskId}; it will need a person's approval before anything is paid.`,
});

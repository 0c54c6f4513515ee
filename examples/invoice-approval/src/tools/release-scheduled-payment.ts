import { z } from 'zod';
import { RELEASE_SCHEDULED_PAYMENT_UPDATE, type InvoiceResult, type Payment } from '../invoice';
import { zodSchema } from 'temporal-mcp-tasks';
import type { DirectTool } from 'temporal-mcp-tasks';

const ReleaseArgsSchema = z.object({
  taskId: z.string().min(1).max(200).describe('Task id of the invoice, as returned when it was submitted.'),
  lineItemId: z.string().min(1).max(64).describe('The scheduled line item to pay now.'),
});

/**
 * `release_scheduled_payment`: pays a scheduled line item of an approved invoice now. The release is sealed like an
 * answer (who asked, for which run and line item), and the workflow takes no other.
 */
export const releaseScheduledPaymentTool: DirectTool<z.infer<typeof ReleaseArgsSchema>> = {
  kind: 'direct',
  name: 'release_scheduled_payment',
  title: 'Pay a scheduled line item now',
  description:
    'For an approved invoice task, pays one line item that is scheduled for a later date right away instead. ' +
    'Returns the payment. The line item is still paid only once. The approval bound its amount, not its date: the ' +
    'approvers are not asked again.',
  input: zodSchema(ReleaseArgsSchema),
  annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: true },
  async handler({ taskId, lineItemId }, { task, sendAction }) {
    const view = await task(taskId);
    // One Update id per line item and run: a repeated call (a retry after a lost answer) is applied once and answered
    // alike; only the bridge can tell the id, so nobody can take it first with a release of their own.
    const outcome = await sendAction<Payment>(view, {
      update: RELEASE_SCHEDULED_PAYMENT_UPDATE,
      subject: { lineItemId },
      updateIdPrefix: `release/${lineItemId}/`,
    });
    if (outcome.kind === 'applied') return paid(taskId, outcome.result);
    if (outcome.kind === 'closed') {
      // The release may have been the workflow's last step: a repeated call gets the payment it made.
      const payment = (outcome.result as InvoiceResult | undefined)?.payments?.find((candidate) => candidate.lineItemId === lineItemId);
      if (payment) return paid(taskId, payment);
    }
    const reason = outcome.kind === 'refused' ? outcome.reason : `task ${taskId} has finished; there is nothing scheduled left to pay`;
    return { content: [{ type: 'text', text: `Cannot release the payment: ${reason}.` }], isError: true };
  },
};

/** The tool's answer for a payment made. */
function paid(taskId: string, payment: Payment) {
  return {
    content: [
      {
        type: 'text' as const,
        text: `Paid line item ${payment.lineItemId} of task ${taskId} now: ${payment.amount.toFixed(2)} as payment ${payment.paymentId}.`,
      },
    ],
    structuredContent: payment,
  };
}

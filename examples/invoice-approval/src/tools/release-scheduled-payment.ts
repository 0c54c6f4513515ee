import { status as GrpcStatus } from '@grpc/grpc-js';
import { isGrpcServiceError, ServiceError, WorkflowUpdateFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { z } from 'zod';
import { RELEASE_SCHEDULED_PAYMENT_UPDATE, releaseScheduledPaymentUpdate, type InvoiceResult, type Payment } from '../invoice';
import { zodSchema } from 'temporal-mcp-tasks';
import type { DirectTool } from 'temporal-mcp-tasks';

/** True when Temporal answered NOT_FOUND (the run has closed), as the client reports it or wrapped in its ServiceError. */
function isNotFound(error: unknown): boolean {
  const cause = error instanceof ServiceError ? error.cause : error;
  return isGrpcServiceError(cause) && cause.code === GrpcStatus.NOT_FOUND;
}

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
  async handler({ taskId, lineItemId }, { client, task, sealAction }) {
    const view = await task(taskId);
    const handle = client.workflow.getHandle(view.workflowId);
    const { updateId, ...seal } = await sealAction(view, RELEASE_SCHEDULED_PAYMENT_UPDATE, { lineItemId }, 'release_scheduled_payment');
    const paid = (payment: Payment) => ({
      content: [
        {
          type: 'text' as const,
          text: `Paid line item ${payment.lineItemId} of task ${taskId} now: ${payment.amount.toFixed(2)} as payment ${payment.paymentId}.`,
        },
      ],
      structuredContent: payment,
    });
    try {
      // One update id per line item and run: a repeated call (a retry after a lost answer) is applied once and answered
      // alike; only the bridge can tell the id, so nobody can take it first with a release of their own.
      return paid(
        await handle.executeUpdate(releaseScheduledPaymentUpdate, {
          args: [{ lineItemId, ...seal }],
          updateId: `release/${lineItemId}/${updateId}`,
        }),
      );
    } catch (error) {
      const closed = error instanceof WorkflowNotFoundError || isNotFound(error);
      if (closed) {
        // The release may have been the workflow's last step: a repeated call gets the payment it made.
        const result = (await handle.result().catch(() => undefined)) as InvoiceResult | undefined;
        const payment = result?.payments?.find((candidate) => candidate.lineItemId === lineItemId);
        if (payment) return paid(payment);
      }
      const reason =
        error instanceof WorkflowUpdateFailedError
          ? (error.cause?.message ?? error.message)
          : closed
            ? `task ${taskId} has finished; there is nothing scheduled left to pay`
            : undefined;
      if (reason === undefined) throw error;
      return { content: [{ type: 'text', text: `Cannot release the payment: ${reason}.` }], isError: true };
    }
  },
};

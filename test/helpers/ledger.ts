import { PaymentsLedger } from '../../examples/invoice-approval/src/activities/payments';

/** The line items of `taskId` the example's payments ledger in `ledgerDir` holds, sorted. */
export async function paidLineItems(ledgerDir: string, taskId: string): Promise<string[]> {
  const entries = await new PaymentsLedger(ledgerDir).entries();
  return entries
    .filter((entry) => entry.taskId === taskId)
    .map((entry) => entry.lineItemId)
    .sort();
}

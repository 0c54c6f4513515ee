import { randomUUID } from 'node:crypto';
import { JsonlStore } from './jsonl-store';

/** What the workflow asks to pay. */
export interface PaymentRequest {
  taskId: string;
  vendorId: string;
  invoiceNumber: string;
  currency: string;
  lineItemId: string;
  amount: number;
}

/** One line of the payments ledger. */
export interface LedgerEntry {
  /** Idempotency key: one payment per task and line item, ever. */
  key: string;
  taskId: string;
  vendorId: string;
  invoiceNumber: string;
  lineItemId: string;
  currency: string;
  amount: number;
  paymentId: string;
  paidAt: string;
}

/** The idempotency key of a line item's payment. */
export function paymentKey(taskId: string, lineItemId: string): string {
  return `${taskId}/${lineItemId}`;
}

/**
 * The payments ledger: an append-only JSON-lines file that never holds the same idempotency key twice.
 * Paying an already paid line item returns the original payment.
 */
export class PaymentsLedger {
  private readonly store: JsonlStore<LedgerEntry>;

  constructor(readonly file: string) {
    this.store = new JsonlStore(file);
  }

  /** Pays the line item once; returns the ledger entry and whether this call made the payment. */
  async pay(request: PaymentRequest): Promise<{ entry: LedgerEntry; created: boolean }> {
    const key = paymentKey(request.taskId, request.lineItemId);
    const { record, created } = await this.store.recordOnce(key, () => ({
      key,
      ...request,
      paymentId: `PAY-${randomUUID()}`,
      paidAt: new Date().toISOString(),
    }));
    return { entry: record, created };
  }

  /** Every entry, oldest first. */
  entries(): Promise<LedgerEntry[]> {
    return this.store.readAll();
  }
}

import { randomUUID } from 'node:crypto';
import { RecordStore } from 'temporal-mcp-tasks';
import { importJsonLines } from './json-lines';

/** What the workflow asks to pay. */
export interface PaymentRequest {
  taskId: string;
  vendorId: string;
  invoiceNumber: string;
  currency: string;
  lineItemId: string;
  amount: number;
}

/** One payment in the ledger. */
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
function paymentKey(taskId: string, lineItemId: string): string {
  return `${taskId}/${lineItemId}`;
}

/**
 * The payments ledger: a directory with one immutable JSON file per payment, named by a hash of its idempotency key
 * and created atomically (see {@link RecordStore}), so the same key is never paid twice, by any number of processes,
 * whatever crashes. Paying an already paid line item returns the original payment.
 */
export class PaymentsLedger {
  private readonly store: RecordStore<LedgerEntry>;

  constructor(readonly dir: string) {
    this.store = new RecordStore(dir);
  }

  /** Pays the line item once; returns the ledger entry and whether this call made the payment. */
  async pay(request: PaymentRequest): Promise<{ entry: LedgerEntry; created: boolean }> {
    const key = paymentKey(request.taskId, request.lineItemId);
    const { record, created } = await this.store.createOnce(key, () => ({
      key,
      ...request,
      paymentId: `PAY-${randomUUID()}`,
      paidAt: new Date().toISOString(),
    }));
    return { entry: record, created };
  }

  /** The payment of a line item, if it was paid. */
  find(taskId: string, lineItemId: string): Promise<LedgerEntry | undefined> {
    return this.store.get(paymentKey(taskId, lineItemId));
  }

  /** Every payment, oldest first (by `paidAt`, then key). */
  async entries(): Promise<LedgerEntry[]> {
    return (await this.store.all()).sort((a, b) => compare(a.paidAt, b.paidAt) || compare(a.key, b.key));
  }

  /**
   * Copies the payments of a JSON-lines ledger written by an earlier version into this one, keeping their payment ids,
   * so that a retried payment finds them, then renames the file to `<file>.imported`. Returns how many it held, or
   * undefined when there is no such file.
   */
  importJsonLines(file: string): Promise<number | undefined> {
    return importJsonLines<LedgerEntry>(file, (entry) => this.store.createOnce(entry.key, () => entry));
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

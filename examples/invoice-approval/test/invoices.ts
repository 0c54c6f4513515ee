/** Invoices for the example's tests: a small one, unique by its number, with what a test changes. */
import { randomUUID } from 'node:crypto';
import type { Invoice } from '../src/invoice';

/** An invoice of vendor V-100 with two line items (200.75 EUR), numbered afresh; `overrides` replace its fields. */
export function sampleInvoice(overrides: Partial<Invoice> = {}): Invoice {
  return {
    vendorId: 'V-100',
    invoiceNumber: `INV-${randomUUID().slice(0, 8)}`,
    currency: 'EUR',
    lineItems: [
      { lineItemId: 'LI-1', description: 'Printer paper, 20 boxes', amount: 120.5 },
      { lineItemId: 'LI-2', description: 'Toner cartridges', amount: 80.25 },
    ],
    ...overrides,
  };
}

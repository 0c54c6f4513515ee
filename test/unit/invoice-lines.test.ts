import { approvalRequest, invoiceSubject, sumAmounts, type Invoice } from '../../src/shared/invoice';
import { invoiceLinesOf } from '../../src/mcp/app/view/invoice-lines';

const invoice: Invoice = {
  vendorId: 'V-100',
  invoiceNumber: 'INV-7',
  currency: 'EUR',
  lineItems: [
    { lineItemId: 'LI-1', description: 'Printer paper: A4, 20 boxes', amount: 1120.5 },
    { lineItemId: 'LI-2', description: 'Service contract', amount: 980, payOn: '2027-02-24' },
  ],
};
const total = sumAmounts(invoice.lineItems.map((item) => item.amount));
const { message } = approvalRequest(invoice, total, 'Acme Office Supplies');

describe("the task view's invoice lines", () => {
  test('are read from the lines of the approval question as the invoice workflow writes it', () => {
    expect(invoiceLinesOf(message, undefined)).toEqual({
      currency: 'EUR',
      lines: [
        { lineItemId: 'LI-1', description: 'Printer paper: A4, 20 boxes', amount: 1120.5 },
        { lineItemId: 'LI-2', description: 'Service contract', amount: 980, payOn: '2027-02-24' },
      ],
      before: message.split('\n')[0],
      after: message.split('\n')[3],
    });
  });

  test('come from an invoice subject first, and the lines of the text are left out of the words', () => {
    const subject = invoiceSubject({ ...invoice, lineItems: [{ lineItemId: 'LI-9', description: 'From the subject', amount: 5 }] }, 5);
    const read = invoiceLinesOf(message, subject);
    expect(read).toMatchObject({ currency: 'EUR', total: 5, lines: [{ lineItemId: 'LI-9', description: 'From the subject', amount: 5 }] });
    expect(`${read?.before}\n${read?.after}`).not.toContain('- LI-');
  });

  test('are none for a question without them or a subject of another kind', () => {
    expect(invoiceLinesOf('Approve EUR 40.00 for "Team lunch"?', undefined)).toBeUndefined();
    expect(invoiceLinesOf('Approve?', { kind: 'spend', lines: [] })).toBeUndefined();
    expect(invoiceLinesOf('Approve?', { kind: 'invoice', currency: 'EUR', lines: [{ lineItemId: 'LI-1' }] })).toBeUndefined();
  });
});

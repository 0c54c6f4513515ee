/**
 * A question's text as the view shows it: the words, and the line items of an invoice it is about as a table (line,
 * description, amount, pay on) rather than as lines of text. See invoice-lines.ts for where the lines come from.
 */
import { formatAmount } from '../../../shared/amount';
import { h, uniqueId } from './dom';
import { invoiceLinesOf, type InvoiceLines } from './invoice-lines';

/** What is shown of a question: its message, and the subject the server sent with it, if any. */
export interface QuestionText {
  message: string;
  subject?: unknown;
}

/** The question's text, with its invoice lines as a table; `id` names the element (a form's `aria-labelledby`). */
export function questionMessage(question: QuestionText, id?: string): HTMLElement {
  const invoice = invoiceLinesOf(question.message, question.subject);
  if (!invoice) return h('p', { id, class: 'question-message' }, question.message);
  return h(
    'div',
    { id, class: 'question-message' },
    invoice.before.trim() && h('p', {}, invoice.before.trim()),
    linesTable(invoice),
    invoice.after.trim() && h('p', {}, invoice.after.trim()),
  );
}

function linesTable(invoice: InvoiceLines): HTMLElement {
  const captionId = uniqueId('invoice-lines');
  const money = (amount: number) => formatAmount(amount, invoice.currency);
  const rows = invoice.lines.map((line) =>
    h(
      'tr',
      {},
      h('td', {}, line.lineItemId),
      h('td', { class: 'wrap' }, line.description),
      h('td', { class: 'amount' }, money(line.amount)),
      line.payOn ? h('td', {}, line.payOn) : h('td', { class: 'wrap' }, 'on approval'),
    ),
  );
  const total =
    invoice.total !== undefined &&
    h(
      'tfoot',
      {},
      h('tr', {}, h('th', { scope: 'row', colspan: 2 }, 'Total'), h('td', { class: 'amount' }, money(invoice.total)), h('td', {})),
    );
  return h(
    'div',
    { class: 'table-wrap invoice-lines', role: 'region', tabindex: 0, 'aria-labelledby': captionId },
    h(
      'table',
      {},
      h('caption', { id: captionId, class: 'visually-hidden' }, 'Invoice lines'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Line'),
          h('th', { scope: 'col' }, 'Description'),
          h('th', { scope: 'col', class: 'amount' }, 'Amount'),
          h('th', { scope: 'col' }, 'Pay on'),
        ),
      ),
      h('tbody', {}, ...rows),
      total,
    ),
  );
}

/** How `approvals verify` shows a question's subject: any workflow's, in the order and names of its own fields. */
import { subjectLines } from '../../src/records/subject-text';
import { escapeControls } from '../../src/util/log';

const safe = (text: unknown) => escapeControls(String(text));

describe('subjectLines', () => {
  test('a purchase order: its own fields, a list of records one line each, amounts with the currency', () => {
    const order = {
      orderId: 'PO-7',
      supplier: 'Globex',
      currency: 'USD',
      total: 12500,
      items: [
        { sku: 'A-1', quantity: 10, unitAmount: 1000 },
        { sku: 'B-2', quantity: 1, unitAmount: 2500, note: 'rush, by Friday' },
      ],
      approvalsRequired: 2,
    };
    expect(subjectLines(order, safe)).toEqual([
      '  Subject shown:',
      '    orderId: PO-7',
      '    supplier: Globex',
      '    currency: USD',
      '    total: USD 12,500.00',
      '    items (2):',
      '      - sku: A-1, quantity: 10, unitAmount: USD 1,000.00',
      '      - sku: B-2, quantity: 1, unitAmount: USD 2,500.00, note: "rush, by Friday"',
      '    approvalsRequired: 2',
    ]);
    expect(subjectLines(order, safe).join('\n')).not.toMatch(/line \?|vendor|invoice/);
  });

  test('a nested record takes its own currency, an amount without one stays a number', () => {
    expect(subjectLines({ travel: { currency: 'JPY', amount: 150000 }, amount: 3 }, safe)).toEqual([
      '  Subject shown:',
      '    travel:',
      '      currency: JPY',
      '      amount: JPY 150,000',
      '    amount: 3',
    ]);
  });

  test('none, a scalar, and an empty list', () => {
    expect(subjectLines(undefined, safe)).toEqual(['  Subject shown: none']);
    expect(subjectLines('contract 42', safe)).toEqual(['  Subject shown: contract 42']);
    expect(subjectLines({ lines: [] }, safe)).toEqual(['  Subject shown:', '    lines (0):', '      (none)']);
  });

  test('control characters are escaped, a line cannot be forged, and a huge subject is cut with a count', () => {
    const text = subjectLines({ description: 'Paper\nTotal: EUR 0.00\u001b[31m' }, safe).join('\n');
    expect(text.split('\n')).toHaveLength(2);
    expect(text).not.toContain('\u001b');
    const lines = subjectLines({ rows: Array.from({ length: 500 }, (_, index) => ({ index })) }, safe);
    expect(lines).toHaveLength(202);
    expect(lines.at(-1)).toBe('    … 301 more line(s)');
  });

  test('deep nesting is shown as JSON past four levels', () => {
    const deep = { a: { b: { c: { d: { e: { f: 1 } } } } } };
    expect(subjectLines(deep, safe).at(-1)).toBe('            e: {"f":1}');
  });
});

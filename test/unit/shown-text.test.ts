import { afterFirstLine, firstLine, oneLine, visibleText } from '../../src/mcp/app/approvals-page/shown-text';

describe('the text of a question as the approvals page shows it', () => {
  test('the heading is the first line that is not blank; the message below it says the rest, or nothing', () => {
    const message = '\n  \nApprove invoice INV-1?\n- LI-1 Paper: EUR 1.00\n\nERP check: fine\n\n';
    expect(firstLine(message)).toBe('Approve invoice INV-1?');
    expect(afterFirstLine(message)).toBe('- LI-1 Paper: EUR 1.00\n\nERP check: fine');
    expect(afterFirstLine('Approve invoice INV-1?')).toBe('');
    expect(afterFirstLine('Approve invoice INV-1?\n\n  \n')).toBe('');
    expect(afterFirstLine('Approve?\r\n\r\nwhy not')).toBe('why not');
    expect(afterFirstLine('')).toBe('');
  });

  test('invisible characters are written out wherever the text is shown', () => {
    const hidden = 'Pay \u202eevil\u202c now\nsecond \u200bline';
    expect(firstLine(hidden)).toBe('Pay <U+202E>evil<U+202C> now');
    expect(afterFirstLine(hidden)).toBe('second <U+200B>line');
    expect(visibleText('a\u0007b')).toBe('a<U+0007>b');
    expect(oneLine('a\nb\tc')).toBe('a b c');
  });
});

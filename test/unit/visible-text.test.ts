/** Text a person reads shows what it holds: invisible format characters and controls written as escapes. */
import { escapeInvisible } from '../../src/util/visible-text';
import { escapeControls } from '../../src/util/log';

test('escapeInvisible: bidirectional overrides and isolates, zero-width characters and the BOM show as \\u{…}; other text is left as it is', () => {
  expect(escapeInvisible('amount: \u202e00.000,9 RUE\u202c')).toBe('amount: \\u{202e}00.000,9 RUE\\u{202c}');
  expect(escapeInvisible('a\u200bb\u200dc\u2066d\u2069e\ufefff\u061cg\u00adh')).toBe(
    'a\\u{200b}b\\u{200d}c\\u{2066}d\\u{2069}e\\u{feff}f\\u{61c}g\\u{ad}h',
  );
  expect(escapeInvisible('Zürich, 東京, שלום, EUR 9,000.00\n- line')).toBe('Zürich, 東京, שלום, EUR 9,000.00\n- line');
});

test('escapeControls: controls and invisible format characters alike, for logs, mail and the command line', () => {
  expect(escapeControls('Paper\n\u202eTotal\u001b[31m')).toBe('Paper\\n\\u{202e}Total\\x1b[31m');
});

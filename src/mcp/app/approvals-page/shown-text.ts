/**
 * Text that people wrote (a submitter's message and name, an approver's comment) as the page shows it: as data.
 * Bidirectional controls and other invisible format characters are written out as their code point, so that nothing
 * a submitter typed can reorder or hide what the page shows next to it; a name is one line.
 */

/**
 * Bidirectional embeddings, overrides, isolates and marks, zero-width characters, word joiners, invisible operators
 * and the byte order mark.
 */
const INVISIBLE = /[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]/g;

/** Control characters other than the line break and the tab. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point: they are written out
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

function codePoint(character: string): string {
  return `<U+${character.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** Text of several lines (a message, a comment), its invisible characters written out. */
export function visibleText(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(INVISIBLE, codePoint).replace(CONTROL, codePoint);
}

/** Text of one line (a name, a list entry): its line breaks and tabs as spaces, its invisible characters written out. */
export function oneLine(text: string): string {
  return visibleText(text).replace(/[\n\t\u2028\u2029]+/g, ' ');
}

/** The first line of a text that is not blank, as one line. */
export function firstLine(text: string): string {
  const line = visibleText(text)
    .split('\n')
    .find((candidate) => candidate.trim() !== '');
  return oneLine(line ?? '').trim();
}

/**
 * What a text says after its first line that is not blank ({@link firstLine}, which the page shows as the heading),
 * without blank lines around it; empty when the text is that one line.
 */
export function afterFirstLine(text: string): string {
  const lines = visibleText(text).split('\n');
  const first = lines.findIndex((line) => line.trim() !== '');
  return first < 0
    ? ''
    : lines
        .slice(first + 1)
        .join('\n')
        .replace(/^\s*\n/, '')
        .trimEnd();
}

/** An ISO 8601 time as the page writes dates ("27 Nov 2026, 19:15" in the browser's language), or as sent when invalid. */
export function when(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return oneLine(iso);
  return date.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

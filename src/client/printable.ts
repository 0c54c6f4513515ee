/**
 * Text from a server made safe for a terminal: control characters (escape sequences that could move the cursor,
 * rewrite the screen or set the window title) are removed; line breaks and tabs stay.
 */

// C0 controls but \t and \n, DEL, and C1 controls; \r too, which could overwrite what was printed before it.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** `text` without control characters. */
export function printable(text: string): string {
  return text.replace(CONTROL, '');
}

/**
 * Text a person reads, shown as it is: characters that change how the text around them looks without showing
 * themselves (bidirectional overrides and isolates, which can make "EUR 9,000.00" read as "EUR 00.000,9", zero-width
 * characters, the byte-order mark) are written as visible escapes. Pure; used by the server's logs and messages and by
 * the browser views alike.
 */

/**
 * Bidirectional controls (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069) and other invisible format characters
 * (U+200B-U+200D, U+2060-U+2064, U+FEFF, U+00AD).
 */
export const INVISIBLE_FORMAT = /[\u00ad\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/** `text` with each invisible format character written as `\u{…}`, so that it shows and changes nothing around it. */
export function escapeInvisible(text: string): string {
  return text.replace(INVISIBLE_FORMAT, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`);
}

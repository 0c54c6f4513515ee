/** Text put into HTML a server writes. */

/** `text` with the characters that could end an element or an attribute written as character references. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

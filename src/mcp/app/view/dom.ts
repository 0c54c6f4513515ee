/**
 * DOM building without markup strings: every text the server sends goes in through `textContent`, so nothing it
 * says can become HTML.
 */

import { escapeInvisible } from '../../../util/visible-text';

/** Attributes set with `setAttribute`; `undefined` and `false` leave one out, `true` sets it empty. */
export type Attributes = Record<string, string | number | boolean | undefined>;

/** A child: a node, a text (inserted as text), or nothing. */
export type Child = Node | string | undefined | null | false;

/** Creates `<tag>` with attributes and children; strings become text nodes. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, ...children);
  return element;
}

/**
 * Appends children; strings become text nodes, with invisible format characters (bidirectional overrides among them)
 * shown as escapes: a value from a workflow never reorders what a person reads.
 */
export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    parent.appendChild(typeof child === 'string' ? document.createTextNode(escapeInvisible(child)) : child);
  }
}

/** Replaces all children of `parent`. */
export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

let lastId = 0;

/** A document-unique id for `for`/`aria-describedby` links. */
export function uniqueId(prefix: string): string {
  lastId += 1;
  return `${prefix}-${lastId}`;
}

/** A key in words: `lineItemId` → "Line item id", `pay_on` → "Pay on". */
export function humanize(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
  return words ? words[0].toUpperCase() + words.slice(1) : key;
}

/** An error's message, or the value in words. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

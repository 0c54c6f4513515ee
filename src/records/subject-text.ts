/**
 * What a question was about, as a person reads it in `approvals verify` and in the messages approvers are sent: any
 * workflow's subject, whatever its shape.
 * Each field on a line of its own in the subject's order, nested records indented, a list of records one line a record;
 * an amount (a number under `amount`, `total` or a name ending in `Amount` or `Total`) is shown with the nearest
 * `currency` as every other place shows money ("EUR 1,450.00"). Pure: no I/O.
 */
import { currencyOf, formatAmount, isAmountKey } from '../contract/amount';

/** How deep nested values are shown before they are cut to their JSON. */
const MAX_DEPTH = 4;
/** Lines at most, so that a huge subject does not bury the verdict; the rest is counted. */
const MAX_LINES = 200;
/** Characters of one value at most. */
const MAX_VALUE = 300;

/** Where {@link subjectLines} puts the subject: under which heading, how far in. */
export interface SubjectLayout {
  /** Default "Subject shown". */
  heading?: string;
  /** Before the heading; the fields go two spaces further in. Default two spaces. */
  indent?: string;
}

/**
 * The lines of `shown` under a heading ("Subject shown: …"). `safe` makes a text from a record printable (control
 * characters escaped, so that a value cannot start a line of its own); every text that came from the subject goes
 * through it.
 */
export function subjectLines(shown: unknown, safe: (text: unknown) => string, layout: SubjectLayout = {}): string[] {
  const { heading = 'Subject shown', indent = '  ' } = layout;
  if (shown === null || shown === undefined) return [`${indent}${heading}: none`];
  if (!isRecord(shown) && !Array.isArray(shown)) return [`${indent}${heading}: ${scalarText(shown, undefined, safe)}`];
  const lines = [`${indent}${heading}:`];
  const body: string[] = [];
  valueLines(shown, `${indent}  `, currencyOf(shown), safe, 0, body);
  if (body.length > MAX_LINES) {
    lines.push(...body.slice(0, MAX_LINES), `${indent}  … ${body.length - MAX_LINES} more line(s)`);
  } else lines.push(...body);
  return lines;
}

function valueLines(value: unknown, indent: string, currency: string | undefined, safe: Safe, depth: number, out: string[]): void {
  if (Array.isArray(value)) {
    if (value.length === 0) out.push(`${indent}(none)`);
    for (const item of value) {
      if (isRecord(item) && depth < MAX_DEPTH) out.push(`${indent}- ${inlineRecord(item, currencyOf(item) ?? currency, safe)}`);
      else out.push(`${indent}- ${scalarText(item, undefined, safe)}`);
    }
    return;
  }
  if (!isRecord(value)) {
    out.push(`${indent}${scalarText(value, undefined, safe)}`);
    return;
  }
  const own = currencyOf(value) ?? currency;
  for (const [name, field] of Object.entries(value)) {
    if ((isRecord(field) || Array.isArray(field)) && depth < MAX_DEPTH) {
      const count = Array.isArray(field) ? ` (${field.length})` : '';
      out.push(`${indent}${safe(name)}${count}:`);
      valueLines(field, `${indent}  `, own, safe, depth + 1, out);
    } else out.push(`${indent}${safe(name)}: ${scalarText(field, isAmountKey(name) ? own : undefined, safe)}`);
  }
}

/** A record on one line: `name: value, name: value`, nested values as their JSON. */
function inlineRecord(record: Record<string, unknown>, currency: string | undefined, safe: Safe): string {
  return Object.entries(record)
    .map(([name, field]) => `${safe(name)}: ${scalarText(field, isAmountKey(name) ? currency : undefined, safe)}`)
    .join(', ');
}

/** A value as text: money for an amount with a currency, a string quoted when it holds a comma, else its JSON. */
function scalarText(value: unknown, currency: string | undefined, safe: Safe): string {
  if (typeof value === 'number' && Number.isFinite(value) && currency !== undefined) return formatAmount(value, currency);
  if (typeof value === 'string') return safe(cut(/[,:]/.test(value) || value === '' ? JSON.stringify(value) : value));
  return safe(cut(JSON.stringify(value) ?? String(value)));
}

function cut(text: string): string {
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE)}…` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

type Safe = (text: unknown) => string;

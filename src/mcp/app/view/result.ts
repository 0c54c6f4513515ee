/**
 * A finished task's result (and a question's subject), rendered from its `structuredContent` alone: objects as definition lists, arrays of
 * objects as tables, scalars in words. Field titles and descriptions come from the tool's output schema when the host
 * tells it; nothing depends on which tool it was. A result that names its `currency` (an ISO 4217 code) has its
 * amounts (numbers under a key `amount` or `total`, or ending in `Amount` or `Total`) written as money, the way every
 * other place writes them (`formatAmount`).
 */
import { currencyOf, formatAmount, isAmountKey } from '../../../contract/amount';
import { h, humanize, uniqueId, type Child } from './dom';
import { record, textOf, type ToolResult } from './tools';

/** How numbers and dates are written: the host's locale and time zone when it says. */
export interface Formatting {
  locale?: string;
  timeZone?: string;
}

/** The part of a JSON Schema the renderer reads. */
interface Schema {
  title?: string;
  description?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The nodes showing a `task_result` answer (below the "Result" heading). */
export function renderResult(result: ToolResult, outputSchema: unknown, formatting: Formatting): Node[] {
  const text = textOf(result);
  if (result.isError) {
    return [
      h(
        'div',
        { class: 'notice danger', role: 'alert' },
        h('p', { class: 'notice-title' }, 'Error'),
        paragraphs(text || 'The task ended with an error.'),
      ),
    ];
  }
  const structured = record(result.structuredContent);
  if (!structured) return [paragraphs(text || 'The task finished without a result.')];
  return new Renderer(formatting, currencyOf(structured)).top(structured, asSchema(outputSchema));
}

/**
 * The subject a question is about (what approvals are recorded for), as any structured value is shown: a record's
 * fields as a definition list and its lists of records as tables, amounts with the subject's `currency`.
 */
export function renderSubject(subject: unknown, formatting: Formatting = {}): Node[] {
  const structured = record(subject);
  const renderer = new Renderer(formatting, currencyOf(structured));
  if (structured) return renderer.top(structured, undefined);
  const shown = renderer.any(subject);
  return [typeof shown === 'string' ? h('p', {}, shown) : (shown as Node)];
}

/** Renders values with one formatting. */
class Renderer {
  constructor(
    private readonly formatting: Formatting,
    /** The currency the result's amounts are in, when it names one. */
    private readonly currency: string | undefined,
  ) {}

  /** The result object: its `summary` string first, then its fields; lists of records get their own sub-section. */
  top(value: Record<string, unknown>, schema: Schema | undefined): Node[] {
    const nodes: Node[] = [];
    const { summary, ...rest } = value;
    if (typeof summary === 'string') nodes.push(h('p', { class: 'summary' }, summary));
    else if (summary !== undefined) rest.summary = summary;
    const plain: Array<[string, unknown]> = [];
    const sections: Array<[string, unknown[]]> = [];
    for (const [key, field] of orderedEntries(rest, schema)) {
      if (Array.isArray(field) && field.length > 0 && field.every((item) => record(item))) sections.push([key, field]);
      else plain.push([key, field]);
    }
    if (plain.length > 0) nodes.push(this.definitionList(plain, schema));
    for (const [key, items] of sections) {
      const fieldSchema = propertyOf(schema, key);
      const headingId = uniqueId('result-heading');
      nodes.push(
        h(
          'section',
          { class: 'result-section', 'aria-labelledby': headingId },
          h('h3', { id: headingId }, fieldSchema?.title ?? humanize(key)),
          fieldSchema?.description ? h('p', { class: 'help' }, fieldSchema.description) : undefined,
          this.table(items as Array<Record<string, unknown>>, itemsOf(fieldSchema), headingId),
        ),
      );
    }
    return nodes;
  }

  /** Any value: a list, a record or a scalar. */
  any(value: unknown): Child {
    return this.value(value, undefined);
  }

  private definitionList(entries: Array<[string, unknown]>, schema: Schema | undefined): HTMLElement {
    const rows = entries.flatMap(([key, value]) => {
      const fieldSchema = propertyOf(schema, key);
      return [
        h(
          'dt',
          {},
          fieldSchema?.title ?? humanize(key),
          fieldSchema?.description ? h('span', { class: 'help' }, fieldSchema.description) : undefined,
        ),
        h('dd', {}, this.value(value, fieldSchema, key)),
      ];
    });
    return h('dl', { class: 'fields' }, ...rows);
  }

  private value(value: unknown, schema: Schema | undefined, key?: string): Child {
    if (Array.isArray(value)) {
      if (value.length === 0) return h('span', { class: 'muted' }, 'None');
      if (value.every((item) => record(item))) return this.table(value as Array<Record<string, unknown>>, itemsOf(schema));
      return h('ul', { class: 'values' }, ...value.map((item) => h('li', {}, this.value(item, itemsOf(schema)))));
    }
    const object = record(value);
    if (object) {
      const entries = orderedEntries(object, schema);
      return entries.length === 0 ? h('span', { class: 'muted' }, 'None') : this.definitionList(entries, schema);
    }
    return this.scalar(value, key);
  }

  /** A table in a box that scrolls sideways on its own, so that the page never does. */
  private table(items: Array<Record<string, unknown>>, schema: Schema | undefined, labelledBy?: string): HTMLElement {
    const keys: string[] = Object.keys(schema?.properties ?? {}).filter((key) => items.some((item) => item[key] !== undefined));
    for (const item of items) for (const key of Object.keys(item)) if (!keys.includes(key)) keys.push(key);
    const head = h(
      'tr',
      {},
      ...keys.map((key) => {
        const column = propertyOf(schema, key);
        return h('th', { scope: 'col', title: column?.description }, column?.title ?? humanize(key));
      }),
    );
    const body = items.map((item) =>
      h('tr', {}, ...keys.map((key) => h('td', {}, item[key] === undefined ? '' : this.value(item[key], propertyOf(schema, key), key)))),
    );
    return h(
      'div',
      { class: 'table-wrap', role: 'region', tabindex: 0, 'aria-labelledby': labelledBy, 'aria-label': labelledBy ? undefined : 'Table' },
      h('table', {}, h('thead', {}, head), h('tbody', {}, ...body)),
    );
  }

  private scalar(value: unknown, key?: string): Child {
    if (value === null || value === undefined) return h('span', { class: 'muted' }, '—');
    if (typeof value === 'boolean') return value ? 'Yes' : 'No';
    if (typeof value === 'number' && this.currency && key && isAmountKey(key)) return formatAmount(value, this.currency);
    if (typeof value === 'number') return this.number(value);
    if (typeof value !== 'string') return JSON.stringify(value);
    if (ISO_DATE_TIME.test(value)) return this.date(value, { dateStyle: 'medium', timeStyle: 'short', timeZone: this.formatting.timeZone });
    if (ISO_DATE.test(value)) return this.date(value, { dateStyle: 'medium', timeZone: 'UTC' });
    return h('span', { class: 'text' }, value);
  }

  private number(value: number): string {
    try {
      return new Intl.NumberFormat(this.formatting.locale, { maximumFractionDigits: 20 }).format(value);
    } catch {
      return String(value);
    }
  }

  /** A date in words, with the value as sent beside it. */
  private date(raw: string, options: Intl.DateTimeFormatOptions): Child {
    const date = new Date(ISO_DATE.test(raw) ? `${raw}T00:00:00Z` : raw);
    if (Number.isNaN(date.getTime())) return raw;
    let readable: string;
    try {
      readable = new Intl.DateTimeFormat(this.formatting.locale, options).format(date);
    } catch {
      readable = new Intl.DateTimeFormat(undefined, { ...options, timeZone: options.timeZone === 'UTC' ? 'UTC' : undefined }).format(date);
    }
    return h('span', { class: 'date' }, h('time', { datetime: raw }, readable), ' ', h('span', { class: 'raw' }, raw));
  }
}

/** Text as paragraphs, one per line break. */
function paragraphs(text: string): HTMLElement {
  return h('div', { class: 'text-result' }, ...text.split(/\n+/).map((line) => h('p', {}, line)));
}

function asSchema(value: unknown): Schema | undefined {
  return record(value) as Schema | undefined;
}

/** The branch of an `anyOf`/`oneOf` that describes an object or a list (optional fields often come as `X | null`). */
function resolve(schema: Schema | undefined): Schema | undefined {
  if (!schema) return undefined;
  const branches = schema.anyOf ?? schema.oneOf;
  if (!schema.properties && !schema.items && Array.isArray(branches)) {
    const branch = branches.find((candidate) => record(candidate)?.properties || record(candidate)?.items);
    if (branch) return { ...branch, title: schema.title ?? branch.title, description: schema.description ?? branch.description };
  }
  return schema;
}

function propertyOf(schema: Schema | undefined, key: string): Schema | undefined {
  return resolve(asSchema(resolve(schema)?.properties?.[key]));
}

function itemsOf(schema: Schema | undefined): Schema | undefined {
  return resolve(asSchema(resolve(schema)?.items));
}

/** An object's entries, in the order of the schema's properties first. */
function orderedEntries(value: Record<string, unknown>, schema: Schema | undefined): Array<[string, unknown]> {
  const order = Object.keys(resolve(schema)?.properties ?? {});
  const keys = [...order.filter((key) => key in value), ...Object.keys(value).filter((key) => !order.includes(key))];
  return keys.filter((key) => value[key] !== undefined).map((key) => [key, value[key]]);
}

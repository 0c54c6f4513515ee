/**
 * The line items of an invoice a question is about, as a table reads them: from the question's structured `subject`
 * (`kind: "invoice"`) when the server sends one, else from the lines of the question's text, as the invoice sample
 * writes them ("- LI-1 Printer paper: EUR 120.50, paid on approval"). Pure functions, no DOM and no import, so that unit
 * tests run them in Node.
 */
/** One line item. */
export interface InvoiceLine {
  lineItemId: string;
  description: string;
  amount: number;
  /** YYYY-MM-DD; absent when the line is paid on approval. */
  payOn?: string;
}

/** A question's text split around its line items, and the line items. */
export interface InvoiceLines {
  currency: string;
  lines: InvoiceLine[];
  /** The sum of the lines, when the subject says it. */
  total?: number;
  /** The text before the line items, and after them (each may be empty). */
  before: string;
  after: string;
}

/** "- LI-1 Printer paper, 20 boxes: EUR 1,120.50, scheduled for 2027-02-24" (or "paid on approval"). */
const TEXT_LINE = /^- (\S+) (.+): ([A-Z]{3}) (-?[\d,]+(?:\.\d+)?), (?:paid on approval|scheduled for (\d{4}-\d{2}-\d{2}))$/;

/**
 * The invoice lines of a question, or undefined when it shows none: the subject's when it is an invoice, else those of
 * the text. Either way the lines written in the text are cut out of it, so that they are not shown twice.
 */
export function invoiceLinesOf(message: string, subject: unknown): InvoiceLines | undefined {
  const rows = message.split('\n');
  const parsed = rows.map((row) => TEXT_LINE.exec(row.trim()));
  const first = parsed.findIndex((match) => match !== null);
  let last = first;
  while (last >= 0 && last + 1 < parsed.length && parsed[last + 1] !== null) last += 1;
  const before = first < 0 ? message : rows.slice(0, first).join('\n');
  const after = first < 0 ? '' : rows.slice(last + 1).join('\n');
  const structured = subjectLines(subject);
  if (structured) return { ...structured, before: first < 0 ? message : before, after };
  if (first < 0) return undefined;
  const matches = parsed.slice(first, last + 1) as RegExpExecArray[];
  const currency = matches[0][3];
  if (matches.some((match) => match[3] !== currency)) return undefined;
  return {
    currency,
    lines: matches.map(([, lineItemId, description, , amount, payOn]) => ({
      lineItemId,
      description,
      amount: Number(amount.replace(/,/g, '')),
      ...(payOn && { payOn }),
    })),
    before,
    after,
  };
}

/** The lines of a subject of kind "invoice"; undefined for anything else or a subject that does not have that shape. */
function subjectLines(subject: unknown): Pick<InvoiceLines, 'currency' | 'lines' | 'total'> | undefined {
  const invoice = record(subject);
  if (!invoice || invoice.kind !== 'invoice' || typeof invoice.currency !== 'string' || !Array.isArray(invoice.lines)) return undefined;
  const lines: InvoiceLine[] = [];
  for (const value of invoice.lines) {
    const line = record(value);
    if (!line || typeof line.lineItemId !== 'string' || typeof line.description !== 'string' || typeof line.amount !== 'number') {
      return undefined;
    }
    lines.push({
      lineItemId: line.lineItemId,
      description: line.description,
      amount: line.amount,
      ...(typeof line.payOn === 'string' && { payOn: line.payOn }),
    });
  }
  if (lines.length === 0) return undefined;
  return { currency: invoice.currency, lines, ...(typeof invoice.total === 'number' && { total: invoice.total }) };
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

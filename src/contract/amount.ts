/**
 * How an amount of money reads, everywhere the project shows one: the workflow's messages, the MCP tools' texts, the
 * task view and the client. A pure function with no imports, so that the sandboxed workflow code and the view's browser
 * bundle use the very same one.
 */

/** Decimals of a currency's minor unit (EUR 2, JPY 0, KWD 3); 2 for a code this runtime does not know. */
function minorDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/**
 * "EUR 1,234.50": the currency code, the whole part grouped by thousands with commas, and always the currency's decimals
 * (two for a currency with cents: 120.5 is "EUR 120.50", 1436 is "EUR 1,436.00"). A currency without cents shows
 * decimals only when the amount has some ("JPY 1,500", "JPY 1,500.5"). The same text on every machine, whatever its
 * locale.
 */
export function formatAmount(amount: number, currency: string): string {
  const digits = minorDigits(currency);
  // Invoices carry at most 2 decimals whatever the currency: never round those away.
  const fixed = amount.toFixed(Math.max(digits, 2));
  const [whole, fraction = ''] = fixed.split('.');
  let shown = fraction;
  while (shown.length > digits && shown.endsWith('0')) shown = shown.slice(0, -1);
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${currency} ${grouped}${shown ? `.${shown}` : ''}`;
}

/**
 * Whether a field named `name` holds an amount of money: `amount`, `total`, or a name ending in `Amount` or `Total`
 * (`unitAmount`, `grandTotal`). Such a number is written with {@link formatAmount} where a currency is known.
 */
export function isAmountKey(name: string): boolean {
  return /^(amount|total)$|[a-z0-9](Amount|Total)$/.test(name);
}

/** The `currency` of a record when it holds an ISO 4217 code (three capital letters); otherwise undefined. */
export function currencyOf(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const { currency } = value as { currency?: unknown };
  return typeof currency === 'string' && /^[A-Z]{3}$/.test(currency) ? currency : undefined;
}

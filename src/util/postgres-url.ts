/**
 * A PostgreSQL URL fit for logs and error messages: its password, in the user part or as a `password` parameter, is
 * never shown. A password in the user part is left out, or written as `shownAs` to say that one was given.
 */
export function withoutPassword(url: string, shownAs = ''): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = shownAs;
    parsed.searchParams.delete('password');
    return parsed.toString();
  } catch {
    return 'a PostgreSQL database (its URL does not parse)';
  }
}

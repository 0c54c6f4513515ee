/** The `HOST:PORT` of a command's `--http` flag. */

/** `value` as a host (IPv6 without its brackets) and a port; undefined when it is not `HOST:PORT` with a port up to 65535. */
export function parseHostPort(value: string | undefined): { host: string; port: number } | undefined {
  const match = /^(.+):(\d{1,5})$/.exec(value ?? '');
  if (!match || Number(match[2]) > 65535) return undefined;
  return { host: match[1].replace(/^\[(.*)\]$/, '$1'), port: Number(match[2]) };
}

/** The static token files of the stacks the scripts run: a principal, a fresh token and its roles on each line. */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

/** Writes `file` for `people` (each `principal` or `principal role,role`), each with a fresh token; owner-only. */
export function writeTokensFile(file: string, people: readonly string[]): void {
  const lines = people.map((spec) => {
    const [principal, roles] = spec.split(' ');
    return `${principal} ${principal}-${randomBytes(18).toString('base64url')}${roles ? ` ${roles}` : ''}`;
  });
  writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
}

/** The token of `principal` in the token file `file`. */
export function tokenIn(file: string, principal: string): string {
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .find((candidate) => candidate.split(' ')[0] === principal);
  if (!line) throw new Error(`no principal ${principal} in ${file}`);
  return line.split(' ')[1];
}

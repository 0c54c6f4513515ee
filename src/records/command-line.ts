/**
 * What the `approvals` commands share: their exit codes, the error of a command line that does not allow the check,
 * where they write, and the reading of their options.
 */
import { parseArgs } from 'node:util';

/** Exit codes of the command. */
export const APPROVALS_EXIT = { valid: 0, invalid: 1, usage: 2, notApproved: 3 } as const;

/** Thrown for a command line or a setting that does not allow the check; exit 2. */
export class ApprovalsUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ApprovalsUsageError';
  }
}

/** Where the command writes. */
export interface CommandOutput {
  out(text: string): void;
  err(text: string): void;
}

/** `argv` read by node:util's parseArgs with `options`; throws {@link ApprovalsUsageError} pointing at `command`'s --help. */
export function parseOptions<T extends Record<string, { type: 'string' | 'boolean'; short?: string }>>(
  argv: string[],
  options: T,
  command: string,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: argv, allowPositionals, strict: true, options });
  } catch (error) {
    throw new ApprovalsUsageError(`${(error as Error).message}; see temporal-mcp-tasks approvals ${command} --help`);
  }
}

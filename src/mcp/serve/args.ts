/**
 * The command line of `temporal-mcp-tasks serve`, parsed without side effects, and the rule that decides whether it
 * serves the sample tools when the command line does not say.
 */
import path from 'node:path';
import { parseHostPort } from '../../util/host-port';

/** Thrown when a command line cannot be run; the message says what to change. */
export class UsageError extends Error {}

/** What a `serve` command line asks for. */
export interface ServeArgs {
  help: boolean;
  check: boolean;
  noAuth: boolean;
  /**
   * `--local-roles-over-http`: MCP_LOCAL_ROLES also go to HTTP callers without credentials (by default they are for
   * stdio only). Present only when given.
   */
  localRolesOverHttp?: true;
  /** The tools file of `--tools`. */
  tools?: string;
  http?: { host: string; port: number };
  /** Whether the sample tools are served: `--samples`, `--no-samples` (the last one counts), else the default. */
  samples: boolean;
}

/**
 * Whether `serve` offers the sample tools by default: yes when `moduleFile` (the server's own module) is TypeScript,
 * as in a checkout, where `npm run serve`, the scripts and the tests run `src/mcp/serve/main.ts` through tsx; no when it is
 * the compiled `dist/mcp/serve/main.js`, which is all an installed package holds.
 */
export function samplesByDefault(moduleFile: string): boolean {
  return path.extname(moduleFile) === '.ts';
}

/**
 * Parses `serve`'s arguments; `samples` is what the command line says, else `defaults.samples`. Throws
 * {@link UsageError} for an unknown argument, a missing or malformed value, or `--no-auth` or `--local-roles-over-http`
 * without `--http`.
 */
export function parseServeArgs(argv: readonly string[], defaults: { samples: boolean }): ServeArgs {
  let help = false;
  let check = false;
  let noAuth = false;
  let localRolesOverHttp = false;
  let samples = defaults.samples;
  let tools: string | undefined;
  let http: { host: string; port: number } | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') help = true;
    else if (arg === '--check') check = true;
    else if (arg === '--no-auth') noAuth = true;
    else if (arg === '--local-roles-over-http') localRolesOverHttp = true;
    else if (arg === '--samples') samples = true;
    else if (arg === '--no-samples') samples = false;
    else if (arg === '--tools' || arg.startsWith('--tools=')) {
      tools = arg === '--tools' ? argv[++i] : arg.slice('--tools='.length);
      if (!tools) throw new UsageError('--tools needs a file, e.g. --tools tools.yaml');
    } else if (arg === '--http' || arg.startsWith('--http=')) {
      const value = arg === '--http' ? argv[++i] : arg.slice('--http='.length);
      http = parseHostPort(value);
      if (!http) throw new UsageError(`--http needs HOST:PORT, e.g. --http 127.0.0.1:3000 (got "${value ?? ''}")`);
    } else throw new UsageError(`unknown argument "${arg}"; see --help`);
  }
  if (noAuth && !http) throw new UsageError('--no-auth goes with --http');
  if (localRolesOverHttp && !http) {
    throw new UsageError('--local-roles-over-http goes with --http (over stdio MCP_LOCAL_ROLES always apply)');
  }
  return {
    help,
    check,
    noAuth,
    ...(localRolesOverHttp && { localRolesOverHttp: true as const }),
    samples,
    ...(tools !== undefined && { tools }),
    ...(http && { http }),
  };
}

/**
 * The log of the server and worker processes: one line per event on stderr (stdout is the MCP wire on stdio), readable
 * by default, one JSON object a line with MCP_LOG_FORMAT=json. A line carries the context of the request it was
 * written in (method, principal, taskId), so every line about a task names it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { escapeInvisible } from './visible-text';

/** Levels, least severe first. */
const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Line formats: `text` for people, `json` for log shippers. */
const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** What a line is about. `taskId` is the workflow id; the rest is free-form. */
export interface LogContext {
  taskId?: string;
  principal?: string;
  method?: string;
  tool?: string;
  [key: string]: unknown;
}

/** How the log writes. */
export interface LogOptions {
  format: LogFormat;
  /** Lines below this level are dropped. */
  level: LogLevel;
  /** Where a finished line (with its newline) goes; default stderr. */
  write?: (line: string) => void;
}

/** Thrown when MCP_LOG_FORMAT or MCP_LOG_LEVEL holds a value this log does not know. */
export class LogConfigError extends Error {}

/** Reads MCP_LOG_FORMAT (`text` or `json`, default text) and MCP_LOG_LEVEL (default info); throws {@link LogConfigError}. */
export function logOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): LogOptions {
  const format = (env.MCP_LOG_FORMAT || 'text').toLowerCase();
  const level = (env.MCP_LOG_LEVEL || 'info').toLowerCase();
  if (!(LOG_FORMATS as readonly string[]).includes(format)) {
    throw new LogConfigError(`MCP_LOG_FORMAT must be ${LOG_FORMATS.join(' or ')}, not "${env.MCP_LOG_FORMAT}"`);
  }
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new LogConfigError(`MCP_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, not "${env.MCP_LOG_LEVEL}"`);
  }
  return { format: format as LogFormat, level: level as LogLevel };
}

const scope = new AsyncLocalStorage<LogContext>();

/**
 * Runs `work` with `context` added to every line written inside it, across awaits (a request's method and principal,
 * say). Nested scopes add to the outer one.
 */
export function withLogContext<T>(context: LogContext, work: () => T): T {
  return scope.run({ ...scope.getStore(), ...context }, work);
}

/**
 * Runs `work`, and everything it starts, without the current scope's context: for work that outlives the request it
 * was started from (a watch shared by later requests), whose lines are not that request's.
 */
export function withoutLogContext<T>(work: () => T): T {
  return scope.exit(work);
}

/** Adds to the context of the current scope (a task id learnt half-way through a request); outside a scope, nothing. */
export function addLogContext(context: LogContext): void {
  const current = scope.getStore();
  if (current) Object.assign(current, context);
}

/** A structured logger; {@link log} is the process's own. */
export class Logger {
  private options: Required<LogOptions>;

  constructor(options: LogOptions) {
    this.options = { write: (line) => process.stderr.write(line), ...options };
  }

  /** Changes format, level or destination; the same logger object keeps serving everyone who holds it. */
  configure(options: Partial<LogOptions>): void {
    this.options = { ...this.options, ...options };
  }

  /** True when a line of `level` is written. */
  enabled(level: LogLevel): boolean {
    return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(this.options.level);
  }

  debug(msg: string, context?: LogContext): void {
    this.write('debug', msg, context);
  }

  info(msg: string, context?: LogContext): void {
    this.write('info', msg, context);
  }

  warn(msg: string, context?: LogContext): void {
    this.write('warn', msg, context);
  }

  error(msg: string, context?: LogContext): void {
    this.write('error', msg, context);
  }

  /** Writes one line at `level`, with the scope's context and `context` (which wins). */
  write(level: LogLevel, msg: string, context?: LogContext): void {
    if (!this.enabled(level)) return;
    const fields: Record<string, unknown> = {};
    for (const [key, value] of Object.entries({ ...scope.getStore(), ...context })) {
      if (value !== undefined) fields[key] = value instanceof Error ? value.message : value;
    }
    const time = new Date().toISOString();
    this.options.write(
      this.options.format === 'json' ? `${jsonLine({ time, level, msg, ...fields })}\n` : `${textLine(time, level, msg, fields)}\n`,
    );
  }
}

/**
 * `2026-01-01T00:00:00.000Z INFO  msg key=value key="a value"`, on one line whatever the message holds: every control
 * character (a line break, a carriage return, a terminal escape) is written as an escape, so text from a client can
 * neither forge a log line nor drive the terminal that shows it.
 */
function textLine(time: string, level: LogLevel, msg: string, fields: Record<string, unknown>): string {
  const pairs = Object.entries(fields).map(([key, value]) => {
    const text = escapeControls(typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)));
    return `${escapeControls(key)}=${/^[^\s"=]+$/.test(text) ? text : `"${text.replace(/"/g, '\\"')}"`}`;
  });
  return [time, level.toUpperCase().padEnd(5), escapeControls(msg), ...pairs].join(' ');
}

/** One JSON object a line; the control characters JSON.stringify leaves as they are (DEL, C1, U+2028/9) are escaped too. */
function jsonLine(entry: Record<string, unknown>): string {
  return JSON.stringify(entry).replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * `text` with every control character (C0, DEL, C1, line and paragraph separators) written as an escape, and every
 * invisible format character (bidirectional overrides among them: see {@link escapeInvisible}).
 */
export function escapeControls(text: string): string {
  // Matching control characters is the point here.
  // eslint-disable-next-line no-control-regex
  return escapeInvisible(text).replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    return `\\x${c.charCodeAt(0) > 0xff ? `{${c.charCodeAt(0).toString(16)}}` : c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
}

/** The process's logger, configured from the environment when it is valid (a process's main checks it with {@link logOptionsFromEnv}). */
export const log = new Logger(safeOptionsFromEnv());

function safeOptionsFromEnv(): LogOptions {
  try {
    return logOptionsFromEnv();
  } catch {
    return { format: 'text', level: 'info' };
  }
}

import { readFileSync } from 'node:fs';
import { createInterface, type Interface } from 'node:readline';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { checkFormContent, type FormInputRequest, type FormProperty } from '../contract/task-contract';
import { printable } from './printable';

/** Thrown when scripted answers cannot be used; the message says which and why. */
export class AnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AnswerError';
  }
}

/** Where the next answer to an elicitation comes from. `undefined`: no answer available (non-interactive). */
export interface AnswerProvider {
  answer(
    params: ElicitRequest['params'],
    key: string | undefined,
  ): Promise<{ response: ElicitResult; source: 'terminal' | 'flag' | 'file' } | undefined>;
}

/**
 * Parses one scripted answer: an ElicitResult ({"action": "accept", "content": {...}}) or bare form content, which
 * means accept.
 */
function parseAnswer(value: unknown, where: string): ElicitResult {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AnswerError(`${where}: an answer is a JSON object`);
  const record = value as Record<string, unknown>;
  if (typeof record.action === 'string') {
    if (!['accept', 'decline', 'cancel'].includes(record.action))
      throw new AnswerError(`${where}: action must be accept, decline or cancel`);
    if (record.action === 'accept' && (typeof record.content !== 'object' || record.content === null)) {
      throw new AnswerError(`${where}: an accept answer needs "content"`);
    }
    return record as ElicitResult;
  }
  return { action: 'accept', content: record as ElicitResult['content'] };
}

/**
 * Answers from --answer flags (in order) and an --answers-file: a JSON object of answers keyed by input key, or an
 * array used in order. Falls back to `fallback` (the terminal) when none is left.
 */
export class ScriptedAnswers implements AnswerProvider {
  private readonly queue: { response: ElicitResult; source: 'flag' | 'file' }[] = [];
  private readonly byKey = new Map<string, ElicitResult>();

  constructor(
    flags: string[],
    file: string | undefined,
    private readonly fallback?: AnswerProvider,
  ) {
    flags.forEach((flag, index) =>
      this.queue.push({ response: parseAnswer(parseJson(flag, `--answer #${index + 1}`), `--answer #${index + 1}`), source: 'flag' }),
    );
    if (file) {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (error) {
        throw new AnswerError(`--answers-file ${file}: ${(error as Error).message}`);
      }
      const parsed = parseJson(text, `--answers-file ${file}`);
      if (Array.isArray(parsed))
        parsed.forEach((value, index) => this.queue.push({ response: parseAnswer(value, `${file} [${index}]`), source: 'file' }));
      else if (typeof parsed === 'object' && parsed !== null) {
        for (const [key, value] of Object.entries(parsed)) this.byKey.set(key, parseAnswer(value, `${file} "${key}"`));
      } else throw new AnswerError(`--answers-file ${file}: expected an object keyed by input key, or an array`);
    }
  }

  async answer(params: ElicitRequest['params'], key: string | undefined) {
    const keyed = key !== undefined ? this.byKey.get(key) : undefined;
    const next = keyed ? { response: keyed, source: 'file' as const } : this.queue.shift();
    if (!next) return this.fallback?.answer(params, key);
    if (next.response.action === 'accept' && 'requestedSchema' in params) {
      const problem = checkFormContent(params.requestedSchema as FormInputRequest['requestedSchema'], next.response.content);
      if (problem) throw new AnswerError(`the scripted answer does not fit the form: ${problem}`);
    }
    if (keyed) this.byKey.delete(key!);
    return next;
  }
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new AnswerError(`${where}: not valid JSON (${(error as Error).message})`);
  }
}

/** Asks a person at the terminal, rendering the requested schema as a form with validation, choices and defaults. */
export class TerminalAnswers implements AnswerProvider {
  constructor(
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stderr,
  ) {}

  async answer(params: ElicitRequest['params']) {
    const rl = new LineReader(createInterface({ input: this.input, terminal: false }), this.output);
    const say = (text: string) => this.output.write(`${printable(text)}\n`);
    try {
      say(`\n? ${params.message}`);
      if (params.mode === 'url') {
        say(`  Open ${(params as { url: string }).url} to do this.`);
        for (;;) {
          const choice = (await rl.question('  [a]ccept (I went there), [d]ecline, or [c]ancel (later)? ')).trim().toLowerCase();
          if (choice === 'a' || choice === 'accept') return { response: { action: 'accept' as const }, source: 'terminal' as const };
          if (choice === 'd' || choice === 'decline') return { response: { action: 'decline' as const }, source: 'terminal' as const };
          if (choice === 'c' || choice === 'cancel') return { response: { action: 'cancel' as const }, source: 'terminal' as const };
        }
      }
      if (!('requestedSchema' in params)) return undefined;
      const schema = params.requestedSchema as FormInputRequest['requestedSchema'];
      for (;;) {
        const choice = (await rl.question('  [a]ccept, [d]ecline, or [c]ancel (answer later)? ')).trim().toLowerCase();
        if (choice === 'd' || choice === 'decline') return { response: { action: 'decline' as const }, source: 'terminal' as const };
        if (choice === 'c' || choice === 'cancel') return { response: { action: 'cancel' as const }, source: 'terminal' as const };
        if (choice === 'a' || choice === 'accept' || choice === '') break;
      }
      const content: Record<string, string | number | boolean> = {};
      for (const [name, property] of Object.entries(schema.properties)) {
        const required = schema.required?.includes(name) ?? false;
        const value = await askField(rl, say, name, property, required);
        if (value !== undefined) content[name] = value;
      }
      const problem = checkFormContent(schema, content);
      if (problem) throw new AnswerError(problem);
      return { response: { action: 'accept' as const, content }, source: 'terminal' as const };
    } finally {
      rl.close();
    }
  }
}

/** Prompts and reads lines, keeping lines typed (or piped) ahead of their prompt. */
class LineReader {
  private readonly lines: string[] = [];
  private waiting?: (line: string | undefined) => void;
  private ended = false;

  constructor(
    private readonly rl: Interface,
    private readonly output: NodeJS.WritableStream,
  ) {
    rl.on('line', (line) => {
      if (this.waiting) this.take(line);
      else this.lines.push(line);
    });
    rl.on('close', () => {
      this.ended = true;
      this.take(undefined);
    });
  }

  private take(line: string | undefined): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.(line);
  }

  /** Shows `prompt` and returns the next line; throws when the input ends. */
  async question(prompt: string): Promise<string> {
    this.output.write(printable(prompt));
    const line =
      this.lines.length > 0
        ? this.lines.shift()
        : this.ended
          ? undefined
          : await new Promise<string | undefined>((resolve) => (this.waiting = resolve));
    if (line === undefined) throw new AnswerError('the input ended before the form was complete');
    return line;
  }

  close(): void {
    this.rl.close();
  }
}

async function askField(
  rl: LineReader,
  say: (text: string) => void,
  name: string,
  property: FormProperty,
  required: boolean,
): Promise<string | number | boolean | undefined> {
  const label = `${property.title ?? name}${required ? '' : ' (optional)'}${property.description ? ` — ${property.description}` : ''}`;
  const options = 'enum' in property ? property.enum : undefined;
  say(`  ${label}`);
  if (options) options.forEach((option, i) => say(`    ${i + 1}) ${('enumNames' in property && property.enumNames?.[i]) || option}`));
  for (;;) {
    const fallback = property.default !== undefined ? ` [${String(property.default)}]` : '';
    const raw = (await rl.question(`  > ${fallback ? `${fallback} ` : ''}`)).trim();
    if (raw === '') {
      if (property.default !== undefined) return property.default;
      if (!required) return undefined;
      say('    required');
      continue;
    }
    const value = parseField(property, raw, options);
    const problem =
      value === undefined ? 'not a valid value' : checkFormContent({ type: 'object', properties: { [name]: property } }, { [name]: value });
    if (!problem) return value;
    say(`    ${problem.replace(`"${name}" `, '')}`);
  }
}

function parseField(property: FormProperty, raw: string, options: string[] | undefined): string | number | boolean | undefined {
  if (options) {
    const index = Number(raw);
    if (Number.isInteger(index) && index >= 1 && index <= options.length) return options[index - 1];
    return raw;
  }
  switch (property.type) {
    case 'number':
    case 'integer':
      return Number.isFinite(Number(raw)) ? Number(raw) : undefined;
    case 'boolean':
      return /^(y|yes|true)$/i.test(raw) ? true : /^(n|no|false)$/i.test(raw) ? false : undefined;
    default:
      return raw;
  }
}

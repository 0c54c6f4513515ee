/**
 * npm run lint runs this after eslint: no file of src/ over 400 lines. ESLint's max-lines rule holds the TypeScript
 * files to that; this holds every other file (stylesheets, HTML, JavaScript, JSON, anything) to it, so a file that
 * does several jobs is split whatever its language.
 * Usage: node --import tsx scripts/file-sizes.ts [--root DIR] [--help]
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const HELP = `Usage: node --import tsx scripts/file-sizes.ts [--root DIR] [--help]

Fails when a file under src/ that is not TypeScript (eslint's max-lines rule checks those) has more than 400 lines,
naming each such file with its line count. A file that long is split into files that each do one job; a generated or
data file that may be longer is named in LONGER_FILES in this script, with the reason.

  --root DIR   check DIR instead of src/

Exit code 0 when every file is within the limit, 1 when one is over it, 2 for a bad command line.
`;

/** The most lines a file may have: the same as eslint's max-lines for the TypeScript files (eslint.config.mjs). */
const MAX_LINES = 400;

/**
 * Generated or data files that may be longer, by their path under the checked folder (with `/`), each with the reason
 * it may. Empty: every file of src/ is written by hand.
 */
const LONGER_FILES: ReadonlyMap<string, string> = new Map<string, string>([]);

/** The files eslint's max-lines rule checks (the TypeScript of src/, eslint.config.mjs), left to it. */
const CHECKED_BY_ESLINT = /\.ts$/;

/** A file over the limit: its path under the checked folder and its line count. */
interface LongFile {
  file: string;
  lines: number;
}

/** Lines as eslint counts them: every line break ends one, and a last line left empty by a final break is not one. */
function lineCount(text: string): number {
  const lines = text.split(/\r\n|[\r\n\u2028\u2029]/);
  return lines.length > 1 && lines.at(-1) === '' ? lines.length - 1 : lines.length;
}

/** The files under `root` (their paths under it, with `/`) that eslint leaves unchecked; symbolic links are not followed. */
function filesToCheck(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !CHECKED_BY_ESLINT.test(entry.name))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

/** The files under `root` over the limit and not named in LONGER_FILES, longest first. */
function longFiles(root: string, files: string[]): LongFile[] {
  return files
    .filter((file) => !LONGER_FILES.has(file))
    .map((file) => ({ file, lines: lineCount(readFileSync(path.join(root, file), 'utf8')) }))
    .filter(({ lines }) => lines > MAX_LINES)
    .sort((a, b) => b.lines - a.lines);
}

function main(argv: string[]): number {
  let options: { root?: string; help?: boolean };
  try {
    options = parseArgs({ args: argv, options: { root: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }).values;
  } catch (error) {
    process.stderr.write(`file-sizes: ${(error as Error).message}; see --help\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const root = path.resolve(options.root ?? path.join(__dirname, '..', 'src'));
  const files = filesToCheck(root);
  // Paths as the caller typed them: under the current folder relative to it (src/… from the checkout), else whole.
  const shown = (file: string) => {
    const relative = path.relative(process.cwd(), path.join(root, file));
    return relative.startsWith('..') ? path.join(root, file) : relative || '.';
  };
  const over = longFiles(root, files);
  for (const { file, lines } of over) {
    process.stderr.write(
      `file-sizes: ${shown(file)} has ${lines} lines, over the ${MAX_LINES} a file may have: split it into files that each do ` +
        'one job (rules of a stylesheet moved in their order, so the cascade stays the same), or, if it is generated or ' +
        'data, name it in LONGER_FILES in scripts/file-sizes.ts with the reason\n',
    );
  }
  if (over.length > 0) return 1;
  process.stderr.write(`file-sizes: ${files.length} files other than TypeScript under ${shown('')}, none over ${MAX_LINES} lines\n`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));

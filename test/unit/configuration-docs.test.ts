/**
 * docs/configuration.md against the code: every environment variable the package's code, its commands and scripts, and
 * temporal-dev.sh read has a row there, every row says what it is for, and no row names a variable nothing reads.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/** Variables of the system and of other tools, which the code passes on or reads as everyone does: not ours to document. */
const NOT_OURS = new Set(['PATH', 'HOME', 'GOFLAGS', 'CI', 'NODE_ENV', 'PIP_CACHE_DIR']);

/**
 * Read by libraries on the code's behalf: `@temporalio/envconfig` as the Temporal CLI reads them (temporal-config.ts),
 * and OpenTelemetry's resource detector (telemetry.ts).
 */
const READ_BY_LIBRARIES: Record<string, string[]> = {
  'src/shared/temporal-config.ts': [
    'TEMPORAL_ADDRESS',
    'TEMPORAL_NAMESPACE',
    'TEMPORAL_API_KEY',
    'TEMPORAL_PROFILE',
    'TEMPORAL_CONFIG_FILE',
  ],
  'src/shared/telemetry.ts': ['OTEL_SERVICE_NAME'],
};

function filesUnder(dir: string, ext: RegExp): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && ext.test(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** The variables a TypeScript or JavaScript file reads: `env.NAME`, `env['NAME']`, and names handed to a reader. */
function readInScript(text: string, withNamedReads: boolean): string[] {
  const names = [...text.matchAll(/\benv(?:\?)?\.([A-Z][A-Z0-9_]+)\b/g), ...text.matchAll(/\benv\[\s*'([A-Z][A-Z0-9_]+)'\s*\]/g)];
  // Names kept in constants or passed to helpers (msFromEnv(env, 'MCP_WATCH_KEEP_MS', …)); only the package's prefixes.
  if (withNamedReads)
    names.push(...text.matchAll(/'((?:MCP|TEMPORAL|INVOICE|PAYMENTS?|ERP|NOTIFICATION|WORKER|OTEL|CLUSTER)_[A-Z0-9_]+)'/g));
  return names.map((match) => match[1]);
}

/** The variables the package and its example read, with one file where each is read. */
function variablesRead(): Map<string, string> {
  const read = new Map<string, string>();
  const note = (names: string[], file: string) => {
    for (const name of names) if (!NOT_OURS.has(name) && !read.has(name)) read.set(name, path.relative(ROOT, file));
  };
  for (const file of [...filesUnder('src', /\.ts$/), ...filesUnder('examples/invoice-approval/src', /\.ts$/)]) {
    note(readInScript(readFileSync(file, 'utf8'), true), file);
  }
  for (const file of [...filesUnder('scripts', /\.ts$/), ...filesUnder('bin', /\.js$/)])
    note(readInScript(readFileSync(file, 'utf8'), false), file);
  const shell = path.join(ROOT, 'temporal-dev.sh');
  note(
    [...readFileSync(shell, 'utf8').matchAll(/\$\{([A-Z][A-Z0-9_]+):-/g)].map((match) => match[1]),
    shell,
  );
  for (const [file, names] of Object.entries(READ_BY_LIBRARIES)) note(names, path.join(ROOT, file));
  return read;
}

/** The rows of the table in docs/configuration.md: the variables each names (`TEMPORAL_TLS_*` a prefix) and its cells. */
function documentedRows(): { names: string[]; cells: string[]; line: number }[] {
  const lines = readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8').split('\n');
  const rows: { names: string[]; cells: string[]; line: number }[] = [];
  lines.forEach((text, index) => {
    if (!text.startsWith('|') || /^\|\s*-+/.test(text)) return;
    const cells = text
      .slice(1, text.trimEnd().endsWith('|') ? text.trimEnd().length - 1 : undefined)
      .split('|')
      .map((cell) => cell.trim());
    if (cells[0] === 'variable') return;
    rows.push({ names: [...cells[0].matchAll(/`([A-Z][A-Z0-9_]*\*?)`/g)].map((match) => match[1]), cells, line: index + 1 });
  });
  return rows;
}

function isDocumented(name: string, documented: string[]): boolean {
  return documented.some((entry) => (entry.endsWith('*') ? name.startsWith(entry.slice(0, -1)) : entry === name));
}

describe('docs/configuration.md', () => {
  const rows = documentedRows();
  const documented = rows.flatMap((row) => row.names);

  test('every environment variable the code reads has a row', () => {
    const missing = [...variablesRead()].filter(([name]) => !isDocumented(name, documented)).map(([name, file]) => `${name} (${file})`);
    expect(missing).toEqual([]);
  });

  test('every row names variables, who reads them and the default', () => {
    const incomplete = rows.filter((row) => row.names.length === 0 || row.cells.length < 3 || row.cells.some((cell) => cell === ''));
    expect(incomplete.map((row) => `line ${row.line}: ${row.cells.join(' | ')}`)).toEqual([]);
  });

  test('no row names a variable that nothing reads', () => {
    const read = variablesRead();
    const stale = documented.filter((entry) =>
      entry.endsWith('*') ? ![...read.keys()].some((name) => name.startsWith(entry.slice(0, -1))) : !read.has(entry),
    );
    expect(stale.filter((entry) => !entry.endsWith('*'))).toEqual([]);
  });
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';

// A CommonJS module without types, as eslint.config.mjs loads it.
const noImportCycle = require('../../eslint/no-import-cycle.js');

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'no-import-cycle-'));
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'node16', moduleResolution: 'node16' } }));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
}

/** The messages of the rule for one file of the fixture folder. */
function lint(name: string): string[] {
  const file = path.join(dir, name);
  const config = [
    {
      files: ['**/*.ts'],
      languageOptions: { parser: tseslint.parser },
      plugins: { local: { rules: { 'no-import-cycle': noImportCycle } } },
      rules: { 'local/no-import-cycle': 'error' as const },
    },
  ];
  return new Linter({ cwd: dir }).verify(readFileSync(file, 'utf8'), config, file).map((message) => message.message);
}

test('no-import-cycle: reports both imports of a two-file cycle that a type-only import closes', () => {
  write({
    'a.ts': "import type { B } from './b';\nexport const a = (b: B) => b;\n",
    'b.ts': "import { a } from './a';\nexport type B = typeof a;\n",
  });
  expect(lint('a.ts')).toEqual([expect.stringContaining('Import cycle: a.ts → b.ts → a.ts.')]);
  expect(lint('b.ts')).toEqual([expect.stringContaining('Import cycle: b.ts → a.ts → b.ts.')]);
});

test('no-import-cycle: names every file of a longer cycle through a re-export, an import() type and a bare import', () => {
  write({
    'x.ts': "export * from './y';\n",
    'y.ts': "export type Z = typeof import('./z');\n",
    'z.ts': "import './x';\nexport const z = 1;\n",
  });
  expect(lint('x.ts')).toEqual([expect.stringContaining('Import cycle: x.ts → y.ts → z.ts → x.ts.')]);
  expect(lint('z.ts')).toEqual([expect.stringContaining('Import cycle: z.ts → x.ts → y.ts → z.ts.')]);
});

test('no-import-cycle: finds an import written after a regex that holds a backtick (which loses a scanner)', () => {
  write({
    'g.ts': "export const tick = /`/;\nimport { h } from './h';\nexport const g = h;\n",
    'h.ts': "import { tick } from './g';\nexport const h = tick;\n",
  });
  expect(lint('g.ts')).toEqual([expect.stringContaining('Import cycle: g.ts → h.ts → g.ts.')]);
});

test('no-import-cycle: passes a chain without a way back, packages and imports written in comments', () => {
  write({
    'c.ts': "import path from 'node:path';\nimport { d } from './d';\n// import { c } from './c';\nexport const c = path.join(d);\n",
    'd.ts': "export const d = 'd';\n",
  });
  expect(lint('c.ts')).toEqual([]);
  expect(lint('d.ts')).toEqual([]);
});

test('no-import-cycle: sees a file that changed on disk since it was last read', () => {
  write({ 'e.ts': "import { f } from './f';\nexport const e = f;\n", 'f.ts': "export const f = 'f';\n" });
  expect(lint('e.ts')).toEqual([]);
  // A different size, so the change is seen even where the clock's resolution hides the new modification time.
  write({ 'f.ts': "import { e } from './e';\nexport const f = () => e;\n" });
  expect(lint('e.ts')).toEqual([expect.stringContaining('Import cycle: e.ts → f.ts → e.ts.')]);
});

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';

// A CommonJS module without types, as eslint.config.mjs loads it.
const layers = require('../../eslint/layers.js');

const LAYERS = [
  { name: 'util', files: ['src/util/'], uses: [] },
  { name: 'core', files: ['src/core/', 'src/errors.ts'], uses: ['util'] },
  { name: 'front', files: ['src/front/'], uses: ['core', 'util'] },
];

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'layers-'));
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'node16', moduleResolution: 'node16' } }));
  for (const folder of ['util', 'core', 'front', 'loose']) mkdirSync(path.join(dir, 'src', folder), { recursive: true });
  const files: Record<string, string> = {
    'src/util/wait.ts': 'export const wait = 1;\n',
    'src/errors.ts': 'export class TaskError extends Error {}\n',
    'src/loose/thing.ts': 'export const thing = 1;\n',
    'src/front/render.ts': 'export const render = 1;\n',
    'src/core/reads.ts':
      "import { wait } from '../util/wait';\nimport type { TaskError } from '../errors';\nexport const reads = (e: TaskError) => [e, wait];\n",
    'src/core/bad.ts':
      "import type { render } from '../front/render';\nimport { thing } from '../loose/thing';\nexport const bad = [thing] as unknown as typeof render;\n",
    'src/front/server.ts':
      "import { reads } from '../core/reads';\nimport { wait } from '../util/wait';\nimport { render } from './render';\nexport const server = [reads, wait, render];\n",
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The messages of the rule for one file of the fixture folder. */
function lint(name: string): string[] {
  const file = path.join(dir, name);
  const config = [
    {
      files: ['**/*.ts'],
      languageOptions: { parser: tseslint.parser },
      plugins: { local: { rules: { layers } } },
      rules: { 'local/layers': ['error', { root: dir, layers: LAYERS }] as ['error', unknown] },
    },
  ];
  return new Linter({ cwd: dir }).verify(readFileSync(file, 'utf8'), config, file).map((message) => message.message);
}

test('layers: a file may import its own layer and the layers it uses, by folder or by file', () => {
  expect(lint('src/core/reads.ts')).toEqual([]);
  expect(lint('src/front/server.ts')).toEqual([]);
});

test('layers: an import of a layer above (a type import too) is an error naming both layers and what is allowed', () => {
  expect(lint('src/core/bad.ts')).toEqual([
    'The core layer may not import src/front/render.ts (the front layer); it may use util. See docs/architecture.md.',
    expect.stringContaining('src/loose/thing.ts is in no layer'),
  ]);
});

test('layers: a file in no layer is not checked', () => {
  expect(lint('src/loose/thing.ts')).toEqual([]);
});

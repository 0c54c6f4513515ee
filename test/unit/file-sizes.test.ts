/** The check of file sizes for the files of src/ that eslint's max-lines rule does not read (scripts/file-sizes.ts). */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/** Runs the check as `npm run lint` does, with `args`; its exit code and what it wrote to stderr. */
function check(...args: string[]): { status: number | null; stderr: string } {
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'file-sizes.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return { status: run.status, stderr: run.stderr };
}

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'file-sizes-'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('file-sizes: no file of src/ other than TypeScript is over 400 lines', () => {
  const { status, stderr } = check();
  expect(stderr).toMatch(/^file-sizes: \d+ files other than TypeScript under src, none over 400 lines\n$/);
  expect(status).toBe(0);
});

test('file-sizes: a file over 400 lines fails, named with its line count and what to do; 400 lines and TypeScript pass', () => {
  const root = path.join(dir, 'over');
  mkdirSync(path.join(root, 'view'), { recursive: true });
  const lines = (count: number) => 'a {}\n'.repeat(count);
  writeFileSync(path.join(root, 'view', 'long.css'), lines(401));
  // The last line counts without a line break after it.
  writeFileSync(path.join(root, 'page.mjs'), `${lines(400)}end();`);
  writeFileSync(path.join(root, 'page.html'), lines(400));
  writeFileSync(path.join(root, 'data.json'), `${lines(399)}{}`);
  writeFileSync(path.join(root, 'code.ts'), lines(900));
  const { status, stderr } = check('--root', root);
  expect(stderr.split('\n').filter(Boolean)).toEqual([
    expect.stringMatching(
      /^file-sizes: \S*over\/page\.mjs has 401 lines, over the 400 a file may have: split it into files that each do one job/,
    ),
    expect.stringMatching(
      /^file-sizes: \S*over\/view\/long\.css has 401 lines, .* name it in LONGER_FILES in scripts\/file-sizes\.ts with the reason$/,
    ),
  ]);
  expect(status).toBe(1);
});

test('file-sizes: an unknown argument is a usage error', () => {
  const { status, stderr } = check('--fix');
  expect(stderr).toContain("Unknown option '--fix'");
  expect(status).toBe(2);
});

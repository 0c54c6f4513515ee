/**
 * The Node the project runs on: the checkout pins one release of Node 24 (the npm package `node`, which `npm install`
 * puts first on every npm script's PATH), the suite runs on it, and the README names the same release.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  devDependencies: Record<string, string>;
};
const pinned = manifest.devDependencies.node;

test('the checkout pins an exact Node 24 release, within the engines range', () => {
  expect(pinned).toMatch(/^24\.\d+\.\d+$/);
  expect(manifest.engines.node).toBe('>=24');
});

test('the suite runs on the pinned Node (npm test puts node_modules/.bin first)', () => {
  expect(process.versions.node).toBe(pinned);
});

test('the README names the pinned release and the engines range', () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  expect(readme).toContain(`${pinned} today`);
  expect(readme).toContain('Node 24 or newer');
});

/**
 * The lint rule `local/no-import-cycle`: an import that closes a cycle of modules is an error, type-only imports
 * included. The import plugins' `no-cycle` leaves out every `import type`, so it sees none of the cycles a reader of
 * the graph sees through types; this rule counts them.
 *
 * Imports are read with TypeScript's parser (static, type-only, re-exports, `import()` in code and in types,
 * `require()`) and resolved as the nearest tsconfig.json says. Only relative specifiers are followed: packages are
 * outside the graph (and this project has no path aliases). Each import of the linted file is reported with a shortest
 * cycle it closes.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { importsOf } = require('./imports');

/** Each file's text on disk, kept while its size and modification time stay the same (an editor lints for hours). */
const onDisk = new Map();

/** The text of `file` on disk, or undefined when there is none. */
function textOnDisk(file) {
  let stat;
  try {
    stat = fs.statSync(file);
  } catch {
    return undefined;
  }
  const last = onDisk.get(file);
  if (last && last.mtimeMs === stat.mtimeMs && last.size === stat.size) return last.text;
  const text = fs.readFileSync(file, 'utf8');
  onDisk.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, text });
  return text;
}

/** The files `file` imports as it is on disk; `seen` spares a second look at a file within one check. */
function targetsOnDisk(file, seen) {
  let targets = seen.get(file);
  if (!targets) {
    const text = textOnDisk(file);
    targets = text === undefined ? [] : [...new Set(importsOf(file, text).map(({ target }) => target))];
    seen.set(file, targets);
  }
  return targets;
}

/** A shortest chain of imports from `start` that leads back to `goal` (its files, `start` first), or undefined. */
function chainBack(start, goal, seen) {
  const cameFrom = new Map([[start, undefined]]);
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    for (const next of targetsOnDisk(queue[i], seen)) {
      if (next === goal) {
        const chain = [];
        for (let file = queue[i]; file !== undefined; file = cameFrom.get(file)) chain.unshift(file);
        return chain;
      }
      if (!cameFrom.has(next)) {
        cameFrom.set(next, queue[i]);
        queue.push(next);
      }
    }
  }
  return undefined;
}

/** @type {import('eslint').Rule.RuleModule} */
module.exports = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid an import that closes a cycle of modules, type-only imports included' },
    schema: [],
    messages: { cycle: 'Import cycle: {{cycle}}. Move what both sides need into a module of its own.' },
  },
  create(context) {
    const file = path.resolve(context.physicalFilename);
    const { sourceCode } = context;
    return {
      Program() {
        const seen = new Map();
        for (const { target, pos, end } of importsOf(file, sourceCode.text)) {
          const chain = target === file ? [] : chainBack(target, file, seen);
          if (!chain) continue;
          const cycle = [file, ...chain, file].map((member) => path.relative(context.cwd, member)).join(' → ');
          context.report({
            loc: { start: sourceCode.getLocFromIndex(pos), end: sourceCode.getLocFromIndex(end) },
            messageId: 'cycle',
            data: { cycle },
          });
        }
      },
    };
  },
};

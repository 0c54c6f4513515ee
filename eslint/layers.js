/**
 * The lint rule `local/layers`: the source tree is a stack of layers, each file in one of them, and a file may import
 * only from its own layer and from the layers it is allowed to use. The layers and what each may use are the rule's
 * option (eslint.config.mjs), the same table docs/architecture.md shows. A file in no layer is not checked; an import
 * of a file in no layer is an error, so that a new folder is placed before it is used.
 *
 * Option: `{ root, layers: [{ name, files: [prefix…], uses: [layer name…], face? }] }`. A file belongs to the first layer
 * with a prefix its path (relative to `root`, with `/`) starts with; a prefix ending in `/` is a folder, any other a
 * file. A layer with a `face` (a file of it) is reached from other layers through that file only: its other files are
 * its own.
 */
'use strict';

const path = require('node:path');
const { importsOf } = require('./imports');

/** The layer of `file` (absolute), or undefined. */
function layerOf(file, root, layers) {
  const relative = path.relative(root, file).split(path.sep).join('/');
  return layers.find((layer) => layer.files.some((prefix) => (prefix.endsWith('/') ? relative.startsWith(prefix) : relative === prefix)));
}

/** @type {import('eslint').Rule.RuleModule} */
module.exports = {
  meta: {
    type: 'problem',
    docs: { description: 'Each file imports only from its own layer and the layers it may use' },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          layers: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                name: { type: 'string' },
                files: { type: 'array', items: { type: 'string' } },
                uses: { type: 'array', items: { type: 'string' } },
                face: { type: 'string' },
              },
              required: ['name', 'files', 'uses'],
              additionalProperties: false,
            },
          },
        },
        required: ['root', 'layers'],
        additionalProperties: false,
      },
    ],
    messages: {
      forbidden: 'The {{from}} layer may not import {{target}} (the {{to}} layer); it may use {{allowed}}. See docs/architecture.md.',
      private:
        '{{target}} is private to the {{to}} layer: import what it offers from {{face}}, its one face (add the name there if it is missing).',
      unplaced: '{{target}} is in no layer: place it in the layers of eslint.config.mjs (and docs/architecture.md) before importing it.',
    },
  },
  create(context) {
    const { root, layers } = context.options[0];
    const file = path.resolve(context.physicalFilename);
    const own = layerOf(file, root, layers);
    if (!own) return {};
    const { sourceCode } = context;
    return {
      Program() {
        for (const { target, pos, end } of importsOf(file, sourceCode.text)) {
          const loc = { start: sourceCode.getLocFromIndex(pos), end: sourceCode.getLocFromIndex(end) };
          const relative = path.relative(root, target).split(path.sep).join('/');
          const theirs = layerOf(target, root, layers);
          if (!theirs) context.report({ loc, messageId: 'unplaced', data: { target: relative } });
          else if (theirs !== own && !own.uses.includes(theirs.name)) {
            const allowed = own.uses.length > 0 ? own.uses.join(', ') : 'no other layer';
            context.report({ loc, messageId: 'forbidden', data: { from: own.name, to: theirs.name, target: relative, allowed } });
          } else if (theirs !== own && theirs.face !== undefined && relative !== theirs.face) {
            context.report({ loc, messageId: 'private', data: { to: theirs.name, target: relative, face: theirs.face } });
          }
        }
      },
    };
  },
};

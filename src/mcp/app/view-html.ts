/**
 * The task view, an MCP App (extension `io.modelcontextprotocol/ui`): one self-contained HTML document that a host
 * shows in a sandboxed frame to follow a task in the chat. The package ships it prebuilt (`task-view.html` beside the
 * compiled module, written by `npm run build`); a checkout builds it from `view/` on first use, in memory.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Plugin } from 'esbuild';
import { bundleBrowserScript, inline, prebuiltOrBuilt } from './page-bundle';

/** The view's resource URI. */
export const TASK_VIEW_URI = 'ui://temporal-mcp-tasks/task-view.html';

const VIEW_DIR = path.join(__dirname, 'view');

/** The prebuilt document of the package; absent in a checkout, where `view/` holds the sources. */
const PREBUILT_HTML = path.join(__dirname, 'task-view.html');

const ENGLISH_ONLY = 'zod-english-locale';
const RESOLVING = Symbol('resolving');

/**
 * Keeps the bundle small (without it the view is about 690 KB, with it about 350 KB). The `App` class reaches zod
 * through zod's whole namespace object, which holds every zod locale: the view shows none of zod's messages, so
 * only English is kept. The MCP SDK packages declare no `sideEffects`, yet their modules only define things:
 * marking them free of side effects lets the bundler drop the client, transport and auth code the view never uses.
 */
const slimDependencies: Plugin = {
  name: 'task-view-slim-dependencies',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]/.test(args.importer) ? { path: path.join(args.resolveDir, args.path), namespace: ENGLISH_ONLY } : undefined,
    );
    pluginBuild.onLoad({ filter: /.*/, namespace: ENGLISH_ONLY }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: path.dirname(args.path),
      loader: 'js',
    }));
    pluginBuild.onResolve({ filter: /.*/ }, async (args) => {
      const fromSdk =
        /^@modelcontextprotocol\/(client|core)(\/|$)/.test(args.path) ||
        /[\\/]@modelcontextprotocol[\\/](client|core)[\\/]/.test(args.importer);
      if (args.pluginData === RESOLVING || !fromSdk) return undefined;
      const resolved = await pluginBuild.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: RESOLVING,
      });
      if (resolved.errors.length > 0) return { errors: resolved.errors };
      return { path: resolved.path, namespace: resolved.namespace, sideEffects: false };
    });
  },
};

/**
 * The view as one HTML document, script and styles inline: the prebuilt file when there is one, else built from the
 * sources. Read or built once per process; a failure is not kept, so the next call tries again. Throws when neither
 * the file nor the sources can be had.
 */
export const taskViewHtml: () => Promise<string> = prebuiltOrBuilt(PREBUILT_HTML, () => buildTaskViewHtml());

/**
 * Builds the document from `view/` with esbuild, which only a checkout has (a development dependency): loaded here, not
 * at the top. Its styles are `base.css` (shared with the approvals page) followed by `view.css`.
 */
export async function buildTaskViewHtml(): Promise<string> {
  const { transform } = require('esbuild') as typeof import('esbuild');
  const [script, css] = await Promise.all([
    bundleBrowserScript(VIEW_DIR, [slimDependencies]),
    Promise.all(['base.css', 'view.css'].map((name) => readFile(path.join(VIEW_DIR, name), 'utf8'))).then((sheets) =>
      transform(sheets.join('\n'), { loader: 'css', minify: true }),
    ),
  ]);
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Task</title>',
    `<style>${inline(css.code, 'style')}</style>`,
    '</head>',
    '<body>',
    '<div id="task-view"></div>',
    `<script>${inline(script, 'script')}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

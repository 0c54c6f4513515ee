/**
 * What the server's browser documents (the task view, the passkey page) share: one script bundled from a folder of
 * sources with esbuild (a development dependency, so only in a checkout), inlined safely, and the prebuilt copy of a
 * package read once per process or else built.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Plugin } from 'esbuild';

/** The script of `dir/main.ts`, bundled for browsers with `dir/tsconfig.json`. Throws when it comes out empty. */
export async function bundleBrowserScript(dir: string, plugins: Plugin[] = []): Promise<string> {
  const { build } = require('esbuild') as typeof import('esbuild');
  const bundle = await build({
    entryPoints: [path.join(dir, 'main.ts')],
    tsconfig: path.join(dir, 'tsconfig.json'),
    write: false,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    logLevel: 'silent',
    plugins,
  });
  const script = bundle.outputFiles[0]?.text;
  if (script === undefined) throw new Error(`the bundle of ${dir} came out empty`);
  return script;
}

/** Text safe inside `<tag>…</tag>`: a closing tag (or an HTML comment opener) in it would end the element early. */
export function inline(text: string, tag: 'script' | 'style'): string {
  return text.replace(new RegExp(`</(${tag})`, 'gi'), '<\\/$1').replace(/<!--/g, '<\\!--');
}

/**
 * A loader of one document: the prebuilt file when there is one, else `build()`; read or built once per process, and
 * a failure is not kept, so the next call tries again.
 */
export function prebuiltOrBuilt(prebuilt: string, build: () => Promise<string>): () => Promise<string> {
  let cached: Promise<string> | undefined;
  return () => {
    cached ??= readFile(prebuilt, 'utf8')
      .catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return build();
        throw error;
      })
      .catch((error: unknown) => {
        cached = undefined;
        throw error;
      });
    return cached;
  };
}

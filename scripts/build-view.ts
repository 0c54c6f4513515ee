/**
 * Writes the task view (the MCP App the server offers as a `ui://` resource) to an HTML file, to open in a browser
 * or hand to an MCP Apps host for a preview; `npm run build` writes the package's copy with it.
 * Usage: npm run build:view [-- --out FILE] [--help]
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildTaskViewHtml, TASK_VIEW_URI } from '../src/mcp/app/view-html';

const ROOT = path.resolve(__dirname, '..');

const HELP = `Usage: npm run build:view [-- --out FILE] [--help]

Bundles the task view (src/mcp/app/view) into one self-contained HTML file, the document the server serves as
${TASK_VIEW_URI}. --out sets the file (default dist/task-view.html; the package's copy is dist/mcp/app/task-view.html).
`;

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return;
  }
  const at = argv.indexOf('--out');
  if (at >= 0 && !argv[at + 1]) throw new Error('--out needs a file name');
  const unknown = argv.filter((arg, index) => arg.startsWith('-') && arg !== '--out' && index !== at + 1);
  if (unknown.length > 0) throw new Error(`unknown option ${unknown[0]}; see --help`);
  const out = path.resolve(at >= 0 ? argv[at + 1] : path.join(ROOT, 'dist', 'task-view.html'));
  const html = await buildTaskViewHtml();
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(out, html);
  process.stdout.write(`${out} (${(Buffer.byteLength(html) / 1024).toFixed(1)} KiB)\n`);
}

main(process.argv.slice(2)).catch((error: Error) => {
  process.stderr.write(`build:view: ${error.message}\n`);
  process.exit(1);
});

/**
 * Writes the task view (the MCP App the server offers as a `ui://` resource) to an HTML file, to open in a browser
 * or hand to an MCP Apps host for a preview; `npm run build` writes the package's copy with it.
 * Usage: npm run build:view [-- --out FILE] [--help]
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { buildApprovalsPageHtml } from '../src/mcp/app/approvals-page-html';
import { buildPasskeyPageHtml } from '../src/mcp/app/passkey-pages';
import { buildTaskViewHtml, TASK_VIEW_URI } from '../src/mcp/app/view-html';

const ROOT = path.resolve(__dirname, '..');

const HELP = `Usage: npm run build:view [-- --out FILE] [--passkey-page FILE] [--approvals-page FILE] [--help]

Bundles the task view (src/mcp/app/view) into one self-contained HTML file, the document the server serves as
${TASK_VIEW_URI}. --out sets the file (default dist/task-view.html; the package's copy is dist/mcp/app/task-view.html).
--passkey-page also writes the passkey page the server serves at /passkeys (src/mcp/app/passkey-page) to FILE.
--approvals-page also writes the approvals page the server serves at /approvals (src/mcp/app/approvals-page) to FILE.
`;

/** The value of option `name`, undefined when it is absent; throws when it has none. */
function optionValue(argv: string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  if (at < 0) return undefined;
  const value = argv[at + 1];
  if (!value || value.startsWith('-')) throw new Error(`${name} needs a file name`);
  return value;
}

async function write(file: string, html: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, html);
  process.stdout.write(`${file} (${(Buffer.byteLength(html) / 1024).toFixed(1)} KiB)\n`);
}

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return;
  }
  const options = ['--out', '--passkey-page', '--approvals-page'];
  const values = new Set(options.map((name) => argv.indexOf(name) + 1).filter((index) => index > 0));
  const unknown = argv.filter((arg, index) => !options.includes(arg) && !values.has(index));
  if (unknown.length > 0) throw new Error(`unknown argument ${unknown[0]}; see --help`);
  const out = path.resolve(optionValue(argv, '--out') ?? path.join(ROOT, 'dist', 'task-view.html'));
  const passkeyPage = optionValue(argv, '--passkey-page');
  const approvalsPage = optionValue(argv, '--approvals-page');
  await write(out, await buildTaskViewHtml());
  if (passkeyPage !== undefined) await write(path.resolve(passkeyPage), await buildPasskeyPageHtml());
  if (approvalsPage !== undefined) await write(path.resolve(approvalsPage), await buildApprovalsPageHtml());
}

main(process.argv.slice(2)).catch((error: Error) => {
  process.stderr.write(`build:view: ${error.message}\n`);
  process.exit(1);
});

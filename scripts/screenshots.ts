/**
 * Makes the README's pictures of the task view and the approvals page: runs the browser tests that take them
 * (test/app/task-view.test.ts, test/approvals/approvals-page.test.ts) with WRITE_SCREENSHOTS pointing at the folder,
 * which `npm test` leaves alone (its screenshots go to a temporary folder).
 * Usage: npm run screenshots [-- --out DIR] [--help]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './lib/processes';

/** The pictures the tests take, as docs/workflows.md, docs/approvals-page.md and the README show them. */
const PICTURES = [
  'task-view-approval.png',
  'task-view-result.png',
  'task-view-inbox.png',
  'task-view-inbox-question.png',
  'approvals-page-question.png',
  'approvals-page-inbox.png',
];

/** The tests that take them: the task view's approval path and inbox, and the approvals page's approval and sign-in. */
const TESTS =
  '^(the task view in a real browser (approve an order|inbox mode)|an invoice approved on the page|a person signs in through OpenID Connect)';

/** The files of those tests. */
const TEST_FILES = ['test/app/task-view.test.ts', 'test/approvals/approvals-page.test.ts'];

const HELP = `Usage: npm run screenshots [-- --out DIR] [--help]

Regenerates the pictures of the task view and the approvals page that the README, docs/workflows.md and
docs/approvals-page.md show:
${PICTURES.map((name) => `  ${name}`).join('\n')}

Runs the tests of ${TEST_FILES.join(' and ')} that take them (a Temporal dev server, a worker, the MCP server and
headless Chromium, as npm test does) with WRITE_SCREENSHOTS set to the folder. npm test writes the same pictures to a
temporary folder only, so that a test run leaves the checkout as it was.

Options:
  --out DIR    where to write the pictures (default: docs/images)
  -h, --help   show this help
`;

function main(argv: string[]): void {
  if (argv.includes('--help') || argv.includes('-h')) return void process.stdout.write(HELP);
  let out = path.join(ROOT, 'docs', 'images');
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--out' && argv[i + 1]) out = path.resolve(argv[++i]);
    else throw new Error(`unknown argument "${argv[i]}"; see --help`);
  }
  const started = Date.now();
  const jest = spawnSync(path.join(ROOT, 'node_modules', '.bin', 'jest'), [...TEST_FILES, '--testNamePattern', TESTS], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, WRITE_SCREENSHOTS: out },
  });
  if (jest.error) throw jest.error;
  if (jest.status !== 0) throw new Error(`the tests that take the pictures failed (exit ${jest.status ?? jest.signal})`);
  const missing = PICTURES.filter((name) => {
    const file = path.join(out, name);
    return !existsSync(file) || statSync(file).mtimeMs < started;
  });
  if (missing.length > 0) throw new Error(`not written to ${out}: ${missing.join(', ')}`);
  for (const name of PICTURES) {
    const file = path.join(out, name);
    const relative = path.relative(process.cwd(), file);
    process.stdout.write(`screenshots: wrote ${relative.startsWith('..') ? file : relative}\n`);
  }
}

try {
  main(process.argv.slice(2));
} catch (error) {
  console.error(`screenshots: ${(error as Error).message}`);
  process.exit(1);
}

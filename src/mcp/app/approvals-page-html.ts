/**
 * The approvals page (`GET /approvals`) as one self-contained HTML document, script and styles inline: approvers
 * without an MCP client sign in, see the questions awaiting them and answer them there. The package ships it prebuilt
 * (`approvals-page.html` beside the compiled module, written by `npm run build`); a checkout builds it from
 * `approvals-page/` on first use, in memory. The server fills in {@link APPROVALS_CONFIG_SLOT}.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleBrowserScript, inline, prebuiltOrBuilt } from './page-bundle';

/**
 * Where the page's settings go: the server replaces it with the JSON `{"rpId": string | null, "origin": string}`,
 * its `<` written as `\u003c`.
 */
export const APPROVALS_CONFIG_SLOT = '__APPROVALS_CONFIG__';

const PAGE_DIR = path.join(__dirname, 'approvals-page');

/** The rules the page shares with the task view (fields, buttons, notices, rendered values), inlined before its own. */
const BASE_CSS = path.join(__dirname, 'view', 'base.css');

/** The prebuilt page of the package; absent in a checkout, where `approvals-page/` holds the sources. */
const PREBUILT_PAGE = path.join(__dirname, 'approvals-page.html');

/**
 * The page, its settings still a slot: the prebuilt file when there is one, else built from the sources. Read or built
 * once per process; a failure is not kept, so the next call tries again. Throws when neither can be had.
 */
export const approvalsPageHtml: () => Promise<string> = prebuiltOrBuilt(PREBUILT_PAGE, () => buildApprovalsPageHtml());

/**
 * Builds the page from `approvals-page/` with esbuild, which only a checkout has (see `page-bundle.ts`). Its styles are
 * the task view's `view/base.css` followed by `page.css`.
 */
export async function buildApprovalsPageHtml(): Promise<string> {
  const { transform } = require('esbuild') as typeof import('esbuild');
  const [script, css] = await Promise.all([
    bundleBrowserScript(PAGE_DIR),
    Promise.all([BASE_CSS, path.join(PAGE_DIR, 'page.css')].map((file) => readFile(file, 'utf8'))).then((sheets) =>
      transform(sheets.join('\n'), { loader: 'css', minify: true }),
    ),
  ]);
  return PAGE_TEMPLATE.replace('__STYLE__', () => inline(css.code, 'style')).replace('__SCRIPT__', () => inline(script, 'script'));
}

/** The page's landmarks and regions; the script fills them (`approvals-page/main.ts`). */
const PAGE_TEMPLATE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Approvals</title>
<style>__STYLE__</style>
<script type="application/json" id="approvals-config">${APPROVALS_CONFIG_SLOT}</script>
</head>
<body>
<header class="site-header">
<h1>Approvals</h1>
<div id="account" class="account" hidden>
<p>Signed in as <strong id="account-person"></strong></p>
<button id="sign-out" type="button">Sign out</button>
</div>
</header>
<main id="main">
<p id="notice" class="notice success" role="status"></p>
<p id="problem" class="notice danger" role="alert"></p>
<section id="sign-in" class="panel" hidden></section>
<section id="inbox" class="panel" hidden></section>
<section id="question" class="panel" hidden></section>
<noscript><p>This page needs JavaScript.</p></noscript>
</main>
<script>__SCRIPT__</script>
</body>
</html>
`;

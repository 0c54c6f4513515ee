/** The codec server's one page: sign a browser in with a token, so the Web UI's calls carry its session. */
import { escapeHtml } from '../util/html';

/** What the page shows. */
export interface SignInPageView {
  /** Who is signed in, when someone is. */
  principal?: string;
  role: string;
  uiOrigins: readonly string[];
  /** Why the last attempt did not work. */
  problem?: string;
}

/** The page's HTML. */
export function signInPage(view: SignInPageView): string {
  const origins = view.uiOrigins.map((origin) => `<code>${escapeHtml(origin)}</code>`).join(', ') || 'none (MCP_CODEC_UI_ORIGINS)';
  const state = view.principal
    ? `<p role="status">Signed in as <strong>${escapeHtml(view.principal)}</strong>. The Web UI at ${origins} now shows payloads decoded, once its codec server setting &ldquo;Include cross-origin credentials&rdquo; is on.</p>
<form method="post" action="/sign-out"><button type="submit">Sign out</button></form>`
    : `<form method="post" action="/sign-in">
<label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`;
  const problem = view.problem ? `<p role="alert">${escapeHtml(view.problem)}</p>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Payload codec: sign in</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
label{display:block;font-weight:600;margin-top:1rem}input{font:inherit;width:100%;padding:.4rem;margin:.25rem 0 1rem;box-sizing:border-box}
button{font:inherit;padding:.4rem 1rem}[role=alert]{color:#a00000;font-weight:600}code{background:#f2f2f2;padding:0 .2rem}</style>
</head><body><main>
<h1>Payload codec</h1>
<p>This server decrypts the payloads of Temporal tasks for people who hold the role <code>${escapeHtml(view.role)}</code>. Sign in with your token to see them decoded in the Web UI.</p>
${problem}${state}
</main></body></html>`;
}

/**
 * The approvals page's document as served at GET /approvals: the same for everyone (what it shows comes from the
 * calls), with its settings in their slot, and headers that let only the page's own script run, in no frame, and
 * send no referrer.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { approvalsPageHtml, APPROVALS_CONFIG_SLOT } from '../app/approvals-page-html';

/** What the page's script is told: the passkeys' relying party id (null when passkeys are not offered) and the origin. */
export interface PageSettings {
  rpId: string | null;
  origin: string;
}

/** Answers a GET (or HEAD) of the page with its document and `settings` (a HEAD with the headers alone). */
export async function sendPageDocument(req: IncomingMessage, res: ServerResponse, settings: PageSettings): Promise<void> {
  const settingsJson = JSON.stringify(settings).replace(/</g, '\\u003c');
  const page = await approvalsPageHtml();
  const html = page.replace(APPROVALS_CONFIG_SLOT, () => settingsJson);
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    // The page's own script alone, by its digest: text that ever made it into the page as markup would not run.
    'content-security-policy': `default-src 'none'; script-src '${scriptDigest(page)}'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    // The page's address may carry a link's token: it is never sent on to another site.
    'referrer-policy': 'no-referrer',
  });
  res.end(req.method === 'HEAD' ? undefined : html);
}

/** The CSP source of the page's one executable script: `sha256-` and the digest of its text. */
const scriptDigest = (() => {
  let seen: { html: string; digest: string } | undefined;
  return (html: string): string => {
    if (seen?.html !== html) {
      const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
      seen = { html, digest: `sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}` };
    }
    return seen.digest;
  };
})();

/**
 * The approvals page the server serves at /approvals, for approvers without an MCP client: they sign in (a passkey,
 * their company account or a link by mail), see the questions awaiting them and answer them, signing with their
 * passkey where their answer must be signed. Its settings are in `#approvals-config`, filled in by the server.
 */
import { ApprovalsPage, type PageConfig, type PageElements } from './approvals-page';

function element<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the page has no #${id}`);
  return found as T;
}

/** The server's settings; the page's own origin and host when the slot was left unfilled. */
function pageConfig(): PageConfig {
  try {
    const parsed = JSON.parse(element('approvals-config').textContent ?? '') as Partial<PageConfig>;
    return { rpId: typeof parsed.rpId === 'string' ? parsed.rpId : null, origin: parsed.origin ?? location.origin };
  } catch {
    return { rpId: null, origin: location.origin };
  }
}

const elements: PageElements = {
  signIn: element('sign-in'),
  inbox: element('inbox'),
  question: element('question'),
  notice: element('notice'),
  problem: element('problem'),
  account: element('account'),
  person: element('account-person'),
  signOut: element<HTMLButtonElement>('sign-out'),
};

void new ApprovalsPage(pageConfig(), elements).start();

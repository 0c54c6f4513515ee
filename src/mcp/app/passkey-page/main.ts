/**
 * The passkey page the server serves at /passkeys (its origin is MCP_PASSKEY_ORIGIN): an approver registers a passkey
 * once (the page prints the entry the directory's keeper adds), and signs a decision with it (the page prints the
 * signature to give approvals_answer). The link names the decision, the run, the challenge the server issued, and
 * what the question shows: the page shows that, and signs its digest as computed here, never a digest it cannot show.
 */
import { startAuthentication, startRegistration } from '@simplewebauthn/browser';
import { canonicalJson } from '../../../util/canonical-json';
import { escapeInvisible } from '../../../util/visible-text';

interface PageConfig {
  rpId: string;
  origin: string;
}

const config = JSON.parse(document.getElementById('passkey-config')?.textContent ?? '{}') as PageConfig;

function element<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the page has no #${id}`);
  return found as T;
}

function show(id: string, text: string): void {
  const output = element<HTMLElement>(id);
  output.textContent = text;
  output.hidden = false;
}

function problem(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

async function postJson(path: string, body: unknown): Promise<unknown> {
  const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await response.json()) as { error?: string };
  if (!response.ok) throw new Error(answer.error ?? `the server answered ${response.status}`);
  return answer;
}

/** Registration: options from the server, the authenticator makes the credential, the server checks it. */
async function register(): Promise<void> {
  const name = element<HTMLInputElement>('name').value.trim();
  if (name === '') return show('register-error', 'Give your name as the approvers directory lists it.');
  try {
    const optionsJSON = (await postJson('/passkeys/registration-options', { name })) as Parameters<
      typeof startRegistration
    >[0]['optionsJSON'];
    const response = await startRegistration({ optionsJSON });
    const { entry } = (await postJson('/passkeys/registration', { response })) as { entry: unknown };
    element<HTMLElement>('register-error').hidden = true;
    show('entry', JSON.stringify(entry, null, 2));
    element<HTMLElement>('entry-help').hidden = false;
  } catch (error) {
    show('register-error', `The passkey was not registered: ${problem(error)}`);
  }
}

/** What the link asks to sign: the statement, and what the question shows (whose digest the statement names). */
interface LinkedDecision {
  statement: Record<string, unknown>;
  shown: unknown;
}

/**
 * The decision the link describes; undefined when it names none, a string saying why it cannot be signed (what it
 * shows is missing or is not what its digest names).
 */
async function decisionOfLink(): Promise<LinkedDecision | string | undefined> {
  const query = new URLSearchParams(location.search);
  const [taskId, key, subject, decision, run] = ['task', 'key', 'subject', 'decision', 'run'].map((name) => query.get(name) ?? '');
  if (!taskId || !key || !decision) return undefined;
  if (!subject || !run || !query.get('shown')) return 'This link does not say what the question shows: open the link your inbox gives.';
  let shown: unknown;
  try {
    shown = JSON.parse(new TextDecoder().decode(fromBase64url(query.get('shown')!)));
  } catch {
    return 'This link does not say what the question shows: open the link your inbox gives.';
  }
  // The digest signed is the one of what this page shows, computed here: a link cannot show one thing and sign another.
  if ((await digestOf(shown)) !== subject) return 'What this link shows is not what it asks you to sign: nothing can be signed with it.';
  const delegatedTo = query.get('delegatedTo');
  const challenge = query.get('challenge');
  return {
    statement: {
      format: 'temporal-mcp-tasks/approver-statement',
      v: 2,
      taskId,
      run,
      key,
      subject,
      decision,
      ...(delegatedTo ? { delegatedTo } : {}),
      ...(challenge ? { challenge } : {}),
    },
    shown,
  };
}

function fromBase64url(text: string): Uint8Array {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (character) => character.charCodeAt(0));
}

async function digestOf(value: unknown): Promise<string> {
  return `sha256:${base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(canonicalJson(value))))}`;
}

/** Canonical JSON of a flat statement: keys sorted, no spaces (its values are strings and one small integer). */
function canonical(statement: Record<string, unknown>): string {
  return `{${Object.keys(statement)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${JSON.stringify(statement[key])}`)
    .join(',')}}`;
}

function base64url(bytes: ArrayBuffer): string {
  let binary = '';
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Signing: the challenge is the SHA-256 of the statement's canonical JSON; the assertion is the signature. */
async function sign(statement: Record<string, unknown>): Promise<void> {
  try {
    const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(canonical(statement))));
    const assertion = await startAuthentication({
      optionsJSON: { challenge, rpId: config.rpId, allowCredentials: [], userVerification: 'required', timeout: 120_000 },
    });
    const signature = {
      alg: 'webauthn',
      keyId: assertion.id,
      authenticatorData: assertion.response.authenticatorData,
      clientDataJSON: assertion.response.clientDataJSON,
      signature: assertion.response.signature,
      v: 2,
      ...(statement.challenge ? { challenge: statement.challenge } : {}),
    };
    element<HTMLElement>('sign-error').hidden = true;
    show('signature', JSON.stringify(signature));
    element<HTMLElement>('signature-help').hidden = false;
  } catch (error) {
    show('sign-error', `Nothing was signed: ${problem(error)}`);
  }
}

void decisionOfLink().then((linked) => {
  if (linked === undefined) return;
  element<HTMLElement>('sign-section').hidden = false;
  if (typeof linked === 'string') {
    element<HTMLButtonElement>('sign').disabled = true;
    return show('sign-error', linked);
  }
  const { statement, shown } = linked;
  element<HTMLElement>('statement').textContent = escapeInvisible(
    [
      `Task: ${String(statement.taskId)}`,
      `Question: ${String(statement.key)}`,
      `Decision: ${String(statement.decision)}${statement.delegatedTo ? ` to ${String(statement.delegatedTo)}` : ''}`,
      'What you sign it about:',
      JSON.stringify(shown, null, 2),
    ].join('\n'),
  );
  element<HTMLButtonElement>('sign').addEventListener('click', () => void sign(statement));
});
element<HTMLButtonElement>('register').addEventListener('click', () => void register());

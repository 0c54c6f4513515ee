/**
 * Signing in (`#sign-in`), the ways the deployment offers: a passkey, the company's OpenID Connect provider (a plain
 * navigation, back to the same page), or a one-time link by mail. A sign-in link from mail is redeemed only when the
 * person clicks "Sign in": mail scanners open links, and an open must not use it up.
 */
import { h, messageOf, replaceChildren, uniqueId } from '../view/dom';
import type { ApprovalsApi } from './api';
import type { Messages } from './messages';
import { ceremonyProblem, passkeyAssertion } from './passkey';
import { oneLine } from './shown-text';
import { APPROVALS_API, type SignInMethods } from './wire';

/** What the sign-in panel needs from the page. */
export interface SignInHost {
  readonly api: ApprovalsApi;
  readonly messages: Messages;
  /** A sign-in went through (or a sign-in link was tried): read the session again. */
  signedIn(): void;
}

/** Said when a mail was asked for but the server's answer carried no sentence of its own. */
const LINK_SENT = 'If the approvals directory lists you and allows it, a sign-in link is on its way to your mail.';

/** The sign-in view. */
export class SignInPanel {
  private readonly heading = h('h2', { id: 'sign-in-heading', tabindex: -1 }, 'Sign in');

  constructor(
    private readonly host: SignInHost,
    private readonly section: HTMLElement,
  ) {
    section.setAttribute('aria-labelledby', 'sign-in-heading');
  }

  /** The ways to sign in `methods` offers; `person`: the one a question link was sent to. */
  show(methods: SignInMethods, person?: string): void {
    this.heading.textContent = person === undefined ? 'Sign in' : `Sign in as ${oneLine(person)} to answer this question`;
    const ways: HTMLElement[] = [];
    if (methods.passkey) ways.push(this.passkeyWay());
    if (methods.oidc) ways.push(this.oidcWay());
    if (methods.link) ways.push(this.linkWay(person));
    replaceChildren(
      this.section,
      this.heading,
      h('p', {}, 'Sign in to see the questions awaiting your decision.'),
      ways.length > 0
        ? h('div', { class: 'ways' }, ...ways)
        : h('p', { class: 'notice warning' }, 'This page offers no way to sign in. Ask whoever runs the approvals service.'),
    );
  }

  /** The sign-in link from mail, used only on a click; `done` runs after the attempt, whatever its outcome. */
  showLink(token: string, done: () => void): void {
    this.heading.textContent = 'Sign in to the approvals page';
    const button = h('button', { type: 'button', class: 'primary' }, 'Sign in');
    button.addEventListener('click', () => {
      void this.busy(button, async () => {
        try {
          await this.host.api.redeemLink(token);
          this.host.messages.clear();
        } catch (error) {
          this.host.messages.warn(messageOf(error));
        }
        done();
      });
    });
    replaceChildren(
      this.section,
      this.heading,
      h('p', {}, 'You opened a sign-in link from your mail. Choose "Sign in" to continue; the link works once.'),
      h('div', { class: 'buttons' }, button),
    );
  }

  /** Moves the focus to the panel's heading. */
  focus(): void {
    this.heading.focus();
  }

  private passkeyWay(): HTMLElement {
    const button = h('button', { type: 'button', class: 'primary' }, 'Sign in with a passkey');
    button.addEventListener('click', () => {
      void this.busy(button, async () => {
        let options: unknown;
        try {
          options = await this.host.api.passkeyOptions();
        } catch (error) {
          return this.host.messages.warn(messageOf(error));
        }
        let response: unknown;
        try {
          response = await passkeyAssertion(options);
        } catch (error) {
          return this.host.messages.warn(`You were not signed in: ${ceremonyProblem(error)}.`);
        }
        try {
          await this.host.api.passkeySignIn(response);
        } catch (error) {
          return this.host.messages.warn(messageOf(error));
        }
        this.host.messages.clear();
        this.host.signedIn();
      });
    });
    return h('div', { class: 'way' }, button);
  }

  private oidcWay(): HTMLElement {
    // Back to this very page after the provider's sign-in, question link included.
    const back = `${location.pathname}${location.search}`;
    const href = `${APPROVALS_API.oidcStart}?${new URLSearchParams({ return: back }).toString()}`;
    return h('div', { class: 'way' }, h('a', { class: 'button', href }, 'Sign in with your company account'));
  }

  private linkWay(person: string | undefined): HTMLElement {
    const id = uniqueId('who');
    const helpId = uniqueId('who-help');
    const who = h('input', { id, name: 'who', type: 'text', autocomplete: 'username', 'aria-describedby': helpId });
    if (person !== undefined) who.value = person;
    const button = h('button', { type: 'button' }, 'Email me a sign-in link');
    const send = () =>
      void this.busy(button, async () => {
        const named = who.value.trim();
        if (named === '') {
          this.host.messages.warn('Give your name or email address first.');
          who.focus();
          return;
        }
        try {
          const sent = await this.host.api.mailLink(named);
          this.host.messages.say(typeof sent?.message === 'string' && sent.message !== '' ? sent.message : LINK_SENT);
        } catch (error) {
          this.host.messages.warn(messageOf(error));
        }
      });
    button.addEventListener('click', send);
    who.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') send();
    });
    return h(
      'div',
      { class: 'way field' },
      h('label', { for: id }, 'Your name or email address'),
      h('p', { id: helpId, class: 'help' }, 'We mail you a link that signs you in once.'),
      h('div', { class: 'inline' }, who, button),
    );
  }

  /** Runs `work` with `button` disabled, so that a double click starts one ceremony. */
  private async busy(button: HTMLButtonElement, work: () => Promise<void>): Promise<void> {
    if (button.disabled) return;
    button.disabled = true;
    try {
      await work();
    } finally {
      button.disabled = false;
    }
  }
}

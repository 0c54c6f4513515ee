/**
 * The approvals page as a whole: who is signed in, which view shows (sign-in, inbox, one question), and the two links
 * that arrive by mail: `?signin=` (a one-time sign-in, used on a click only) and `?q=` (one question, for one person).
 */
import { ApiProblem, ApprovalsApi } from './api';
import { InboxList } from './inbox-list';
import { Messages } from './messages';
import { QuestionPanel } from './question-panel';
import { oneLine } from './shown-text';
import { SignInPanel } from './sign-in-panel';
import type { LinkAnswer, SessionAnswer } from './wire';

/** What the server puts into the page (`#approvals-config`). */
export interface PageConfig {
  /** The relying party of the people's passkeys; null: the page's own host. */
  rpId: string | null;
  origin: string;
}

/** The elements of the page's template the script fills. */
export interface PageElements {
  signIn: HTMLElement;
  inbox: HTMLElement;
  question: HTMLElement;
  notice: HTMLElement;
  problem: HTMLElement;
  /** The header's "Signed in as …" and "Sign out". */
  account: HTMLElement;
  person: HTMLElement;
  signOut: HTMLButtonElement;
}

type View = 'sign-in' | 'inbox' | 'question' | 'none';

/** The page: one per document. */
export class ApprovalsPage {
  readonly api = new ApprovalsApi();
  readonly messages: Messages;
  readonly rpId: string | null;
  private readonly signInPanel: SignInPanel;
  private readonly inboxList: InboxList;
  private readonly questionPanel: QuestionPanel;
  private signedIn: Extract<SessionAnswer, { signedIn: true }> | undefined;
  /** The question the `q` link names, once read. */
  private linked: LinkAnswer | undefined;
  /** The question to open again after signing in again, when the session ended while it was shown. */
  private resume: { taskId: string; key: string } | undefined;
  private view: View = 'none';

  constructor(
    config: PageConfig,
    private readonly elements: PageElements,
  ) {
    this.rpId = config.rpId;
    this.messages = new Messages(elements.notice, elements.problem);
    this.signInPanel = new SignInPanel({ api: this.api, messages: this.messages, signedIn: () => void this.load(true) }, elements.signIn);
    this.inboxList = new InboxList(
      {
        api: this.api,
        messages: this.messages,
        open: (question) => void this.openQuestion(question.taskId, question.key, true),
        signInAgain: () => void this.signInAgain(),
      },
      elements.inbox,
    );
    this.questionPanel = new QuestionPanel(
      {
        api: this.api,
        messages: this.messages,
        rpId: this.rpId,
        back: () => void this.backToInbox(),
        answered: (message) => void this.answered(message),
        signInAgain: () => void this.signInAgain(),
      },
      elements.question,
    );
    elements.signOut.addEventListener('click', () => void this.signOut());
  }

  /** Shows the first view: the sign-in link's button when the address carries one, else what the session allows. */
  async start(): Promise<void> {
    const token = parameter('signin');
    if (token !== undefined) {
      this.showView('sign-in');
      this.signInPanel.showLink(token, () => {
        // Tried once: the address no longer carries it, whatever came of it.
        dropParameter('signin');
        void this.load(true);
      });
      return;
    }
    await this.load(false);
  }

  /** Reads the session and shows what it allows; `moveFocus` after something the person did. */
  private async load(moveFocus: boolean): Promise<void> {
    let session: SessionAnswer;
    try {
      session = await this.api.session();
    } catch (error) {
      this.showView('none');
      this.messages.warn(`${error instanceof Error ? error.message : String(error)} Reload the page to try again.`);
      return;
    }
    const q = parameter('q');
    if (q !== undefined && this.linked === undefined) {
      try {
        this.linked = await this.api.link(q);
      } catch (error) {
        dropParameter('q');
        this.messages.warn(error instanceof Error ? error.message : String(error));
      }
    }
    if (!session.signedIn) {
      this.signedIn = undefined;
      this.api.csrf = undefined;
      this.elements.account.hidden = true;
      this.showView('sign-in');
      this.signInPanel.show(session.methods, this.linked?.person);
      if (moveFocus) this.signInPanel.focus();
      return;
    }
    this.signedIn = session;
    this.api.csrf = session.csrf;
    this.elements.person.textContent = oneLine(session.person);
    this.elements.account.hidden = false;
    const linked = this.linked;
    if (linked && linked.person !== session.person && linked.person !== session.principal) {
      this.messages.warn(`This link was sent to someone else; sign out and sign in as ${oneLine(linked.person)}.`);
      await this.showInbox(false);
      return;
    }
    const target = linked ?? this.resume;
    this.resume = undefined;
    if (target && (await this.openQuestion(target.taskId, target.key, moveFocus))) return;
    await this.showInbox(moveFocus);
  }

  /** Opens a question; resolves false (the inbox stays or the problem is said) when it could not be read. */
  private async openQuestion(taskId: string, key: string, moveFocus: boolean): Promise<boolean> {
    this.inboxList.hide();
    if (!(await this.questionPanel.open(taskId, key))) {
      // Still signed in: the inbox the person chose from goes on.
      if (this.view === 'inbox' && this.signedIn !== undefined) await this.inboxList.show();
      return false;
    }
    this.messages.clear();
    this.showView('question');
    if (moveFocus) this.questionPanel.focus();
    return true;
  }

  private async showInbox(moveFocus: boolean): Promise<void> {
    this.questionPanel.hide();
    this.showView('inbox');
    await this.inboxList.show();
    if (moveFocus) this.inboxList.focus();
  }

  private async backToInbox(): Promise<void> {
    this.forgetLink();
    this.messages.clear();
    this.questionPanel.forget();
    await this.showInbox(true);
  }

  private async answered(message: string): Promise<void> {
    this.forgetLink();
    this.messages.say(message);
    await this.showInbox(true);
  }

  /** The session ended: sign in again, then the question shown opens again (what was typed in it kept). */
  private async signInAgain(): Promise<void> {
    // Signed out already, or being signed in again: once is enough.
    if (this.signedIn === undefined) return;
    this.resume = this.view === 'question' ? this.questionPanel.current : undefined;
    this.signedIn = undefined;
    this.inboxList.hide();
    this.questionPanel.hide();
    await this.load(true);
    if (this.view === 'sign-in') this.messages.warn('Your session ended. Sign in again to go on.');
  }

  private async signOut(): Promise<void> {
    this.elements.signOut.disabled = true;
    try {
      await this.api.signOut();
    } catch (error) {
      // A session already over is signed out too.
      if (!(error instanceof ApiProblem && error.signIn)) {
        this.messages.warn(error instanceof Error ? error.message : String(error));
        return;
      }
    } finally {
      this.elements.signOut.disabled = false;
    }
    this.inboxList.hide();
    this.questionPanel.forget();
    this.messages.say('You are signed out.');
    await this.load(true);
  }

  /** The `q` link was followed: the address no longer opens its question. */
  private forgetLink(): void {
    this.linked = undefined;
    dropParameter('q');
  }

  private showView(view: View): void {
    this.view = view;
    this.elements.signIn.hidden = view !== 'sign-in';
    this.elements.inbox.hidden = view !== 'inbox';
    this.elements.question.hidden = view !== 'question';
  }
}

/** A parameter of the page's address, undefined when absent or empty. */
function parameter(name: string): string | undefined {
  return new URLSearchParams(location.search).get(name) || undefined;
}

/** Takes a parameter out of the page's address, without loading the page again. */
function dropParameter(name: string): void {
  const url = new URL(location.href);
  if (!url.searchParams.has(name)) return;
  url.searchParams.delete(name);
  history.replaceState(history.state, '', `${url.pathname}${url.search}${url.hash}`);
}

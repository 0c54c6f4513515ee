/**
 * One question, opened from the inbox or a link in mail (`#question`): what it asks and about what, how far it is,
 * and the decision controls. It reads the question again every 5 seconds while shown: a question gone is said to be
 * closed and its controls disabled, a question changed (someone else answered) is shown as it is now, keeping what
 * the person typed. An answer goes with the version of the question shown, signed first when the person must sign.
 */
import { h, messageOf, replaceChildren } from '../view/dom';
import { ApiProblem, type ApprovalsApi } from './api';
import { DecisionForm, type FormAnswer } from './decision-form';
import type { Messages } from './messages';
import { ceremonyProblem, signStatement } from './passkey';
import { Poller } from './poller';
import { answersSoFar, facts, messageAndSubject, titleOf } from './question-details';
import { statementOf } from './statement';
import type { AnswerRequest, QuestionView } from './wire';

/** What the question panel needs from the page. */
export interface QuestionHost {
  readonly api: ApprovalsApi;
  readonly messages: Messages;
  /** The relying party of the person's passkeys; null: the page's own host. */
  readonly rpId: string | null;
  /** The person chose to go back to the inbox. */
  back(): void;
  /** An answer was recorded; `message` says what. */
  answered(message: string): void;
  /** The session is missing or over. */
  signInAgain(): void;
}

/** How often an open question is read again. */
const REFRESH_MS = 5_000;

const GONE = 'This question was answered or closed meanwhile.';
const CHANGED = 'Someone else answered meanwhile; the page shows the question as it is now.';

/** The question view. */
export class QuestionPanel {
  private question: QuestionView | undefined;
  private form: DecisionForm | undefined;
  /** The question can no longer be answered. */
  private closed = false;
  /** An answer is being signed or sent: refreshes wait. */
  private busy = false;
  /** Counts opens, answers and hides: what a read started before one of them brings back is dropped. */
  private generation = 0;
  private readonly poller = new Poller(() => this.refresh(), REFRESH_MS);
  private readonly heading = h('h2', { id: 'question-heading', tabindex: -1 }, 'Question');
  /** What became of the question while it was shown (closed, changed), at its top. */
  private readonly state = h('p', { class: 'notice warning question-state', role: 'status' });
  private readonly details = h('div', { class: 'question-details' });
  private readonly formSlot = h('div', { class: 'question-form-slot' });

  constructor(
    private readonly host: QuestionHost,
    section: HTMLElement,
  ) {
    const back = h('button', { type: 'button', class: 'back' }, 'Back to the list');
    back.addEventListener('click', () => host.back());
    section.setAttribute('aria-labelledby', 'question-heading');
    replaceChildren(section, h('div', { class: 'buttons' }, back), this.heading, this.state, this.details, this.formSlot);
  }

  /** The question shown last (kept while the person signs in again), if any. */
  get current(): Pick<QuestionView, 'taskId' | 'key'> | undefined {
    return this.question;
  }

  /**
   * Reads and shows a question, then keeps it fresh. The same question opened again keeps what was typed in its form.
   * Resolves false when it could not be read (the problem is said, or the person is sent to sign in).
   */
  async open(taskId: string, key: string): Promise<boolean> {
    const generation = ++this.generation;
    this.poller.stop();
    let question: QuestionView;
    try {
      ({ question } = await this.host.api.question(taskId, key));
    } catch (error) {
      if (generation !== this.generation) return false;
      if (error instanceof ApiProblem && error.signIn) this.host.signInAgain();
      else this.host.messages.warn(messageOf(error));
      return false;
    }
    if (generation !== this.generation) return false;
    const same = this.question?.taskId === taskId && this.question.key === key;
    const changed = same && this.question?.version !== question.version;
    if (!same) {
      this.dropForm();
      this.state.textContent = '';
    }
    // A closed question's form was disabled: it opens with a new one, what was typed kept.
    this.show(question, this.closed);
    this.closed = false;
    if (changed) this.state.textContent = CHANGED;
    this.poller.start();
    return true;
  }

  /** Stops refreshing (another view is shown); the question is kept for {@link open} to show again. */
  hide(): void {
    this.generation += 1;
    this.poller.stop();
  }

  /** Hides and forgets the question. */
  forget(): void {
    this.hide();
    this.question = undefined;
    this.dropForm();
  }

  /** Moves the focus to the question's heading (after the person opened it). */
  focus(): void {
    this.heading.focus();
  }

  /** Shows `question`; its form is built again when it asks something else, or when `rebuild` says so. */
  private show(question: QuestionView, rebuild = false): void {
    this.question = question;
    this.heading.textContent = titleOf(question);
    replaceChildren(this.details, ...messageAndSubject(question), facts(question), answersSoFar(question.answers));
    // The form is kept while the question asks the same, so that a refresh never takes what the person is typing.
    const fits = this.form?.schemaText === JSON.stringify(question.requestedSchema) && this.form.signs === (question.mustSign === true);
    if (fits && !rebuild) return;
    const saved = this.form?.snapshot();
    this.form = new DecisionForm(question, (answer) => void this.send(answer));
    if (saved) this.form.restore(saved);
    replaceChildren(this.formSlot, this.form.element);
  }

  private dropForm(): void {
    this.form = undefined;
    this.formSlot.replaceChildren();
  }

  private async refresh(): Promise<void> {
    const shown = this.question;
    if (!shown || this.busy || this.closed) return;
    const generation = this.generation;
    let question: QuestionView;
    try {
      ({ question } = await this.host.api.question(shown.taskId, shown.key));
    } catch (error) {
      if (generation !== this.generation || this.busy) return;
      if (!(error instanceof ApiProblem)) throw error;
      if (error.signIn) this.host.signInAgain();
      else if (error.status === 404 || error.status === 409) this.close(GONE);
      else this.host.messages.warn(error.message);
      return;
    }
    if (generation !== this.generation || this.busy) return;
    if (question.version === shown.version) return;
    this.show(question);
    this.state.textContent = CHANGED;
  }

  /** The question can no longer be answered: its controls are disabled and `reason` said at its top. */
  private close(reason: string): void {
    this.closed = true;
    this.poller.stop();
    this.form?.close('This question can no longer be answered.');
    this.state.textContent = reason;
  }

  /** Signs (when the person must) and sends an answer to the question shown. */
  private async send(answer: FormAnswer): Promise<void> {
    const question = this.question;
    const form = this.form;
    if (!question || !form || this.busy || this.closed) return;
    this.busy = true;
    this.generation += 1;
    form.setBusy(true);
    try {
      const request: AnswerRequest = { taskId: question.taskId, key: question.key, version: question.version, ...answer };
      if (question.mustSign) {
        try {
          request.signature = await signStatement(statementOf(question, request), this.host.rpId);
        } catch (error) {
          form.showProblem(`Nothing was sent: your passkey did not sign (${ceremonyProblem(error)}).`);
          return;
        }
      }
      const recorded = await this.host.api.answer(request);
      this.forget();
      this.host.answered(recorded.message);
    } catch (error) {
      if (!(error instanceof ApiProblem)) form.showProblem(`Nothing was sent: ${messageOf(error)}`);
      else if (error.signIn) this.host.signInAgain();
      else if (error.state === 'closed' || error.status === 404) this.close(error.message);
      else if (error.state === 'changed') {
        this.state.textContent = error.message;
        await this.reread(question);
      } else form.showProblem(error.message);
    } finally {
      this.busy = false;
      if (!this.closed && this.form === form) form.setBusy(false);
    }
  }

  /** Reads a question again after the server said it changed, and shows it as it is now. */
  private async reread(question: QuestionView): Promise<void> {
    try {
      this.show((await this.host.api.question(question.taskId, question.key)).question);
    } catch (error) {
      if (error instanceof ApiProblem && (error.status === 404 || error.status === 409)) this.close(GONE);
      else this.host.messages.warn(messageOf(error));
    }
  }
}

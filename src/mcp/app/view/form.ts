/**
 * The questions a task waits on: a form per form-mode question, its fields built from its `requestedSchema` and checked
 * before anything is sent, and a link with Done/Decline for a URL-mode question.
 */
import { h, messageOf, replaceChildren, uniqueId } from './dom';
import { buildField, type Field } from './form-fields';
import { questionMessage, type QuestionText } from './question-message';
import { textOf, type ToolResult } from './tools';
import type { FormContent, FormQuestion, PendingQuestion, UrlQuestion } from './types';

/** What the questions panel needs from the rest of the view. */
export interface QuestionCallbacks {
  accept(key: string, content: FormContent): Promise<ToolResult>;
  decline(key: string): Promise<ToolResult>;
  /** Opens a URL through the host; resolves false when the host could not, so that the link's own navigation is used. */
  openLink(url: string): Promise<boolean>;
  /** Called after an answer was recorded, to ask the server for the new status. */
  answered(): void;
  /**
   * What a taken answer does for this page: `follow` (the default), the page's own task goes on and the card says it
   * waits for that; `recorded`, the answer is someone else's task's (an approver's inbox), so the card says what was
   * recorded and waits for nothing.
   */
  afterAnswer?: 'follow' | 'recorded';
}

/**
 * The panel listing pending questions. A question keeps its card while the status still lists it, so that polling
 * never wipes what a person is typing; after an answer the card shows what was sent until the question is gone.
 */
export class QuestionsPanel {
  readonly element: HTMLElement;
  private readonly heading: HTMLHeadingElement;
  private readonly list: HTMLElement;
  private readonly cards = new Map<string, HTMLElement>();

  constructor(private readonly callbacks: QuestionCallbacks) {
    const headingId = uniqueId('questions-heading');
    this.heading = h('h2', { id: headingId }, 'Question');
    this.list = h('div', { class: 'questions' });
    this.element = h('section', { class: 'panel', 'aria-labelledby': headingId, hidden: true }, this.heading, this.list);
  }

  /** Shows exactly the questions listed, in their order, keeping the cards of those already shown. */
  update(questions: PendingQuestion[]): void {
    const keys = new Set(questions.map((question) => question.key));
    for (const [key, card] of this.cards) {
      if (!keys.has(key)) {
        card.remove();
        this.cards.delete(key);
      }
    }
    // A card already in its place is not touched: moving it, even to where it is, would take the focus from a field
    // someone is typing in, at every poll.
    let place: ChildNode | null = this.list.firstChild;
    for (const question of questions) {
      let card = this.cards.get(question.key);
      if (!card) {
        card = question.mode === 'url' ? this.urlCard(question) : this.formCard(question);
        this.cards.set(question.key, card);
      }
      if (card !== place) this.list.insertBefore(card, place);
      place = card.nextSibling;
    }
    this.heading.textContent = questions.length > 1 ? 'Questions' : 'Question';
    this.element.hidden = questions.length === 0;
  }

  /** Removes every card (another task is shown). */
  clear(): void {
    this.update([]);
  }

  private formCard(question: FormQuestion): HTMLElement {
    const messageId = uniqueId('question');
    const fields = Object.entries(question.requestedSchema.properties).map(([name, schema]) =>
      buildField(name, schema, question.requestedSchema.required?.includes(name) ?? false),
    );
    const problem = h('p', { class: 'form-error', role: 'alert', hidden: true });
    const submit = h('button', { type: 'submit', class: 'primary' }, 'Submit');
    const decline = h('button', { type: 'button' }, 'Decline');
    const hasRequired = fields.some((field) => field.element.dataset.required === 'true');
    const form = h(
      'form',
      { class: 'question-form', novalidate: true, 'aria-labelledby': messageId },
      questionMessage(question, messageId),
      hasRequired && h('p', { class: 'help', 'aria-hidden': 'true' }, 'Fields marked * are required.'),
      ...fields.map((field) => field.element),
      problem,
      h('div', { class: 'buttons' }, submit, decline),
    );
    const card = h('article', { class: 'question', 'data-key': question.key }, form);

    const send = async (work: () => Promise<ToolResult>, sent: () => HTMLElement) => {
      problem.hidden = true;
      setBusy(form, true);
      try {
        const result = await work();
        if (result.isError) {
          showProblem(problem, textOf(result) || 'The server did not accept the answer.');
          return;
        }
        replaceChildren(card, sent());
        this.callbacks.answered();
      } catch (error) {
        showProblem(problem, `The answer could not be sent: ${messageOf(error)}`);
      } finally {
        setBusy(form, false);
      }
    };

    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const content: FormContent = {};
      let firstInvalid: Field | undefined;
      for (const field of fields) {
        const reading = field.read();
        field.mark(reading.problem);
        if (reading.problem !== undefined) firstInvalid ??= field;
        else if (reading.value !== undefined) content[field.name] = reading.value;
      }
      if (firstInvalid) {
        problem.hidden = true;
        firstInvalid.focus();
        return;
      }
      void send(
        () => this.callbacks.accept(question.key, content),
        () => this.sentSummary(question, 'accept', fields, content),
      );
    });
    decline.addEventListener('click', () => {
      void send(
        () => this.callbacks.decline(question.key),
        () => this.sentSummary(question, 'decline'),
      );
    });
    return card;
  }

  private urlCard(question: UrlQuestion): HTMLElement {
    const messageId = uniqueId('question');
    const url = safeUrl(question.url);
    const link = url
      ? h('a', { href: url, target: '_blank', rel: 'noopener noreferrer', class: 'url' }, url)
      : h('span', { class: 'url' }, question.url);
    if (url) {
      link.addEventListener('click', (event) => {
        event.preventDefault();
        void this.callbacks.openLink(url).then((opened) => {
          if (!opened) window.open(url, '_blank', 'noopener,noreferrer');
        });
      });
    }
    const problem = h('p', { class: 'form-error', role: 'alert', hidden: true });
    const done = h('button', { type: 'button', class: 'primary' }, 'Done');
    const decline = h('button', { type: 'button' }, 'Decline');
    const group = h(
      'div',
      { class: 'question-form', role: 'group', 'aria-labelledby': messageId },
      questionMessage(question, messageId),
      h('p', {}, url ? 'Open this page, then come back and choose Done: ' : 'This address cannot be opened from here: ', link),
      problem,
      h('div', { class: 'buttons' }, done, decline),
    );
    const card = h('article', { class: 'question', 'data-key': question.key }, group);
    const send = async (work: () => Promise<ToolResult>, action: 'done' | 'decline') => {
      problem.hidden = true;
      setBusy(group, true);
      try {
        const result = await work();
        if (result.isError) {
          showProblem(problem, textOf(result) || 'The server did not accept the answer.');
          return;
        }
        replaceChildren(card, this.sentSummary(question, action));
        this.callbacks.answered();
      } catch (error) {
        showProblem(problem, `The answer could not be sent: ${messageOf(error)}`);
      } finally {
        setBusy(group, false);
      }
    };
    done.addEventListener('click', () => void send(() => this.callbacks.accept(question.key, {}), 'done'));
    decline.addEventListener('click', () => void send(() => this.callbacks.decline(question.key), 'decline'));
    return card;
  }

  /** The card after an answer: the question, what was done, and the values sent. */
  private sentSummary(question: QuestionText, action: 'accept' | 'decline' | 'done', fields: Field[] = [], content: FormContent = {}) {
    const rows = fields
      .filter((field) => content[field.name] !== undefined)
      .flatMap((field) => [h('dt', {}, field.label), h('dd', {}, field.display(content[field.name]))]);
    const note =
      this.callbacks.afterAnswer === 'recorded' ? RECORDED_NOTES[action] : `${SENT_NOTES[action]} Waiting for the task to go on…`;
    return h(
      'div',
      { class: 'sent' },
      questionMessage(question),
      h('p', { class: 'sent-note', role: 'status' }, note),
      rows.length > 0 && h('dl', { class: 'fields' }, ...rows),
    );
  }
}

/** What the card says once the answer was taken, on the page of the task it moves on. */
const SENT_NOTES = { accept: 'Answer sent.', decline: 'Declined.', done: 'Marked as done.' } as const;

/** What the card says once the answer was taken, where it is someone else's task that goes on (an approver's inbox). */
const RECORDED_NOTES = {
  accept: 'Your answer was recorded:',
  decline: 'Your decline was recorded.',
  done: 'Recorded as done.',
} as const;

function showProblem(element: HTMLElement, text: string): void {
  element.textContent = text;
  element.hidden = false;
}

function setBusy(container: HTMLElement, busy: boolean): void {
  container.setAttribute('aria-busy', String(busy));
  for (const button of container.querySelectorAll('button')) button.disabled = busy;
}

/** The URL when it is a web address a person may open; never `javascript:` or the like. */
function safeUrl(raw: string): string | undefined {
  try {
    const url = new URL(raw);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

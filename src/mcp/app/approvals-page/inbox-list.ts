/**
 * The questions awaiting the signed-in person (`#inbox`): one entry per question (the first line of its message, who
 * submitted it, how far its approvals are, when it is due), a page at a time with "More". It reads the pages shown
 * again every 10 seconds while shown, and redraws only when something changed, keeping the focus where it was.
 */
import { h, replaceChildren } from '../view/dom';
import { ApiProblem, type ApprovalsApi } from './api';
import type { Messages } from './messages';
import { Poller } from './poller';
import { progressText, timeOf, titleOf } from './question-details';
import { oneLine } from './shown-text';
import type { InboxAnswer, QuestionView } from './wire';

/** What the inbox needs from the page. */
export interface InboxHost {
  readonly api: ApprovalsApi;
  readonly messages: Messages;
  /** The person chose a question. */
  open(question: QuestionView): void;
  /** The session is missing or over. */
  signInAgain(): void;
}

/** How often the inbox is read again. */
const REFRESH_MS = 10_000;

/** The inbox view. */
export class InboxList {
  /** The pages read, in order: a refresh reads as many again. */
  private pages: InboxAnswer[] = [];
  /** What the list shows, as JSON: a refresh that brings the same redraws nothing. */
  private shownText = '';
  /** Counts shows and hides: what a read started before one of them brings back is dropped. */
  private generation = 0;
  private readonly poller = new Poller(() => this.refresh(), REFRESH_MS);
  private readonly heading = h('h2', { id: 'inbox-heading', tabindex: -1 }, 'Questions awaiting you');
  private readonly summary = h('p', { class: 'muted' });
  private readonly list = h('ul', { class: 'inbox' });
  private readonly more = h('button', { type: 'button', hidden: true }, 'More');

  constructor(
    private readonly host: InboxHost,
    section: HTMLElement,
  ) {
    section.setAttribute('aria-labelledby', 'inbox-heading');
    this.more.addEventListener('click', () => void this.loadMore());
    replaceChildren(section, this.heading, this.summary, this.list, h('div', { class: 'buttons' }, this.more));
  }

  /** Reads the first page, shows it, and keeps it fresh. Resolves false when it could not be read (the problem said). */
  async show(): Promise<boolean> {
    const generation = ++this.generation;
    this.poller.stop();
    this.summary.textContent = 'Loading…';
    const pages = await this.read(1, generation);
    if (!pages) return false;
    this.pages = pages;
    this.render();
    this.poller.start();
    return true;
  }

  /** Stops refreshing: another view is shown. */
  hide(): void {
    this.generation += 1;
    this.poller.stop();
  }

  /** Moves the focus to the inbox's heading (after the person came back to it). */
  focus(): void {
    this.heading.focus();
  }

  private async loadMore(): Promise<void> {
    const cursor = this.pages.at(-1)?.nextCursor;
    if (cursor === undefined) return;
    const generation = this.generation;
    this.more.disabled = true;
    try {
      const page = await this.host.api.inbox(cursor);
      if (generation !== this.generation) return;
      this.pages.push(page);
      this.render();
    } catch (error) {
      if (generation === this.generation) this.fail(error);
    } finally {
      this.more.disabled = false;
    }
  }

  private async refresh(): Promise<void> {
    const generation = this.generation;
    const pages = await this.read(Math.max(1, this.pages.length), generation);
    if (pages) {
      this.pages = pages;
      this.render();
    }
  }

  /** The first `count` pages (fewer when the inbox ended), or undefined when a read failed or came too late. */
  private async read(count: number, generation: number): Promise<InboxAnswer[] | undefined> {
    const pages: InboxAnswer[] = [];
    try {
      let cursor: string | undefined;
      do {
        const page = await this.host.api.inbox(cursor);
        if (generation !== this.generation) return undefined;
        pages.push(page);
        cursor = page.nextCursor;
      } while (cursor !== undefined && pages.length < count);
    } catch (error) {
      if (generation === this.generation) this.fail(error);
      return undefined;
    }
    return pages;
  }

  private fail(error: unknown): void {
    if (error instanceof ApiProblem && error.signIn) this.host.signInAgain();
    else this.host.messages.warn(error instanceof Error ? error.message : String(error));
  }

  private render(): void {
    const items = this.pages.flatMap((page) => page.items);
    const nextCursor = this.pages.at(-1)?.nextCursor;
    const text = JSON.stringify([items, nextCursor]);
    if (text === this.shownText) return;
    this.shownText = text;
    // The entry (or button) with the focus gets it back after the redraw.
    const focused =
      document.activeElement instanceof HTMLElement && this.list.contains(document.activeElement) ? document.activeElement : undefined;
    const focusedKey = focused?.closest<HTMLElement>('[data-question]')?.dataset.question;
    this.summary.textContent =
      items.length === 0
        ? 'Nothing awaits your decision.'
        : `${items.length}${nextCursor ? ' or more' : ''} ${items.length === 1 ? 'question awaits' : 'questions await'} your decision.`;
    replaceChildren(this.list, ...items.map((item) => this.entry(item)));
    this.more.hidden = nextCursor === undefined;
    if (focusedKey !== undefined) {
      const again = [...this.list.querySelectorAll<HTMLElement>('[data-question]')].find((entry) => entry.dataset.question === focusedKey);
      (again ?? this.heading).focus();
    }
  }

  private entry(question: QuestionView): HTMLElement {
    const button = h(
      'button',
      { type: 'button', class: 'inbox-item', 'data-question': `${question.taskId}\n${question.key}` },
      h('span', { class: 'inbox-title' }, titleOf(question)),
      h('span', { class: 'inbox-meta' }, `Submitted by ${oneLine(question.requester)}`),
      h(
        'span',
        { class: 'inbox-meta' },
        progressText(question),
        question.dueAt ? h('span', { class: 'due' }, ' · Due ', timeOf(question.dueAt)) : undefined,
      ),
    );
    button.addEventListener('click', () => this.host.open(question));
    return h('li', {}, button);
  }
}

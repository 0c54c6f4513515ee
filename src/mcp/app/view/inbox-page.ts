/**
 * The inbox mode of the view, opened on an `approvals_inbox` result: the questions awaiting the caller, then one of
 * them with its details and its form, answered with `approvals_answer` through the host. It keeps nothing the server
 * said beyond the page on screen: "Back to the list" asks `approvals_inbox` again.
 */
import { h, messageOf, replaceChildren, uniqueId } from './dom';
import { QuestionsPanel } from './form';
import type { Formatting } from './result';
import { readInbox, textOf, type ApprovalTools, type ToolResult } from './tools';
import type { InboxEntry, InboxPage as InboxListing } from './types';

/** What the inbox needs from the host. */
export interface InboxHost {
  tools: ApprovalTools;
  openLink(url: string): Promise<boolean>;
  formatting(): Formatting;
}

/** The approver's inbox: a list, then one question. */
export class InboxPage {
  private readonly heading = h('h1', {}, 'Approvals awaiting you');
  private readonly summary = h('p', { class: 'task-id' });
  private readonly notice = h('p', { class: 'notice warning', role: 'status', hidden: true });
  private readonly body = h('div', { class: 'inbox-body' });
  private listing: InboxListing = { entries: [] };

  constructor(
    private readonly host: InboxHost,
    root: HTMLElement,
  ) {
    replaceChildren(
      root,
      h('main', { class: 'page' }, h('header', { class: 'page-header' }, this.heading, this.summary), this.notice, this.body),
    );
  }

  /** Shows a page of the inbox, as `approvals_inbox` answered it. */
  showList(listing: InboxListing): void {
    this.listing = listing;
    this.showNotice(undefined);
    const { entries } = listing;
    this.summary.textContent =
      entries.length === 0
        ? 'Nothing awaits your decision.'
        : entries.length === 1
          ? '1 question awaits your decision.'
          : `${entries.length} questions await your decision.`;
    const listId = uniqueId('inbox');
    const items = entries.map((entry) => {
      const open = h(
        'button',
        { type: 'button', class: 'inbox-item' },
        h('span', { class: 'inbox-title' }, firstLine(entry.question.message)),
        h('span', { class: 'inbox-meta' }, this.describe(entry)),
      );
      open.addEventListener('click', () => this.showEntry(entry));
      return h('li', {}, open);
    });
    const refresh = h('button', { type: 'button' }, 'Refresh');
    refresh.addEventListener('click', () => void this.reload());
    const more = listing.nextCursor && h('button', { type: 'button' }, 'More');
    if (more) more.addEventListener('click', () => void this.reload(listing.nextCursor));
    replaceChildren(
      this.body,
      h(
        'section',
        { class: 'panel', 'aria-labelledby': listId },
        h('h2', { id: listId }, 'Questions'),
        entries.length > 0 ? h('ul', { class: 'inbox' }, ...items) : h('p', { class: 'waiting' }, 'Nothing awaits your decision.'),
        h('div', { class: 'buttons' }, refresh, more),
      ),
    );
  }

  /** Asks the server for the inbox again (from `cursor`, or the first page). */
  async reload(cursor?: string): Promise<void> {
    let answer: ToolResult;
    try {
      answer = await this.host.tools.inbox(cursor);
    } catch (error) {
      this.showNotice(`The server could not be reached (${messageOf(error)}).`);
      return;
    }
    const listing = answer.isError ? undefined : readInbox(answer.structuredContent);
    if (!listing) {
      this.showNotice(textOf(answer) || 'The inbox could not be read.');
      return;
    }
    this.showList(listing);
  }

  /** One question: what it asks, of how many, by when, and its form. */
  private showEntry(entry: InboxEntry): void {
    this.showNotice(undefined);
    const back = h('button', { type: 'button' }, 'Back to the list');
    back.addEventListener('click', () => void this.reload());
    const signing = entry.mustSign || entry.passkeyLink ? new OwnSignature(entry, this.host) : undefined;
    const questions = new QuestionsPanel({
      accept: (_key, content) => this.host.tools.accept(entry, content, signing?.value()),
      decline: () => this.host.tools.decline(entry, signing?.value()),
      openLink: (url) => this.host.openLink(url),
      answered: () => this.showNotice(undefined),
      afterAnswer: 'recorded',
    });
    questions.update([entry.question]);
    const headingId = uniqueId('entry');
    replaceChildren(
      this.body,
      h(
        'section',
        { class: 'panel inbox-entry', 'aria-labelledby': headingId },
        h('h2', { id: headingId }, 'Your decision'),
        h('p', { class: 'task-id' }, 'Task ID ', h('code', {}, entry.taskId), entry.tool ? ` (${entry.tool})` : ''),
        h('p', { class: 'inbox-meta' }, this.describe(entry)),
      ),
      ...(signing ? [signing.element] : []),
      questions.element,
      h('div', { class: 'buttons' }, back),
    );
  }

  /** "1 of 2 approvals given · due 27 Nov 2026, 19:15". */
  private describe(entry: InboxEntry): string {
    const counts = entry.required === 1 ? 'One approval needed' : `${entry.accepted} of ${entry.required} approvals given`;
    return entry.dueAt ? `${counts} · due ${this.when(entry.dueAt)}` : counts;
  }

  private when(iso: string): string {
    const { locale, timeZone } = this.host.formatting();
    try {
      return new Date(iso).toLocaleString(locale, { dateStyle: 'medium', timeStyle: 'short', ...(timeZone && { timeZone }) });
    } catch {
      return iso;
    }
  }

  private showNotice(text: string | undefined): void {
    this.notice.textContent = text ?? '';
    this.notice.hidden = text === undefined;
  }
}

function firstLine(text: string): string {
  return text.split('\n')[0];
}

/**
 * The person's own signature of their decision: links to the passkey page (one per decision), and a field where the
 * signature the page (or `temporal-mcp-tasks approvals sign`) printed is pasted; it goes with the answer.
 */
class OwnSignature {
  readonly element: HTMLElement;
  private readonly field: HTMLTextAreaElement;

  constructor(entry: InboxEntry, host: InboxHost) {
    const fieldId = uniqueId('signature');
    this.field = h('textarea', { id: fieldId, rows: '3', spellcheck: 'false' });
    const links = entry.passkeyLink
      ? (['approve', 'reject'] as const).map((decision) => {
          const link = h(
            'button',
            { type: 'button' },
            decision === 'approve' ? 'Sign an approval with my passkey' : 'Sign a rejection with my passkey',
          );
          link.addEventListener('click', () => void host.openLink(`${entry.passkeyLink}&decision=${decision}`));
          return link;
        })
      : [];
    const headingId = uniqueId('own-signature');
    this.element = h(
      'section',
      { class: 'panel own-signature', 'aria-labelledby': headingId },
      h('h2', { id: headingId }, 'Your own signature'),
      h(
        'p',
        {},
        entry.mustSign
          ? 'Your approval counts only with your own signature of it. Sign the decision you make, paste the signature here, then answer.'
          : 'You may sign your decision with your own key. Paste the signature here before you answer.',
      ),
      links.length > 0 ? h('div', { class: 'buttons' }, ...links) : undefined,
      h('label', { for: fieldId }, 'Signature'),
      this.field,
    );
  }

  /** The pasted signature, parsed; undefined when the field is empty or not JSON (the server then says what is missing). */
  value(): unknown {
    const text = this.field.value.trim();
    if (text === '') return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
}

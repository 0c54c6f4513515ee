/**
 * The follow-up tools a task's status offers, one button each, and what the last one run answered.
 */
import { h, messageOf, replaceChildren, uniqueId } from './dom';
import { textOf, type ToolResult } from './tools';
import type { TaskAction } from './types';

/** The follow-up tools the status offers, one button each, with what the last one answered. */
export class ActionsPanel {
  readonly element: HTMLElement;
  private readonly list = h('div', { class: 'actions' });
  private readonly outcome = h('div', { class: 'action-outcome', role: 'status' });
  private signature = '[]';

  constructor(private readonly run: (action: TaskAction) => Promise<ToolResult>) {
    const headingId = uniqueId('actions-heading');
    this.element = h(
      'section',
      { class: 'panel', 'aria-labelledby': headingId, hidden: true },
      h('h2', { id: headingId }, 'Actions'),
      this.list,
      this.outcome,
    );
  }

  /** Shows these actions; the buttons are rebuilt only when the list changed, so that focus stays put. */
  update(actions: TaskAction[]): void {
    const signature = JSON.stringify(actions);
    if (signature !== this.signature) {
      this.signature = signature;
      replaceChildren(this.list, ...actions.map((action) => this.button(action)));
    }
    this.element.hidden = actions.length === 0 && this.outcome.childElementCount === 0;
  }

  clearOutcome(): void {
    this.outcome.replaceChildren();
    this.element.hidden = this.signature === '[]';
  }

  private button(action: TaskAction): HTMLElement {
    const helpId = action.description ? uniqueId('action-help') : undefined;
    const button = h('button', { type: 'button', 'aria-describedby': helpId }, action.title);
    button.addEventListener('click', () => void this.click(action));
    return h('div', { class: 'action' }, button, helpId && h('p', { id: helpId, class: 'help' }, action.description));
  }

  private async click(action: TaskAction): Promise<void> {
    const buttons = [...this.list.querySelectorAll('button')];
    for (const button of buttons) button.disabled = true;
    replaceChildren(this.outcome, h('p', {}, `${action.title}…`));
    try {
      const result = await this.run(action);
      const text = textOf(result);
      replaceChildren(
        this.outcome,
        result.isError
          ? h('p', { class: 'notice danger' }, text || `${action.title} failed.`)
          : h('p', { class: 'notice success' }, text || `${action.title}: done.`),
      );
    } catch (error) {
      replaceChildren(this.outcome, h('p', { class: 'notice danger' }, `${action.title} could not be run: ${messageOf(error)}`));
    } finally {
      for (const button of buttons) button.disabled = false;
    }
  }
}

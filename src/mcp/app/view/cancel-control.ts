/**
 * "Cancel task" on the task page: a confirmation in the page before the cancel is sent, and why it failed if it did.
 */
import { h, messageOf, uniqueId } from './dom';
import { textOf, type ToolResult } from './tools';

/** "Cancel task" with a confirmation in the page (a sandboxed frame may not show `confirm()`). */
export class CancelControl {
  readonly element: HTMLElement;
  private readonly start = h('button', { type: 'button', class: 'danger' }, 'Cancel task');
  private readonly yes = h('button', { type: 'button', class: 'danger' }, 'Yes, cancel');
  private readonly keep = h('button', { type: 'button' }, 'Keep it');
  private readonly confirm: HTMLElement;
  private readonly outcome = h('p', { class: 'notice danger', role: 'alert', hidden: true });

  constructor(private readonly cancel: () => Promise<ToolResult>) {
    const questionId = uniqueId('cancel-question');
    this.confirm = h(
      'div',
      { class: 'confirm', role: 'group', 'aria-labelledby': questionId, hidden: true },
      h('p', { id: questionId }, 'Cancel this task? Work it has already done stays done; the rest will not happen.'),
      h('div', { class: 'buttons' }, this.yes, this.keep),
    );
    this.element = h('div', { class: 'cancel-area', hidden: true }, this.start, this.confirm, this.outcome);
    this.start.addEventListener('click', () => {
      this.start.hidden = true;
      this.confirm.hidden = false;
      this.keep.focus();
    });
    this.keep.addEventListener('click', () => this.close(true));
    this.yes.addEventListener('click', () => void this.confirmed());
  }

  /** Shows the control while the task can still be cancelled. */
  show(visible: boolean): void {
    this.element.hidden = !visible;
    if (!visible) this.close(false);
  }

  private close(refocus: boolean): void {
    this.confirm.hidden = true;
    this.start.hidden = false;
    if (refocus) this.start.focus();
  }

  private async confirmed(): Promise<void> {
    this.yes.disabled = this.keep.disabled = true;
    this.outcome.hidden = true;
    try {
      const result = await this.cancel();
      if (result.isError) this.fail(textOf(result) || 'The task could not be cancelled.');
    } catch (error) {
      this.fail(`The task could not be cancelled: ${messageOf(error)}`);
    } finally {
      this.yes.disabled = this.keep.disabled = false;
      this.close(false);
    }
  }

  private fail(text: string): void {
    this.outcome.textContent = text;
    this.outcome.hidden = false;
  }
}

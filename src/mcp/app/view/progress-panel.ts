/**
 * A working task's progress as its last report gave it: a bar when the report has a total, and the amount done with
 * the report's message in words.
 */
import { h, replaceChildren, uniqueId } from './dom';
import type { Progress } from './types';

/** The progress area of the task page; hidden while there is no progress to show. */
export class ProgressPanel {
  readonly element = h('div', { class: 'progress', hidden: true });

  /** Shows `progress`, or hides the area when it is undefined; redrawn only when the report changed. */
  show(progress: Progress | undefined): void {
    this.element.hidden = progress === undefined;
    if (!progress) return;
    const signature = JSON.stringify(progress);
    if (this.element.dataset.signature === signature) return;
    this.element.dataset.signature = signature;
    const id = uniqueId('progress');
    const { total, message } = progress;
    const amount = total !== undefined ? `${progress.progress} of ${total}` : `${progress.progress} done`;
    replaceChildren(
      this.element,
      h('label', { for: id }, 'Progress'),
      total !== undefined && h('progress', { id, max: total, value: Math.min(progress.progress, total) }),
      h('p', { class: 'progress-text', id: total === undefined ? id : undefined }, message ? `${amount}: ${message}` : amount),
    );
  }
}

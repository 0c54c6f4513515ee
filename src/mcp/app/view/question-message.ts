/**
 * A question's text as the view shows it: the words as the workflow wrote them, and the subject the workflow sent with
 * them (what approvals are recorded for, and what each record says was shown) as any structured value is shown (see
 * result.ts): fields as a definition list, lists of records as tables, amounts with the subject's currency.
 */
import { h, uniqueId } from './dom';
import { renderSubject } from './result';

/** What is shown of a question: its message, and the subject the server sent with it, if any. */
export interface QuestionText {
  message: string;
  subject?: unknown;
}

/** The question's text, and its subject below it; `id` names the element (a form's `aria-labelledby`). */
export function questionMessage(question: QuestionText, id?: string): HTMLElement {
  if (question.subject === undefined || question.subject === null) return h('p', { id, class: 'question-message' }, question.message);
  const headingId = uniqueId('question-subject');
  return h(
    'div',
    { id, class: 'question-message' },
    h('p', {}, question.message),
    h(
      'section',
      { class: 'question-subject', 'aria-labelledby': headingId },
      h('h3', { id: headingId }, 'What this is about'),
      ...renderSubject(question.subject),
    ),
  );
}

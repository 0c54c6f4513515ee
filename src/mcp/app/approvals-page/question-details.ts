/**
 * What the page shows of a question above its form: the message as its workflow wrote it, the subject (an invoice)
 * as the task view shows a subject, who submitted it, how far its approvals are, its dates, and the answers so far.
 */
import { h, uniqueId } from '../view/dom';
import { renderSubject } from '../view/result';
import { afterFirstLine, firstLine, oneLine, visibleText, when } from './shown-text';
import type { GivenAnswer, QuestionView } from './wire';

/** "1 of 2 approvals". */
export function progressText(question: Pick<QuestionView, 'accepted' | 'required'>): string {
  return `${question.accepted} of ${question.required} ${question.required === 1 ? 'approval' : 'approvals'}`;
}

/** A date as the page shows one: in words, its ISO 8601 value in `datetime`. */
export function timeOf(iso: string): HTMLTimeElement {
  return h('time', { datetime: iso }, when(iso));
}

/** The question's heading text: the first line of its message. */
export function titleOf(question: Pick<QuestionView, 'message'>): string {
  return firstLine(question.message) || 'Question';
}

/** The message below its heading ({@link titleOf}), pre-wrapped, when it says more than that; the subject below it. */
export function messageAndSubject(question: QuestionView): Node[] {
  const more = afterFirstLine(question.message);
  const nodes: Node[] = more === '' ? [] : [h('p', { class: 'question-message' }, more)];
  if (question.subject !== undefined && question.subject !== null) {
    const headingId = uniqueId('subject');
    nodes.push(
      h(
        'section',
        { class: 'question-subject', 'aria-labelledby': headingId },
        h('h3', { id: headingId }, 'What this is about'),
        ...renderSubject(question.subject),
      ),
    );
  }
  return nodes;
}

/** Submitted by, progress, and the question's dates, as a definition list. */
export function facts(question: QuestionView): HTMLElement {
  const rows: [string, Node | string][] = [
    ['Submitted by', oneLine(question.requester)],
    ['Progress', progressText(question)],
    ['Asked', timeOf(question.askedAt)],
  ];
  if (question.remindsAt) rows.push(['Reminder', timeOf(question.remindsAt)]);
  if (question.escalatesAt) rows.push(['Escalates', timeOf(question.escalatesAt)]);
  if (question.dueAt) rows.push(['Due', timeOf(question.dueAt)]);
  return h('dl', { class: 'fields facts' }, ...rows.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]));
}

/** The answers so far, oldest first; undefined when there are none. */
export function answersSoFar(answers: GivenAnswer[] | undefined): HTMLElement | undefined {
  if (!answers || answers.length === 0) return undefined;
  const headingId = uniqueId('answers');
  return h(
    'section',
    { class: 'answers', 'aria-labelledby': headingId },
    h('h3', { id: headingId }, 'Answers so far'),
    h(
      'ul',
      { class: 'answer-list' },
      ...answers.map((answer) =>
        h(
          'li',
          {},
          h('span', { class: 'answer-line' }, h('strong', {}, oneLine(answer.person)), ` ${whatTheyDid(answer)} · `, timeOf(answer.at)),
          answer.comment ? h('span', { class: 'answer-comment' }, `“${visibleText(answer.comment)}”`) : undefined,
        ),
      ),
    ),
  );
}

function whatTheyDid(answer: GivenAnswer): string {
  if (answer.action === 'delegate') return answer.delegatedTo ? `handed it to ${oneLine(answer.delegatedTo)}` : 'handed it on';
  if (answer.action === 'decline') return 'declined to answer';
  if (answer.decision === 'approve') return 'approved';
  if (answer.decision === 'reject') return 'rejected';
  return answer.decision ? `answered ${oneLine(answer.decision)}` : 'answered';
}

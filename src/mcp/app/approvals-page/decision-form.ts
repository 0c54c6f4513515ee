/**
 * The decision controls of a question: "Approve" and "Reject" when its form has a `decision` field offering both
 * (its other fields as inputs), else its fields and "Submit"; a comment recorded with any answer (the form's own
 * `comment` field when it has one, else a field of the page's); "Decline" and "Delegate" as the other answers. The form checks what was entered and hands over the answer; sending it (and
 * signing it) is the question panel's job.
 */
import { h, uniqueId } from '../view/dom';
import { buildField, choicesOf, type Field } from './fields';
import type { AnswerRequest, FieldSchema, QuestionView } from './wire';

/** An answer as the form makes it: what the question panel completes with the question's names and version. */
export type FormAnswer = Pick<AnswerRequest, 'action' | 'content' | 'comment' | 'delegateTo'>;

/** What the person entered, to put back into a new form for the same question. */
export interface FormSnapshot {
  fields: Record<string, unknown>;
  comment: string;
  delegateTo: string;
}

/** The name of the field that carries an approval's decision. */
const DECISION = 'decision';

/** The name of a form's field for a free comment, which the page's comment then is. */
const COMMENT = 'comment';

/** Whether a form's `decision` field offers approve and reject (the form then gets those two buttons). */
export function hasApprovalDecision(schema: QuestionView['requestedSchema']): boolean {
  const values = choicesOf(schema.properties[DECISION])?.map((choice) => choice.value) ?? [];
  return values.includes('approve') && values.includes('reject');
}

/** Where the comment recorded with an answer is typed: the form's own `comment` field, or the page's text area. */
type CommentSource = { field: Field } | { own: HTMLTextAreaElement };

/** A question's decision controls. */
export class DecisionForm {
  readonly element: HTMLFormElement;
  /** The schema the form was built from, as JSON: a question whose schema changed gets a new form. */
  readonly schemaText: string;
  /** Whether its answers are signed with the person's passkey. */
  readonly signs: boolean;
  private readonly fields: Field[];
  /** The comment recorded with any answer: the form's own `comment` field, or the page's. */
  private readonly comment: CommentSource;
  private readonly delegateTo: HTMLInputElement;
  private readonly delegateError: HTMLElement;
  private readonly delegateHelpId = uniqueId('delegate-help');
  private readonly problem: HTMLElement;
  private readonly state: HTMLElement;

  constructor(
    question: Pick<QuestionView, 'requestedSchema' | 'mustSign'>,
    private readonly onAnswer: (answer: FormAnswer) => void,
  ) {
    const schema = question.requestedSchema;
    this.schemaText = JSON.stringify(schema);
    this.signs = question.mustSign === true;
    const approval = hasApprovalDecision(schema);
    const required = new Set(schema.required ?? []);
    this.fields = Object.entries(schema.properties)
      .filter(([name]) => !(approval && name === DECISION))
      .map(([name, field]) => buildField(name, field, required.has(name)));

    const formComment = this.fields.find((field) => field.name === COMMENT && isFreeText(schema.properties[COMMENT]));
    const comment = commentOf(formComment);
    this.comment = comment.source;
    const delegateId = uniqueId('delegate');
    this.delegateTo = h('input', {
      id: delegateId,
      name: 'delegateTo',
      type: 'text',
      autocomplete: 'off',
      'aria-describedby': this.delegateHelpId,
    });
    this.delegateError = h('p', { id: uniqueId('delegate-error'), class: 'field-error', hidden: true });
    this.delegateTo.addEventListener('input', () => this.markDelegate(undefined));
    this.problem = h('p', { class: 'form-error', role: 'alert' });
    this.state = h('p', { class: 'form-state' });

    const headingId = uniqueId('decision');
    this.element = h(
      'form',
      { class: 'decision-form', novalidate: true, 'aria-labelledby': headingId },
      h('h3', { id: headingId }, 'Your decision'),
      this.signs
        ? h(
            'p',
            { class: 'notice info signing' },
            'Your answer will be signed with your passkey: when you choose an answer below, your browser asks for your passkey.',
          )
        : undefined,
      this.fields.some((field) => required.has(field.name))
        ? h('p', { class: 'help', 'aria-hidden': 'true' }, 'Fields marked * are required.')
        : undefined,
      ...this.fields.map((field) => field.element),
      comment.element,
      this.state,
      this.problem,
      h('div', { class: 'buttons main-actions' }, ...this.mainButtons(approval)),
      this.otherAnswers(delegateId),
    );
    // Enter in a field submits nothing: an answer is given by its button only.
    this.element.addEventListener('submit', (event) => event.preventDefault());
  }

  /** While an answer is on its way: every control disabled, the form marked busy. */
  setBusy(busy: boolean): void {
    this.element.setAttribute('aria-busy', String(busy));
    this.enable(!busy);
  }

  /** The question can no longer be answered: every control disabled, `reason` shown in the form. */
  close(reason: string): void {
    this.enable(false);
    this.state.textContent = reason;
  }

  /** Shows why an answer was not taken, next to the buttons; nothing entered is lost. */
  showProblem(text: string | undefined): void {
    this.problem.textContent = text ?? '';
  }

  snapshot(): FormSnapshot {
    return {
      fields: Object.fromEntries(this.fields.map((field) => [field.name, field.snapshot()])),
      comment: this.commentText(),
      delegateTo: this.delegateTo.value,
    };
  }

  restore(saved: FormSnapshot): void {
    for (const field of this.fields) if (field.name in saved.fields) field.restore(saved.fields[field.name]);
    if ('own' in this.comment) this.comment.own.value = saved.comment;
    this.delegateTo.value = saved.delegateTo;
  }

  /** "Approve" and "Reject" for an approval's decision, else "Submit". */
  private mainButtons(approval: boolean): HTMLButtonElement[] {
    return approval
      ? [
          button('Approve', 'primary approve', () => this.accept('approve')),
          button('Reject', 'primary reject', () => this.accept('reject')),
        ]
      : [button('Submit', 'primary', () => this.accept(undefined))];
  }

  /** "Decline", and "Delegate" with the name of whom to hand the question to: the answers besides the form's own. */
  private otherAnswers(delegateId: string): HTMLElement {
    const othersId = uniqueId('other-answers');
    return h(
      'fieldset',
      { class: 'other-answers', 'aria-labelledby': othersId },
      h('legend', { id: othersId }, 'Other answers'),
      h(
        'div',
        { class: 'other-answer' },
        h('p', { class: 'help' }, 'Decline if you will not answer this question.'),
        button('Decline', undefined, () => this.answer({ action: 'decline' })),
      ),
      h(
        'div',
        { class: 'other-answer' },
        h('label', { for: delegateId }, 'Delegate to (name)'),
        h('p', { class: 'help', id: this.delegateHelpId }, 'Hand the question to someone who answers in your place.'),
        this.delegateTo,
        this.delegateError,
        button('Delegate', undefined, () => this.delegate()),
      ),
    );
  }

  private enable(enabled: boolean): void {
    for (const control of this.element.querySelectorAll<HTMLButtonElement | HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>(
      'button, input, textarea, select',
    )) {
      control.disabled = !enabled;
    }
  }

  /** Accepts with the fields' values (and `decision`, for Approve and Reject), once every field checks out. */
  private accept(decision: 'approve' | 'reject' | undefined): void {
    const content: NonNullable<AnswerRequest['content']> = {};
    let firstInvalid: Field | undefined;
    for (const field of this.fields) {
      const reading = field.read();
      field.mark(reading.problem);
      if (reading.problem !== undefined) firstInvalid ??= field;
      else if (reading.value !== undefined) content[field.name] = reading.value;
    }
    if (firstInvalid) {
      this.showProblem('Some fields need attention; nothing was sent.');
      firstInvalid.focus();
      return;
    }
    if (decision !== undefined) content[DECISION] = decision;
    this.answer({ action: 'accept', content });
  }

  private delegate(): void {
    const to = this.delegateTo.value.trim();
    if (to === '') {
      this.markDelegate('Give the name of the person to hand the question to.');
      this.delegateTo.focus();
      return;
    }
    this.answer({ action: 'delegate', delegateTo: to });
  }

  private answer(answer: FormAnswer): void {
    this.showProblem(undefined);
    // The form's own comment field goes with an acceptance's content too (it is one of its fields).
    const comment = this.commentText().trim();
    this.onAnswer(comment === '' ? answer : { ...answer, comment });
  }

  private commentText(): string {
    if ('own' in this.comment) return this.comment.own.value;
    const typed = this.comment.field.snapshot();
    return typeof typed === 'string' ? typed : '';
  }

  private markDelegate(problem: string | undefined): void {
    this.delegateError.textContent = problem ?? '';
    this.delegateError.hidden = problem === undefined;
    if (problem === undefined) this.delegateTo.removeAttribute('aria-invalid');
    else this.delegateTo.setAttribute('aria-invalid', 'true');
    this.delegateTo.setAttribute(
      'aria-describedby',
      problem === undefined ? this.delegateHelpId : `${this.delegateHelpId} ${this.delegateError.id}`,
    );
  }
}

/** A text field without choices: a free comment. */
function isFreeText(schema: FieldSchema | undefined): boolean {
  return schema !== undefined && (schema.type === undefined || schema.type === 'string') && !schema.enum && !schema.oneOf && !schema.format;
}

/** The comment of a form: its own free-text `comment` field when it has one, else a field of the page's (its element). */
function commentOf(formComment: Field | undefined): { source: CommentSource; element?: HTMLElement } {
  const commentId = uniqueId('comment');
  const commentHelpId = uniqueId('comment-help');
  if (formComment) return { source: { field: formComment } };
  const own = h('textarea', { id: commentId, name: COMMENT, rows: 3, 'aria-describedby': commentHelpId });
  return {
    source: { own },
    element: h(
      'div',
      { class: 'field' },
      h('label', { for: commentId }, 'Comment'),
      h('p', { id: commentHelpId, class: 'help' }, 'Optional. Recorded with your answer.'),
      own,
    ),
  };
}

/** A button that gives one answer. */
function button(text: string, className: string | undefined, answer: () => void): HTMLButtonElement {
  const element = h('button', { type: 'button', class: className }, text);
  element.addEventListener('click', answer);
  return element;
}

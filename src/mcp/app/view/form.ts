/**
 * The questions a task waits on: a form per form-mode question, built from its `requestedSchema` and checked here
 * before anything is sent, and a link with Done/Decline for a URL-mode question.
 */
import { h, humanize, messageOf, replaceChildren, uniqueId } from './dom';
import {
  checkboxInput,
  choiceGroup,
  fieldFrame,
  labelledElement,
  marker,
  numberHint,
  numberInput,
  optionRow,
  readNumber,
  readSelect,
  selectInput,
  textInput,
  type FieldFrame,
  type FieldReading,
} from './field-controls';
import { questionMessage, type QuestionText } from './question-message';
import { textOf, type ToolResult } from './tools';
import type { FieldSchema, FormContent, FormQuestion, PendingQuestion, UrlQuestion } from './types';

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

/** A value a field contributes to the answer. */
type FieldValue = FormContent[string];

/** A field read from the form: its value (undefined when left empty) or why it cannot be sent. */
type Reading = FieldReading<FieldValue>;

/** One rendered field of a form. */
interface Field {
  name: string;
  label: string;
  element: HTMLElement;
  read(): Reading;
  /** Shows or clears the reason next to the field. */
  mark(problem: string | undefined): void;
  focus(): void;
  /** The value as a person reads it, for the summary of what was sent. */
  display(value: FieldValue): string;
}

/** An option of a single- or multi-select field. */
interface Choice {
  value: string | number | boolean;
  label: string;
}

/** Radio buttons up to this many options, a select above. */
const MAX_RADIOS = 5;

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

/** The options of an `enum` (with `enumNames`) or a titled `oneOf`/`anyOf` of `const`s. */
function choicesOf(schema: FieldSchema | undefined): Choice[] | undefined {
  if (!schema) return undefined;
  if (Array.isArray(schema.enum)) {
    return schema.enum.filter(isChoiceValue).map((value, index) => ({ value, label: schema.enumNames?.[index] ?? String(value) }));
  }
  const titled = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(titled) && titled.length > 0 && titled.every((option) => isChoiceValue(option?.const))) {
    return titled.map((option) => ({ value: option.const as Choice['value'], label: option.title ?? String(option.const) }));
  }
  return undefined;
}

function isChoiceValue(value: unknown): value is Choice['value'] {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** The field for one schema property. */
function buildField(name: string, schema: FieldSchema, required: boolean): Field {
  const label = schema.title ?? humanize(name);
  if (schema.type === 'array') {
    const choices = choicesOf(schema.items);
    if (choices) return choiceGroupField(name, label, schema, required, choices, true);
  }
  const choices = choicesOf(schema);
  if (choices) {
    return choices.length <= MAX_RADIOS
      ? choiceGroupField(name, label, schema, required, choices, false)
      : selectField(name, label, schema, required, choices);
  }
  if (schema.type === 'boolean') return booleanField(name, label, schema);
  if (schema.type === 'number' || schema.type === 'integer') return numberField(name, label, schema, required);
  return textField(name, label, schema, required);
}

const FORMAT_INPUTS: Record<string, string> = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' };

function textField(name: string, label: string, schema: FieldSchema, required: boolean): Field {
  const { minLength, maxLength, format } = schema;
  const hints = [
    minLength !== undefined && maxLength !== undefined
      ? `${minLength}–${maxLength} characters.`
      : minLength !== undefined
        ? `At least ${minLength} characters.`
        : maxLength !== undefined
          ? `At most ${maxLength} characters.`
          : '',
    format === 'date-time' ? 'Your local time.' : '',
  ];
  const parts = fieldFrame(schema, hints);
  const control = textInput(name, (format && FORMAT_INPUTS[format]) || 'text', maxLength, required);
  if (typeof schema.default === 'string') control.value = format === 'date-time' ? toLocalDateTime(schema.default) : schema.default;
  return labelledField(name, label, required, parts, control, () => {
    const raw = control.value;
    if (control instanceof HTMLInputElement && control.validity.badInput) return { problem: badInputProblem(format) };
    if (raw.trim() === '') return required ? { problem: 'This field is required.' } : {};
    const length = [...raw].length;
    if (minLength !== undefined && length < minLength) return { problem: `Use at least ${minLength} characters (now ${length}).` };
    if (maxLength !== undefined && length > maxLength) return { problem: `Use at most ${maxLength} characters (now ${length}).` };
    switch (format) {
      case 'email':
        return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(raw) ? { value: raw } : { problem: 'Enter an email address, like name@example.com.' };
      case 'uri':
        return isUri(raw) ? { value: raw } : { problem: 'Enter a full address, like https://example.com.' };
      case 'date':
        return isCalendarDate(raw) ? { value: raw } : { problem: 'Enter a date (YYYY-MM-DD).' };
      case 'date-time': {
        const time = new Date(raw);
        return Number.isNaN(time.getTime()) ? { problem: 'Enter a date and time.' } : { value: time.toISOString() };
      }
      default:
        return { value: raw };
    }
  });
}

function numberField(name: string, label: string, schema: FieldSchema, required: boolean): Field {
  const parts = fieldFrame(schema, [numberHint(schema)]);
  const control = numberInput(name, schema, required);
  return labelledField(name, label, required, parts, control, () => readNumber(control, schema, required));
}

/** A field of one control under its own label (text, number): marked as it is edited, shown as typed. */
function labelledField(
  name: string,
  label: string,
  required: boolean,
  parts: FieldFrame,
  control: HTMLInputElement | HTMLTextAreaElement,
  read: () => Reading,
): Field {
  const mark = marker(control, parts);
  mark(undefined);
  control.addEventListener('input', () => mark(undefined));
  const element = labelledElement(label, required, parts, control, { 'data-required': String(required) });
  return { name, label, element, focus: () => control.focus(), mark, display: (value) => String(value), read };
}

function booleanField(name: string, label: string, schema: FieldSchema): Field {
  const parts = fieldFrame(schema, []);
  const control = checkboxInput(name, schema);
  const mark = marker(control, parts);
  mark(undefined);
  const element = h('div', { class: 'field checkbox-field', 'data-required': 'false' }, optionRow(control, label), parts.help, parts.error);
  return {
    name,
    label,
    element,
    focus: () => control.focus(),
    mark,
    display: (value) => (value ? 'Yes' : 'No'),
    read: () => ({ value: control.checked }),
  };
}

/** Radio buttons (one choice) or checkboxes (several) in a fieldset whose legend is the field's title. */
function choiceGroupField(
  name: string,
  label: string,
  schema: FieldSchema,
  required: boolean,
  choices: Choice[],
  multiple: boolean,
): Field {
  const { minItems, maxItems } = schema;
  const hints = multiple
    ? [
        minItems !== undefined && maxItems !== undefined && minItems === maxItems
          ? `Choose ${minItems}.`
          : minItems !== undefined && maxItems !== undefined
            ? `Choose ${minItems} to ${maxItems}.`
            : minItems !== undefined
              ? `Choose at least ${minItems}.`
              : maxItems !== undefined
                ? `Choose at most ${maxItems}.`
                : 'Choose any.',
      ]
    : [];
  const parts = fieldFrame(schema, hints);
  const defaults = multiple ? (Array.isArray(schema.default) ? schema.default : []) : [schema.default];
  const groupName = uniqueId(name);
  const inputs = choices.map((choice, index) => {
    const id = uniqueId('option');
    const input = h('input', { id, name: multiple ? id : groupName, type: multiple ? 'checkbox' : 'radio', value: String(index) });
    input.checked = defaults.includes(choice.value);
    return { choice, input, row: optionRow(input, choice.label) };
  });
  const fieldset = choiceGroup(
    label,
    required,
    parts,
    inputs.map((entry) => entry.row),
    {
      'data-required': String(required),
      role: multiple ? undefined : 'radiogroup',
      'aria-required': !multiple && required ? 'true' : undefined,
    },
  );
  const mark = marker(fieldset, parts);
  mark(undefined);
  for (const { input } of inputs) input.addEventListener('change', () => mark(undefined));
  const chosen = () => inputs.filter((entry) => entry.input.checked).map((entry) => entry.choice);
  return {
    name,
    label,
    element: fieldset,
    focus: () => (inputs.find((entry) => entry.input.checked) ?? inputs[0])?.input.focus(),
    mark,
    display: (value) => labelsOf(choices, value),
    read(): Reading {
      const picked = chosen();
      if (!multiple) {
        if (picked.length === 0) return required ? { problem: 'Choose one.' } : {};
        return { value: picked[0].value };
      }
      if (picked.length === 0 && required && !minItems) return { problem: 'Choose at least one.' };
      if (picked.length === 0 && !required) return {};
      if (minItems !== undefined && picked.length < minItems) return { problem: `Choose at least ${minItems} (now ${picked.length}).` };
      if (maxItems !== undefined && picked.length > maxItems) return { problem: `Choose at most ${maxItems} (now ${picked.length}).` };
      return { value: picked.map((choice) => String(choice.value)) };
    },
  };
}

/** A select for a single choice among many options. */
function selectField(name: string, label: string, schema: FieldSchema, required: boolean, choices: Choice[]): Field {
  const parts = fieldFrame(schema, []);
  const control = selectInput(name, choices, required, schema.default);
  const mark = marker(control, parts);
  mark(undefined);
  control.addEventListener('change', () => mark(undefined));
  const element = labelledElement(label, required, parts, control, { 'data-required': String(required) });
  return {
    name,
    label,
    element,
    focus: () => control.focus(),
    mark,
    display: (value) => labelsOf(choices, value),
    read: () => readSelect(control, choices, required),
  };
}

function labelsOf(choices: Choice[], value: FieldValue): string {
  const values = Array.isArray(value) ? value : [value];
  return values.map((one) => choices.find((choice) => String(choice.value) === String(one))?.label ?? String(one)).join(', ');
}

function badInputProblem(format: string | undefined): string {
  if (format === 'date') return 'Enter a date (YYYY-MM-DD).';
  if (format === 'date-time') return 'Enter a date and time.';
  return 'Enter a valid value.';
}

function isUri(value: string): boolean {
  try {
    return Boolean(new URL(value).protocol);
  } catch {
    return false;
  }
}

function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
}

/** An ISO date-time as the value of a `datetime-local` input, in the browser's time zone. */
function toLocalDateTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

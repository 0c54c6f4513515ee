/**
 * The parts of a form field that the task view's question forms (form.ts) and the approvals page's decision form
 * (approvals-page/fields.ts) build alike: the help and problem slots tied to a control by ids, the label with its
 * required mark or a group's fieldset, a number input and a select with how each is read, a text's control and a
 * checkbox. Each form keeps its own fields (which controls a schema gets, what a text must be, what a field
 * remembers); these only build and read. The approvals page bundles this module: it imports nothing but dom.ts.
 */
import { h, uniqueId, type Attributes } from './dom';

/** A field's value (undefined when left empty), or why it cannot be sent. */
export type FieldReading<V> = { value?: V; problem?: undefined } | { value?: undefined; problem: string };

/** The help under a field's label and the slot for its problem, with their ids. */
export interface FieldFrame {
  readonly helpId: string | undefined;
  readonly errorId: string;
  readonly help: HTMLElement | undefined;
  readonly error: HTMLElement;
  /** The control's `aria-describedby`: the help, and the problem while there is one. */
  describedBy(invalid: boolean): string | undefined;
}

/** The parts of a field's schema that its number input reads. */
export interface NumberSchema {
  type?: string;
  minimum?: number;
  maximum?: number;
  default?: unknown;
}

/** The help (the schema's description, then each hint given) and the problem slot of a field. */
export function fieldFrame(schema: { description?: string }, hints: ReadonlyArray<string | undefined>): FieldFrame {
  const help = [schema.description, ...hints].filter((part): part is string => Boolean(part)).join(' ');
  const helpId = help ? uniqueId('help') : undefined;
  const errorId = uniqueId('error');
  return {
    helpId,
    errorId,
    help: helpId ? h('p', { id: helpId, class: 'help' }, help) : undefined,
    error: h('p', { id: errorId, class: 'field-error', hidden: true }),
    describedBy: (invalid) => [helpId, invalid ? errorId : undefined].filter(Boolean).join(' ') || undefined,
  };
}

/** Shows or clears a field's problem (undefined clears it) and says so on `target`: the control, or a group's fieldset. */
export function marker(target: HTMLElement, frame: FieldFrame): (problem: string | undefined) => void {
  return (problem) => {
    frame.error.textContent = problem ?? '';
    frame.error.hidden = problem === undefined;
    if (problem === undefined) target.removeAttribute('aria-invalid');
    else target.setAttribute('aria-invalid', 'true');
    const describedBy = frame.describedBy(problem !== undefined);
    if (describedBy) target.setAttribute('aria-describedby', describedBy);
    else target.removeAttribute('aria-describedby');
  };
}

/** The " *" after a required field's label, hidden from screen readers (the control says `aria-required`). */
export function requiredMark(required: boolean): HTMLElement | undefined {
  return required ? h('span', { class: 'required', 'aria-hidden': 'true' }, ' *') : undefined;
}

/** A field of one control: its label (with the required mark), help, the control and its problem slot. */
export function labelledElement(
  label: string,
  required: boolean,
  frame: FieldFrame,
  control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement,
  attributes: Attributes = {},
): HTMLElement {
  return h(
    'div',
    { class: 'field', ...attributes },
    h('label', { for: control.id }, label, requiredMark(required)),
    frame.help,
    control,
    frame.error,
  );
}

/**
 * A field of several checkboxes or radio buttons: a fieldset whose legend is the field's label (with the required
 * mark), then the help, the `rows` (see {@link optionRow}) and the problem slot.
 */
export function choiceGroup(
  label: string,
  required: boolean,
  frame: FieldFrame,
  rows: readonly HTMLElement[],
  attributes: Attributes = {},
): HTMLFieldSetElement {
  const legendId = uniqueId('legend');
  return h(
    'fieldset',
    { class: 'field', ...attributes, 'aria-labelledby': legendId },
    h('legend', { id: legendId }, label, requiredMark(required)),
    frame.help,
    ...rows,
    frame.error,
  );
}

/** A checkbox or radio button with its label beside it. */
export function optionRow(input: HTMLInputElement, label: string): HTMLElement {
  return h('div', { class: 'option' }, input, h('label', { for: input.id }, label));
}

/** A yes/no checkbox, ticked when the schema's default is `true`. */
export function checkboxInput(name: string, schema: { default?: unknown }): HTMLInputElement {
  const control = h('input', { id: uniqueId('field'), name, type: 'checkbox' });
  control.checked = schema.default === true;
  return control;
}

/**
 * A text's control: a textarea for a plain text that may be long (no `maxLength`, or more than 120 characters), else
 * an input of `type`.
 */
export function textInput(
  name: string,
  type: string,
  maxLength: number | undefined,
  required: boolean,
): HTMLInputElement | HTMLTextAreaElement {
  const id = uniqueId('field');
  return type === 'text' && (maxLength === undefined || maxLength > 120)
    ? h('textarea', { id, name, rows: 3, required, 'aria-required': required ? 'true' : undefined })
    : h('input', { id, name, type, required, 'aria-required': required ? 'true' : undefined, autocomplete: 'off' });
}

/** What a number field's help says: "A whole number from 1 to 9.", "A number, at least 0.", "A number." */
export function numberHint({ type, minimum, maximum }: NumberSchema): string {
  const range =
    minimum !== undefined && maximum !== undefined
      ? ` from ${minimum} to ${maximum}`
      : minimum !== undefined
        ? `, at least ${minimum}`
        : maximum !== undefined
          ? `, at most ${maximum}`
          : '';
  return `${type === 'integer' ? 'A whole number' : 'A number'}${range}.`;
}

/** A number input (whole numbers for an `integer`), bounded as the schema says and holding its default. */
export function numberInput(name: string, schema: NumberSchema, required: boolean): HTMLInputElement {
  const integer = schema.type === 'integer';
  const control = h('input', {
    id: uniqueId('field'),
    name,
    type: 'number',
    inputmode: integer ? 'numeric' : 'decimal',
    step: integer ? 1 : 'any',
    min: schema.minimum,
    max: schema.maximum,
    required,
    'aria-required': required ? 'true' : undefined,
  });
  if (typeof schema.default === 'number') control.value = String(schema.default);
  return control;
}

/** A number input's value, or why it is not one the schema allows. */
export function readNumber(control: HTMLInputElement, schema: NumberSchema, required: boolean): FieldReading<number> {
  const { minimum, maximum } = schema;
  if (control.validity.badInput) return { problem: 'Enter a number.' };
  const raw = control.value.trim();
  if (raw === '') return required ? { problem: 'This field is required.' } : {};
  const value = Number(raw);
  if (!Number.isFinite(value)) return { problem: 'Enter a number.' };
  if (schema.type === 'integer' && !Number.isInteger(value)) return { problem: 'Enter a whole number.' };
  if (minimum !== undefined && value < minimum) return { problem: `Enter ${minimum} or more.` };
  if (maximum !== undefined && value > maximum) return { problem: `Enter ${maximum} or less.` };
  return { value };
}

/**
 * A select of `choices` (option values are their indexes), led by an empty option ("Choose…" when an answer is
 * required, "(none)" when not); the choice equal to `preset` is selected.
 */
export function selectInput(
  name: string,
  choices: ReadonlyArray<{ value: unknown; label: string }>,
  required: boolean,
  preset: unknown,
): HTMLSelectElement {
  const control = h(
    'select',
    { id: uniqueId('field'), name, required, 'aria-required': required ? 'true' : undefined },
    h('option', { value: '' }, required ? 'Choose…' : '(none)'),
    ...choices.map((choice, index) => h('option', { value: String(index) }, choice.label)),
  );
  const index = choices.findIndex((choice) => choice.value === preset);
  control.value = index >= 0 ? String(index) : '';
  return control;
}

/** The value of the choice a select of {@link selectInput} has selected. */
export function readSelect<V>(control: HTMLSelectElement, choices: ReadonlyArray<{ value: V }>, required: boolean): FieldReading<V> {
  if (control.value === '') return required ? { problem: 'Choose one.' } : {};
  return { value: choices[Number(control.value)].value };
}

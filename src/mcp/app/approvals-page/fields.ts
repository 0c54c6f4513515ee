/**
 * The fields of a question's form, one per property of its `requestedSchema` (a flat JSON Schema, as MCP elicitation
 * allows): a text as an input (a textarea for long ones), a number as a number input, a yes/no as a checkbox, a choice
 * as a select and several choices as checkboxes. Each field checks its own value before anything is sent.
 */
import { h, humanize, uniqueId } from '../view/dom';
import type { AnswerRequest, FieldSchema } from './wire';

/** A value a field puts in the answer. */
export type FieldValue = NonNullable<AnswerRequest['content']>[string];

/** A field's value (undefined when left empty), or why it cannot be sent. */
export type Reading = { value?: FieldValue; problem?: undefined } | { value?: undefined; problem: string };

/** One field of the form. */
export interface Field {
  readonly name: string;
  readonly element: HTMLElement;
  read(): Reading;
  /** Shows (or, undefined, clears) the reason next to the field. */
  mark(problem: string | undefined): void;
  focus(): void;
  /** What the person entered, to put back into a new copy of the field. */
  snapshot(): unknown;
  restore(saved: unknown): void;
}

/** An option of a choice. */
interface Choice {
  value: string | number;
  label: string;
}

/** The options of an `enum` (with `enumNames`) or of a `oneOf` of `const`s; undefined for a field without. */
export function choicesOf(schema: Pick<FieldSchema, 'enum' | 'enumNames' | 'oneOf'> | undefined): Choice[] | undefined {
  if (Array.isArray(schema?.enum)) return schema.enum.map((value, index) => ({ value, label: schema.enumNames?.[index] ?? String(value) }));
  if (Array.isArray(schema?.oneOf))
    return schema.oneOf.map((option) => ({ value: option.const, label: option.title ?? String(option.const) }));
  return undefined;
}

/** The field of property `name`. */
export function buildField(name: string, schema: FieldSchema, required: boolean): Field {
  const label = schema.title ?? humanize(name);
  if (schema.type === 'array') {
    const itemChoices = schema.items?.enum
      ? choicesOf({ enum: schema.items.enum })
      : schema.items?.anyOf && choicesOf({ oneOf: schema.items.anyOf });
    if (itemChoices) return checkboxesField(name, label, schema, required, itemChoices);
  }
  const choices = choicesOf(schema);
  if (choices) return selectField(name, label, schema, required, choices);
  if (schema.type === 'boolean') return booleanField(name, label, schema);
  if (schema.type === 'number' || schema.type === 'integer') return numberField(name, label, schema, required);
  return textField(name, label, schema, required);
}

/** The help under a field's label and the slot for its problem, tied to the control by ids. */
class Frame {
  readonly helpId: string | undefined;
  readonly help: HTMLElement | undefined;
  readonly error: HTMLElement;
  private readonly errorId = uniqueId('field-error');

  constructor(
    schema: FieldSchema,
    hint: string | undefined,
    private readonly target: () => HTMLElement,
  ) {
    const text = [schema.description, hint].filter(Boolean).join(' ');
    this.helpId = text ? uniqueId('field-help') : undefined;
    this.help = this.helpId ? h('p', { id: this.helpId, class: 'help' }, text) : undefined;
    this.error = h('p', { id: this.errorId, class: 'field-error', hidden: true });
  }

  /** Shows or clears `problem`, and says so on the control. */
  mark(problem: string | undefined): void {
    const target = this.target();
    this.error.textContent = problem ?? '';
    this.error.hidden = problem === undefined;
    if (problem === undefined) target.removeAttribute('aria-invalid');
    else target.setAttribute('aria-invalid', 'true');
    const describedBy = [this.helpId, problem === undefined ? undefined : this.errorId].filter(Boolean).join(' ');
    if (describedBy) target.setAttribute('aria-describedby', describedBy);
    else target.removeAttribute('aria-describedby');
  }
}

function requiredMark(required: boolean): HTMLElement | undefined {
  return required ? h('span', { class: 'required', 'aria-hidden': 'true' }, ' *') : undefined;
}

/** A control under its own label. */
function labelled(
  name: string,
  label: string,
  required: boolean,
  frame: Frame,
  control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement,
  read: () => Reading,
): Field {
  frame.mark(undefined);
  control.addEventListener('input', () => frame.mark(undefined));
  const element = h(
    'div',
    { class: 'field' },
    h('label', { for: control.id }, label, requiredMark(required)),
    frame.help,
    control,
    frame.error,
  );
  return {
    name,
    element,
    read,
    mark: (problem) => frame.mark(problem),
    focus: () => control.focus(),
    snapshot: () => control.value,
    restore: (saved) => {
      if (typeof saved === 'string') control.value = saved;
    },
  };
}

function lengthHint({ minLength, maxLength }: FieldSchema): string | undefined {
  if (minLength !== undefined && maxLength !== undefined) return `${minLength} to ${maxLength} characters.`;
  if (minLength !== undefined) return `At least ${minLength} characters.`;
  if (maxLength !== undefined) return `At most ${maxLength} characters.`;
  return undefined;
}

const INPUT_TYPES: Record<string, string> = { email: 'email', uri: 'url', date: 'date' };

function textField(name: string, label: string, schema: FieldSchema, required: boolean): Field {
  const id = uniqueId('field');
  const type = (schema.format && INPUT_TYPES[schema.format]) || 'text';
  const attributes = { id, name, required, 'aria-required': required ? 'true' : undefined };
  const control =
    type === 'text' && (schema.maxLength === undefined || schema.maxLength > 120)
      ? h('textarea', { ...attributes, rows: 3 })
      : h('input', { ...attributes, type, autocomplete: 'off' });
  if (typeof schema.default === 'string') control.value = schema.default;
  const frame = new Frame(schema, lengthHint(schema), () => control);
  return labelled(name, label, required, frame, control, () => {
    const raw = control.value;
    if (control instanceof HTMLInputElement && control.validity.badInput) return { problem: 'Enter a valid value.' };
    if (raw.trim() === '') return required ? { problem: 'This field is required.' } : {};
    const length = [...raw].length;
    if (schema.minLength !== undefined && length < schema.minLength) return { problem: `Use at least ${schema.minLength} characters.` };
    if (schema.maxLength !== undefined && length > schema.maxLength) return { problem: `Use at most ${schema.maxLength} characters.` };
    if (schema.format === 'email' && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(raw))
      return { problem: 'Enter a mail address, like name@example.com.' };
    return { value: raw };
  });
}

function numberField(name: string, label: string, schema: FieldSchema, required: boolean): Field {
  const integer = schema.type === 'integer';
  const { minimum, maximum } = schema;
  const range =
    minimum !== undefined && maximum !== undefined
      ? ` from ${minimum} to ${maximum}`
      : minimum !== undefined
        ? `, at least ${minimum}`
        : maximum !== undefined
          ? `, at most ${maximum}`
          : '';
  const id = uniqueId('field');
  const control = h('input', {
    id,
    name,
    type: 'number',
    inputmode: integer ? 'numeric' : 'decimal',
    step: integer ? 1 : 'any',
    min: minimum,
    max: maximum,
    required,
    'aria-required': required ? 'true' : undefined,
  });
  if (typeof schema.default === 'number') control.value = String(schema.default);
  const frame = new Frame(schema, `${integer ? 'A whole number' : 'A number'}${range}.`, () => control);
  return labelled(name, label, required, frame, control, () => {
    if (control.validity.badInput) return { problem: 'Enter a number.' };
    const raw = control.value.trim();
    if (raw === '') return required ? { problem: 'This field is required.' } : {};
    const value = Number(raw);
    if (!Number.isFinite(value)) return { problem: 'Enter a number.' };
    if (integer && !Number.isInteger(value)) return { problem: 'Enter a whole number.' };
    if (minimum !== undefined && value < minimum) return { problem: `Enter ${minimum} or more.` };
    if (maximum !== undefined && value > maximum) return { problem: `Enter ${maximum} or less.` };
    return { value };
  });
}

function selectField(name: string, label: string, schema: FieldSchema, required: boolean, choices: Choice[]): Field {
  const id = uniqueId('field');
  const control = h(
    'select',
    { id, name, required, 'aria-required': required ? 'true' : undefined },
    h('option', { value: '' }, required ? 'Choose…' : '(none)'),
    ...choices.map((choice, index) => h('option', { value: String(index) }, choice.label)),
  );
  const preset = choices.findIndex((choice) => choice.value === schema.default);
  control.value = preset >= 0 ? String(preset) : '';
  const frame = new Frame(schema, undefined, () => control);
  return labelled(name, label, required, frame, control, () => {
    if (control.value === '') return required ? { problem: 'Choose one.' } : {};
    return { value: choices[Number(control.value)].value };
  });
}

function booleanField(name: string, label: string, schema: FieldSchema): Field {
  const id = uniqueId('field');
  const control = h('input', { id, name, type: 'checkbox' });
  control.checked = schema.default === true;
  const frame = new Frame(schema, undefined, () => control);
  frame.mark(undefined);
  const element = h(
    'div',
    { class: 'field' },
    h('div', { class: 'option' }, control, h('label', { for: id }, label)),
    frame.help,
    frame.error,
  );
  return {
    name,
    element,
    read: () => ({ value: control.checked }),
    mark: (problem) => frame.mark(problem),
    focus: () => control.focus(),
    snapshot: () => control.checked,
    restore: (saved) => {
      if (typeof saved === 'boolean') control.checked = saved;
    },
  };
}

function checkboxesField(name: string, label: string, schema: FieldSchema, required: boolean, choices: Choice[]): Field {
  const defaults = Array.isArray(schema.default) ? (schema.default as unknown[]) : [];
  const boxes = choices.map((choice) => {
    const id = uniqueId('option');
    const input = h('input', { id, type: 'checkbox', value: String(choice.value) });
    input.checked = defaults.includes(choice.value);
    return { input, row: h('div', { class: 'option' }, input, h('label', { for: id }, choice.label)) };
  });
  const legendId = uniqueId('legend');
  const frame: Frame = new Frame(schema, 'Choose any that apply.', () => fieldset);
  const fieldset = h(
    'fieldset',
    { class: 'field', 'aria-labelledby': legendId },
    h('legend', { id: legendId }, label, requiredMark(required)),
    frame.help,
    ...boxes.map((box) => box.row),
    frame.error,
  );
  frame.mark(undefined);
  for (const { input } of boxes) input.addEventListener('change', () => frame.mark(undefined));
  return {
    name,
    element: fieldset,
    read() {
      const picked = boxes.filter((box) => box.input.checked).map((box) => box.input.value);
      if (picked.length === 0) return required ? { problem: 'Choose at least one.' } : {};
      return { value: picked };
    },
    mark: (problem) => frame.mark(problem),
    focus: () => boxes[0]?.input.focus(),
    snapshot: () => boxes.map((box) => box.input.checked),
    restore: (saved) => {
      if (Array.isArray(saved)) boxes.forEach((box, index) => (box.input.checked = saved[index] === true));
    },
  };
}

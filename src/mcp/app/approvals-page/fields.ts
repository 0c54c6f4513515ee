/**
 * The fields of a question's form, one per property of its `requestedSchema` (a flat JSON Schema, as MCP elicitation
 * allows): a text as an input (a textarea for long ones), a number as a number input, a yes/no as a checkbox, a choice
 * as a select and several choices as checkboxes. Each field checks its own value before anything is sent.
 */
import { h, humanize, uniqueId } from '../view/dom';
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
} from '../view/field-controls';
import type { AnswerRequest, FieldSchema } from './wire';

/** A value a field puts in the answer. */
export type FieldValue = NonNullable<AnswerRequest['content']>[string];

/** A field's value (undefined when left empty), or why it cannot be sent. */
export type Reading = FieldReading<FieldValue>;

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

/** A control under its own label. */
function labelled(
  name: string,
  label: string,
  required: boolean,
  frame: FieldFrame,
  control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement,
  read: () => Reading,
): Field {
  const mark = marker(control, frame);
  mark(undefined);
  control.addEventListener('input', () => mark(undefined));
  return {
    name,
    element: labelledElement(label, required, frame, control),
    read,
    mark,
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
  const frame = fieldFrame(schema, [lengthHint(schema)]);
  const control = textInput(name, (schema.format && INPUT_TYPES[schema.format]) || 'text', schema.maxLength, required);
  if (typeof schema.default === 'string') control.value = schema.default;
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
  const frame = fieldFrame(schema, [numberHint(schema)]);
  const control = numberInput(name, schema, required);
  return labelled(name, label, required, frame, control, () => readNumber(control, schema, required));
}

function selectField(name: string, label: string, schema: FieldSchema, required: boolean, choices: Choice[]): Field {
  const frame = fieldFrame(schema, []);
  const control = selectInput(name, choices, required, schema.default);
  return labelled(name, label, required, frame, control, () => readSelect(control, choices, required));
}

function booleanField(name: string, label: string, schema: FieldSchema): Field {
  const frame = fieldFrame(schema, []);
  const control = checkboxInput(name, schema);
  const mark = marker(control, frame);
  mark(undefined);
  return {
    name,
    element: h('div', { class: 'field' }, optionRow(control, label), frame.help, frame.error),
    read: () => ({ value: control.checked }),
    mark,
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
    return { input, row: optionRow(input, choice.label) };
  });
  const frame = fieldFrame(schema, ['Choose any that apply.']);
  const fieldset = choiceGroup(
    label,
    required,
    frame,
    boxes.map((box) => box.row),
  );
  const mark = marker(fieldset, frame);
  mark(undefined);
  for (const { input } of boxes) input.addEventListener('change', () => mark(undefined));
  return {
    name,
    element: fieldset,
    read() {
      const picked = boxes.filter((box) => box.input.checked).map((box) => box.input.value);
      if (picked.length === 0) return required ? { problem: 'Choose at least one.' } : {};
      return { value: picked };
    },
    mark,
    focus: () => boxes[0]?.input.focus(),
    snapshot: () => boxes.map((box) => box.input.checked),
    restore: (saved) => {
      if (Array.isArray(saved)) boxes.forEach((box, index) => (box.input.checked = saved[index] === true));
    },
  };
}

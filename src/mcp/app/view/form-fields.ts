/**
 * The fields of a form-mode question, one per property of its `requestedSchema`: a text as an input of its format, a
 * number as a number input, a yes/no as a checkbox, a few choices as radio buttons (many as a select) and several
 * choices as checkboxes. Each field checks its own value before anything is sent, and shows a sent value as a person
 * reads it.
 */
import { h, humanize, uniqueId } from './dom';
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
import type { FieldSchema, FormContent } from './types';

/** A value a field contributes to the answer. */
type FieldValue = FormContent[string];

/** A field read from the form: its value (undefined when left empty) or why it cannot be sent. */
type Reading = FieldReading<FieldValue>;

/** One rendered field of a form. */
export interface Field {
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
export function buildField(name: string, schema: FieldSchema, required: boolean): Field {
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

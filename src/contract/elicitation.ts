/**
 * What a question asks and who answered it: the elicitation shapes of the task contract (MCP 2025-11-25 form and URL
 * requests), the content of an answer, and the check of that content against its form. Plain data, safe in the
 * workflow sandbox.
 */

/** A primitive property of a form-mode elicitation schema (MCP 2025-11-25 `PrimitiveSchemaDefinition`). */
export type FormProperty =
  | { type: 'string'; title?: string; description?: string; minLength?: number; maxLength?: number; default?: string }
  | { type: 'string'; enum: string[]; enumNames?: string[]; title?: string; description?: string; default?: string }
  | { type: 'number' | 'integer'; title?: string; description?: string; minimum?: number; maximum?: number; default?: number }
  | { type: 'boolean'; title?: string; description?: string; default?: boolean };

/** A form-mode elicitation request, as `elicitation/create` params without the related-task `_meta`. */
export interface FormInputRequest {
  mode: 'form';
  message: string;
  requestedSchema: {
    type: 'object';
    properties: Record<string, FormProperty>;
    required?: string[];
  };
}

/** A URL-mode elicitation request: the user is sent to `url` (to sign, pay, log in) and says whether they went. */
export interface UrlInputRequest {
  mode: 'url';
  message: string;
  url: string;
  /** Identifies the interaction at the far end; unique per request. */
  elicitationId: string;
}

/** Content of an accepted form: the values keyed by property name. */
export type InputContent = Record<string, string | number | boolean | string[]>;

/** Who gave an answer, as the bridge that took it knows them. */
export interface AnswerOrigin {
  /** The principal the bridge authenticated (e.g. `static:alice`, `oauth:…`, `local`). */
  principal: string;
  /** The principal's roles at that moment, from its credentials (addressed questions only). */
  roles?: string[];
  /** How the answer came: `elicitation`, `input_required` (a 2026-07-28 retried call), `task_respond`. */
  via?: string;
  /** The person behind the principal (addressed questions): the approvers directory's name, or the default rule. */
  person?: string;
  /**
   * How the principal authenticated: `token` (a static bearer token), `oauth` (a JWT, or a sign-in through the OpenID
   * Connect provider on the approvals page), `local` (no credentials), `passkey` or `mail-link` (the approvals page).
   */
  auth?: 'token' | 'oauth' | 'local' | 'passkey' | 'mail-link';
}

/** The most an answer to a form may weigh, as JSON text: whatever its schema allows, an answer is a few fields. */
export const MAX_FORM_ANSWER_CHARS = 16_384;

/**
 * Checks accepted form content against the request's schema: only the form's own fields (never names an object has
 * from its prototype, such as `constructor`), required fields, types, enums, bounds, and at most
 * {@link MAX_FORM_ANSWER_CHARS} in all. Returns the first problem as a sentence a person can act on, or undefined when
 * the content fits.
 */
export function checkFormContent(schema: FormInputRequest['requestedSchema'], content: unknown): string | undefined {
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return 'the answer must be an object';
  const values = content as Record<string, unknown>;
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(values, name) || values[name] === undefined) return `"${name}" is required`;
  }
  for (const [name, value] of Object.entries(values)) {
    const property = Object.hasOwn(schema.properties, name) ? schema.properties[name] : undefined;
    if (!property) return `"${name}" is not a field of this form`;
    const problem = checkProperty(property, value);
    if (problem) return `"${name}" ${problem}`;
  }
  if (JSON.stringify(values).length > MAX_FORM_ANSWER_CHARS)
    return `the answer is too long: at most ${MAX_FORM_ANSWER_CHARS} characters in all`;
  return undefined;
}

function checkProperty(property: FormProperty, value: unknown): string | undefined {
  switch (property.type) {
    case 'string':
      if (typeof value !== 'string') return 'must be a string';
      if ('enum' in property && !property.enum.includes(value)) return `must be one of ${property.enum.join(', ')}`;
      if ('maxLength' in property && property.maxLength !== undefined && value.length > property.maxLength) {
        return `must be at most ${property.maxLength} characters`;
      }
      if ('minLength' in property && property.minLength !== undefined && value.length < property.minLength) {
        return `must be at least ${property.minLength} characters`;
      }
      return undefined;
    case 'number':
    case 'integer':
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (property.type === 'integer' && !Number.isInteger(value)) return 'must be a whole number';
      if (property.minimum !== undefined && value < property.minimum) return `must be at least ${property.minimum}`;
      if (property.maximum !== undefined && value > property.maximum) return `must be at most ${property.maximum}`;
      return undefined;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
  }
}

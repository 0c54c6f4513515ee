/**
 * What the companion tools answer, as the view reads it. The server's `structuredContent` is untrusted input here:
 * the readers in tools.ts check these shapes before anything is rendered.
 */

/** Task statuses of MCP 2025-11-25. */
export const TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;

/** A task status. */
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Statuses after which a task never changes again. */
export const TERMINAL_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];

/** The `task` object of a `task_status` answer. */
export interface TaskInfo {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt?: string;
  lastUpdatedAt?: string;
  ttl?: number | null;
  pollInterval?: number;
}

/** One property of a form question's schema: the MCP elicitation primitives, read loosely. */
export interface FieldSchema {
  type?: string;
  title?: string;
  description?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  enum?: unknown[];
  enumNames?: string[];
  oneOf?: Array<{ const?: unknown; title?: string }>;
  anyOf?: Array<{ const?: unknown; title?: string }>;
  items?: FieldSchema;
  minItems?: number;
  maxItems?: number;
}

/** A form question: fill the fields of `requestedSchema`. */
export interface FormQuestion {
  key: string;
  mode: 'form';
  message: string;
  requestedSchema: { type: 'object'; properties: Record<string, FieldSchema>; required?: string[] };
  /** What the question is about, as the workflow published it (its `subject`: any JSON). */
  subject?: unknown;
}

/** A URL question: open `url`, then say whether it was done. */
export interface UrlQuestion {
  key: string;
  mode: 'url';
  message: string;
  url: string;
  elicitationId?: string;
}

/** A question the task waits on. */
export type PendingQuestion = FormQuestion | UrlQuestion;

/** How far the task is. */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** A follow-up tool call the server offers for the task, made with `{ taskId, ...arguments }`. */
export interface TaskAction {
  tool: string;
  arguments: Record<string, unknown>;
  title: string;
  description?: string;
}

/** A `task_status` answer. */
export interface StatusReport {
  task: TaskInfo;
  questions: PendingQuestion[];
  progress?: Progress;
  actions: TaskAction[];
}

/** Values of an accepted form, as `task_respond` takes them. */
export type FormContent = Record<string, string | number | boolean | string[]>;

/** A question addressed to the caller, as `approvals_inbox` lists it. */
export interface InboxEntry {
  taskId: string;
  question: FormQuestion;
  /** The tool that started the task, when the server says. */
  tool?: string;
  required: number;
  accepted: number;
  askedAt?: string;
  dueAt?: string;
  /** The caller's approval counts only with their own signature. */
  mustSign?: boolean;
  /** The passkey page for this question (add `&decision=…`), when the server serves one. */
  passkeyLink?: string;
}

/** An `approvals_inbox` answer. */
export interface InboxPage {
  entries: InboxEntry[];
  nextCursor?: string;
}

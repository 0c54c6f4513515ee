/**
 * What the bridge reads from the memos of workflows (`mcpMeta`, `mcpTask`), as zod schemas: strict for every field the
 * bridge uses, lenient for the rest (a workflow may publish more, and newer fields must not break older bridges).
 * Memos are written by workflows of any SDK and by anyone who can write the namespace: each read is checked here, and
 * a memo that does not fit is that task's problem only (see {@link readTaskState}).
 */
import { z } from 'zod';
import type { AddressedInput } from './approvals';
import { PUBLISHED_STATUSES, TASK_META_MEMO, TASK_STATE_MEMO, type PublishedTaskState, type TaskMeta } from './task-contract';

const IsoTime = z.string().max(100);
const Names = z.array(z.string().max(500)).max(1_000);

/** A property of a form's schema, as far as the bridge checks answers against it. */
export const FormPropertySchema = z.looseObject({
  type: z.enum(['string', 'number', 'integer', 'boolean']),
  title: z.string().optional(),
  description: z.string().optional(),
  enum: z.array(z.string()).optional(),
  minLength: z.number().optional(),
  maxLength: z.number().optional(),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
});

/** A form-mode request (`FormInputRequest`). */
export const FormInputRequestSchema = z.looseObject({
  mode: z.literal('form'),
  message: z.string(),
  requestedSchema: z.looseObject({
    type: z.literal('object'),
    properties: z.record(z.string(), FormPropertySchema),
    required: z.array(z.string()).optional(),
  }),
});

/** A URL-mode request (`UrlInputRequest`). */
export const UrlInputRequestSchema = z.looseObject({
  mode: z.literal('url'),
  message: z.string(),
  url: z.string(),
  elicitationId: z.string(),
});

/** An input request the task's own principal answers (`PendingInput`). */
export const PendingInputSchema = z.looseObject({
  key: z.string().min(1),
  request: z.discriminatedUnion('mode', [FormInputRequestSchema, UrlInputRequestSchema]),
});

/** One answer to an addressed question (`AnswerRecord`): the bridge counts acceptances and people. */
export const AnswerRecordSchema = z.looseObject({
  principal: z.string(),
  person: z.string().optional(),
  roles: z.array(z.string()).optional(),
  action: z.enum(['accept', 'decline', 'delegate']),
  delegatedTo: z.string().optional(),
  at: IsoTime.optional(),
});

/** Who an addressed question is for (`InputAudience`). */
export const InputAudienceSchema = z.looseObject({
  principals: Names.optional(),
  roles: Names.optional(),
  exclude: Names.optional(),
  allowRequester: z.boolean().optional(),
  required: z.number().int().min(1).optional(),
});

/** A question addressed to others (`AddressedInput`), as the inbox and the answer path read it. */
export const AddressedInputSchema = z.looseObject({
  key: z.string().min(1),
  request: FormInputRequestSchema,
  audience: InputAudienceSchema,
  requester: z.string(),
  answers: z.array(AnswerRecordSchema),
  askedAt: IsoTime,
  dueAt: IsoTime.optional(),
  followUpAt: IsoTime.optional(),
  escalation: z.looseObject({ principals: Names.optional(), roles: Names.optional(), dueAt: IsoTime.optional() }).optional(),
  escalated: z.boolean().optional(),
});

/** The state a workflow publishes in {@link TASK_STATE_MEMO} (`PublishedTaskState`). */
export const PublishedTaskStateSchema = z.looseObject({
  status: z.enum(PUBLISHED_STATUSES),
  statusMessage: z.string().optional(),
  updatedAt: IsoTime.optional(),
  inputs: z.array(PendingInputSchema).optional(),
  input: PendingInputSchema.optional(),
  progress: z.looseObject({ progress: z.number(), total: z.number().optional(), message: z.string().optional() }).optional(),
  actions: z
    .array(
      z.looseObject({
        tool: z.string(),
        arguments: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
        title: z.string(),
        description: z.string().optional(),
      }),
    )
    .optional(),
  cancelledStatusMessage: z.string().optional(),
  awaiting: z.array(AddressedInputSchema).optional(),
  decided: z
    .array(
      z.looseObject({
        key: z.string(),
        people: z.array(z.string()),
        close: z
          .looseObject({
            run: z.string(),
            outcome: z.enum(['accepted', 'declined', 'expired', 'cancelled']),
            required: z.number().int().min(1),
            at: IsoTime,
          })
          .optional(),
      }),
    )
    .optional(),
});

/** What the bridge writes in {@link TASK_META_MEMO} at start (`TaskMeta`); the mark covers most of it. */
export const TaskMetaSchema = z.looseObject({
  tool: z.string(),
  ttl: z.number().nullable().optional(),
  pollInterval: z.number().optional(),
  createdAt: IsoTime.optional(),
  argumentsDigest: z.string().optional(),
  marker: z.string().optional(),
});

/** Thrown when a task's memo does not fit what the bridge reads: that task cannot be read, no other is touched. */
export class MalformedMemoError extends Error {
  constructor(
    readonly memo: string,
    /** The first problem, as a path and a sentence. */
    readonly problem: string,
  ) {
    super(`the ${memo} memo is malformed: ${problem}`);
    this.name = 'MalformedMemoError';
  }
}

/** The first issue of a failed parse, as `path: message`. */
function firstProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue?.path.length ? issue.path.map(String).join('.') : '(the memo)';
  return `${where}: ${issue?.message ?? 'does not fit'}`;
}

type Memo = Record<string, unknown> | undefined;

/**
 * The task meta of a memo, checked, or undefined when the memo has none. Throws {@link MalformedMemoError} when it
 * has one that does not fit.
 */
export function readTaskMeta(memo: Memo): TaskMeta | undefined {
  const value = memo?.[TASK_META_MEMO];
  if (value === undefined) return undefined;
  const parsed = TaskMetaSchema.safeParse(value);
  if (!parsed.success) throw new MalformedMemoError(TASK_META_MEMO, firstProblem(parsed.error));
  // The memo as written: the schema only checked it.
  return value as TaskMeta;
}

/**
 * The published task state of a memo, checked, or undefined when the workflow published none. Throws
 * {@link MalformedMemoError} when it published one the bridge cannot read.
 */
export function readTaskState(memo: Memo): PublishedTaskState | undefined {
  const value = memo?.[TASK_STATE_MEMO];
  if (value === undefined || value === null) return undefined;
  const parsed = PublishedTaskStateSchema.safeParse(value);
  if (!parsed.success) throw new MalformedMemoError(TASK_STATE_MEMO, firstProblem(parsed.error));
  return value as PublishedTaskState;
}

/** The open addressed questions of a checked task state. */
export function awaitingOf(state: PublishedTaskState | undefined): AddressedInput[] {
  return state?.awaiting ?? [];
}

/**
 * What an approver's inbox is made of: the visibility query that finds the tasks awaiting them, how far one call reads
 * on to fill a page, and what each open question shows (with the passkey page's link where the server serves it).
 * Pure: the reads are {@link Approvals.inboxQuestions}'.
 */
import type { FormInputRequest } from '../contract/task-contract';
import { isValidRole } from '../core';
import { AWAITING_SEARCH_ATTRIBUTE, deadlineOf, escalatesAt, type AddressedInput } from '../contract/approvals';
import { digestOf } from '../records/canonical';

/** One open question in an approver's inbox: what the workflow chose to show, no more. */
export interface InboxItem {
  taskId: string;
  key: string;
  tool?: string;
  message: string;
  requestedSchema: FormInputRequest['requestedSchema'];
  /** What the question is about, as the workflow published it ({@link AddressedInput.subject}), when it did. */
  subject?: unknown;
  /** The digest of the subject's canonical JSON (of null without one): what an approver's own signature is over. */
  subjectDigest: string;
  /** True when the caller's approval counts only with their own signature (the approvers directory says so). */
  mustSign?: true;
  /** For a signature: the task's original run id, which the statement names (`approvals sign --run`). */
  run?: string;
  /** For a signature: a one-time challenge issued to the caller for this question (`approvals sign --challenge`). */
  challenge?: string;
  /**
   * The passkey page where the caller signs a decision on this question: add `decision` (approve, reject, decline)
   * to the link; present when the server serves the page (MCP_PASSKEY_ORIGIN).
   */
  passkeyLink?: string;
  /** Who submitted the request the question is about (the task's principal). */
  requester: string;
  /** Distinct acceptances the question needs, and how many it has. */
  required: number;
  accepted: number;
  askedAt: string;
  /** ISO 8601: when the question escalates to more people, if it will. */
  escalatesAt?: string;
  /** ISO 8601: the deadline, past which the question ends unanswered. */
  dueAt?: string;
}

/** Visibility pages one inbox call reads at most to fill a page the checks emptied. */
export const INBOX_FILL_PAGES = 10;

/** How long one inbox call reads further pages to fill one the checks emptied. */
export const INBOX_FILL_MS = 5_000;

/** A person's name as it may stand in a visibility query's string literal. */
const QUERY_SAFE_NAME = /^[A-Za-z0-9._:@+ -]{1,200}$/;

/**
 * The visibility query of an inbox: running tasks awaiting the principal or one of the roles, that do not say the
 * person is done with every question they ask (`done:<person>`, see `AddressedQuestions.keywords`). A person's name
 * the query cannot carry safely leaves that clause out: the checks after the query still apply.
 */
export function inboxQuery(principal: string, roles: readonly string[], person: string): string {
  const keywords = [`principal:${principal}`, ...roles.filter(isValidRole).map((role) => `role:${role}`)];
  const addressed = `${AWAITING_SEARCH_ATTRIBUTE} IN (${keywords.map((keyword) => `'${keyword}'`).join(', ')})`;
  const notDone = QUERY_SAFE_NAME.test(person) ? ` AND ${AWAITING_SEARCH_ATTRIBUTE} NOT IN ('done:${person}')` : '';
  return `${addressed}${notDone} AND ExecutionStatus = 'Running'`;
}

/** What the inbox shows of the question `input` of task `taskId` (run by `tool`, where known). */
export function inboxItemOf(taskId: string, tool: string | undefined, input: AddressedInput): InboxItem {
  return {
    taskId,
    key: input.key,
    ...(tool && { tool }),
    message: input.request.message,
    requestedSchema: input.request.requestedSchema,
    ...(input.subject !== undefined && { subject: input.subject }),
    subjectDigest: digestOf(input.subject ?? null),
    requester: input.requester,
    required: input.audience.required ?? 1,
    accepted: input.answers.filter((answer) => answer.action === 'accept').length,
    askedAt: input.askedAt,
    ...(escalatesAt(input) && { escalatesAt: escalatesAt(input) }),
    ...(deadlineOf(input) && { dueAt: deadlineOf(input) }),
  };
}

/**
 * The link to the passkey page at `passkeyPage` where the caller signs a decision on `item`, the inbox's view of the
 * question `input`, with the run (and challenge) `item` carries.
 */
export function passkeyLinkOf(passkeyPage: string, item: InboxItem, input: AddressedInput): string {
  const query = new URLSearchParams({
    task: item.taskId,
    key: item.key,
    subject: item.subjectDigest,
    // What the question shows: the page shows it, and signs only the digest it computes of it.
    shown: Buffer.from(JSON.stringify(input.subject ?? null), 'utf8').toString('base64url'),
    run: item.run!,
    ...(item.challenge && { challenge: item.challenge }),
  });
  return `${passkeyPage}?${query.toString()}`;
}

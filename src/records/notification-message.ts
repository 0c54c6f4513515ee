/**
 * What a person is sent about an addressed question: a subject line and a plain-text body for each kind of
 * {@link DecisionNotification}, the same for mail and webhooks. Pure: the notification and a few facts the worker
 * knows (the submitter as a person, the task view's address, the recipient's link to the approvals page) in, text out.
 */
import { escapeControls } from '../util/log';
import { defaultPersonOf, type DecisionNotification } from '../contract/approvals';
import { UNDATED_LINK_MS } from './approval-links';
import { subjectLines } from './subject-text';

/** What one person is sent about one notification. */
export interface NotificationMessage {
  /** One line: the mail's Subject, a chat message's title. No line breaks. */
  subject: string;
  /** The body, plain text, lines joined with `\n`. */
  text: string;
  /** The task view's address, when {@link MessageContext.taskViewUrl} is set (it is in `text` too). */
  link?: string;
  /**
   * The recipient's link to the question on the approvals page, when {@link MessageContext.answerLink} is set and there
   * is a question to answer (it is in `text` too).
   */
  answerLink?: string;
}

/** What the worker knows beyond the notification. */
export interface MessageContext {
  /** The person the message goes to, for the greeting. */
  recipient?: string;
  /** The requester as a person (the directory's `personOf`); default {@link defaultPersonOf} of `requester`. */
  submitter?: string;
  /** Template of a link to the task view, `{taskId}` standing for the task id (`MCP_TASK_VIEW_URL`). */
  taskViewUrl?: string;
  /** The recipient's signed link to the question on the approvals page (see approval-links); not shown when `decided`. */
  answerLink?: string;
}

/** The task view's address for `taskId`: `template` with each `{taskId}` replaced by the id, URL-encoded. */
export function taskViewLink(template: string, taskId: string): string {
  return template.replaceAll('{taskId}', encodeURIComponent(taskId));
}

/** What the question is about, as the body shows it: the subject field by field (see subject-text); none without one. */
function aboutLines(subject: unknown): string[] {
  if (subject === undefined) return [];
  return subjectLines(subject, (text) => escapeControls(String(text)), { heading: 'About', indent: '' });
}

/** What the question is about, in a few words for the subject line: the first line of the question. */
function summary(notification: DecisionNotification): string {
  const firstLine = notification.message.split('\n')[0].replace(/\s+/g, ' ').trim();
  if (firstLine.length <= 100) return firstLine;
  // Cut between words, where a reader expects the ellipsis.
  const cut = firstLine.slice(0, 100);
  return `${cut.slice(0, cut.lastIndexOf(' ') > 60 ? cut.lastIndexOf(' ') : 99)}…`;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "Sat 28 Nov 2026, 14:00 UTC": a time the same on every machine; an unreadable one as given. */
export function formatTime(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const hh = String(at.getUTCHours()).padStart(2, '0');
  const mm = String(at.getUTCMinutes()).padStart(2, '0');
  return `${DAYS[at.getUTCDay()]} ${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]} ${at.getUTCFullYear()}, ${hh}:${mm} UTC`;
}

function approvalsText(count: number, required: number): string {
  return `${count} of ${required} approval${required === 1 ? '' : 's'}`;
}

const DECIDED_WORDS: Record<NonNullable<DecisionNotification['outcome']>, { subject: string; text: string }> = {
  accepted: { subject: 'Approved', text: 'was approved' },
  declined: { subject: 'Declined', text: 'was declined' },
  overdue: { subject: 'Overdue', text: 'was not answered in time: it ended overdue' },
  cancelled: { subject: 'Cancelled', text: 'was cancelled before it was decided' },
};

/** The subject line's opening words for each kind. */
function subjectOpening(notification: DecisionNotification): string {
  switch (notification.kind) {
    case 'asked':
      return 'Approval requested';
    case 'reminder':
      return 'Reminder: approval requested';
    case 'escalated':
      return 'Escalated: approval requested';
    case 'delegated':
      return 'Handed to you: approval requested';
    case 'decided':
      return notification.outcome ? DECIDED_WORDS[notification.outcome].subject : 'Decided';
  }
}

/** The body's first sentence for each kind. */
function lead(notification: DecisionNotification, submitter: string | undefined, recipient: string | undefined): string {
  const request = submitter ? `${submitter}'s request` : 'a request';
  switch (notification.kind) {
    case 'asked':
      return submitter ? `${submitter} asks for your approval.` : 'Your approval is requested.';
    case 'reminder':
      return `Reminder: ${request} still waits for your approval.`;
    case 'escalated':
      return `${submitter ? request : 'A request'} was not approved in time, so it is escalated: you are asked too.`;
    case 'delegated':
      return `${notification.delegatedBy ?? 'An approver'} handed ${request} to you: you are asked in their place.`;
    case 'decided': {
      const words = notification.outcome ? DECIDED_WORDS[notification.outcome].text : 'was decided';
      if (recipient === undefined || recipient === submitter) return `Your request ${words}.`;
      return `${submitter ? `${submitter}'s request` : 'The request'} you were asked about ${words}; nothing waits for you.`;
    }
  }
}

/**
 * The message for `notification` (see the module's comment): who submitted it, what it is about (the subject field by
 * field, lists of records one line a record, amounts with the subject's currency), the question, how far the approval
 * has come, when it escalates and when it is due, and how to answer (`approvals_inbox`, then `approvals_answer` with
 * the task id and key), with a link to the task view when `context.taskViewUrl` is set. With `context.answerLink`, the
 * link to the approvals page comes right after the first sentence, and the MCP steps below as the other way. A
 * `decided` notification tells how it ended instead: the requester that their request did, the others asked that
 * nothing waits for them; it has no answer link.
 */
export function notificationMessage(notification: DecisionNotification, context: MessageContext = {}): NotificationMessage {
  const submitter = context.submitter ?? (notification.requester !== undefined ? defaultPersonOf(notification.requester) : undefined);
  const link = context.taskViewUrl ? taskViewLink(context.taskViewUrl, notification.taskId) : undefined;
  const answerLink = notification.kind === 'decided' ? undefined : context.answerLink || undefined;
  const subject = `${subjectOpening(notification)}: ${summary(notification)}`.replace(/[\r\n]+/g, ' ');
  const body: string[] = [];
  if (context.recipient) body.push(`Hello ${context.recipient},`, '');
  body.push(lead(notification, submitter, context.recipient), '');
  if (answerLink) {
    const expires = notification.dueAt ? 'when the question is due' : `in ${Math.round(UNDATED_LINK_MS / 86_400_000)} days`;
    body.push(
      `Answer on the approvals page: ${answerLink}`,
      `The link opens the question once you have signed in, and expires ${expires}.`,
      '',
    );
  }
  if (submitter) body.push(`Submitted by: ${submitter}`);
  const about = aboutLines(notification.subject);
  if (about.length > 0) body.push(...about);
  // The question's own lines, each indented under its heading; any other control character in them is shown escaped,
  // so that no text inside the question starts a line of the message.
  const questionLines = notification.message.split(/\r\n|\n/).map((line) => `  ${escapeControls(line)}`);
  body.push('', 'Question:', ...questionLines, '');
  body.push(`Progress: ${approvalsText(notification.accepted, notification.required)}.`);
  if (notification.kind === 'decided') {
    if (notification.answeredBy?.length) body.push(`Answered by: ${notification.answeredBy.join(', ')}`);
  } else {
    if (notification.escalatesAt) body.push(`Escalates: ${formatTime(notification.escalatesAt)}, when more approvers are asked.`);
    if (notification.dueAt) body.push(`Due: ${formatTime(notification.dueAt)}; unanswered by then, the request ends overdue.`);
    body.push(
      '',
      answerLink
        ? 'Or from an MCP client connected to the task bridge:'
        : 'How to answer, from an MCP client connected to the task bridge:',
      '  1. approvals_inbox lists the questions waiting for you.',
      `  2. approvals_answer with taskId "${notification.taskId}" and key "${notification.key}": with no action your client`,
      '     shows the form; or action "accept" with content (the fields approvals_inbox lists), "decline", or',
      '     "delegate" with delegateTo (the principal asked in your place).',
    );
  }
  if (link) body.push('', `Task view: ${link}`);
  body.push('', `Task ${notification.taskId}, question "${notification.key}".`);
  return { subject, text: `${body.join('\n')}\n`, ...(link && { link }), ...(answerLink && { answerLink }) };
}

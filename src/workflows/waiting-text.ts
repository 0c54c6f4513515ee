/**
 * How the requester's status message says what the addressed questions still wait for: roles or counts, never names,
 * with when each escalates and is due (in UTC). Pure; sandboxed workflow code: import only from workflow code.
 */
import { deadlineOf, escalatesAt, type AddressedInput } from '../contract/approvals';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "25 Nov 14:00 UTC": a time as the requester's status message shows it. */
function dueText(iso: string): string {
  const at = new Date(iso);
  return `${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]} ${iso.slice(11, 16)} UTC`;
}

/** How the requester's status message names an audience: its roles, or a count, never names. */
export function describeAudience(audience: { principals?: string[]; roles?: string[] }): string {
  return audience.roles?.length ? audience.roles.join(' or ') : 'the named approvers';
}

/**
 * What the questions `open` still wait for, each described as `describedAs` says, in roles and counts; undefined when
 * none is open.
 */
export function waitingText(open: readonly { input: AddressedInput; describedAs: string }[]): string | undefined {
  if (open.length === 0) return undefined;
  return open
    .map(({ input, describedAs }) => {
      const required = input.audience.required ?? 1;
      const accepted = input.answers.filter((answer) => answer.action === 'accept').length;
      const count = required === 1 ? '1 approval' : `${required - accepted} of ${required} approvals`;
      const escalates = escalatesAt(input);
      const due = deadlineOf(input);
      const when = [escalates && `escalates ${dueText(escalates)}`, due && `due ${dueText(due)}`].filter(Boolean).join(', ');
      return `${count} by ${describedAs}${when ? `, ${when}` : ''}`;
    })
    .join('; ');
}

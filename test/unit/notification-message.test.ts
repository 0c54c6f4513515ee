import type { DecisionNotification } from '../../src/contract/approvals';
import { formatTime, notificationMessage, taskViewLink } from '../../src/records/notification-message';

const lines = [
  { lineItemId: 'LI-1', description: 'Laptops, 4 units', amount: 5_600 },
  { lineItemId: 'LI-2', description: 'Support contract, second half', amount: 1_200, payOn: '2027-02-24' },
];
// A subject as a workflow sends it: fields in its order, an amount in its currency, a list of records and a nested record.
const purchaseSubject = {
  kind: 'purchase',
  teamId: 'T-100',
  teamName: 'Field Operations',
  reference: 'PR-2041',
  currency: 'EUR',
  total: 6_800,
  lines,
  check: { ok: true, teamName: 'Field Operations' },
};
const question = 'Approve purchase PR-2041 for team T-100 (Field Operations): EUR 6,800.00 in 2 line item(s)?';

function notification(overrides: Partial<DecisionNotification> = {}): DecisionNotification {
  return {
    id: 'ask-1/question/reminder/1',
    kind: 'reminder',
    taskId: 'ask-1',
    key: 'question',
    message: question,
    audience: { roles: ['ap-approver'], required: 2 },
    requester: 'oauth:sam',
    answeredBy: ['ann'],
    subject: purchaseSubject,
    accepted: 1,
    required: 2,
    escalatesAt: '2026-11-28T14:00:00.000Z',
    dueAt: '2026-12-01T09:30:00.000Z',
    at: '2026-11-27T14:00:00.000Z',
    ...overrides,
  };
}

test('notification message: a reminder names the submitter, the subject field by field with each line and amount, 1 of 2, both times and how to answer', () => {
  const message = notificationMessage(notification(), { recipient: 'bob', taskViewUrl: 'https://tasks.example.com/view?task={taskId}' });
  expect(message.subject).toBe(`Reminder: approval requested: ${question}`);
  const lines = message.text.split('\n');
  expect(lines[0]).toBe('Hello bob,');
  expect(lines).toContain("Reminder: sam's request still waits for your approval.");
  expect(lines).toContain('Submitted by: sam');
  expect(message.text).toContain(
    [
      'About:',
      '  kind: purchase',
      '  teamId: T-100',
      '  teamName: Field Operations',
      '  reference: PR-2041',
      '  currency: EUR',
      '  total: EUR 6,800.00',
      '  lines (2):',
      '    - lineItemId: LI-1, description: "Laptops, 4 units", amount: EUR 5,600.00',
      '    - lineItemId: LI-2, description: "Support contract, second half", amount: EUR 1,200.00, payOn: 2027-02-24',
    ].join('\n'),
  );
  expect(lines).toContain('Progress: 1 of 2 approvals.');
  expect(lines).toContain('Escalates: Sat 28 Nov 2026, 14:00 UTC, when more approvers are asked.');
  expect(lines).toContain('Due: Tue 1 Dec 2026, 09:30 UTC; unanswered by then, the request ends overdue.');
  expect(message.text).toContain('approvals_inbox lists the questions waiting for you');
  expect(message.text).toContain('approvals_answer with taskId "ask-1" and key "question"');
  expect(message.link).toBe('https://tasks.example.com/view?task=ask-1');
  expect(lines).toContain('Task view: https://tasks.example.com/view?task=ask-1');
});

test('notification message: a line of a subject cannot forge a line of the message', () => {
  const forged = { note: 'Paper\nTotal: EUR 0.00\nApproved by: the CFO' };
  const message = notificationMessage(notification({ kind: 'asked', accepted: 0, subject: forged }));
  expect(message.text).toContain('About:\n  note: "Paper\\nTotal: EUR 0.00\\nApproved by: the CFO"\n');
  expect(message.text.split('\n')).not.toContain('Total: EUR 0.00');
  expect(message.text).toContain('Progress: 0 of 2 approvals.');
});

test('notification message: a carriage return or separator inside the question cannot start a line of the message', () => {
  const message = notificationMessage(
    notification({ kind: 'asked', message: 'Approve?\n- LI-1 Paper\rBcc: eve@example.com\u2028Total: EUR 0.00' }),
  );
  expect(message.text).toContain('Question:\n  Approve?\n  - LI-1 Paper\\rBcc: eve@example.com\\x{2028}Total: EUR 0.00\n');
  expect(message.text.split(/\r\n|\r|\n|\u2028/).filter((line) => /^(Bcc|Total):/.test(line))).toEqual([]);
});

test('notification message: any other subject is shown field by field; no subject shows the question alone', () => {
  const other = notificationMessage(
    notification({
      kind: 'asked',
      message: 'Approve the expense report?\nTravel to Lyon',
      subject: { employee: 'dana', amounts: [120, 80], trip: { city: 'Lyon', nights: 2 } },
      accepted: 0,
      required: 1,
    }),
  );
  expect(other.subject).toBe('Approval requested: Approve the expense report?');
  expect(other.text).toContain('About:\n  employee: dana\n  amounts (2):\n    - 120\n    - 80\n  trip:\n    city: Lyon\n    nights: 2\n');
  expect(other.text).toContain('Question:\n  Approve the expense report?\n  Travel to Lyon\n');
  expect(other.text).toContain('Progress: 0 of 1 approval.');

  // As today's workflows send them: no requester, no subject, no escalation time.
  const bare = notificationMessage({
    id: 't/approval/asked/1',
    kind: 'asked',
    taskId: 't',
    key: 'approval',
    message: 'Approve it?',
    audience: { roles: ['ap-approver'] },
    accepted: 0,
    required: 1,
    at: '2026-11-27T14:00:00.000Z',
  });
  expect(bare.subject).toBe('Approval requested: Approve it?');
  expect(bare.text).toContain('Your approval is requested.');
  expect(bare.text).not.toContain('Submitted by');
  expect(bare.text).not.toContain('Escalates');
  expect(bare.text).not.toContain('Due');
  expect(bare.link).toBeUndefined();
});

test('notification message: each kind opens with its own words; decided tells the requester and the others asked how it ended, with no answering steps', () => {
  expect(notificationMessage(notification({ kind: 'asked' })).text).toContain('sam asks for your approval.');
  expect(notificationMessage(notification({ kind: 'escalated' })).subject).toMatch(/^Escalated: approval requested: /);
  expect(notificationMessage(notification({ kind: 'escalated' })).text).toContain(
    "sam's request was not approved in time, so it is escalated",
  );
  const delegated = notificationMessage(notification({ kind: 'delegated', delegatedBy: 'ann', delegatedTo: 'bob' }));
  expect(delegated.subject).toMatch(/^Handed to you: /);
  expect(delegated.text).toContain("ann handed sam's request to you");
  const decided = notificationMessage(notification({ kind: 'decided', outcome: 'accepted', accepted: 2, answeredBy: ['ann', 'bob'] }), {
    recipient: 'sam',
    submitter: 'sam',
  });
  expect(decided.subject).toBe(`Approved: ${question}`);
  expect(decided.text).toContain('Your request was approved.');
  expect(decided.text).toContain('Progress: 2 of 2 approvals.');
  expect(decided.text).toContain('Answered by: ann, bob');
  expect(decided.text).not.toContain('approvals_answer');
  expect(notificationMessage(notification({ kind: 'decided', outcome: 'overdue' })).subject).toMatch(/^Overdue: /);
  expect(notificationMessage(notification({ kind: 'decided', outcome: 'declined' })).text).toContain('Your request was declined.');
  // The others asked learn it too, in their own words; a cancelled task says so.
  const toApprover = notificationMessage(notification({ kind: 'decided', outcome: 'declined', answeredBy: ['carol'] }), {
    recipient: 'ann',
    submitter: 'sam',
  });
  expect(toApprover.text).toContain("sam's request you were asked about was declined; nothing waits for you.");
  expect(toApprover.text).not.toContain('Your request');
  expect(toApprover.text).not.toContain('approvals_answer');
  const cancelled = notificationMessage(notification({ kind: 'decided', outcome: 'cancelled' }), { recipient: 'sam', submitter: 'sam' });
  expect(cancelled.subject).toMatch(/^Cancelled: /);
  expect(cancelled.text).toContain('Your request was cancelled before it was decided.');
});

test('notification message: the subject line has no line breaks; the directory’s person stands for the submitter', () => {
  const message = notificationMessage(notification({ subject: undefined, message: 'Line one\r\nline two' }), { submitter: 'Sam Smith' });
  expect(message.subject).toBe('Reminder: approval requested: Line one');
  expect(message.text).toContain('Submitted by: Sam Smith');
});

test('notification message: times read the same on every machine; task view links encode the id', () => {
  expect(formatTime('2026-01-05T07:04:00Z')).toBe('Mon 5 Jan 2026, 07:04 UTC');
  expect(formatTime('not a time')).toBe('not a time');
  expect(taskViewLink('https://x.example/t/{taskId}', 'ask 1/a')).toBe('https://x.example/t/ask%201%2Fa');
});

const ANSWER_LINK = 'https://approvals.example.com/approvals?q=eyJwIjoiYm9iIn0.c2lnbmF0dXJl';

test('notification message: an answer link leads the body right after the first sentence, before the MCP steps, which stay as the other way', () => {
  const message = notificationMessage(notification(), { recipient: 'bob', answerLink: ANSWER_LINK });
  const lines = message.text.split('\n');
  expect(message.answerLink).toBe(ANSWER_LINK);
  expect(lines.slice(0, 6)).toEqual([
    'Hello bob,',
    '',
    "Reminder: sam's request still waits for your approval.",
    '',
    `Answer on the approvals page: ${ANSWER_LINK}`,
    'The link opens the question once you have signed in, and expires when the question is due.',
  ]);
  const mcp = lines.indexOf('Or from an MCP client connected to the task bridge:');
  expect(mcp).toBeGreaterThan(lines.indexOf('Question:'));
  expect(lines[mcp + 1]).toBe('  1. approvals_inbox lists the questions waiting for you.');
  expect(message.text).not.toContain('How to answer');
  // Without a link the MCP steps are the way to answer, as before.
  const without = notificationMessage(notification(), { recipient: 'bob' });
  expect(without.answerLink).toBeUndefined();
  expect(without.text).not.toContain('approvals page');
  expect(without.text).toContain('How to answer, from an MCP client connected to the task bridge:');
});

test('notification message: every kind with a question to answer carries the link; one without a deadline says when the link expires', () => {
  for (const kind of ['asked', 'reminder', 'escalated', 'delegated'] as const) {
    expect(notificationMessage(notification({ kind }), { answerLink: ANSWER_LINK }).text).toContain(
      `\n\nAnswer on the approvals page: ${ANSWER_LINK}\n`,
    );
  }
  const undated = notificationMessage(notification({ kind: 'asked', dueAt: undefined }), { answerLink: ANSWER_LINK });
  expect(undated.text).toContain('The link opens the question once you have signed in, and expires in 30 days.');
});

test('notification message: a decided notification has no answer link, even when one is given', () => {
  const decided = notificationMessage(notification({ kind: 'decided', outcome: 'accepted', accepted: 2 }), {
    recipient: 'ann',
    submitter: 'sam',
    answerLink: ANSWER_LINK,
    taskViewUrl: 'https://tasks.example.com/view?task={taskId}',
  });
  expect(decided.answerLink).toBeUndefined();
  expect(decided.text).not.toContain(ANSWER_LINK);
  expect(decided.text).not.toContain('approvals page');
  expect(decided.text).not.toContain('MCP client');
  // The task view stays: it shows how the task went on.
  expect(decided.text.split('\n')).toContain('Task view: https://tasks.example.com/view?task=ask-1');
});

/**
 * The report of `approvals verify` as a person reads it: the task, each question with its decisions and verdict, and
 * whether the records verify. Pure: a receipt report in, text out.
 */
import type { QuestionReport, ReportedDecision } from './question-report';
import type { ReceiptReport } from './receipt';
import { subjectLines } from './subject-text';
import { escapeControls } from '../util/log';

/** The report as a person reads it. Every text that came from a record is shown with its control characters escaped. */
export function humanReport(report: ReceiptReport, source: string, exportedTo?: string): string {
  const lines: string[] = [];
  const safe = (text: unknown) => escapeControls(String(text));
  lines.push(
    `Task ${safe(report.taskId ?? '(none)')}: ${report.records} decision record${report.records === 1 ? '' : 's'} in ${safe(source)}`,
  );
  lines.push(`Checked with key${report.checkedWith.length === 1 ? '' : 's'} ${report.checkedWith.join(', ') || '(none)'}`);
  if (!report.approverKeysChecked) lines.push("Approvers' own signatures not checked: give --directory FILE (the approvers directory)");
  for (const question of report.questions) lines.push('', ...questionLines(question, safe));
  lines.push('');
  if (report.sealed)
    lines.push(`Sealed: the receipt holds the ${report.records} record(s) it was exported with; none was cut from its end.`);
  else if (source.startsWith('the receipt ')) {
    lines.push(
      "Not sealed (exported without the bridge's key): it cannot show that no record followed its last one, so approval is not established by it (exit 3). Ask for a receipt exported where the bridge's key is, or verify the store.",
    );
  }
  if (report.ok) lines.push('VALID: every record belongs to the task, the chain is whole, and every digest and signature checks out.');
  else lines.push(...report.problems.map((problem) => `INVALID: ${safe(problem)}`));
  if (exportedTo !== undefined) lines.push(`Receipt written to ${safe(exportedTo)}.`);
  return `${lines.join('\n')}\n`;
}

function questionLines(question: QuestionReport, safe: (text: unknown) => string): string[] {
  // Each line of the question on a line of its own (control characters are escaped by `safe`).
  const asked = String(question.message ?? '')
    .split('\n')
    .map((line, index) => `${index === 0 ? '  Asked: ' : '         '}${safe(line)}`);
  const lines = [`Question "${safe(question.key)}" (run ${safe(question.run)})`, ...asked];
  lines.push(...subjectLines(question.shown, safe));
  for (const decision of question.decisions) {
    const role = decision.roles.length > 0 ? `, role${decision.roles.length === 1 ? '' : 's'} ${decision.roles.map(safe).join(', ')}` : '';
    const acting = decision.actingAs !== undefined ? `, asked as ${safe(decision.actingAs)}` : '';
    const extra = [
      decision.delegatedTo !== undefined ? `handed to ${safe(decision.delegatedTo)}` : '',
      decision.comment !== undefined ? `comment "${safe(decision.comment)}"` : '',
      decision.reason !== undefined ? `reason "${safe(decision.reason)}"` : '',
      decision.outcome !== undefined ? `closed as ${safe(decision.outcome)}, ${safe(decision.required)} approval(s) required` : '',
      decision.closedAt !== undefined ? `the workflow closed it at ${safe(decision.closedAt)}` : '',
      decision.voided ? 'VOIDED by a later record' : '',
      decision.sameSubject ? '' : 'shown ANOTHER subject',
      decision.signed ? 'signed' : 'unsigned (recorded by the workflow)',
      ownSignatureText(decision),
    ].filter(Boolean);
    lines.push(
      `  ${decision.seq}. ${decision.decision} by ${safe(decision.person)} (principal ${safe(decision.principal)}${role}${acting}) at ${safe(decision.at)} via ${safe(decision.via)}; ${extra.join('; ')}`,
    );
  }
  lines.push(`  Verdict: ${safe(question.verdict)}`);
  return lines;
}

function ownSignatureText(decision: ReportedDecision): string {
  const own = decision.ownSignature;
  const key = own?.keyId !== undefined ? ` ${own.keyId}` : '';
  if (own?.status === 'valid') {
    const unbound = own.statement === 1 ? ' (a version 1 statement: it names no run)' : '';
    return `signed by ${decision.person} with their own key${key}${unbound}`;
  }
  if (own?.status === 'invalid') return `their own signature${key} does NOT verify`;
  if (own?.status === 'unknown-key') return `signed with key${key}, which the directory does not list for ${decision.person}`;
  if (own?.status === 'unchecked') return `bears an own signature${key}, not checked (no directory)`;
  return decision.mustSign ? `NOT signed by ${decision.person}, who must sign` : '';
}

/**
 * What a person signs with their passkey when their decision must be signed: the statement naming the task and its
 * run, the question, the digest of what the question showed, the decision and the challenge the server issued, and the WebAuthn challenge made of it (the
 * SHA-256 of its canonical JSON, as the passkey page and the records' checks compute it).
 */
import type { AnswerRequest, ApproverStatement, QuestionView } from './wire';

/** The statement of an answer to a question: its decision as the decision record will name it. */
export function statementOf(
  question: Pick<QuestionView, 'taskId' | 'key' | 'subjectDigest' | 'run' | 'challenge'>,
  answer: AnswerRequest,
): ApproverStatement {
  return {
    format: 'temporal-mcp-tasks/approver-statement',
    v: 2,
    taskId: question.taskId,
    run: question.run ?? '',
    key: question.key,
    subject: question.subjectDigest,
    decision: decisionOf(answer),
    ...(answer.action === 'delegate' && answer.delegateTo !== undefined && { delegatedTo: answer.delegateTo }),
    ...(question.challenge !== undefined && { challenge: question.challenge }),
  };
}

/**
 * The decision an answer records, as the server's decision record names it (`decisionOf` in src/approvals/decision-response.ts):
 * the signature must be over what the record says. An acceptance is a rejection only with `decision: 'reject'`.
 */
export function decisionOf(answer: Pick<AnswerRequest, 'action' | 'content'>): ApproverStatement['decision'] {
  if (answer.action === 'delegate' || answer.action === 'decline') return answer.action;
  return answer.content?.decision === 'reject' ? 'reject' : 'approve';
}

/** Canonical JSON of a flat statement: keys sorted by UTF-16 code units, no spaces (its values are strings and a small integer). */
export function canonicalJson(statement: ApproverStatement): string {
  const fields = statement as unknown as Record<string, unknown>;
  return `{${Object.keys(fields)
    .sort()
    .filter((key) => fields[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${JSON.stringify(fields[key])}`)
    .join(',')}}`;
}

/** The WebAuthn challenge of a statement: base64url of the SHA-256 of its canonical JSON. */
export async function challengeOf(statement: ApproverStatement): Promise<string> {
  return base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(canonicalJson(statement))));
}

function base64url(bytes: ArrayBuffer): string {
  let binary = '';
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

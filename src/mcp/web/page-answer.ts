/**
 * A decision given on the approvals page (POST /approvals/answer): the request checked against what the page sends and
 * the question against the version the page showed, then taken as `approvals_answer` takes it
 * ({@link Approvals.decide}), and what was recorded said in one sentence.
 */
import { z } from 'zod';
import type { Approvals } from '../../approvals/approvals';
import { PasskeySignatureSchema } from '../../approvals/signature-schema';
import { log } from '../../util/log';
import type { AnswerRecorded } from '../app/approvals-page/wire';
import { Problem } from './page-problem';
import { versionOf } from './question-view';
import type { SignInVia, WebSession } from './web-session';

const AnswerRequestSchema = z.strictObject({
  taskId: z.string().min(1).max(200),
  key: z.string().min(1).max(200),
  version: z.string().min(1).max(100),
  action: z.enum(['accept', 'decline', 'delegate']),
  content: z.record(z.string(), z.union([z.string().max(2_000), z.number(), z.boolean(), z.array(z.string().max(200)).max(50)])).optional(),
  comment: z.string().max(2_000).optional(),
  delegateTo: z.string().min(1).max(200).optional(),
  signature: PasskeySignatureSchema.optional(),
});

/**
 * Takes the decision `body` carries for the signed-in `session`, and says what was recorded. Throws a {@link Problem}
 * for a request the page does not send and for a question that changed since the page showed it; the errors of
 * {@link Approvals.question} and {@link Approvals.decide} as they are.
 */
export async function takePageAnswer(approvals: Approvals, session: WebSession, body: Record<string, unknown>): Promise<AnswerRecorded> {
  const parsed = AnswerRequestSchema.safeParse(body);
  if (!parsed.success)
    throw new Problem(400, {
      error: `The answer is not one this page sends (${parsed.error.issues[0]?.message}). Nothing was recorded.`,
    });
  const { taskId, key, version, action, content, comment, delegateTo, signature } = parsed.data;
  if ((action === 'delegate') !== (delegateTo !== undefined)) {
    throw new Problem(400, { error: 'Say whom to delegate to, and only when delegating. Nothing was recorded.' });
  }
  const by = { principal: session.principal, roles: session.roles, via: `approvals page (${session.via})`, auth: authOf(session.via) };
  const open = await approvals.question(taskId, key, by);
  if (versionOf(open.input) !== version) {
    throw new Problem(409, {
      error: 'Someone answered or the question changed since your page showed it. Look at it again: nothing was recorded.',
      state: 'changed',
    });
  }
  const record = await approvals.decide(
    open,
    {
      action,
      ...(action === 'delegate' ? { content: { to: delegateTo! } } : content && { content }),
      ...(comment !== undefined && comment.trim() !== '' && { comment }),
      ...(signature && { signature }),
    },
    by,
  );
  const what =
    record.action === 'delegate'
      ? `Your hand-over to ${delegateTo} is recorded`
      : record.action === 'decline'
        ? 'Your refusal to answer is recorded'
        : `Your ${content?.decision === 'reject' ? 'rejection' : content?.decision === 'approve' ? 'approval' : 'answer'} is recorded`;
  log.info('approvals page: decision recorded', { taskId, key, principal: session.principal, via: session.via });
  return { message: `${what}${signature ? ', signed with your passkey' : ''}.` };
}

/** How an answer records the way its person signed in. */
function authOf(via: SignInVia): 'passkey' | 'mail-link' | 'oauth' {
  return via === 'passkey' ? 'passkey' : via === 'link' ? 'mail-link' : 'oauth';
}

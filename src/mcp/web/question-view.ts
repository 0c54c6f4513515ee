/**
 * A question as the approvals page shows it: what the inbox says of it, who answered so far (as people), when it
 * reminds, and a version that changes whenever someone answers, hands it on or its deadline moves, so that an answer
 * made on a page that shows an older state is refused instead of taken. Pure.
 */
import { createHash } from 'node:crypto';
import type { AddressedInput } from '../../contract/approvals';
import type { InboxItem } from '../../approvals/inbox';
import type { GivenAnswer, QuestionView } from '../app/approvals-page/wire';

/** The version of a question's state (see the module's comment). */
export function versionOf(input: AddressedInput): string {
  const state = {
    askedAt: input.askedAt,
    dueAt: input.dueAt ?? null,
    escalated: input.escalated === true,
    audience: input.audience,
    answers: input.answers.map((answer) => [answer.principal, answer.action, answer.at]),
  };
  return createHash('sha256').update(JSON.stringify(state)).digest('base64url').slice(0, 22);
}

/** The page's view of `item`, whose published question is `input`; people named as `personOf` says. */
export function questionViewOf(item: InboxItem, input: AddressedInput, personOf: (principal: string) => string): QuestionView {
  const { passkeyLink: _link, requester, ...shown } = item;
  const answers: GivenAnswer[] = input.answers.map((answer) => {
    const decision = answer.action === 'accept' ? answer.content?.decision : undefined;
    return {
      person: answer.person ?? personOf(answer.principal),
      action: answer.action,
      ...(typeof decision === 'string' && { decision }),
      ...(answer.delegatedTo !== undefined && { delegatedTo: answer.delegatedTo }),
      ...(answer.comment !== undefined && { comment: answer.comment }),
      at: answer.at,
    };
  });
  return {
    ...shown,
    requestedSchema: item.requestedSchema as QuestionView['requestedSchema'],
    requester: personOf(requester),
    ...(input.followUpAt !== undefined && { remindsAt: input.followUpAt }),
    answers,
    version: versionOf(input),
  };
}

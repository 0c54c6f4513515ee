/**
 * The check of an approver's own signature of their decision, before anything is recorded: made under a key the
 * approvers directory lists for the person, over a statement that names the run, with a challenge this bridge issued
 * for that decision (taken once); and present on an approval by someone who must sign.
 */
import { AnswerRefusedError } from '../core';
import type { AddressedInput } from '../contract/approvals';
import { checkApproverSignature, statementOf, type ApproverKeyring } from '../records/approver-signatures';
import { digestOf } from '../records/canonical';
import type { DecisionRecordBody } from '../contract/decision-records';
import type { DecisionChallenges } from './decision-challenges';
import { decisionOf, type Decider, type DecisionResponse } from './decision-response';

/**
 * Refuses a decision whose own signature does not verify under a key the directory lists for the person, and an
 * approval without one by someone who must sign; nothing is recorded either way. Without `signatures` a signature
 * given is taken unchecked. Throws {@link AnswerRefusedError} saying what to sign.
 */
export async function checkOwnSignature(
  keys: { signatures?: ApproverKeyring; challenges?: DecisionChallenges },
  taskId: string,
  run: string,
  input: AddressedInput,
  response: DecisionResponse,
  by: Decider & { person: string },
): Promise<void> {
  const { signatures, challenges } = keys;
  const body = { taskId, run, question: { key: input.key }, subject: digestOf(input.subject ?? null), ...decisionOf(response) };
  const scope = { taskId, run, key: input.key, person: by.person };
  const statement = () => JSON.stringify(statementOf(body, { version: 2, ...(challenges && { challenge: challenges.issue(scope) }) }));
  if (response.signature === undefined) {
    if (body.decision === 'approve' && signatures?.mustSign(by.person, by.roles)) {
      throw new AnswerRefusedError(
        `You must sign your approval with your own key: sign the statement ${statement()} ` +
          '(temporal-mcp-tasks approvals sign) and answer again with it as signature',
      );
    }
    return;
  }
  if (!signatures) return;
  const check = checkApproverSignature({ ...body, approverSignature: response.signature } as DecisionRecordBody, by.person, signatures);
  if (check.status === 'unknown-key') {
    throw new AnswerRefusedError(
      `Your signature is made with key ${check.keyId}, which the approvers directory does not list for ${by.person}; ask its keeper to add your public key`,
    );
  }
  if (check.status === 'invalid') {
    throw new AnswerRefusedError(`Your signature does not verify: sign exactly the statement ${statement()}`);
  }
  // A statement that names no run would count for any run of this task id: only those made before are kept.
  if (check.status === 'valid' && check.version !== 2) {
    throw new AnswerRefusedError(`Your signature is over a statement that names no run (version 1): sign the statement ${statement()}`);
  }
  const { signature } = response;
  if (signature.alg === 'webauthn' && signature.challenge === undefined) {
    throw new AnswerRefusedError(`A passkey signs a challenge this server issued: sign the statement ${statement()}`);
  }
  if (signature.challenge !== undefined) {
    if (!challenges) throw new AnswerRefusedError('This server issues no challenges: sign the statement without one');
    let problem: string | undefined;
    try {
      problem = await challenges.take(signature.challenge, scope);
    } catch (error) {
      throw new AnswerRefusedError(
        `Your signature's challenge cannot be checked now (${(error as Error).message}); answer again in a moment`,
      );
    }
    if (problem) throw new AnswerRefusedError(`Your signature does not count: ${problem}. Sign the statement ${statement()}`);
  }
}

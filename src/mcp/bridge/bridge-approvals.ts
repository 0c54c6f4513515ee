/**
 * The approvals a bridge serves over its task core: who is who and the people's own keys from the approvers
 * directory, the decision records (or a warning at start that they are off), and the one-time challenges approvers'
 * signatures name, which every replica checks and takes once.
 */
import type { TaskCore } from '../../core';
import { DecisionChallenges } from '../../approvals/decision-challenges';
import { OneTimeUses } from '../../approvals/one-time-uses';
import { log } from '../../util/log';
import { Approvals } from '../../approvals/approvals';
import type { CreateBridgeOptions } from './bridge-options';

/** The approvals of a bridge with `options`, over `core`. */
export function bridgeApprovals(core: TaskCore, options: CreateBridgeOptions): Approvals {
  const { decisions, people, signatures, passkeyPage } = options.approvals;
  if (!decisions) {
    log.warn(
      'bridge: decision records are off (approvals.decisions: null): answers to addressed questions are not signed, and a worker that checks the records before an effect refuses it',
    );
  }
  // Every replica checks, and takes once, the challenges another issued.
  const challengeUses = new OneTimeUses(options.sharedState);
  const challenges = new DecisionChallenges(options.answerSeal.derivedKey('approver decision challenges v1'), (id, expiresAt) =>
    challengeUses.take(id, expiresAt),
  );
  return new Approvals(core, {
    ...(people && { people }),
    ...(decisions && { decisions }),
    ...(signatures && { signatures }),
    ...(passkeyPage && { passkeyPage }),
    challenges,
    localPrincipal: options.localPrincipal,
  });
}

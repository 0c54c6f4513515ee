/**
 * Whether a client may be asked a question, from the elicitation capability it declared: at initialize
 * (2025-11-25) or in the request's client capabilities (2026-07-28). The same rule in both generations.
 */
import type { PendingInput } from '../../contract/task-contract';

/** The `elicitation` a client declares: `form` and `url`, each a mode it answers; empty is form (older clients). */
export interface ElicitationCapability {
  form?: object;
  url?: object;
}

/**
 * True when a client that declared `elicitation` can be asked `input`: a url question needs `url`; a form question
 * (or, without `input`, any form) needs `form`, or an elicitation that names no mode at all.
 */
export function canElicit(elicitation: ElicitationCapability | undefined, input?: PendingInput): boolean {
  if (elicitation === undefined) return false;
  if (input?.request.mode === 'url') return elicitation.url !== undefined;
  return elicitation.form !== undefined || elicitation.url === undefined;
}

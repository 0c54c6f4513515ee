/**
 * The task state a workflow run publishes in its memo (the contract's `PublishedTaskState`), made from the task's own
 * state and its addressed questions. Pure; sandboxed workflow code: import only from workflow code.
 */
import type {
  DecidedQuestion,
  PendingInput,
  PublishedAction,
  PublishedProgress,
  PublishedTaskState,
  RefusedAnswer,
} from '../contract/task-contract';
import type { AddressedInput } from '../contract/approvals';

/** What a workflow run keeps of its task's own state, besides its addressed questions. */
export interface OwnTaskState {
  /** Outstanding requests in the order they were asked; the first is the one a one-at-a-time client sees. */
  pending: PendingInput[];
  statusMessage?: string;
  progress?: PublishedProgress;
  /** What is on offer to the user. */
  actions: PublishedAction[];
  /** What the work did before it was cancelled, once it says so. */
  cancelledStatusMessage?: string;
  /** The answers refused lately, newest last. */
  refusedAnswers: RefusedAnswer[];
}

/**
 * The state to publish now: `input_required` while a request of the task's own waits (and the task was not
 * cancelled), `working` otherwise, with the open and lately closed addressed `questions`.
 */
export function publishedState(
  own: OwnTaskState,
  questions: { readonly published: AddressedInput[]; readonly decided: DecidedQuestion[] },
): PublishedTaskState {
  const { pending, statusMessage, progress, actions, cancelledStatusMessage, refusedAnswers } = own;
  const waiting = pending.length > 0 && cancelledStatusMessage === undefined;
  return {
    status: waiting ? 'input_required' : 'working',
    updatedAt: new Date().toISOString(),
    ...(statusMessage !== undefined && { statusMessage }),
    ...(waiting && { inputs: [...pending], input: pending[0] }),
    ...(progress && { progress }),
    ...(actions.length > 0 && cancelledStatusMessage === undefined && { actions }),
    ...(cancelledStatusMessage !== undefined && { cancelledStatusMessage }),
    ...(refusedAnswers.length > 0 && { refusedAnswers }),
    ...(questions.published.length > 0 && { awaiting: questions.published }),
    ...(questions.decided.length > 0 && { decided: questions.decided }),
  };
}

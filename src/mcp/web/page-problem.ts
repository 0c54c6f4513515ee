/**
 * What the approvals page's calls answer when they do not succeed: a {@link Problem}, a status with a sentence for the
 * person (and what the page should do), and the problem each error of the layers below answers with.
 */
import { QuestionNotOpenError } from '../../approvals/approvals';
import { OneTimeUseUnavailableError } from '../../approvals/one-time-uses';
import { AnswerRefusedError, isTemporalUnavailable, TaskCoreError, TooManyRequestsError } from '../../core';
import type { ProblemAnswer } from '../app/approvals-page/wire';
import { BodyError } from './json-call';
import { OidcSignInError, OidcSignInFailure } from './oidc-sign-in';

/** One JSON problem: the status and the sentence (and what the page should do). */
export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly answer: ProblemAnswer,
    readonly headers: Record<string, string> = {},
  ) {
    super(answer.error);
  }
}

/** The answer to a request of the wrong method. */
export function wrongMethod(allowed: 'GET' | 'POST'): Problem {
  return new Problem(405, { error: `Use ${allowed}.` }, { allow: allowed });
}

/** The problem an error answers with: ours as they are, the core's by kind, anything else as a 503 to retry. */
export function problemOf(error: unknown): Problem {
  if (error instanceof Problem) return error;
  if (error instanceof QuestionNotOpenError) {
    return new Problem(409, {
      error: 'This question is not open for you any more: it was answered, handed on, cancelled or closed meanwhile. Nothing was recorded.',
      state: 'closed',
    });
  }
  if (error instanceof AnswerRefusedError)
    return new Problem(422, { error: `${error.message}. ${error.onRecord ?? 'Nothing was recorded.'}` });
  if (error instanceof TooManyRequestsError)
    return new Problem(429, { error: 'Too many requests from you at once. Wait a moment and try again.' });
  if (error instanceof TaskCoreError && error.category === 'request') return new Problem(400, { error: `${error.message}.` });
  if (error instanceof OneTimeUseUnavailableError || isTemporalUnavailable(error) || error instanceof TaskCoreError) {
    return new Problem(503, {
      error: 'The approvals service cannot reach what it needs right now. Try again in a minute: nothing was recorded.',
    });
  }
  if (error instanceof BodyError) return new Problem(error.status, { error: error.message });
  if (error instanceof OidcSignInError)
    return new Problem(error.reason === OidcSignInFailure.providerUnavailable ? 503 : 400, { error: error.message });
  return new Problem(503, { error: 'Something went wrong on the server. Try again in a minute: nothing was recorded.' });
}

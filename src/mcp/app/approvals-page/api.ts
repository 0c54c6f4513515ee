/**
 * The page's calls to its server (`wire.ts`): JSON over fetch, same origin, every POST with the session's CSRF token
 * once there is one. A call that is not answered with 2xx throws an {@link ApiProblem} carrying the server's sentence.
 */
import {
  APPROVALS_API,
  type AnswerRecorded,
  type AnswerRequest,
  type InboxAnswer,
  type LinkAnswer,
  type LinkSent,
  type ProblemAnswer,
  type QuestionAnswer,
  type SessionAnswer,
} from './wire';

/** Thrown for a call the server refused or could not answer; `message` is a sentence for the person. */
export class ApiProblem extends Error {
  constructor(
    message: string,
    /** The HTTP status; 0 when the server could not be reached. */
    readonly status: number,
    /** What became of a question that moved on (409). */
    readonly state?: ProblemAnswer['state'],
    /** The session is missing or over: sign in again. */
    readonly signIn?: boolean,
  ) {
    super(message);
    this.name = 'ApiProblem';
  }
}

/** The server's calls, with the CSRF token of the current session. */
export class ApprovalsApi {
  /** The `x-csrf-token` of POSTs; set from the session, cleared when signed out. */
  csrf: string | undefined;

  session(): Promise<SessionAnswer> {
    return this.get(APPROVALS_API.session);
  }

  inbox(cursor?: string): Promise<InboxAnswer> {
    return this.get(withQuery(APPROVALS_API.inbox, { cursor }));
  }

  question(taskId: string, key: string): Promise<QuestionAnswer> {
    return this.get(withQuery(APPROVALS_API.question, { task: taskId, key }));
  }

  link(token: string): Promise<LinkAnswer> {
    return this.get(withQuery(APPROVALS_API.link, { q: token }));
  }

  answer(request: AnswerRequest): Promise<AnswerRecorded> {
    return this.post(APPROVALS_API.answer, request);
  }

  /** WebAuthn request options for a passkey sign-in, as `startAuthentication` takes them. */
  passkeyOptions(): Promise<unknown> {
    return this.post(APPROVALS_API.passkeyOptions, {});
  }

  passkeySignIn(response: unknown): Promise<unknown> {
    return this.post(APPROVALS_API.passkey, { response });
  }

  mailLink(who: string): Promise<LinkSent> {
    return this.post(APPROVALS_API.mailLink, { who });
  }

  redeemLink(token: string): Promise<unknown> {
    return this.post(APPROVALS_API.redeemLink, { token });
  }

  signOut(): Promise<unknown> {
    return this.post(APPROVALS_API.signOut, {});
  }

  private get<T>(path: string): Promise<T> {
    return this.call<T>(path, { method: 'GET', headers: { accept: 'application/json' } });
  }

  private post<T>(path: string, body: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json', 'content-type': 'application/json' };
    if (this.csrf !== undefined) headers['x-csrf-token'] = this.csrf;
    return this.call<T>(path, { method: 'POST', headers, body: JSON.stringify(body) });
  }

  private async call<T>(path: string, init: RequestInit): Promise<T> {
    let response: Response;
    try {
      response = await fetch(path, { ...init, credentials: 'same-origin', cache: 'no-store' });
    } catch {
      throw new ApiProblem('The server could not be reached. Check your connection; the page tries again.', 0);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      body = undefined;
    }
    if (response.ok) return body as T;
    const problem = (body ?? {}) as Partial<ProblemAnswer>;
    const sentence = typeof problem.error === 'string' && problem.error !== '' ? problem.error : `The server answered ${response.status}.`;
    const state = problem.state === 'closed' || problem.state === 'changed' ? problem.state : undefined;
    throw new ApiProblem(sentence, response.status, state, problem.signIn === true || response.status === 401);
  }
}

/** `path?name=value&…`, leaving out the names without a value. */
function withQuery(path: string, parameters: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined) query.set(name, value);
  const text = query.toString();
  return text === '' ? path : `${path}?${text}`;
}

/**
 * The link to one question on the approvals page, as mail and webhooks carry it: signed with a key derived from the
 * task key (the worker signs, the bridge checks), naming the person it was sent to, the task and the question, and
 * expiring when the question is due (a question with no deadline: after {@link UNDATED_LINK_MS}). The link answers
 * nothing and signs nobody in: it only opens the question for the person it names, once they signed in.
 */
import { SignedTokens, type TokenClaims } from '../shared/signed-tokens';

/** The approvals page's path on the server. */
export const APPROVALS_PAGE_PATH = '/approvals';

/** The query parameter of the page that carries a question link. */
export const QUESTION_LINK_PARAM = 'q';

/** How long a link to a question without a deadline lasts. */
export const UNDATED_LINK_MS = 30 * 24 * 3_600_000;

/** What a question link names. */
export interface QuestionLinkTarget {
  /** The person the link was sent to (the approvers directory's name). */
  person: string;
  taskId: string;
  key: string;
}

interface QuestionLinkClaims extends TokenClaims {
  p: string;
  t: string;
  k: string;
}

/** Signs and reads question links with one key. */
export class ApprovalLinks {
  private readonly tokens: SignedTokens;

  /** `taskKey`: the bridge's secret key, the same on every replica and worker (see task-key). */
  constructor(taskKey: Buffer) {
    this.tokens = new SignedTokens(taskKey, 'approval link');
  }

  /**
   * The link to `target` on the page at `publicUrl` (the server's public address, e.g. https://approvals.example.com),
   * valid until `dueAt` (ISO 8601), or for {@link UNDATED_LINK_MS} from `now` when the question has no deadline.
   */
  link(publicUrl: string, target: QuestionLinkTarget, dueAt?: string, now = Date.now()): string {
    const due = dueAt === undefined ? Number.NaN : Date.parse(dueAt);
    const exp = Number.isFinite(due) ? due : now + UNDATED_LINK_MS;
    const token = this.tokens.sign<QuestionLinkClaims>({ p: target.person, t: target.taskId, k: target.key, exp });
    const url = new URL(APPROVALS_PAGE_PATH, publicUrl);
    url.searchParams.set(QUESTION_LINK_PARAM, token);
    return url.toString();
  }

  /** What the link token `token` names, or undefined when it is not one, was altered, or has expired. Never throws. */
  read(token: string, now = Date.now()): QuestionLinkTarget | undefined {
    const claims = this.tokens.read<QuestionLinkClaims>(token, now);
    if (!claims || typeof claims.p !== 'string' || typeof claims.t !== 'string' || typeof claims.k !== 'string') return undefined;
    return { person: claims.p, taskId: claims.t, key: claims.k };
  }
}

/**
 * Decision records: what the bridge signs for each decision on an addressed question, kept in the workflow's history
 * and in an append-only decision store outside Temporal, chained per task. Plain types, safe in the workflow sandbox.
 * Wire names are stored: never rename them.
 */
import type { InputAudience } from './audience';

/** What a decision record says. Signed as canonical JSON (keys sorted, no spaces). */
export interface DecisionRecordBody {
  v: 1;
  /** The task (workflow id) and the original run id of its run chain (kept across resets). */
  taskId: string;
  run: string;
  /** Position in the task's chain, from 1, and the digest of the record before it (null for the first). */
  seq: number;
  prev: string | null;
  /** The question: its key and its message as shown. */
  question: { key: string; message: string };
  /** What the question is about, as shown (`AddressedInput.subject`), and its digest (`sha256:<base64url>`). */
  shown: unknown;
  subject: string;
  decision: 'approve' | 'reject' | 'decline' | 'delegate' | 'expire' | 'void' | 'close';
  /**
   * `close`: how the question closed (`accepted`: as many distinct people as it required approved; `declined`;
   * `expired` unanswered; `cancelled` with its task), and how many approvals it required. Its place in the chain commits
   * to every record before it. The bridge signs it: on the answer of `by` that closed the question, or, for the
   * workflow (`by` the workflow), once the task publishes the close (`via` one of {@link CLOSE_VIA}).
   */
  outcome?: 'accepted' | 'declined' | 'expired' | 'cancelled';
  required?: number;
  /** `close` written after the question closed (a repair): when the workflow closed it (ISO 8601). */
  closedAt?: string;
  /** `delegate`: the person it was handed to. */
  delegatedTo?: string;
  /** `void`: the digest of a record of this chain the workflow refused to take, and why. */
  voids?: string;
  reason?: string;
  /**
   * The person's own signature of this decision (see `records/approver-signatures.ts`), when they gave one: over their
   * statement of the task, the question's key, `subject` and `decision`, with a key the approvers directory lists.
   */
  approverSignature?: ApproverSignature;
  /** Who decided: principal, person, how they authenticated (`token`, `oauth`, `local`, `workflow`), roles. */
  by: { principal: string; person: string; auth: string; roles: string[]; actingAs?: string };
  /** An answer's fields as given (`accept`), and the person's note. */
  content?: Record<string, unknown>;
  comment?: string;
  /** ISO 8601, and the path it came by (`approvals_answer`, `approvals_answer (form)`, `timer`). */
  at: string;
  via: string;
}

/**
 * How a close came on record (its `via`): taken with the answer that closed the question; signed once the workflow
 * published an expiry or a cancellation; or written late, for an answer that closed the question while its close was
 * never written (the bridge that took it stopped first).
 */
export const CLOSE_VIA = {
  answer: 'closed by this answer',
  expiry: 'closed by its deadline',
  cancellation: 'closed with its cancelled task',
  repair: 'closed late by repair',
} as const;

/** Decisions an approver may sign. */
export type SignableDecision = 'approve' | 'reject' | 'decline' | 'delegate';

/**
 * What an approver signs: their decision on one question of one task, about exactly what they were shown. Version 2
 * names the run too (the task's original run id: a task id used again for a new workflow is another statement), and
 * the one-time challenge the bridge issued for it, when there is one (a passkey's always). Version 1 named neither:
 * such signatures still verify, as what they are, and the bridge takes no new one.
 */
export interface ApproverStatement {
  format: 'temporal-mcp-tasks/approver-statement';
  v: 1 | 2;
  taskId: string;
  /** Version 2: the original run id of the task's run chain (`run` of the record). */
  run?: string;
  /** Version 2: the challenge the bridge issued for this statement (used once). */
  challenge?: string;
  /** The question's key. */
  key: string;
  /** `sha256:<base64url>` of the canonical JSON of what the question showed (`subject` of the record, `subjectDigest` of the inbox). */
  subject: string;
  decision: SignableDecision;
  /** `delegate`: to whom. */
  delegatedTo?: string;
}

/** The shape of a challenge the bridge issues for a statement: base64url claims, a dot, a base64url MAC. */
export const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** An approver's own signature of their statement (`ApproverStatement`), as a record carries it. */
export type ApproverSignature = Ed25519ApproverSignature | PasskeyApproverSignature;

/** An Ed25519 signature over the canonical JSON of the statement. */
export interface Ed25519ApproverSignature {
  alg: 'ed25519';
  /** The first 16 characters of the base64url SHA-256 of the raw public key. */
  keyId: string;
  /** base64url. */
  signature: string;
  /** 2: over a version 2 statement (absent: version 1). */
  v?: 2;
  /** The challenge the version 2 statement names, when it names one. */
  challenge?: string;
}

/** A WebAuthn assertion (a passkey) whose challenge is the SHA-256 of the statement's canonical JSON; all base64url. */
export interface PasskeyApproverSignature {
  alg: 'webauthn';
  /** The credential id. */
  keyId: string;
  authenticatorData: string;
  clientDataJSON: string;
  signature: string;
  /** 2: over a version 2 statement (absent: version 1). */
  v?: 2;
  /** The challenge the version 2 statement names (a passkey's always does). */
  challenge?: string;
}

/** A record with its digest and, for records the bridge made, its Ed25519 signature. */
export interface SignedDecisionRecord {
  body: DecisionRecordBody;
  /** `sha256:<base64url>` of the canonical JSON of `body`. */
  digest: string;
  /** base64url Ed25519 signature over the canonical JSON of `body`; absent on records a worker wrote (`expire`). */
  signature?: string;
  /** Names the signing key: the first 16 characters of the base64url SHA-256 of its raw public key. */
  keyId?: string;
}

/** Name of the worker activity that verifies the decision records of a question before its effect (a payment). */
export const VERIFY_DECISIONS_ACTIVITY = 'mcpVerifyDecisions';

/** What {@link VERIFY_DECISIONS_ACTIVITY} is asked: the records one question must show before its effect. */
export interface VerifyDecisionsInput {
  taskId: string;
  /** The original run id of the run chain the records must be of. */
  run: string;
  /** The question's key. */
  key: string;
  /** What will be done (the purchase order to place, the invoice to pay): approvals must be of exactly this. */
  subject: unknown;
  /** Distinct people whose approvals are needed. */
  required: number;
  /** The principal whose task this is: their approval never counts. */
  requester: string;
  /**
   * Whom the question addresses, as the workflow asked it (with its escalation and hand-overs): with an approvers
   * directory, an approval counts only from a person it lists whom this addresses (named among `principals`, or
   * holding one of `roles` there), whatever the record says of them. Absent from checks made before it was passed.
   */
  audience?: InputAudience;
}

/** One approval that counts. */
export interface CountedApproval {
  person: string;
  /** The id of the person's own key their approval is signed with, when it is. */
  signedWith?: string;
  principal: string;
  roles: string[];
  at: string;
  digest: string;
}

/** What {@link VERIFY_DECISIONS_ACTIVITY} answers: the effect is allowed, with the approvals that count, or why not. */
export type ApprovalJudgement = { ok: true; approvers: CountedApproval[] } | { ok: false; reason: string };

/** Name of the worker activity that appends a record the workflow itself makes (a question that expired). */
export const RECORD_DECISION_ACTIVITY = 'mcpRecordDecision';

/** What {@link DecisionStore.append} did: took the record, found its place taken by another, or had it already. */
export type AppendOutcome = 'appended' | 'conflict' | 'duplicate';

/**
 * An append-only store of decision records, one chain per task (a directory of files, a PostgreSQL table). Records
 * are never changed or removed; two writers never take one place in a chain. See `records/store.ts`.
 */
export interface DecisionStore {
  /** The task's records in `seq` order (none: an empty array). Throws when the store cannot be read. */
  records(taskId: string): Promise<SignedDecisionRecord[]>;
  /**
   * Appends `record` at `record.body.seq` of its task's chain: `conflict` when another record holds that place,
   * `duplicate` when this very record (the same digest) does. Throws when the store cannot be written, or when the
   * place before it is empty.
   */
  append(record: SignedDecisionRecord): Promise<AppendOutcome>;
  /** Where the records are, for logs and errors: the directory, or the database without its password. */
  location(): string;
  close(): Promise<void>;
}

/** What the workflow asks {@link RECORD_DECISION_ACTIVITY} to record. */
export interface RecordDecisionInput {
  taskId: string;
  /** The original run id of the run chain. */
  run: string;
  question: { key: string; message: string };
  /** The question's subject, as shown. */
  shown: unknown;
  decision: 'expire';
  /** ISO 8601, workflow time: the same on every retry, so a retry finds the record it made. */
  at: string;
  reason?: string;
}

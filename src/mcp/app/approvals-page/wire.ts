/**
 * What the approvals page and the server say to each other (`/approvals/...`, JSON, same origin only): the shapes of
 * each answer. Shared by the page's script and the server's routes; types only.
 */

/** The ways to sign in this deployment offers. */
export interface SignInMethods {
  /** A passkey the approvers directory lists for the person. */
  passkey: boolean;
  /** A one-time link sent by mail, to people the directory allows it for. */
  link: boolean;
  /** The deployment's OpenID Connect provider: the page navigates to `oidcStart`. */
  oidc: boolean;
}

/** GET /approvals/session. */
export type SessionAnswer =
  | { signedIn: false; methods: SignInMethods }
  | {
      signedIn: true;
      methods: SignInMethods;
      /** The person as the approvers directory names them. */
      person: string;
      /** The principal answers are recorded under. */
      principal: string;
      /** How they signed in. */
      via: 'passkey' | 'link' | 'oidc';
      /** Sent back as the `x-csrf-token` header of every POST. */
      csrf: string;
      /** ISO 8601: when the session ends. */
      expiresAt: string;
    };

/** One person's answer so far, as the page shows it. */
export interface GivenAnswer {
  person: string;
  action: 'accept' | 'decline' | 'delegate';
  /** For an acceptance with a `decision` field: its value (approve, reject). */
  decision?: string;
  delegatedTo?: string;
  comment?: string;
  at: string;
}

/** A field of a question's form (a flat JSON Schema property, as MCP elicitation allows). */
export interface FieldSchema {
  type?: 'string' | 'number' | 'integer' | 'boolean' | 'array';
  title?: string;
  description?: string;
  enum?: (string | number)[];
  enumNames?: string[];
  oneOf?: { const: string | number; title?: string }[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  format?: string;
  items?: { enum?: string[]; anyOf?: { const: string; title?: string }[] };
}

/** One question awaiting the signed-in person (GET /approvals/inbox, GET /approvals/question). */
export interface QuestionView {
  taskId: string;
  key: string;
  tool?: string;
  message: string;
  requestedSchema: { type: 'object'; properties: Record<string, FieldSchema>; required?: string[] };
  /** What the question is about (an invoice), as the workflow published it. */
  subject?: unknown;
  /** Its digest: what a signature of the decision is over. */
  subjectDigest: string;
  /** The person's approval counts only with their own passkey signature of it (the page signs in the same ceremony). */
  mustSign?: true;
  /** For the signature: the task's original run id and a one-time challenge issued to this person, which it names. */
  run?: string;
  challenge?: string;
  /** Who submitted the request (a person's name). */
  requester: string;
  required: number;
  accepted: number;
  askedAt: string;
  remindsAt?: string;
  escalatesAt?: string;
  dueAt?: string;
  /** Answers given so far, oldest first (the inbox may leave them out; the question always has them). */
  answers?: GivenAnswer[];
  /** Names the question as the page saw it: sent back with an answer, which is refused if the question changed since. */
  version: string;
}

/** GET /approvals/inbox, GET /approvals/inbox?cursor=… (the `nextCursor` of the page before). */
export interface InboxAnswer {
  items: QuestionView[];
  nextCursor?: string;
}

/** GET /approvals/question?task=…&key=… */
export interface QuestionAnswer {
  question: QuestionView;
}

/** GET /approvals/link?q=… : what a question link in mail names. */
export interface LinkAnswer {
  person: string;
  taskId: string;
  key: string;
}

/** POST /approvals/answer (header x-csrf-token). */
export interface AnswerRequest {
  taskId: string;
  key: string;
  /** {@link QuestionView.version} of the question the page showed. */
  version: string;
  action: 'accept' | 'decline' | 'delegate';
  /** accept: the form's fields. */
  content?: Record<string, string | number | boolean | string[]>;
  comment?: string;
  /** delegate: the person or principal asked in the signer's place. */
  delegateTo?: string;
  /** The person's passkey signature of the decision's statement (see {@link ApproverStatement}). */
  signature?: PasskeyApproverSignature;
}

/** POST /approvals/answer, 200. */
export interface AnswerRecorded {
  /** A sentence to show: what was recorded. */
  message: string;
}

/**
 * Every answer other than 2xx: a sentence for the person, and for an answer to a question that moved on, what became
 * of it (`closed`: answered, delegated away, cancelled or due; `changed`: someone else answered meanwhile, look again).
 * `signIn`: the session is missing or over.
 */
export interface ProblemAnswer {
  error: string;
  state?: 'closed' | 'changed';
  signIn?: true;
}

/** POST /approvals/sign-in/passkey/options → WebAuthn request options (JSON); POST /approvals/sign-in/passkey {response}. */
export interface PasskeySignInRequest {
  response: unknown;
}

/** POST /approvals/sign-in/link {who}: a name or a mail address. Always 202 with the same sentence ({@link LinkSent}). */
export interface LinkRequest {
  who: string;
}

/** POST /approvals/sign-in/link, 202. */
export interface LinkSent {
  /** The same sentence whoever was named: it never tells whether a link was sent. */
  message: string;
}

/** POST /approvals/sign-in/link/redeem {token}: the `signin` parameter of the link in the mail. */
export interface LinkRedeemRequest {
  token: string;
}

/** The statement a person signs with their passkey: its canonical JSON's SHA-256 is the WebAuthn challenge. */
export type { ApproverStatement } from '../../../contract/decision-records';
import type { PasskeyApproverSignature } from '../../../contract/decision-records';

/** The paths the page calls. */
export const APPROVALS_API = {
  page: '/approvals',
  session: '/approvals/session',
  inbox: '/approvals/inbox',
  question: '/approvals/question',
  link: '/approvals/link',
  answer: '/approvals/answer',
  passkeyOptions: '/approvals/sign-in/passkey/options',
  passkey: '/approvals/sign-in/passkey',
  mailLink: '/approvals/sign-in/link',
  redeemLink: '/approvals/sign-in/link/redeem',
  /** GET, navigated to (not fetched): the provider's sign-in, back to the page; `?return=` a path of the page. */
  oidcStart: '/approvals/sign-in/oidc',
  oidcCallback: '/approvals/sign-in/oidc/callback',
  signOut: '/approvals/sign-out',
} as const;

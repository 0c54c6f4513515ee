/**
 * The approvers directory: the people behind principals, the roles they hold, and how each is reached (mail, a
 * webhook). A JSON file an operator keeps (`MCP_APPROVERS_DIRECTORY`), read once at start. The worker uses it to say
 * who is told about an addressed question; the bridge may use it to count people rather than credentials. Node only.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defaultPersonOf, type DecisionNotification, type InputAudience } from '../contract/approvals';
import { ed25519PublicKey, type ApproverKeyring, type ApproverPublicKey } from './approver-signatures';
import { passkeyPublicKey } from './passkeys';
import { keyIdOf } from './keys';

/** Environment variable naming the directory file. */
export const APPROVERS_DIRECTORY_ENV = 'MCP_APPROVERS_DIRECTORY';

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}$/;
const ROLE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,99}$/;
const PRINCIPAL_PATTERN = /^\S{1,200}$/;
const SECRET_PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** True for a Standard Webhooks secret: `whsec_` and the base64 of 24 to 64 random bytes. */
function isWebhookSecret(value: string): boolean {
  if (!value.startsWith(SECRET_PREFIX)) return false;
  const encoded = value.slice(SECRET_PREFIX.length);
  if (!BASE64.test(encoded) || encoded.length % 4 !== 0) return false;
  const bytes = Buffer.from(encoded, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}

/** A check that `read` takes a value without throwing: a raw Ed25519 key, a passkey's SPKI key. */
function readable(read: (value: string) => unknown): (value: string) => boolean {
  return (value) => {
    try {
      read(value);
      return true;
    } catch {
      return false;
    }
  };
}

/** A Standard Webhooks signing secret. Never shown in an error: the message says what shape it needs. */
export const WebhookSecretSchema = z
  .string()
  .refine(isWebhookSecret, 'use "whsec_" followed by the base64 of 24 to 64 random bytes (e.g. "whsec_" + `openssl rand -base64 32`)');

/** One person of the directory. */
export const PersonSchema = z.strictObject({
  name: z
    .string()
    .regex(NAME_PATTERN, 'use 1 to 100 letters, digits, ".", "_", "@", "+" or "-", starting with a letter or digit')
    .describe('The person, as answers and four-eyes checks count them, e.g. "carol".'),
  principals: z
    .array(z.string().regex(PRINCIPAL_PATTERN, 'use a principal as the bridge names it: no spaces, at most 200 characters'))
    .default([])
    .describe('The principals that stand for this person: static token names, "oauth:<subject>", "local:<user>@<host>".'),
  roles: z
    .array(z.string().regex(ROLE_PATTERN, 'use a role name of letters, digits, ".", "_", ":", "@", "/" or "-"'))
    .default([])
    .describe('Roles this person holds, for whom a question addressed to a role reaches.'),
  email: z.email('use a mail address such as carol@example.com').optional().describe('Where mail about questions goes.'),
  webhook: z
    .url({ protocol: /^https?$/, error: 'use an http:// or https:// URL' })
    .optional()
    .describe('Where signed webhook calls about questions go (Standard Webhooks).'),
  webhookSecret: WebhookSecretSchema.optional().describe("Signs this person's webhook calls instead of the default secret."),
  keys: z
    .array(
      z
        .strictObject({
          ed25519: z
            .string()
            .refine(
              readable(ed25519PublicKey),
              'use the raw 32-byte Ed25519 public key in base64url, as `temporal-mcp-tasks approvals keygen` prints it',
            )
            .optional()
            .describe('An Ed25519 public key of the person (base64url of its 32 bytes).'),
          passkey: z
            .strictObject({
              id: z
                .string()
                .regex(/^[A-Za-z0-9_-]{16,1364}$/, 'use the credential id in base64url')
                .describe('The credential id.'),
              publicKey: z
                .string()
                .refine(
                  readable(passkeyPublicKey),
                  'use the SPKI public key in base64url (ES256 or Ed25519), as the passkey page prints it',
                )
                .describe("The credential's public key, SPKI DER in base64url."),
              rpId: z
                .string()
                .regex(/^[a-z0-9.-]{1,253}$/, 'use the host name the passkey was made for')
                .describe('The relying party id.'),
              origin: z
                .url({ protocol: /^https?$/, error: 'use the origin of the page it signs on, e.g. https://approvals.example.com' })
                .describe('The origin of the page it signs on.'),
            })
            .optional()
            .describe('A passkey of the person, as the passkey page of the server prints it once registered.'),
        })
        .refine((key) => (key.ed25519 === undefined) !== (key.passkey === undefined), 'give either ed25519 or passkey in each key'),
    )
    .default([])
    .describe("The person's own signing keys: decisions they sign are checked with these."),
  mustSign: z
    .boolean()
    .default(false)
    .describe("Approvals by this person count only when signed with one of their own keys, not with the bridge's alone."),
  signInByMail: z
    .boolean()
    .default(false)
    .describe('This person may sign in to the approvals page with a one-time link sent to their email.'),
});
/** One person of the directory (see {@link PersonSchema}). */
export type Person = z.infer<typeof PersonSchema>;

/** The directory file. */
export const ApproversDirectoryFileSchema = z
  .strictObject({
    people: z.array(PersonSchema).describe('Everyone who may be asked or told about a question.'),
    webhookSecret: WebhookSecretSchema.optional().describe('Signs webhook calls of people without a secret of their own.'),
    mustSign: z
      .boolean()
      .default(false)
      .describe("Approvals count only when signed with the approver's own key: everyone's, listed or not."),
    mustSignRoles: z
      .array(z.string().regex(ROLE_PATTERN, 'use a role name of letters, digits, ".", "_", ":", "@", "/" or "-"'))
      .default([])
      .describe("Approvals by anyone holding one of these roles count only when signed with the approver's own key."),
  })
  .superRefine((file, ctx) => {
    const names = new Map<string, number>();
    file.people.forEach((person, index) => {
      if (names.has(person.name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['people', index, 'name'],
          message: `"${person.name}" is the name of people[${names.get(person.name)}] too; names must be unique`,
        });
      } else names.set(person.name, index);
    });
    const keyOwners = new Map<string, number>();
    file.people.forEach((person, index) => {
      person.keys.forEach((key, at) => {
        const id = key.ed25519 ?? `passkey:${key.passkey?.id}`;
        const owner = keyOwners.get(id);
        if (owner !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['people', index, 'keys', at, key.ed25519 !== undefined ? 'ed25519' : 'passkey'],
            message: `this key is listed ${owner === index ? 'twice' : `by people[${owner}] ("${file.people[owner].name}") too`}; a key belongs to one person, once`,
          });
        }
        keyOwners.set(id, index);
      });
      if (person.signInByMail && person.email === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['people', index, 'signInByMail'],
          message: 'sign-in by mail needs an address: add "email" to this person, or leave signInByMail out',
        });
      }
      if (person.mustSign && person.keys.length === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['people', index, 'mustSign'],
          message:
            'a person who must sign needs a key: add { "ed25519": ... } (temporal-mcp-tasks approvals keygen) or { "passkey": ... } to keys',
        });
      }
    });
    const owners = new Map<string, number>();
    file.people.forEach((person, index) => {
      person.principals.forEach((principal, at) => {
        const owner = owners.get(principal);
        if (owner !== undefined && owner !== index) {
          ctx.addIssue({
            code: 'custom',
            path: ['people', index, 'principals', at],
            message: `"${principal}" is listed by people[${owner}] ("${file.people[owner].name}") too; a principal stands for one person`,
          });
        }
        owners.set(principal, index);
        const named = names.get(principal);
        if (named !== undefined && named !== index) {
          ctx.addIssue({
            code: 'custom',
            path: ['people', index, 'principals', at],
            message: `"${principal}" is the name of people[${named}]; list it under that person`,
          });
        }
      });
    });
  });
/** The directory file as written (see {@link ApproversDirectoryFileSchema}). */
export type ApproversDirectoryFile = z.infer<typeof ApproversDirectoryFileSchema>;

/** Thrown when the directory file cannot be read or is not a valid directory; the message names the file, the entry and the fix. */
export class ApproversDirectoryError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`approvers directory ${file}: ${problem}`);
    this.name = 'ApproversDirectoryError';
  }
}

/** How many problems of a bad file the error lists. */
const MAX_PROBLEMS = 5;

/** Each problem as `people[2] ("carol").email: <what to fix>`. */
function describeIssues(issues: readonly z.core.$ZodIssue[], raw: unknown): string {
  const problems = issues.slice(0, MAX_PROBLEMS).map((issue) => {
    const [head, index, ...rest] = issue.path;
    let where: string;
    if (head === 'people' && typeof index === 'number') {
      const name = (raw as { people?: { name?: unknown }[] }).people?.[index]?.name;
      where = `people[${index}]${typeof name === 'string' ? ` ("${name}")` : ''}`;
      if (rest.length > 0) where += `.${rest.map(String).join('.')}`;
    } else {
      where = issue.path.map(String).join('.');
    }
    return where ? `${where}: ${issue.message}` : issue.message;
  });
  const more = issues.length > MAX_PROBLEMS ? `; and ${issues.length - MAX_PROBLEMS} more` : '';
  return `${problems.join('; ')}${more}`;
}

/**
 * The approvers directory (see the module's comment). Immutable; build it with {@link ApproversDirectory.load},
 * {@link ApproversDirectory.fromEnv} or {@link ApproversDirectory.of}.
 */
export class ApproversDirectory {
  private readonly byName = new Map<string, Person>();
  private readonly byPrincipal = new Map<string, Person>();

  private constructor(
    /** Where it was read from (a file), for messages. */
    readonly source: string,
    /** Everyone listed, in the file's order. */
    readonly people: readonly Person[],
    /** The file's default webhook secret, if it has one. */
    readonly webhookSecret: string | undefined,
    /** Who must sign their approvals: everyone, and the holders of these roles (besides the people marked). */
    private readonly mustSignAll: boolean = false,
    private readonly mustSignRoles: readonly string[] = [],
  ) {
    for (const person of people) {
      this.byName.set(person.name, person);
      for (const principal of person.principals) this.byPrincipal.set(principal, person);
    }
  }

  /**
   * Reads and checks the directory file (sync: read once at start). Throws {@link ApproversDirectoryError} naming the
   * file, the entry and what to fix when the file is missing, is not JSON, or does not fit
   * {@link ApproversDirectoryFileSchema}.
   */
  static load(file: string): ApproversDirectory {
    const resolved = path.resolve(file);
    let text: string;
    try {
      text = readFileSync(resolved, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new ApproversDirectoryError(
        resolved,
        code === 'ENOENT'
          ? `no such file; create it or point ${APPROVERS_DIRECTORY_ENV} at it`
          : `cannot be read (${code ?? (error as Error).message})`,
      );
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      throw new ApproversDirectoryError(
        resolved,
        `is not JSON (${(error as Error).message}); write { "people": [ { "name": ..., "principals": [...], "roles": [...] } ] }`,
      );
    }
    return ApproversDirectory.of(raw, resolved);
  }

  /** The directory of `raw`, the parsed content of a file `source` names. Throws as {@link load} does. */
  static of(raw: unknown, source = 'the approvers directory'): ApproversDirectory {
    const parsed = ApproversDirectoryFileSchema.safeParse(raw);
    if (!parsed.success) throw new ApproversDirectoryError(source, describeIssues(parsed.error.issues, raw));
    const { people, webhookSecret, mustSign, mustSignRoles } = parsed.data;
    return new ApproversDirectory(source, people, webhookSecret, mustSign, mustSignRoles);
  }

  /** The directory `MCP_APPROVERS_DIRECTORY` names, or undefined when it is unset or empty. Throws as {@link load} does. */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): ApproversDirectory | undefined {
    const file = env[APPROVERS_DIRECTORY_ENV]?.trim();
    return file ? ApproversDirectory.load(file) : undefined;
  }

  /** The person listing `principal`, else {@link defaultPersonOf}: `oauth:carol` and `carol` are one person by default. */
  personOf(principal: string): string {
    return this.byPrincipal.get(principal)?.name ?? defaultPersonOf(principal);
  }

  /** The person whose entry lists `principal` among their principals, if any (never the default rule). */
  listing(principal: string): Person | undefined {
    return this.byPrincipal.get(principal);
  }

  /** The person named `name`, if listed. */
  person(name: string): Person | undefined {
    return this.byName.get(name);
  }

  /**
   * The people's own keys and who must sign ({@link ApproverKeyring}): a person named in a record (or a principal, for
   * whom the person listing it stands) signs with the keys listed for them; a person nobody lists has none.
   */
  signatures(): ApproverKeyring {
    const keys = new Map<string, ReadonlyMap<string, ApproverPublicKey>>();
    for (const person of this.people) {
      keys.set(person.name, new Map(person.keys.map(publicKeyOf)));
    }
    const none: ReadonlyMap<string, ApproverPublicKey> = new Map();
    return {
      personOf: (principal) => this.byPrincipal.get(principal)?.name,
      keysOf: (person) => keys.get(this.personNamed(person)) ?? none,
      mayCount: (principal, audience) => {
        if (!audience) return this.byPrincipal.has(principal);
        return this.mayAnswer(principal, audience);
      },
      mustSign: (person, roles) => {
        if (this.mustSignAll) return true;
        const listed = this.byName.get(this.personNamed(person));
        if (listed?.mustSign) return true;
        return [...(listed?.roles ?? []), ...roles].some((role) => this.mustSignRoles.includes(role));
      },
    };
  }

  /** The people holding `role`, in the file's order. */
  holdersOf(role: string): Person[] {
    return this.people.filter((person) => person.roles.includes(role));
  }

  /**
   * Whether a person (by name) or a principal is someone `audience` addresses: named in `principals` (any principal of
   * the person, or its name) or holding one of `roles`, and not in `exclude`. A principal nobody lists holds no roles
   * here. Whether they asked for it or answered already is the question's business (`answerRefusal`).
   */
  mayAnswer(personOrPrincipal: string, audience: InputAudience): boolean {
    const person = this.byName.get(personOrPrincipal) ?? this.byPrincipal.get(personOrPrincipal);
    const names = person ? [person.name, ...person.principals] : [personOrPrincipal];
    if (names.some((name) => audience.exclude?.includes(name))) return false;
    if (names.some((name) => audience.principals?.includes(name))) return true;
    return person?.roles.some((role) => audience.roles?.includes(role)) ?? false;
  }

  /**
   * Who is told about `notification`, each listed person once, in the file's order. For `asked`, `reminder`,
   * `escalated`: the people its audience addresses (named, or holding one of its roles), less the requester's person,
   * those in `answeredBy` and those the audience excludes: the submitter is never asked to approve, even holding the
   * role. For `delegated`: the delegate (`delegatedTo`; without it, the people the audience names, where delegates are
   * added, less the same). For `decided`: the requester's person first, then everyone the audience addressed (those who
   * answered too: they learn how it ended), less those it excludes. Principals nobody lists cannot be reached and are
   * left out.
   */
  recipients(notification: DecisionNotification): Person[] {
    const { audience } = notification;
    const requester = notification.requester !== undefined ? this.personOf(notification.requester) : undefined;
    if (notification.kind === 'decided') {
      const submitter = requester !== undefined ? this.byName.get(requester) : undefined;
      const excluded = new Set((audience.exclude ?? []).map((who) => this.personNamed(who)));
      const asked = this.people.filter(
        (person) =>
          person !== submitter &&
          !excluded.has(person.name) &&
          (this.named(person, audience) ||
            person.roles.some((role) => audience.roles?.includes(role)) ||
            (notification.answeredBy ?? []).some((who) => this.personNamed(who) === person.name)),
      );
      return [...(submitter ? [submitter] : []), ...asked];
    }
    const left = new Set<string>([
      ...(requester !== undefined ? [requester] : []),
      ...(notification.answeredBy ?? []).map((who) => this.personNamed(who)),
      ...(audience.exclude ?? []).map((who) => this.personNamed(who)),
    ]);
    let addressed: Person[];
    if (notification.kind === 'delegated' && notification.delegatedTo !== undefined) {
      const delegate = this.byName.get(this.personNamed(notification.delegatedTo));
      addressed = delegate ? [delegate] : [];
    } else if (notification.kind === 'delegated') {
      addressed = this.people.filter((person) => this.named(person, audience));
    } else {
      addressed = this.people.filter(
        (person) => this.named(person, audience) || person.roles.some((role) => audience.roles?.includes(role)),
      );
    }
    return addressed.filter((person) => !left.has(person.name));
  }

  /** The person a name stands for: a person's own name, else the person listing it as a principal. */
  private personNamed(who: string): string {
    return this.byName.has(who) ? who : this.personOf(who);
  }

  private named(person: Person, audience: InputAudience): boolean {
    return [person.name, ...person.principals].some((name) => audience.principals?.includes(name));
  }
}

/** A listed key by its id: an Ed25519 key's id, a passkey's credential id. */
function publicKeyOf(listed: Person['keys'][number]): [string, ApproverPublicKey] {
  if (listed.passkey) return [listed.passkey.id, { kind: 'passkey', ...listed.passkey, key: passkeyPublicKey(listed.passkey.publicKey) }];
  const key = ed25519PublicKey(listed.ed25519!);
  return [keyIdOf(key), { kind: 'ed25519', key }];
}

/**
 * The approvers directory: the people behind principals, the roles they hold, and how each is reached (mail, a
 * webhook). A JSON file an operator keeps (`MCP_APPROVERS_DIRECTORY`), read once at start. The worker uses it to say
 * who is told about an addressed question; the bridge may use it to count people rather than credentials. Node only.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { defaultPersonOf, type DecisionNotification, type InputAudience } from '../contract/approvals';
import { ed25519PublicKey, type ApproverKeyring, type ApproverPublicKey } from './approver-signatures';
import { ApproversDirectoryFileSchema, type Person } from './directory-file';
import { passkeyPublicKey } from './passkeys';
import { keyIdOf } from './keys';

/** Environment variable naming the directory file. */
export const APPROVERS_DIRECTORY_ENV = 'MCP_APPROVERS_DIRECTORY';

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

/**
 * The approvers directory file as an operator writes it: its schema (the people, their principals, roles, addresses
 * and own keys; who must sign), with messages that say what to fix, and the checks across entries (unique names, keys
 * and principals). `ApproversDirectory.load` reads it.
 */
import { z } from 'zod';
import { ed25519PublicKey } from './approver-signatures';
import { passkeyPublicKey } from './passkeys';

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

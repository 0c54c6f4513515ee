/**
 * The shape an approver's own signature must have where one comes in (the `approvals_answer` argument, an answer of
 * the approvals page), before it is checked (`records/approver-signatures.ts`): the same bounds wherever it is taken.
 */
import { z } from 'zod';
import { CHALLENGE_PATTERN } from '../contract/decision-records';

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** A signature over a version 2 statement says so, and names the challenge the statement names. */
const STATEMENT_VERSION = {
  v: z.literal(2).optional(),
  challenge: z.string().regex(CHALLENGE_PATTERN).max(1_000).optional(),
};

/** A passkey's signature (a WebAuthn assertion); all base64url. */
export const PasskeySignatureSchema = z.strictObject({
  alg: z.literal('webauthn'),
  keyId: z.string().regex(BASE64URL).max(1_400),
  authenticatorData: z.string().regex(BASE64URL).max(4_000),
  clientDataJSON: z.string().regex(BASE64URL).max(4_000),
  signature: z.string().regex(BASE64URL).max(1_000),
  ...STATEMENT_VERSION,
});

/** An Ed25519 signature, as `approvals sign` prints it, or a passkey's. */
export const ApproverSignatureSchema = z.discriminatedUnion('alg', [
  z.strictObject({
    alg: z.literal('ed25519'),
    keyId: z.string().min(1).max(100),
    signature: z.string().regex(/^[A-Za-z0-9_-]{86}$/, 'use the base64url Ed25519 signature (86 characters)'),
    ...STATEMENT_VERSION,
  }),
  PasskeySignatureSchema,
]);

/**
 * The two passkey ceremonies of the page: signing in (the server's options, the server checks the answer) and signing
 * a decision (no server: the challenge is the digest of the statement, see `statement.ts`).
 */
import { startAuthentication } from '@simplewebauthn/browser';
import { challengeOf } from './statement';
import type { AnswerRequest, ApproverStatement } from './wire';

/** The request options `startAuthentication` takes. */
type RequestOptions = Parameters<typeof startAuthentication>[0]['optionsJSON'];

/** How long the browser waits for the person's passkey. */
const CEREMONY_MS = 120_000;

/** The browser's answer to the server's sign-in options (an assertion), to send back to the server. */
export function passkeyAssertion(options: unknown): Promise<unknown> {
  return startAuthentication({ optionsJSON: options as RequestOptions });
}

/**
 * The person's passkey signature of `statement`, as an answer carries it. `rpId` null: the page's own host. Throws as
 * `startAuthentication` does (the person cancelled, no passkey for this site).
 */
export async function signStatement(statement: ApproverStatement, rpId: string | null): Promise<NonNullable<AnswerRequest['signature']>> {
  const challenge = await challengeOf(statement);
  const assertion = await startAuthentication({
    optionsJSON: {
      challenge,
      ...(rpId !== null && { rpId }),
      allowCredentials: [],
      userVerification: 'required',
      timeout: CEREMONY_MS,
    },
  });
  return {
    alg: 'webauthn',
    keyId: assertion.id,
    authenticatorData: assertion.response.authenticatorData,
    clientDataJSON: assertion.response.clientDataJSON,
    signature: assertion.response.signature,
    ...(statement.v === 2 && { v: 2 as const }),
    ...(statement.challenge !== undefined && { challenge: statement.challenge }),
  };
}

/** Words for a failed ceremony: the browser's `NotAllowedError` is most often the person cancelling. */
export function ceremonyProblem(error: unknown): string {
  if (error instanceof Error && error.name === 'NotAllowedError') return 'the passkey request was cancelled or timed out';
  return error instanceof Error ? error.message : String(error);
}

/**
 * Answers only a bridge can give. The bridge seals each answer it hands to a workflow (and each request for an action a
 * workflow offers): the answer, the run it is for and who gave it, as JSON text, with a MAC under a key derived from its
 * secret key. Workers hold the same key and check
 * the MAC in the local activity {@link VERIFY_ANSWER_ACTIVITY} before the workflow acts, so a signal sent by anyone
 * else who can write the namespace (a plain Temporal client, the CLI) answers nothing. Node only: never imported by
 * workflow code.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { log } from '@temporalio/activity';
import { taskKeyFromEnv } from './task-key';
import {
  VERIFY_ANSWER_ACTIVITY,
  type ActionSealFields,
  type AnswerOrigin,
  type InputResponse,
  type SealedAction,
  type SealedAnswer,
  type VerifyAnswerInput,
  type VerifyAnswerResult,
} from '../contract/task-contract';

const ANSWER_KEY_LABEL = 'temporal-mcp-tasks answer key v1';

/** Seals answers and checks seals with one key. */
export class AnswerSeal {
  private readonly key: Buffer;
  /** Names the key without revealing it, so a worker can tell a seal of another key from a forged one. */
  readonly keyId: string;

  /** `taskKey`: the bridge's secret key (see task-key); the answer key is derived from it. */
  constructor(taskKey: Buffer) {
    this.key = createHmac('sha256', taskKey).update(ANSWER_KEY_LABEL).digest();
    this.keyId = createHash('sha256').update(this.key).digest('base64url').slice(0, 8);
  }

  /** A key for another purpose of the bridge's (`label` names it), derived from the answer key: the same on every replica. */
  derivedKey(label: string): Buffer {
    return createHmac('sha256', this.key).update(`temporal-mcp-tasks key derived from the answer key: ${label}`).digest();
  }

  /** The answer as the bridge sends it: plain fields, who gave it, and the seal over the answer and its run. */
  /** `run`: the workflow id and the run's original run id (see {@link SealedAnswer}). */
  seal(
    run: { workflowId: string; originalRunId: string },
    response: InputResponse & { action: 'accept' | 'decline' | 'delegate' },
    answeredBy: AnswerOrigin,
    now = new Date(),
  ): InputResponse {
    const answer = {
      key: response.key,
      action: response.action,
      ...(response.content !== undefined && { content: response.content }),
      ...(response.comment !== undefined && { comment: response.comment }),
      ...(response.record !== undefined && { record: response.record }),
      ...(response.delegateRoles !== undefined && { delegateRoles: [...response.delegateRoles] }),
      answeredBy,
      answeredAt: now.toISOString(),
    };
    const sealedAnswer: SealedAnswer = { v: 1, workflowId: run.workflowId, originalRunId: run.originalRunId, ...answer };
    const sealed = JSON.stringify(sealedAnswer);
    return { ...answer, sealed, proof: `v1.${this.keyId}.${this.mac(sealed)}` };
  }

  /**
   * The seal of a request for an action the run offers (an Update): who asked, for which run (`run`, as for an answer),
   * which Update and what for. The Update's argument carries it beside its own fields; the workflow checks it as it
   * checks an answer's (`openSealedAction`, then {@link VERIFY_ANSWER_ACTIVITY}).
   */
  sealAction(
    run: { workflowId: string; originalRunId: string },
    update: string,
    subject: SealedAction['subject'],
    requestedBy: AnswerOrigin,
    now = new Date(),
  ): Required<ActionSealFields> {
    const action: SealedAction = { v: 1, kind: 'action', ...run, update, subject, requestedBy, requestedAt: now.toISOString() };
    const sealed = JSON.stringify(action);
    return { sealed, proof: `v1.${this.keyId}.${this.mac(sealed)}` };
  }

  /**
   * An id for the Update of an action that only a holder of the key can tell in advance, the same for every request of
   * that action on that run: a retried request is applied once, and nobody else can take the id first with a request
   * of their own (which would be refused, and then answer every request with that id).
   */
  actionId(run: { workflowId: string; originalRunId: string }, update: string, subject: SealedAction['subject']): string {
    const text = `action-id\n${JSON.stringify([run.workflowId, run.originalRunId, update, subject])}`;
    return this.mac(text).slice(0, 22);
  }

  /** Whether `proof` is this key's MAC of `sealed` (constant-time), and if not, why. */
  check(input: VerifyAnswerInput): VerifyAnswerResult {
    const { sealed, proof } = input ?? ({} as VerifyAnswerInput);
    if (typeof sealed !== 'string' || typeof proof !== 'string' || proof.length > 200) return { ok: false, reason: 'no proof' };
    const [version, keyId, mac] = proof.split('.');
    if (version !== 'v1' || mac === undefined) return { ok: false, reason: 'a proof of an unknown version' };
    if (keyId !== this.keyId) {
      return { ok: false, reason: `a proof made with key ${keyId}, not this worker's key ${this.keyId}` };
    }
    const expected = Buffer.from(this.mac(sealed));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'a proof that does not match' };
    return { ok: true };
  }

  private mac(text: string): string {
    return createHmac('sha256', this.key).update(text, 'utf8').digest('base64url');
  }
}

/** The seal of the key in the environment: MCP_TASK_MARKER_KEY, its file, or the local default (see task-key). */
export function answerSealFromEnv(env: NodeJS.ProcessEnv = process.env): AnswerSeal {
  return new AnswerSeal(taskKeyFromEnv(env));
}

/**
 * The activity every worker of bridge-served workflows registers beside its own, so that workflows can check the
 * answers they are given (`Worker.create({ activities: { ...createAnswerActivities(), ...yours } })`). Without it an
 * answer waits in the history, unprocessed, until a worker that has it takes the workflow.
 */
export function createAnswerActivities(seal: AnswerSeal = answerSealFromEnv()): {
  [VERIFY_ANSWER_ACTIVITY]: (input: VerifyAnswerInput) => Promise<VerifyAnswerResult>;
} {
  return {
    async [VERIFY_ANSWER_ACTIVITY](input: VerifyAnswerInput): Promise<VerifyAnswerResult> {
      const result = seal.check(input);
      if (!result.ok) {
        const hint = result.reason?.startsWith('a proof made with key')
          ? ": give this worker the bridge's MCP_TASK_MARKER_KEY"
          : ': it did not come from a bridge';
        log.warn(`refused an answer with ${result.reason}${hint}`);
      }
      return result;
    },
  };
}

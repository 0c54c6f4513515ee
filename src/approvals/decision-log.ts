/**
 * The bridge's side of decision records: each decision on an addressed question is signed and appended to the decision
 * store, chained to the task's previous record, before the workflow hears of it; a decision the workflow then refused
 * gets a signed void beside it. Node only.
 */
import { log } from '../util/log';
import { digestOf } from '../records/canonical';
import { decisionSignerFromEnv, type DecisionSigner } from '../records/keys';
import { closeStanding } from '../records/closes';
import { appendChained, decisionStoreFromEnv, type DecisionStore } from '../records/store';
import type { DecisionRecordBody, SignedDecisionRecord } from '../contract/decision-records';

/** A record as the bridge makes it: everything but the subject's digest, which is computed from what was shown. */
export type DecisionDraft = Omit<DecisionRecordBody, 'subject'>;

/** Thrown when a question's records changed while its close was being written: it is looked at again. */
export class QuestionMovedError extends Error {
  constructor(taskId: string, key: string) {
    super(`the records of question "${key}" of ${taskId} changed while its close was written`);
    this.name = 'QuestionMovedError';
  }
}

/** Signs decisions and appends them to the store (see the module's comment). */
export class DecisionLog {
  constructor(
    readonly signer: DecisionSigner,
    readonly store: DecisionStore,
  ) {}

  /** The log of the keys and the store in the environment (MCP_DECISION_SIGNING_KEY, MCP_DECISION_STORE). */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): DecisionLog {
    return new DecisionLog(decisionSignerFromEnv(env), decisionStoreFromEnv(env));
  }

  /** Signs the next record of `taskId`'s chain and appends it; tried again when another record took its place. */
  append(taskId: string, draft: (seq: number, prev: string | null) => DecisionDraft): Promise<SignedDecisionRecord> {
    return appendChained(this.store, taskId, (seq, prev) => this.signed(draft(seq, prev)));
  }

  /**
   * Signs and appends the close of question `key` of run `run` that `draft` makes, unless a signed close already
   * follows the question's last decision (another writer's, another replica's): the close on file, and whether it is
   * the one written here. With `after`, the digest of the last decision the draft was made for, throws
   * {@link QuestionMovedError} when another decision came since: the close would repeat what that one superseded.
   */
  async appendClose(
    taskId: string,
    question: { run: string; key: string; after?: string },
    draft: (seq: number, prev: string | null) => DecisionDraft,
  ): Promise<{ record: SignedDecisionRecord; written: boolean }> {
    let made: string | undefined;
    const record = await appendChained(
      this.store,
      taskId,
      (seq, prev) => {
        const signed = this.signed(draft(seq, prev));
        made = signed.digest;
        return signed;
      },
      (records) => {
        const standing = closeStanding(records, question.run, question.key);
        if (standing.state === 'closed') return standing.close;
        if (question.after !== undefined && (standing.state !== 'open' || standing.last.digest !== question.after)) {
          throw new QuestionMovedError(taskId, question.key);
        }
        return undefined;
      },
    );
    return { record, written: record.digest === made };
  }

  /** The record of `draft`, its subject's digest computed from what was shown, signed. */
  private signed(draft: DecisionDraft): SignedDecisionRecord {
    return this.signer.sign({ ...draft, subject: digestOf(draft.shown) });
  }

  /**
   * Appends a signed void of `record`, an approval or a hand-over the workflow refused to take (`reason`), so it does
   * not count; throws for any other decision, which stands. A void that cannot be written is logged, not thrown: the
   * person was told nothing was recorded, and the record only blocks.
   */
  async void(record: SignedDecisionRecord, reason: string): Promise<void> {
    const { body } = record;
    if (body.decision !== 'approve' && body.decision !== 'delegate') {
      throw new Error(`a ${body.decision} on record is never voided: only an approval or a hand-over the workflow refused is`);
    }
    try {
      await this.append(body.taskId, (seq, prev) => ({
        v: 1,
        taskId: body.taskId,
        run: body.run,
        seq,
        prev,
        question: body.question,
        shown: body.shown,
        decision: 'void',
        voids: record.digest,
        reason,
        by: { principal: body.by.principal, person: body.by.person, auth: body.by.auth, roles: body.by.roles },
        at: new Date().toISOString(),
        via: 'refused by the workflow',
      }));
    } catch (error) {
      log.warn(`a refused decision could not be voided in ${this.store.location()}: ${(error as Error).message}`, {
        taskId: body.taskId,
        record: record.digest,
      });
    }
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

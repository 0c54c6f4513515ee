/**
 * The worker's decision-record activities: checking the records of a question before its effect (a payment), and
 * recording what the workflow itself decides (a question that expired). Node only.
 */
import { ApplicationFailure } from '@temporalio/common';
import { heartbeating } from '../util/heartbeat';
import type { ApproverKeyring } from './approver-signatures';
import { digestOf } from './canonical';
import type { DecisionPublicKeys } from './keys';
import { DamagedRecordError, DecisionStoreError } from './store-error';
import {
  RECORD_DECISION_ACTIVITY,
  VERIFY_DECISIONS_ACTIVITY,
  type DecisionRecordBody,
  type DecisionStore,
  type ApprovalJudgement,
  type RecordDecisionInput,
  type SignedDecisionRecord,
  type VerifyDecisionsInput,
} from '../contract/decision-records';
import { judgeApprovals, verifyChain } from './verify';

export {
  RECORD_DECISION_ACTIVITY,
  VERIFY_DECISIONS_ACTIVITY,
  type RecordDecisionInput,
  type VerifyDecisionsInput,
} from '../contract/decision-records';

/** The type of the failure an activity ends with when a task's decision records do not check out. */
export const DAMAGED_DECISION_RECORDS = 'DamagedDecisionRecords';

/** Who records what the workflow decides: the workflow, unsigned. */
const WORKFLOW_DECIDER: DecisionRecordBody['by'] = { principal: 'workflow', person: 'workflow', auth: 'workflow', roles: [] };

const APPEND_ATTEMPTS = 20;

/**
 * The activities, by name: {@link VERIFY_DECISIONS_ACTIVITY} reads the task's records from `store`, checks the chain
 * with `keys` and judges the question (a store that cannot be read throws, and Temporal retries);
 * {@link RECORD_DECISION_ACTIVITY} appends an unsigned expiry by the workflow, once per run and question.
 */
export function createDecisionActivities(options: {
  store: DecisionStore;
  keys: DecisionPublicKeys;
  personOf?: (principal: string) => string;
  /** The people's own keys and who must sign (an approvers directory's `signatures()`). */
  signatures?: ApproverKeyring;
}): {
  mcpVerifyDecisions(input: VerifyDecisionsInput): Promise<ApprovalJudgement>;
  mcpRecordDecision(input: RecordDecisionInput): Promise<SignedDecisionRecord>;
} {
  const { store, keys, personOf, signatures } = options;
  return {
    async [VERIFY_DECISIONS_ACTIVITY](input: VerifyDecisionsInput): Promise<ApprovalJudgement> {
      if (typeof input?.taskId !== 'string' || typeof input.run !== 'string' || typeof input.key !== 'string') {
        throw ApplicationFailure.nonRetryable('mcpVerifyDecisions needs a taskId, a run and a question key', 'BadDecisionCheck');
      }
      let records: SignedDecisionRecord[];
      try {
        records = await heartbeating(() => store.records(input.taskId));
      } catch (error) {
        // Something else in a record's place breaks this task's chain, and no retry mends it.
        if (!(error instanceof DamagedRecordError)) throw error;
        return { ok: false, reason: `the decision records of ${input.taskId} in ${store.location()} do not check out: ${error.message}` };
      }
      const chain = verifyChain(input.taskId, records, keys);
      if (!chain.ok)
        return { ok: false, reason: `the decision records of ${input.taskId} in ${store.location()} do not check out: ${chain.problem}` };
      return judgeApprovals(records, { ...input, ...(personOf && { personOf }), ...(signatures && { signatures }) });
    },

    async [RECORD_DECISION_ACTIVITY](input: RecordDecisionInput): Promise<SignedDecisionRecord> {
      if (input?.decision !== 'expire' || typeof input.taskId !== 'string' || typeof input.run !== 'string' || !input.question) {
        throw ApplicationFailure.nonRetryable(
          'mcpRecordDecision records an expiry: give taskId, run, question and decision "expire"',
          'BadDecisionRecord',
        );
      }
      try {
        return await heartbeating(() => appendExpiry(store, input));
      } catch (error) {
        // Something else in a record's place: no retry mends it, and the task is told why rather than retrying for good.
        if (!(error instanceof DamagedRecordError)) throw error;
        throw ApplicationFailure.nonRetryable(
          `the expiry of question "${input.question.key}" cannot be recorded: the decision records of ${input.taskId} in ${store.location()} do not check out (${error.message}); repair the store, then reset the task to the question`,
          DAMAGED_DECISION_RECORDS,
        );
      }
    },
  };
}

/** Appends the expiry `input` names to `store`, unless it is there already; returns the record on file. */
async function appendExpiry(store: DecisionStore, input: RecordDecisionInput): Promise<SignedDecisionRecord> {
  for (let attempt = 0; attempt < APPEND_ATTEMPTS; attempt++) {
    const records = await store.records(input.taskId);
    const recorded = records.find(
      (record) => record.body.decision === 'expire' && record.body.run === input.run && record.body.question?.key === input.question.key,
    );
    if (recorded) return recorded;
    const head = records.at(-1);
    const shown = input.shown === undefined ? null : input.shown;
    const body: DecisionRecordBody = {
      v: 1,
      taskId: input.taskId,
      run: input.run,
      seq: (head?.body.seq ?? 0) + 1,
      prev: head?.digest ?? null,
      question: { key: input.question.key, message: input.question.message },
      shown,
      subject: digestOf(shown),
      decision: 'expire',
      ...(input.reason !== undefined && { reason: input.reason }),
      by: { ...WORKFLOW_DECIDER, roles: [] },
      at: input.at,
      via: 'timer',
    };
    const record: SignedDecisionRecord = { body, digest: digestOf(body) };
    // Another writer (a bridge taking a late answer) took the place: read the chain again, and look again.
    if ((await store.append(record)) !== 'conflict') return record;
  }
  throw new DecisionStoreError(
    `could not record the expiry of ${input.question.key} of ${input.taskId} in ${store.location()}: other writers took the next place ${APPEND_ATTEMPTS} times in a row`,
    store.location(),
  );
}

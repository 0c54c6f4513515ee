/**
 * Every activity a worker of bridge-served workflows registers beside its own, in one call: the check of an answer's
 * seal, the decision-record activities of approvals, and the notifications of addressed questions.
 */
import { ApproversDirectory } from '../records/directory';
import { createDecisionActivities } from '../records/activities';
import { decisionPublicKeysFromEnv, type DecisionPublicKeys } from '../records/keys';
import { decisionStoreLocation, openDecisionStore } from '../records/store';
import { payloadKeysFromEnv, type PayloadKeys } from '../shared/payload-keys';
import type { DecisionStore } from '../contract/decision-records';
import { answerSealFromEnv, createAnswerActivities, type AnswerSeal } from '../shared/answer-proof';
import { notificationDeliveryFromEnv, type NotificationDeliveryConfig } from './notification-delivery-config';
import { createNotificationActivities, notificationOutboxFromEnv } from './notifications';

/** What {@link createTaskActivities} takes; each default is read from the environment, as `temporal-mcp-tasks worker` reads it. */
export interface TaskActivitiesOptions {
  /** Checks answers' seals; default the bridge's key (`MCP_TASK_MARKER_KEY`, its file, or the machine's key file). */
  answerSeal?: AnswerSeal;
  /** The decision store, or its location (a directory or a `postgres://` URL); default `MCP_DECISION_STORE`, else `.data/decisions`. */
  decisionStore?: DecisionStore | string;
  /** The bridge's public decision keys; default `MCP_DECISION_PUBLIC_KEY`, else the machine's, read when first needed. */
  decisionKeys?: DecisionPublicKeys;
  /** The JSON-lines outbox of notifications; default `NOTIFICATION_OUTBOX`, else `.data/notifications.jsonl`. */
  notificationOutbox?: string;
  /**
   * How notifications reach people beside the outbox (mail, webhooks); default from `MCP_APPROVERS_DIRECTORY` and the
   * delivery settings, none when it is unset. `null`: the outbox only.
   */
  notificationDelivery?: NotificationDeliveryConfig | null;
  /**
   * Who is who when decision records are checked before an effect: the person behind a principal, the people's own
   * keys and who must sign. Default: the directory of `notificationDelivery`, else `MCP_APPROVERS_DIRECTORY`; `null`:
   * none (people as the records name them, no one must sign).
   */
  approvers?: ApproversDirectory | null;
  /**
   * The payload keys, with which the decision store (given by its location or read from the environment) and the
   * outbox hold what they keep of a question encrypted; default `MCP_PAYLOAD_KEYS`; `null`: none (in the clear).
   */
  payloadKeys?: PayloadKeys | null;
  /** Where the defaults are read; default `process.env`. */
  env?: NodeJS.ProcessEnv;
}

/**
 * The activities every worker of bridge-served workflows needs, by the names the workflows call: `mcpVerifyAnswer`
 * (an answer came from a bridge), `mcpVerifyDecisions` and `mcpRecordDecision` (the decision records of approvals,
 * checked before an effect), and `mcpNotify` (the people a question is addressed to, through the outbox, mail and
 * webhooks). Register them beside your own: `Worker.create({ …, activities: { ...createTaskActivities(), ...yours } })`.
 * Throws naming a setting that does not hold (a marker key too short, a bad approvers directory or SMTP URL, a keys
 * file that cannot be used).
 */
export function createTaskActivities(options: TaskActivitiesOptions = {}) {
  const env = options.env ?? process.env;
  const keys = options.payloadKeys === null ? undefined : (options.payloadKeys ?? payloadKeysFromEnv(env));
  const store =
    typeof options.decisionStore === 'object'
      ? options.decisionStore
      : openDecisionStore(options.decisionStore ?? decisionStoreLocation(env), keys);
  const delivery = options.notificationDelivery === null ? undefined : (options.notificationDelivery ?? notificationDeliveryFromEnv(env));
  const approvers = options.approvers === null ? undefined : (options.approvers ?? delivery?.directory ?? ApproversDirectory.fromEnv(env));
  return {
    ...createAnswerActivities(options.answerSeal ?? answerSealFromEnv(env)),
    ...createDecisionActivities({
      store,
      keys: options.decisionKeys ?? decisionPublicKeysFromEnv(env),
      ...(approvers && { personOf: (principal: string) => approvers.personOf(principal), signatures: approvers.signatures() }),
    }),
    ...createNotificationActivities(options.notificationOutbox ?? notificationOutboxFromEnv(env), delivery, keys),
  };
}

/** The activities of {@link createTaskActivities}, by name. */
export type TaskActivities = ReturnType<typeof createTaskActivities>;

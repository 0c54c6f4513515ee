/**
 * The search attributes a workflow run keeps up to date as it publishes its task's state: whom its addressed questions
 * await (the inbox's query reads it) and when it last changed. Sandboxed workflow code: import only from workflow code.
 */
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributeUpdatePair } from '@temporalio/common';
import { patched, upsertSearchAttributes } from '@temporalio/workflow';
import { CHANGE_STAMPS_PATCH, CHANGED_AT_SEARCH_ATTRIBUTE } from '../contract/task-contract';
import { AWAITING_SEARCH_ATTRIBUTE } from '../contract/approvals';

const AWAITING = defineSearchAttributeKey(AWAITING_SEARCH_ATTRIBUTE, SearchAttributeType.KEYWORD_LIST);
const CHANGED_AT = defineSearchAttributeKey(CHANGED_AT_SEARCH_ATTRIBUTE, SearchAttributeType.DATETIME);

/** The search attributes of one run's task (see the module's comment). Make one per workflow run. */
export class TaskSearchAttributes {
  private awaitingPublished: string[] = [];
  /** The last change stamp set: each publish gets a later one, even two in the same workflow task. */
  private stampedAt = 0;

  /** Upserts the awaiting `keywords` when they changed, and a new change stamp, in one upsert (none when nothing changed). */
  publish(keywords: string[]): void {
    const attributes: SearchAttributeUpdatePair[] = [];
    if (keywords.join('\n') !== this.awaitingPublished.join('\n')) {
      attributes.push({ key: AWAITING, value: keywords.length > 0 ? keywords : null });
      this.awaitingPublished = keywords;
    }
    // Histories from before change stamps published without them; they replay that way.
    if (patched(CHANGE_STAMPS_PATCH)) {
      this.stampedAt = Math.max(Date.now(), this.stampedAt + 1);
      attributes.push({ key: CHANGED_AT, value: new Date(this.stampedAt) });
    }
    if (attributes.length > 0) upsertSearchAttributes(attributes);
  }
}

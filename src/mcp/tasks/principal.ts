/** Who a task belongs to: the principal is a search attribute of the task's workflow. */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { PRINCIPAL_SEARCH_ATTRIBUTE } from '../../shared/task-contract';

/** The search attribute binding a task to its principal. */
export const PRINCIPAL_KEY = defineSearchAttributeKey(PRINCIPAL_SEARCH_ATTRIBUTE, SearchAttributeType.KEYWORD);

/** The principal of every request on stdio, and on HTTP without authentication. */
export const LOCAL_PRINCIPAL = 'local';

/** Principals the server itself acts as: no credential may name one, or it would reach the unauthenticated tasks. */
export const RESERVED_PRINCIPALS: ReadonlySet<string> = new Set([LOCAL_PRINCIPAL]);

/** Principals are quoted into visibility queries, so they are kept to a safe alphabet. */
export const PRINCIPAL_PATTERN = /^[A-Za-z0-9._:@+-]{1,200}$/;

/** Checks that a principal can be stored and queried; throws otherwise. */
export function assertValidPrincipal(principal: string): void {
  if (!PRINCIPAL_PATTERN.test(principal)) {
    throw new Error(`principal "${principal}" must be 1-200 characters of letters, digits and . _ : @ + -`);
  }
}

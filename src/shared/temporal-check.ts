/**
 * What `serve --check` and `worker --check` ask Temporal before a process manager sends traffic: the namespace
 * exists and the search attributes `McpPrincipal` (whose task it is), `McpAwaiting` (whom its open questions await)
 * and `McpChangedAt` (when its state last changed) can be queried in it. Four cheap reads, each under the deadline.
 */
import { isGrpcServiceError, type ConnectionLike } from '@temporalio/client';
import { CHANGED_AT_SEARCH_ATTRIBUTE, PRINCIPAL_SEARCH_ATTRIBUTE } from '../contract/task-contract';
import { AWAITING_SEARCH_ATTRIBUTE } from '../contract/approvals';

/** The search attributes the bridge and the workflows need, with their types. */
const SEARCH_ATTRIBUTES = [
  [PRINCIPAL_SEARCH_ATTRIBUTE, 'Keyword'],
  [AWAITING_SEARCH_ATTRIBUTE, 'KeywordList'],
  [CHANGED_AT_SEARCH_ATTRIBUTE, 'Datetime'],
] as const;

/** What a passing check found. */
export interface TemporalCheck {
  namespace: string;
  /** The namespace's retention: the longest a task's ttl can be. */
  retentionMs: number;
  /** The search attributes found, comma-separated. */
  searchAttribute: string;
}

/** Thrown when a check fails; the message says what is wrong and how to fix it. */
export class TemporalCheckError extends Error {}

/** gRPC status codes the check tells apart. */
const NOT_FOUND = 5;
const INVALID_ARGUMENT = 3;

/**
 * Checks the namespace (DescribeNamespace) and the search attribute (a one-row visibility query on it), each within
 * `deadlineMs`. Throws {@link TemporalCheckError}.
 */
export async function checkTemporal(
  connection: Pick<ConnectionLike, 'workflowService' | 'withDeadline'>,
  namespace: string,
  deadlineMs: number,
): Promise<TemporalCheck> {
  const within = <T>(work: () => Promise<T>) => connection.withDeadline(Date.now() + deadlineMs, work);
  let retentionMs: number;
  try {
    const { config } = await within(() => connection.workflowService.describeNamespace({ namespace }));
    const retention = config?.workflowExecutionRetentionTtl;
    retentionMs = Number(retention?.seconds ?? 0) * 1000 + Math.floor((retention?.nanos ?? 0) / 1e6);
  } catch (error) {
    if (isGrpcServiceError(error) && error.code === NOT_FOUND) {
      throw new TemporalCheckError(`namespace "${namespace}" does not exist (set TEMPORAL_NAMESPACE, or create it)`);
    }
    throw new TemporalCheckError(`Temporal did not answer DescribeNamespace within ${deadlineMs} ms: ${(error as Error).message}`);
  }
  for (const [name, type] of SEARCH_ATTRIBUTES) {
    try {
      // A value of the attribute's type: an unregistered name (or one of another type) is refused as INVALID_ARGUMENT.
      const probe = type === 'Datetime' ? '1970-01-01T00:00:00Z' : '-';
      await within(() => connection.workflowService.listWorkflowExecutions({ namespace, query: `${name} = '${probe}'`, pageSize: 1 }));
    } catch (error) {
      if (isGrpcServiceError(error) && error.code === INVALID_ARGUMENT) {
        throw new TemporalCheckError(
          `search attribute ${name} is not registered in namespace "${namespace}" (${error.details}); ` +
            `register it: temporal operator search-attribute create --namespace ${namespace} --name ${name} --type ${type}`,
        );
      }
      throw new TemporalCheckError(`Temporal did not answer a visibility query within ${deadlineMs} ms: ${(error as Error).message}`);
    }
  }
  return { namespace, retentionMs, searchAttribute: SEARCH_ATTRIBUTES.map(([name]) => name).join(', ') };
}

/** One line for a passing check: `Temporal <address>, namespace <ns> (retention 24 h), search attributes McpPrincipal, McpAwaiting, McpChangedAt`. */
export function describeCheck(address: string, found: TemporalCheck): string {
  const hours = Math.round((found.retentionMs / 3600_000) * 10) / 10;
  return `Temporal ${address}, namespace ${found.namespace} (retention ${hours} h), search attributes ${found.searchAttribute}`;
}

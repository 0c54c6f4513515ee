/**
 * What every tools/call and tasks/* request gets in either generation before its handler runs: a place under its
 * principal's rate (`MCP_TASK_OPS_PER_SECOND`), then its span and log context (method, principal, tool, task). Errors
 * come out as they are, for the generation to put on its wire.
 */
import { traceRequest, type RequestScope } from '../../shared/telemetry';
import type { TaskPort } from '../../core';

/** The fields of a request's params that name what it is about. */
export interface ServedParams {
  name?: unknown;
  taskId?: unknown;
  _meta?: unknown;
}

/** Runs `work` for `principal`'s `method` request with `params`, once the principal's rate admits it (see the module). */
export async function servedRequest<T>(
  core: Pick<TaskPort, 'takeOperation'>,
  method: string,
  principal: string,
  params: ServedParams | undefined,
  work: () => Promise<T>,
): Promise<T> {
  // A request refused by the rate does no work: it gets no span.
  await core.takeOperation(principal);
  const scope: RequestScope = { method, principal };
  if (typeof params?.name === 'string') scope.tool = params.name;
  if (typeof params?.taskId === 'string') scope.taskId = params.taskId;
  if (params?._meta && typeof params._meta === 'object') scope.meta = params._meta as Record<string, unknown>;
  return traceRequest(scope, work);
}

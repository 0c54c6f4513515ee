import { Server, type JSONRPCRequest, type Result, type ServerContext } from '@modelcontextprotocol/server';

/** Carries a task-shaped tools/call result past the SDK's CallToolResult shaping. */
class TaskResult extends Error {
  constructor(readonly result: Result) {
    super('task result');
  }
}

/** True for a SEP-2663 `CreateTaskResult`: the flat task with `resultType: "task"`. */
function isTaskResult(result: Result): boolean {
  return (result as { resultType?: unknown }).resultType === 'task';
}

/**
 * The SDK's low-level server, letting a tools/call answer with a task. `Server` (SDK 2.4.0) shapes every tools/call
 * result as a CallToolResult, which would add `content: []` to a `CreateTaskResult`; this subclass passes task results
 * through untouched and leaves everything else (input_required rounds included) to the SDK. It overrides a protected
 * hook, so the SDK version is pinned and test/mcp/gen2.test.ts checks the exact shape of a task answer.
 */
export class TaskAwareServer extends Server {
  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    if (method !== 'tools/call') return super._wrapHandler(method, handler);
    const wrapped = super._wrapHandler(method, async (request, ctx) => {
      const result = await handler(request, ctx);
      if (isTaskResult(result)) throw new TaskResult(result);
      return result;
    });
    return async (request, ctx) => {
      try {
        return await wrapped(request, ctx);
      } catch (error) {
        if (error instanceof TaskResult) return error.result;
        throw error;
      }
    };
  }
}

/**
 * `_meta` keys this project adds to MCP messages, shared by the server and the client. Clients that know nothing of
 * them lose nothing: every key is optional.
 */

/** On an `elicitation/create` for a task: the workflow's input key, so a client can recognise a question it answered. */
export const INPUT_KEY_META = 'temporal-mcp-tasks/input-key';

/**
 * On a `tools/call` of a task tool: the caller's idempotency key (1-200 printable ASCII characters, no spaces). Calls
 * of one principal with the same key and tool get the same task for as long as Temporal keeps its workflow (while it
 * runs, and for the namespace's retention after it closes); the same key with other arguments is refused.
 */
export const IDEMPOTENCY_KEY_META = 'temporal-mcp-tasks/idempotency-key';

/** On a `tools/call` carrying an idempotency key: `true` asks only for the task an earlier call made; nothing is started. */
export const ADOPT_ONLY_META = 'temporal-mcp-tasks/adopt-only';

/** On the answer to a `tools/call` with an idempotency key: `true` when the task already existed (a replayed call). */
export const REPLAYED_META = 'temporal-mcp-tasks/replayed';

/** What an idempotency key may look like. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,200}$/;

/**
 * On a task's answers (tools/call, tasks/get, the result, the pending-task answer of a plain call): the workflow in
 * the Temporal Web UI, `<base>/namespaces/<namespace>/workflows/<workflowId>`. Absent when the server has no Web UI
 * configured (TEMPORAL_WEB_UI_URL=off).
 */
export const WEB_UI_META = 'temporal-mcp-tasks/web-ui';

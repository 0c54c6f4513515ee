/** A JSON-RPC error, in no MCP SDK's type: what every layer below the protocol front-ends throws or returns. */

/** A JSON-RPC error's parts. */
export interface JsonRpcFailure {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * A JSON-RPC error raised where no protocol generation is known. Both SDKs send a thrown error's `code`, `message`
 * and `data` as they are, so it reaches the client with its message unchanged (the v1 `McpError` would put its
 * "MCP error -32602: " prefix into the message on the wire).
 */
export class JsonRpcError extends Error {
  readonly code: number;
  readonly data?: unknown;

  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.name = 'JsonRpcError';
    this.code = code;
    if (data !== undefined) this.data = data;
  }

  static of(failure: JsonRpcFailure): JsonRpcError {
    return new JsonRpcError(failure.code, failure.message, failure.data);
  }
}

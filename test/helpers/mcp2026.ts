/** One MCP 2026-07-28 request written by hand over Streamable HTTP, with the headers a conforming client sends. */
import { encodeParamValue } from '../../src/mcp/protocol/param-headers';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** What a hand-written request got back. */
export interface RawAnswer {
  status: number;
  contentType: string | null;
  headers: Headers;
  body: { result?: Record<string, any>; error?: { code: number; message: string; data?: any } };
}

/** How to shape the request: without the tasks extension, other capabilities, headers replaced or (undefined) removed. */
export interface RawRequestOptions {
  tasks?: boolean;
  capabilities?: Record<string, unknown>;
  headers?: Record<string, string | undefined>;
}

/** Sends `method` with `params` to `url` as a 2026-07-28 client would and reads the JSON or SSE answer. */
export async function mcp2026Request(
  url: string,
  method: string,
  params: Record<string, unknown>,
  options: RawRequestOptions = {},
): Promise<RawAnswer> {
  const capabilities = options.capabilities ?? {
    elicitation: { form: {} },
    ...(options.tasks !== false && { extensions: { [TASKS_EXTENSION]: {} } }),
  };
  const body = {
    jsonrpc: '2.0',
    id: 1,
    method,
    params: {
      ...params,
      _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': capabilities },
    },
  };
  const name = (params.taskId ?? params.name ?? params.uri) as string | undefined;
  // The task tools mark taskId with x-mcp-header "TaskId" (SEP-2243): a conforming client mirrors it.
  const taskIdArgument = method === 'tools/call' ? (params.arguments as { taskId?: unknown } | undefined)?.taskId : undefined;
  const headers: Record<string, string | undefined> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(name !== undefined && { 'mcp-name': name }),
    ...(typeof taskIdArgument === 'string' && { 'mcp-param-taskid': encodeParamValue(taskIdArgument) }),
    ...options.headers,
  };
  const response = await fetch(url, {
    method: 'POST',
    headers: Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined)),
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const data = text.startsWith('{')
    ? text
    : text
        .split('\n')
        .find((line) => line.startsWith('data: '))
        ?.slice(6);
  // Neither JSON nor an SSE message (a balancer's own error page): the status says what happened.
  const json = data === undefined ? {} : JSON.parse(data);
  return { status: response.status, contentType: response.headers.get('content-type'), headers: response.headers, body: json };
}

/** Opens `subscriptions/listen` for `taskIds` by hand, as a 2026-07-28 client with the tasks extension; the response as it comes. */
export function openListen(url: string, id: string, taskIds: string[], token?: string): Promise<Response> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
  };
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'subscriptions/listen',
      ...(token && { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications: { taskIds }, _meta: meta } }),
  });
}

/** The messages of an SSE response as they come, and its end (the stream closed, cleanly or not). */
export function readSse(response: Response): { messages: Record<string, any>[]; ended: Promise<'clean' | Error> } {
  const messages: Record<string, any>[] = [];
  const decoder = new TextDecoder();
  let buffered = '';
  const ended = (async (): Promise<'clean' | Error> => {
    try {
      for await (const chunk of response.body!) {
        buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const event = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const data = event.split('\n').find((line) => line.startsWith('data: '));
          if (data) messages.push(JSON.parse(data.slice(6)));
        }
      }
      return 'clean';
    } catch (error) {
      return error as Error;
    }
  })();
  return { messages, ended };
}

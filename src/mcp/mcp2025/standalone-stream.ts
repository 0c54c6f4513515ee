/**
 * Which stream of a 2025-11-25 connection carries the requests the server sends on its own (a question pushed to a
 * client that only polls): over Streamable HTTP the session's GET stream, which the client may or may not hold and
 * replaces when it reconnects; over stdio (or in memory) the connection itself.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/** The id under which the SDK's Streamable HTTP server transport keeps a session's GET stream. */
const GET_STREAM_ID = '_GET_stream';

/**
 * The stream on which a request the server sends on its own reaches the client now, as a token that stays the same
 * while that stream is open and changes when it is replaced; undefined when the client holds none (a Streamable HTTP
 * session without its GET stream: the SDK drops what it would send there). A transport that is one duplex stream
 * (stdio, in memory) is its own token. Reads the SDK's Streamable HTTP transport (v1) where it keeps its streams; a
 * transport that does not keep them there is taken as one duplex stream.
 */
export function standaloneStreamOf(transport: Transport | undefined): object | undefined {
  if (transport === undefined) return undefined;
  const http = (transport as { _webStandardTransport?: object })._webStandardTransport ?? transport;
  const streams = (http as { _streamMapping?: unknown })._streamMapping;
  if (!(streams instanceof Map)) return transport;
  return (streams.get(GET_STREAM_ID) as object | undefined) ?? undefined;
}

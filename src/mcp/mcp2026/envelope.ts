/**
 * The per-request envelope of MCP 2026-07-28 (`_meta` of every request: protocol version and client capabilities),
 * checked for the requests this project serves beside the SDK (task subscriptions), in the order the SDK checks its
 * own: a malformed envelope first, then the version.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  ProtocolErrorCode,
  UnsupportedProtocolVersionError,
} from '@modelcontextprotocol/server';

/** The protocol versions served on the 2026-07-28 path: what `server/discover` lists as `supportedVersions`. */
export const MCP2026_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28'];

/** A JSON-RPC error object, as it goes on the wire. */
export interface EnvelopeRefusal {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * Why a 2026-07-28 request's envelope cannot be served, or undefined: `-32602` when a required field is missing or
 * malformed ("A request missing any required field is malformed; the server MUST reject it with -32602", basic,
 * per-request protocol fields), `-32022` with the supported versions when its version is not one of
 * {@link MCP2026_PROTOCOL_VERSIONS}.
 */
export function envelopeRefusal(params: unknown): EnvelopeRefusal | undefined {
  const meta = (params as { _meta?: unknown } | null | undefined)?._meta;
  const invalid = (key: string, problem: string): EnvelopeRefusal => ({
    code: ProtocolErrorCode.InvalidParams,
    message: `Invalid _meta envelope for protocol revision 2026-07-28: ${key}: ${problem}`,
    data: { envelope: { key, problem } },
  });
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return invalid('_meta', 'the per-request envelope is required');
  const envelope = meta as Record<string, unknown>;
  const version = envelope[PROTOCOL_VERSION_META_KEY];
  if (typeof version !== 'string') return invalid(PROTOCOL_VERSION_META_KEY, version === undefined ? 'missing' : 'must be a string');
  const capabilities = envelope[CLIENT_CAPABILITIES_META_KEY];
  if (capabilities === null || typeof capabilities !== 'object' || Array.isArray(capabilities)) {
    return invalid(CLIENT_CAPABILITIES_META_KEY, capabilities === undefined ? 'missing' : 'must be an object');
  }
  if (!MCP2026_PROTOCOL_VERSIONS.includes(version)) return unsupportedVersion(version);
  return undefined;
}

/** The `-32022` answer to a request naming `requested`, listing the versions served (SEP-2243 / versioning). */
export function unsupportedVersion(requested: string): EnvelopeRefusal {
  const error = new UnsupportedProtocolVersionError({ supported: [...MCP2026_PROTOCOL_VERSIONS], requested });
  return { code: error.code, message: error.message, data: error.data };
}

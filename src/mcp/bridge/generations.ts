/**
 * The servers of both protocol generations a bridge serves over one task core: what the 2025-11-25 server is made with,
 * and the 2026-07-28 handler, which makes a server per request for the caller its credentials name (the local
 * principal without them).
 */
import { createMcpHandler, createRequestStateCodec, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { TaskCore } from '../../core';
import type { Approvals } from '../../approvals/approvals';
import { log } from '../../util/log';
import { createMcp2026Server, type Mcp2026Dependencies } from '../mcp2026/server';
import type { Mcp2025Dependencies } from '../mcp2025/server';
import { SERVER_INFO, SERVER_INSTRUCTIONS } from '../protocol/server-identity';
import { rolesInAuthInfo } from '../calls/call-tool';
import type { CallSeal } from '../protocol/signed-call';
import type { ToolDefinition } from '../tools/types';
import type { BridgeTuning, CreateBridgeOptions } from './bridge-options';

/** What both generations' servers share: the core, the approvals, the tools, and who calls unauthenticated. */
export interface GenerationParts {
  core: TaskCore;
  approvals: Approvals;
  tools: readonly ToolDefinition[];
  tuning: BridgeTuning;
  /** Seals the calls that wait for a confirmation, and 2026-07-28 rounds' state with `stateKey` for `stateTtlMs`. */
  seal: CallSeal;
  stateKey: string | Uint8Array;
  stateTtlMs: number;
  /** The principal and roles of requests without credentials. */
  local: string;
  localRoles: string[];
}

/** The servers of both generations (see the module's comment). */
export interface Generations {
  mcp2025: Mcp2025Dependencies;
  mcp2026: Mcp2026Dependencies;
  /** The 2026-07-28 handler of HTTP requests. */
  mcp2026Handler: McpHttpHandler;
}

/** The servers of both generations a bridge with `options` serves, made of `parts`. */
export function generationsOf(parts: GenerationParts, options: CreateBridgeOptions): Generations {
  const { core, approvals, tools, tuning, seal, local, localRoles } = parts;
  const mcp2025: Mcp2025Dependencies = {
    core,
    approvals,
    tools,
    principalOf: options.principalOf ?? ((extra) => extra.authInfo?.clientId ?? local),
    rolesOf: options.rolesOf ?? ((extra) => (extra.authInfo ? rolesInAuthInfo(extra.authInfo) : localRoles)),
    input: tuning.input,
    inlineBudgetMs: tuning.inlineBudgetMs,
    seal,
    listing: options.taskListing !== false,
  };
  const mcp2026: Mcp2026Dependencies = {
    core,
    approvals,
    tools,
    inlineBudgetMs: tuning.inlineBudgetMs,
    requestState: createRequestStateCodec({
      key: parts.stateKey,
      ttlSeconds: Math.max(1, Math.round(parts.stateTtlMs / 1000)),
      // A round's state resumes only for the principal it was issued to.
      bind: (ctx) => ctx.http?.authInfo?.clientId ?? local,
    }),
    serverInfo: SERVER_INFO,
    instructions: SERVER_INSTRUCTIONS,
    seal,
  };
  const mcp2026Handler = createMcpHandler(
    (context) =>
      context.authInfo
        ? createMcp2026Server(mcp2026, context.authInfo.clientId, rolesInAuthInfo(context.authInfo))
        : createMcp2026Server(mcp2026, local, localRoles),
    {
      legacy: 'reject',
      onerror: (error) => log.error(`mcp (2026-07-28): ${error.message}`),
    },
  );
  return { mcp2025, mcp2026, mcp2026Handler };
}

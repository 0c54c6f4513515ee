/**
 * The bridge as the package's main entry hands it out (`create-bridge.ts`): its endpoints and its life. The task core
 * and the approvals over it stay inside (`../bridge.ts` keeps them for the server's own HTTP routes).
 */
import type { McpEndpoints } from '../endpoints';

/**
 * A connected bridge: the endpoints of every protocol generation (hand it to {@link startHttpServer} or
 * {@link serveStdioForAllGenerations}) over one Temporal-backed task core.
 */
export interface Bridge extends McpEndpoints {
  /** The principal of requests without credentials. */
  localPrincipal: string;
  /** Whether Temporal answers a cheap call (DescribeNamespace) within `deadlineMs`: the health check's question. */
  health(deadlineMs: number): Promise<{ ok: true } | { ok: false; reason: string }>;
  /** Stops the bridge's background work and closes its Temporal connection. */
  close(): Promise<void>;
}

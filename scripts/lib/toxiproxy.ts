/**
 * Toxiproxy between the parts of a stack: TCP proxies whose links can be made slow, lossy or cut on demand, through
 * its HTTP API. The cluster stack puts one between the MCP replicas and Temporal's frontends and one between Temporal
 * and PostgreSQL; the soak injects faults into them (scripts/soak/network-faults.ts).
 */
import { writeFileSync } from 'node:fs';

/** The Toxiproxy release the stack builds (`go install`, into the tool cache). */
export const TOXIPROXY_VERSION = 'v2.5.0';
export const TOXIPROXY_PACKAGE = `github.com/Shopify/toxiproxy/v2/cmd/server@${TOXIPROXY_VERSION}`;

/** One proxy: clients connect to `listen`, Toxiproxy connects them on to `upstream`. */
export interface ProxySpec {
  name: string;
  listen: number;
  upstream: number;
}

/** A toxic as Toxiproxy's API takes it; `stream` is the direction it acts on (upstream: client to server). */
export interface Toxic {
  name: string;
  type: 'latency' | 'bandwidth' | 'timeout' | 'reset_peer' | 'slow_close' | 'slicer' | 'limit_data';
  stream: 'upstream' | 'downstream';
  toxicity?: number;
  attributes: Record<string, number>;
}

/** Writes the file `toxiproxy-server -config` reads: the proxies exist from its start, and again after a restart. */
export function writeProxiesFile(file: string, proxies: readonly ProxySpec[]): void {
  const entries = proxies.map((proxy) => ({
    name: proxy.name,
    listen: `127.0.0.1:${proxy.listen}`,
    upstream: `127.0.0.1:${proxy.upstream}`,
    enabled: true,
  }));
  writeFileSync(file, `${JSON.stringify(entries, null, 2)}\n`);
}

/** The arguments of `toxiproxy-server` for an API on `apiPort` with the proxies of `configFile`. */
export function toxiproxyArgs(apiPort: number, configFile: string): string[] {
  return ['-host', '127.0.0.1', '-port', String(apiPort), '-config', configFile];
}

/** Toxiproxy's HTTP API on 127.0.0.1:`port`. */
export class ToxiproxyApi {
  constructor(private readonly port: number) {}

  /** The names of the proxies it runs. */
  async proxies(): Promise<string[]> {
    return Object.keys((await this.request('GET', '/proxies')) as Record<string, unknown>);
  }

  /** Adds `toxic` to `proxy`. */
  async add(proxy: string, toxic: Toxic): Promise<void> {
    await this.request('POST', `/proxies/${encodeURIComponent(proxy)}/toxics`, { toxicity: 1, ...toxic });
  }

  /** Removes every toxic of `proxy` (the proxy's links are as they were). */
  async clear(proxy: string): Promise<void> {
    const toxics = (await this.request('GET', `/proxies/${encodeURIComponent(proxy)}/toxics`)) as { name: string }[];
    for (const toxic of toxics) {
      await this.request('DELETE', `/proxies/${encodeURIComponent(proxy)}/toxics/${encodeURIComponent(toxic.name)}`);
    }
  }

  private async request(method: string, route: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`http://127.0.0.1:${this.port}${route}`, {
      method,
      ...(body !== undefined && { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      // Taking a toxic away waits for the data it holds to pass: generous on a loaded machine.
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`Toxiproxy ${method} ${route}: HTTP ${response.status}: ${text.trim()}`);
    return text ? (JSON.parse(text) as unknown) : undefined;
  }
}

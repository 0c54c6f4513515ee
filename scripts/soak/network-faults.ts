/**
 * Faults of the network for the cluster soak: one at a time, on a proxy of the stack's Toxiproxy chosen at random,
 * for 10 to 60 s, then the link is whole again. Beside the soak's kills, so that a fault and a crash can meet.
 *
 * - latency: every byte each way waits 0.3 to 1.5 s (with jitter);
 * - slow link: 8 to 64 KiB/s each way;
 * - resets: every connection that carries data is reset (TCP RST), new ones too, until the fault ends;
 * - partition: nothing passes either way and what is sent meanwhile is lost; connections stay open and silent (new
 *   ones are taken and hang) until the fault ends, when Toxiproxy closes them.
 */
import { sleep } from '../../src/util/wait';
import type { Toxic, ToxiproxyApi } from '../lib/toxiproxy';

export const FAULT_KINDS = ['latency', 'slow link', 'resets', 'partition'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** One fault: what it does to which proxy, for how long. */
export interface NetworkFault {
  proxy: string;
  kind: FaultKind;
  seconds: number;
  toxics: Toxic[];
}

/** The links a stack lets the soak break: its Toxiproxy, and the names of the proxies in it. */
export interface FaultableNetwork {
  api: ToxiproxyApi;
  proxies: readonly string[];
}

const between = (low: number, high: number, random: () => number) => Math.round(low + (high - low) * random());

/** Both directions of a link, alike. */
function eachWay(type: Toxic['type'], attributes: Record<string, number>): Toxic[] {
  return (['upstream', 'downstream'] as const).map((stream) => ({ name: `${type}-${stream}`, type, stream, attributes }));
}

/** A fault of `kind` (default: any) on one of `proxies`, lasting 10–60 s. */
export function randomFault(proxies: readonly string[], kind?: FaultKind, random: () => number = Math.random): NetworkFault {
  const proxy = proxies[Math.floor(random() * proxies.length)];
  const chosen = kind ?? FAULT_KINDS[Math.floor(random() * FAULT_KINDS.length)];
  const seconds = between(10, 60, random);
  const toxics = {
    latency: () => {
      const latency = between(300, 1500, random);
      return eachWay('latency', { latency, jitter: Math.round(latency / 4) });
    },
    'slow link': () => eachWay('bandwidth', { rate: between(8, 64, random) }),
    resets: () => eachWay('reset_peer', { timeout: 0 }),
    partition: () => eachWay('timeout', { timeout: 0 }),
  }[chosen]();
  return { proxy, kind: chosen, seconds, toxics };
}

/** How a fault reads in the soak's log. */
export function describeFault(fault: NetworkFault): string {
  const [first] = fault.toxics;
  const detail =
    fault.kind === 'latency'
      ? ` ${first.attributes.latency} ms ± ${first.attributes.jitter}`
      : fault.kind === 'slow link'
        ? ` ${first.attributes.rate} KiB/s`
        : '';
  return `${fault.kind}${detail} on ${fault.proxy} for ${fault.seconds} s`;
}

/** Injects one fault after another into `network` until `until` (a time) or `stop`; counts them by kind. */
export class NetworkFaultInjector {
  readonly injected: Record<FaultKind, number> = Object.fromEntries(FAULT_KINDS.map((kind) => [kind, 0])) as Record<FaultKind, number>;
  /** Faults that could not be put in place or taken away, one line each. */
  readonly problems: string[] = [];

  constructor(
    private readonly network: FaultableNetwork,
    private readonly log: (line: string) => void,
    private readonly mark: (text: string) => void,
  ) {}

  /** A fault, then a whole link for `gapSeconds`, over and over, while a whole fault fits before `until`. */
  async run(until: number, gapSeconds: number, stop: AbortSignal): Promise<void> {
    let round = 0;
    while (!stop.aborted) {
      await sleep(gapSeconds * 1000, stop);
      const fault = randomFault(this.network.proxies);
      if (stop.aborted || Date.now() + fault.seconds * 1000 > until) break;
      round++;
      const what = describeFault(fault);
      try {
        for (const toxic of fault.toxics) await this.network.api.add(fault.proxy, toxic);
      } catch (error) {
        this.problems.push(`fault ${round} (${what}) could not be put in place: ${(error as Error).message}`);
        await this.heal(fault.proxy, round);
        break;
      }
      this.injected[fault.kind]++;
      this.mark(`soak fault ${round}: ${what}`);
      this.log(`soak: fault ${round}: ${what}`);
      await sleep(fault.seconds * 1000, stop);
      if (!(await this.heal(fault.proxy, round))) break;
      this.mark(`soak fault ${round}: over`);
    }
  }

  /** Takes every fault off every proxy, trying three times; false (and a problem noted) when Toxiproxy still refuses. */
  async heal(proxy?: string, round?: number): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        for (const name of proxy ? [proxy] : this.network.proxies) await this.network.api.clear(name);
        return true;
      } catch (error) {
        if (attempt < 3) {
          await sleep(2_000);
          continue;
        }
        this.problems.push(`${round ? `fault ${round}` : 'the faults'} could not be taken away: ${(error as Error).message}`);
        return false;
      }
    }
  }
}

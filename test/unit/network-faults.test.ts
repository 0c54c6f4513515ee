import { describeFault, FAULT_KINDS, randomFault } from '../../scripts/soak/network-faults';

/** A repeatable stream of numbers in [0, 1). */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('faults of the network for the soak', () => {
  test('every kind lasts 10–60 s, acts on both directions of one of the proxies, and reads as what it does', () => {
    const random = seeded(7);
    for (let round = 0; round < 200; round++) {
      const fault = randomFault(['a', 'b'], undefined, random);
      expect(['a', 'b']).toContain(fault.proxy);
      expect(FAULT_KINDS).toContain(fault.kind);
      expect(fault.seconds).toBeGreaterThanOrEqual(10);
      expect(fault.seconds).toBeLessThanOrEqual(60);
      expect(fault.toxics.map((toxic) => toxic.stream).sort()).toEqual(['downstream', 'upstream']);
      expect(new Set(fault.toxics.map((toxic) => toxic.name)).size).toBe(2);
    }
  });

  test('each kind is the toxic that does it', () => {
    const random = seeded(3);
    const of = (kind: (typeof FAULT_KINDS)[number]) => randomFault(['link'], kind, random);
    const latency = of('latency');
    expect(latency.toxics[0]).toMatchObject({ type: 'latency' });
    expect(latency.toxics[0].attributes.latency).toBeGreaterThanOrEqual(300);
    expect(latency.toxics[0].attributes.latency).toBeLessThanOrEqual(1500);
    expect(describeFault(latency)).toMatch(/^latency \d+ ms ± \d+ on link for \d+ s$/);
    const slow = of('slow link');
    expect(slow.toxics[0]).toMatchObject({ type: 'bandwidth' });
    expect(describeFault(slow)).toMatch(/^slow link \d+ KiB\/s on link/);
    // A partition lets nothing through and keeps connections open and silent; resets cut every connection that carries data.
    expect(of('partition').toxics[0]).toMatchObject({ type: 'timeout', attributes: { timeout: 0 } });
    expect(of('resets').toxics[0]).toMatchObject({ type: 'reset_peer', attributes: { timeout: 0 } });
  });

  test('over many rounds every kind and every proxy comes up', () => {
    const random = seeded(11);
    const faults = Array.from({ length: 100 }, () => randomFault(['a', 'b'], undefined, random));
    expect(new Set(faults.map((fault) => fault.kind))).toEqual(new Set(FAULT_KINDS));
    expect(new Set(faults.map((fault) => fault.proxy))).toEqual(new Set(['a', 'b']));
  });
});

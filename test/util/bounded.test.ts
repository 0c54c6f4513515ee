import { addBounded, setBounded } from '../../src/util/bounded';

describe('bounded maps and sets', () => {
  test('setBounded keeps the newest entries up to the limit; setting a key again makes it the newest', () => {
    const map = new Map<string, number>();
    for (const key of ['a', 'b', 'c']) setBounded(map, key, 1, 3);
    setBounded(map, 'a', 2, 3);
    setBounded(map, 'd', 1, 3);
    expect([...map.keys()]).toEqual(['c', 'a', 'd']);
    expect(map.get('a')).toBe(2);
  });

  test('addBounded keeps the newest members up to the limit', () => {
    const set = new Set<number>();
    for (let value = 0; value < 2500; value++) addBounded(set, value, 1000);
    expect(set.size).toBe(1000);
    expect(set.has(1499)).toBe(false);
    expect(set.has(1500)).toBe(true);
  });
});

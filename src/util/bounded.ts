/**
 * Maps and sets that hold at most a given number of entries, dropping the oldest: what a long-lived connection
 * remembers per task stays bounded however many tasks it touches.
 */

/** Sets `key` in `map` as its newest entry and drops the oldest entries beyond `limit`. */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, limit: number): void {
  map.delete(key);
  map.set(key, value);
  for (const oldest of map.keys()) {
    if (map.size <= limit) break;
    map.delete(oldest);
  }
}

/** Adds `value` to `set` as its newest member and drops the oldest members beyond `limit`. */
export function addBounded<T>(set: Set<T>, value: T, limit: number): void {
  set.delete(value);
  set.add(value);
  for (const oldest of set) {
    if (set.size <= limit) break;
    set.delete(oldest);
  }
}

/**
 * What holds a process's heap: a V8 heap snapshot (the `.heapsnapshot` Node writes on `--heapsnapshot-signal`) summed
 * by kind of object, and the difference of two. The file is read as bytes and only its nodes and strings are decoded,
 * so a snapshot larger than the longest string V8 makes is read all the same.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { sleep } from '../../src/util/wait';

/** Objects of one kind (`type:name`, e.g. `object:Map`, `closure:bound run`, `string`) in a snapshot. */
export interface HeapKind {
  count: number;
  /** Bytes, the objects' own sizes (not what they retain). */
  size: number;
}

/** A heap snapshot summed by kind. */
export interface HeapSummary {
  /** The sum of every object's own size: the live heap. */
  total: number;
  kinds: Map<string, HeapKind>;
}

/** The kinds of objects whose name says little on its own: summed by type. */
const BY_TYPE = new Set(['hidden', 'code', 'number', 'concatenated string', 'sliced string', 'string', 'symbol', 'bigint', 'object shape']);

/** Sums the snapshot in `file` by kind of object. */
export function summarizeHeapSnapshot(file: string): HeapSummary {
  const bytes = readFileSync(file);
  const nodesAt = bytes.indexOf('"nodes":[');
  const headerAt = bytes.indexOf('"snapshot":');
  if (nodesAt < 0 || headerAt < 0) throw new Error(`${file} is not a V8 heap snapshot`);
  const header = bytes.toString('utf8', headerAt + '"snapshot":'.length, bytes.lastIndexOf('}', nodesAt) + 1);
  const meta = (JSON.parse(header) as { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } }).meta;
  const fields = meta.node_fields.length;
  const typeField = meta.node_fields.indexOf('type');
  const nameField = meta.node_fields.indexOf('name');
  const sizeField = meta.node_fields.indexOf('self_size');
  const typeNames = meta.node_types[0];

  const nodes = integersFrom(bytes, nodesAt + '"nodes":['.length);
  const strings = stringsFrom(bytes, bytes.indexOf('"strings":[') + '"strings":['.length);
  const kinds = new Map<string, HeapKind>();
  let total = 0;
  for (let at = 0; at + fields <= nodes.length; at += fields) {
    const type = typeNames[nodes[at + typeField]] ?? 'unknown';
    const size = nodes[at + sizeField];
    const kind = BY_TYPE.has(type) ? type : `${type}:${strings[nodes[at + nameField]] ?? '?'}`;
    const entry = kinds.get(kind) ?? { count: 0, size: 0 };
    entry.count++;
    entry.size += size;
    kinds.set(kind, entry);
    total += size;
  }
  return { total, kinds };
}

/** What grew from `before` to `after`, the largest first: `top` kinds, each with its count and bytes added. */
export function heapGrowth(before: HeapSummary, after: HeapSummary, top: number): { kind: string; count: number; size: number }[] {
  const grown = [...after.kinds].map(([kind, now]) => {
    const was = before.kinds.get(kind) ?? { count: 0, size: 0 };
    return { kind, count: now.count - was.count, size: now.size - was.size };
  });
  return grown.sort((a, b) => b.size - a.size).slice(0, top);
}

/**
 * Has process `pid` (started with `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=dir`) write a heap snapshot, and
 * returns its path once written: Node writes it on its main thread, so a file whose size holds still while `alive()`
 * (a request the process answers) comes back is complete.
 */
export async function takeHeapSnapshot(pid: number, dir: string, alive: () => Promise<unknown>, timeoutMs = 600_000): Promise<string> {
  const before = new Set(snapshotsIn(dir));
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + timeoutMs;
  let file: string | undefined;
  let size = -1;
  while (Date.now() < deadline) {
    await sleep(500);
    file ??= snapshotsIn(dir).find((name) => !before.has(name));
    if (!file) continue;
    await alive();
    const now = statSync(path.join(dir, file)).size;
    if (now > 0 && now === size) return path.join(dir, file);
    size = now;
  }
  throw new Error(`process ${pid} wrote no heap snapshot in ${dir} within ${timeoutMs / 1000} s`);
}

function snapshotsIn(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.endsWith('.heapsnapshot'));
}

/** The whole numbers of a JSON array of them, from `from` (just past its `[`) to its `]`. */
function integersFrom(bytes: Buffer, from: number): number[] {
  const values: number[] = [];
  let value = 0;
  let inNumber = false;
  for (let at = from; at < bytes.length; at++) {
    const byte = bytes[at];
    if (byte >= 0x30 && byte <= 0x39) {
      value = value * 10 + (byte - 0x30);
      inNumber = true;
      continue;
    }
    if (inNumber) values.push(value);
    value = 0;
    inNumber = false;
    if (byte === 0x5d) break;
  }
  return values;
}

/** The strings of a JSON array of them, from `from` (just past its `[`) to its `]`. */
function stringsFrom(bytes: Buffer, from: number): string[] {
  const values: string[] = [];
  let at = from;
  while (at < bytes.length) {
    const byte = bytes[at];
    if (byte === 0x5d) break;
    if (byte !== 0x22) {
      at++;
      continue;
    }
    let end = at + 1;
    while (end < bytes.length && bytes[end] !== 0x22) end += bytes[end] === 0x5c ? 2 : 1;
    values.push(JSON.parse(bytes.toString('utf8', at, end + 1)) as string);
    at = end + 1;
  }
  return values;
}

/**
 * The bench's heap snapshot reader: a V8 `.heapsnapshot` summed by kind of object, from its bytes, and the growth
 * between two.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { heapGrowth, summarizeHeapSnapshot } from '../../scripts/lib/heap-snapshot';

const NODE_TYPES = [
  'hidden',
  'array',
  'string',
  'object',
  'code',
  'closure',
  'regexp',
  'number',
  'native',
  'synthetic',
  'concatenated string',
  'sliced string',
  'symbol',
  'bigint',
  'object shape',
];

let dir: string;
beforeAll(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'heap-snapshot-'))));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A snapshot file as V8 writes one (its layout and field order), of the nodes given as [type, name, self size]. */
function snapshotFile(name: string, nodes: [string, string, number][]): string {
  const strings = [''];
  const index = (text: string) => (strings.includes(text) ? strings.indexOf(text) : strings.push(text) - 1);
  const flat = nodes.flatMap(([type, label, size], id) => [NODE_TYPES.indexOf(type), index(label), id * 2 + 1, size, 0, 0, 0]);
  const meta = {
    node_fields: ['type', 'name', 'id', 'self_size', 'edge_count', 'trace_node_id', 'detachedness'],
    node_types: [NODE_TYPES, 'string', 'number', 'number', 'number', 'number', 'number'],
    edge_fields: ['type', 'name_or_index', 'to_node'],
    edge_types: [['context', 'element', 'property', 'internal', 'hidden', 'shortcut', 'weak'], 'string_or_number', 'node'],
  };
  const text =
    `{"snapshot":${JSON.stringify({ meta, node_count: nodes.length, edge_count: 0, trace_function_count: 0 })},\n` +
    `"nodes":[${flat.join(',')}],\n"edges":[],\n"trace_function_infos":[],\n"trace_tree":[],\n"samples":[],\n"locations":[],\n` +
    `"strings":[${strings.map((each) => JSON.stringify(each)).join(',\n')}]}`;
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('heap snapshots', () => {
  test('objects are summed by constructor, strings and other unnamed kinds by type; names with quotes and escapes are read whole', () => {
    const file = snapshotFile('one.heapsnapshot', [
      ['object', 'Map', 100],
      ['object', 'Map', 60],
      ['object', 'Watch "of" \\ a task\n', 40],
      ['string', 'some text', 24],
      ['string', 'other text', 32],
      ['closure', 'run', 56],
    ]);
    const summary = summarizeHeapSnapshot(file);
    expect(summary.total).toBe(312);
    expect(summary.kinds.get('object:Map')).toEqual({ count: 2, size: 160 });
    expect(summary.kinds.get('object:Watch "of" \\ a task\n')).toEqual({ count: 1, size: 40 });
    expect(summary.kinds.get('string')).toEqual({ count: 2, size: 56 });
    expect(summary.kinds.get('closure:run')).toEqual({ count: 1, size: 56 });
  });

  test('the growth between two snapshots, largest first, kinds that shrank included', () => {
    const before = summarizeHeapSnapshot(
      snapshotFile('before.heapsnapshot', [
        ['object', 'Map', 100],
        ['code', 'f', 500],
      ]),
    );
    const after = summarizeHeapSnapshot(
      snapshotFile('after.heapsnapshot', [
        ['object', 'Map', 100],
        ['object', 'Map', 100],
        ['object', 'Object', 30],
      ]),
    );
    expect(heapGrowth(before, after, 2)).toEqual([
      { kind: 'object:Map', count: 1, size: 100 },
      { kind: 'object:Object', count: 1, size: 30 },
    ]);
  });

  test('a file that is no heap snapshot is refused', () => {
    const file = path.join(dir, 'not.heapsnapshot');
    writeFileSync(file, '{"something":"else"}');
    expect(() => summarizeHeapSnapshot(file)).toThrow(/is not a V8 heap snapshot/);
  });
});

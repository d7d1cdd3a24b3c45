import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

// What a V8 heap snapshot holds, by node type and constructor name: count and self size, largest first.
//   node --import tsx tools/bench/heap-summary.ts FILE.heapsnapshot [--top 30]
const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '30' } }, allowPositionals: true });
const file = positionals[0];
if (!file) throw new Error('usage: heap-summary.ts FILE.heapsnapshot [--top N]');

interface Snapshot {
  readonly snapshot: { readonly meta: { readonly node_fields: string[]; readonly node_types: [string[], ...unknown[]] } };
  readonly nodes: number[];
  readonly strings: string[];
}
const heap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
const fields = heap.snapshot.meta.node_fields;
const [types] = heap.snapshot.meta.node_types;
const width = fields.length;
const at = (field: string) => fields.indexOf(field);
const [TYPE, NAME, SIZE] = [at('type'), at('name'), at('self_size')];

const groups = new Map<string, { count: number; bytes: number }>();
let total = 0;
for (let i = 0; i < heap.nodes.length; i += width) {
  const type = types[heap.nodes[i + TYPE] as number] ?? '?';
  // Strings are grouped as one; other nodes by their constructor (or code/array kind).
  const name = type === 'string' || type === 'concatenated string' || type === 'sliced string' ? '' : (heap.strings[heap.nodes[i + NAME] as number] ?? '?').slice(0, 60);
  const bytes = heap.nodes[i + SIZE] as number;
  const key = `${type} ${name}`.trim();
  const group = groups.get(key) ?? { count: 0, bytes: 0 };
  group.count++;
  group.bytes += bytes;
  groups.set(key, group);
  total += bytes;
}
const MiB = 1048576;
console.log(`${file}: ${(total / MiB).toFixed(1)} MiB in ${(heap.nodes.length / width).toLocaleString('en')} nodes`);
for (const [key, { count, bytes }] of [...groups].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, Number(values.top))) {
  console.log(`${(bytes / MiB).toFixed(2).padStart(8)} MiB ${count.toLocaleString('en').padStart(10)}  ${key}`);
}

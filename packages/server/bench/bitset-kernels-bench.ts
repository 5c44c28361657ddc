// The storefront index's word loops, side by side in one process: each operation on ordinary
// arrays (the JavaScript loops of bitsets.ts) and on arena bitsets (the WebAssembly SIMD kernels of
// kernels.wat), same bits, interleaved in rounds; and a whole range leaf over a column of random
// prices with distinct bounds (digit bitsets, or the kept bitsets of the bound's bucket). Reports
// microseconds per call and the ratio kernel ÷ loop; asserts nothing.
//
//   node bench/bitset-kernels-bench.ts [--slots 1000000,10000000] [--rounds 5]
import { parseArgs } from 'node:util';
import { andAll, andInto, arenaCopy, complement, copyBits, countAll, fillBits, popcount, wordsFor } from '../src/catalog/storefront-index/bits.ts';
import { RangeIndex } from '../src/catalog/storefront-index/range-index.ts';
import { arenaBits } from '../src/catalog/kernels.ts';
import { createRandom } from '../src/catalog/seed/prng.ts';
import { progress } from './lib/processes.ts';

const { values } = parseArgs({ options: { slots: { type: 'string' }, rounds: { type: 'string' } } });
const sizes = (values.slots ?? '1000000,10000000').split(',').map(Number);
const rounds = Number(values.rounds ?? 5);

/** Microseconds per call of `run`, over enough calls to take about 100 ms. */
function perCall(run: (i: number) => void): number {
  for (let i = 0; i < 20; i += 1) run(i);
  let calls = 0;
  const started = performance.now();
  while (performance.now() - started < 100) run(calls++);
  return ((performance.now() - started) * 1000) / calls;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const rows: string[] = ['| slots | operation | JavaScript loop µs | kernel µs | kernel ÷ loop |', '| --- | --- | --- | --- | --- |'];
for (const size of sizes) {
  const random = createRandom(`kernels-${size}`);
  const words = wordsFor(size);
  const plain = [new Uint32Array(words), new Uint32Array(words)] as const;
  for (const bits of plain) for (let i = 0; i < words; i += 1) bits[i] = random.int(0, 0xffffffff);
  const arena = [arenaCopy(plain[0]), arenaCopy(plain[1])] as const;
  const column = new Float64Array(size);
  for (let slot = 0; slot < size; slot += 1) column[slot] = random.int(100, 30_000) / 100;
  const range = RangeIndex.build(column, size, size);
  const bounds = Array.from({ length: 4_096 }, () => random.int(2_000, 12_000) / 100 + random.int(1, 999) / 100_000);
  const under = (bucket: number, inArena: boolean): Uint32Array => {
    const bits = inArena ? arenaBits(words) : new Uint32Array(words);
    range.under(bits, size, bucket);
    return bits;
  };
  // One bound's bucket, kept as a caller keeps it, for the "around" leaf.
  const kept = range.bucketOf(bounds[0]!);
  const around = (inArena: boolean): readonly [Uint32Array, Uint32Array] => [under(kept, inArena), under(kept + 1, inArena)];
  const [plainAround, arenaAround] = [around(false), around(true)];
  const keptBound = bounds[0]!;
  // Each bound's bucket used twice first: the bucket's sorted members are made on its second use
  // (a pass like a leaf's), so the figures below are of leaves over buckets used before.
  for (let use = 0; use < 2; use += 1) {
    for (const bound of bounds) {
      fillBits(arena[0], true);
      range.intersect(arena[0], column, size, '>=', bound);
    }
  }
  const operations: [string, (bits: readonly [Uint32Array, Uint32Array], i: number, inArena: boolean) => void][] = [
    ['AND of two bitsets', (bits) => andInto(bits[0], bits[1])],
    ['population count', (bits) => void popcount(bits[0])],
    ['AND of one into a new result, counted (andAll)', (bits) => void andAll(bits[0], [bits[1]], true)],
    ['AND of three, one read flipped, counted, nothing written (countAll)', (bits) => void countAll([bits[0], bits[1], bits[0]], size, [0, -1, 0])],
    ['complement', (bits) => void complement(bits[0], size)],
    ['fill', (bits) => fillBits(bits[0], true)],
    ['copy', (bits) => copyBits(bits[0], bits[1])],
    [
      'range leaf, new bound (digit bitsets)',
      (bits, i) => {
        fillBits(bits[0], true);
        range.intersect(bits[0], column, size, '>=', bounds[i % bounds.length]!);
      },
    ],
    [
      "range leaf, the bucket's bitsets kept",
      (bits, _i, inArena) => {
        fillBits(bits[0], true);
        range.intersect(bits[0], column, size, '<', keptBound, inArena ? arenaAround : plainAround);
      },
    ],
  ];
  for (const [name, run] of operations) {
    const loop: number[] = [];
    const kernel: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      loop.push(perCall((i) => run(plain, i, false)));
      kernel.push(perCall((i) => run(arena, i, true)));
    }
    const [l, k] = [median(loop), median(kernel)];
    progress(`kernels ${size}: ${name}: loop ${l.toFixed(1)} µs, kernel ${k.toFixed(1)} µs`);
    rows.push(`| ${size.toLocaleString('en')} | ${name} | ${l.toFixed(1)} | ${k.toFixed(1)} | ${(k / l).toFixed(2)}× |`);
  }
}
process.stdout.write(`${rows.join('\n')}\n`);

// Equality on a hashed column (`id`, `product_id`, `title`, `slug`: columns.ts keeps each as a
// 64-bit hash per slot) answered without a pass over the column: the slots are chained by their
// hash's low bits, so `id = X` reads one short chain instead of every slot.
//
// Guarantees: `forEach` visits every slot whose hash is the one asked for, each once, ascending;
// the owner keeps the chains current with `move` on every write that adds a slot or changes its
// hash. Limits: 4 bytes per slot plus 4 per bucket (a power of two, a quarter to half the slots
// when built: chains of two to four, longer where many slots share a value, such as a common
// title); the owner builds it on the first equality asked of the column and again once the
// column has doubled.
import { Growable } from './growable.ts';

/** No slot: the end of a chain, or an empty bucket. */
const END = -1;

export class HashLookup {
  /** Per bucket (a hash's low bits), the first slot of its chain. */
  readonly #head: Int32Array;
  readonly #mask: number;
  /** Per slot, the next slot of its bucket's chain. */
  readonly #next = new Growable((n) => new Int32Array(n));
  /** Slots when built: the owner builds it again once the column has doubled. */
  readonly builtAt: number;

  private constructor(size: number, capacity: number) {
    const buckets = 2 ** Math.max(4, Math.ceil(Math.log2(Math.max(1, size / 4))));
    this.#head = new Int32Array(buckets).fill(END);
    this.#mask = buckets - 1;
    this.#next.fit(capacity);
    this.builtAt = size;
  }

  /** Chains slots `0 … size-1` of `hashes` (two words per slot, low word first), with room for `capacity` slots. */
  static build(hashes: Uint32Array, size: number, capacity: number): HashLookup {
    const lookup = new HashLookup(size, capacity);
    const head = lookup.#head;
    const next = lookup.#next.data;
    const mask = lookup.#mask;
    // From the last slot down: each chain comes out ascending.
    for (let slot = size - 1; slot >= 0; slot -= 1) {
      const bucket = hashes[2 * slot]! & mask;
      next[slot] = head[bucket]!;
      head[bucket] = slot;
    }
    return lookup;
  }

  /** Slots it has room for. */
  get capacity(): number {
    return this.#next.data.length;
  }

  /** Holds room for exactly `capacity` slots (at least every slot chained). */
  resize(capacity: number): void {
    this.#next.fit(capacity);
  }

  /**
   * Moves `slot` to the chain of its hash's new low word `low`: out of the chain of `previous`
   * (its former low word) unless it is new. Keeps the chain ascending.
   */
  move(slot: number, previous: number | undefined, low: number): void {
    if (previous !== undefined) this.#unlink(slot, previous & this.#mask);
    this.#link(slot, low & this.#mask);
  }

  /** Entries of the chain that `low` (a hash's low word) falls in: what `forEach` reads. */
  chainLength(low: number): number {
    const next = this.#next.data;
    let length = 0;
    for (let at = this.#head[low & this.#mask]!; at !== END; at = next[at]!) length += 1;
    return length;
  }

  /** Calls `each` with every slot whose hash in `hashes` is (`low`, `high`), ascending. */
  forEach(hashes: Uint32Array, low: number, high: number, each: (slot: number) => void): void {
    const next = this.#next.data;
    for (let at = this.#head[low & this.#mask]!; at !== END; at = next[at]!) {
      if (hashes[2 * at] === low && hashes[2 * at + 1] === high) each(at);
    }
  }

  #link(slot: number, bucket: number): void {
    const next = this.#next.data;
    let at = this.#head[bucket]!;
    if (at === END || at > slot) {
      next[slot] = at;
      this.#head[bucket] = slot;
      return;
    }
    while (next[at] !== END && next[at]! < slot) at = next[at]!;
    next[slot] = next[at]!;
    next[at] = slot;
  }

  #unlink(slot: number, bucket: number): void {
    const next = this.#next.data;
    let at = this.#head[bucket]!;
    if (at === slot) {
      this.#head[bucket] = next[slot]!;
      return;
    }
    while (at !== END && next[at] !== slot) at = next[at]!;
    if (at === END) throw new Error(`hash lookup: slot ${slot} is not in the chain of its former hash`);
    next[at] = next[slot]!;
  }
}

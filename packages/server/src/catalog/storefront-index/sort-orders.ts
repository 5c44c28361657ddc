// The sort orders: per number column a sort asks for, its slots ascending by (value, slot), kept
// current by every write. Slots ascend with cursors, so ties by slot are ties by cursor, and a
// descending sort is the ascending order read backwards.
//
// Limits: a write batch of more than INCREMENTAL_ORDER_MAX rows sets its slots aside; the next
// read of an order sorts only those and merges them into each order (one pass over the order plus
// O(k log n), or O(n + k log k) for a batch that large); smaller batches move each slot (a memmove).
import type { StorefrontSort } from '../model.ts';
import { setBit, wordsFor } from './bits.ts';
import { valueOrder } from './ordering.ts';

/** The number columns a sort orders by (besides the cursor). */
export const SORTED_FIELDS = ['updated_at', 'product_published_at'] as const;
export type SortedField = (typeof SORTED_FIELDS)[number];

/** The column a sort orders by and whether it descends; undefined for the cursor sorts. */
export function sortKeyOf(sort: StorefrontSort): { field: SortedField; descending: boolean } | undefined {
  switch (sort) {
    case 'cursor:asc':
    case 'cursor:desc':
      return undefined;
    case 'updated_at:asc':
    case 'updated_at:desc':
      return { field: 'updated_at', descending: sort === 'updated_at:desc' };
    case 'published_at:asc':
    case 'published_at:desc':
      return { field: 'product_published_at', descending: sort === 'published_at:desc' };
  }
}

/** Largest write batch that moves slots within the sort orders one by one instead of merging them. */
const INCREMENTAL_ORDER_MAX = 256;

/** The orders of one index's sorts; the caller hands it each column as it reads an order. */
export class SortOrders {
  /** Slots in ascending order of a number column (ties by slot), per column a sort has asked for. */
  readonly #orders = new Map<string, SortedSlots>();
  /** Slots written since the orders were last merged (see `beginWrite`). */
  readonly #unmerged = new Set<number>();

  /**
   * How a write of `rows` rows keeps the orders: undefined, each slot moved in place as its value
   * changes (`order`); or a set its slots join, to be merged when an order is next read. While
   * slots wait there, every write joins them: their places in the orders are stale.
   */
  beginWrite(rows: number): Set<number> | undefined {
    return (rows > INCREMENTAL_ORDER_MAX || this.#unmerged.size > 0) && this.#orders.size > 0 ? this.#unmerged : undefined;
  }

  /** The order of `field` to move a slot in as its value changes, if one is kept. */
  inPlace(field: string): SortedSlots | undefined {
    return this.#orders.get(field);
  }

  /** The slots ascending by `field`'s values in `columns` (made on first use; slots set aside merged first). */
  permutation(field: SortedField, columns: Record<SortedField, Float64Array>, size: number): Int32Array {
    if (this.#unmerged.size > 0) {
      for (const [sorted, order] of this.#orders) order.merge(this.#unmerged, columns[sorted as SortedField]);
      this.#unmerged.clear();
    }
    let order = this.#orders.get(field);
    if (order === undefined) {
      const slots = new Int32Array(size);
      for (let slot = 0; slot < size; slot += 1) slots[slot] = slot;
      this.#orders.set(field, (order = new SortedSlots(sortSlots(slots, columns[field]))));
    }
    return order.slots;
  }

  /** Position → slot for a sort. */
  order(sort: StorefrontSort, columns: Record<SortedField, Float64Array>, size: number): (position: number) => number {
    const last = size - 1;
    const key = sortKeyOf(sort);
    if (key === undefined) return sort === 'cursor:asc' ? (position) => position : (position) => last - position;
    const permutation = this.permutation(key.field, columns, size);
    // Descending by key, ties by cursor descending: the ascending order read backwards.
    return key.descending ? (position) => permutation[last - position]! : (position) => permutation[position]!;
  }

  /** Takes the orders a snapshot kept (slots of every sorted field, in SORTED_FIELDS order). */
  restore(slots: readonly Int32Array[]): void {
    SORTED_FIELDS.forEach((field, at) => this.#orders.set(field, new SortedSlots(slots[at]!)));
  }
}

/** Slots ascending by (value, slot): slots ascend with cursors, so ties by slot are ties by cursor. */
function sortSlots(slots: Int32Array, column: Float64Array): Int32Array {
  const order = valueOrder(slots, Float64Array.from(slots, (slot) => column[slot]!));
  return Int32Array.from(order, (at) => slots[at]!);
}

/** Slots ascending by (column value, slot), with room to grow; `slots` is the live part. */
export class SortedSlots {
  #buffer: Int32Array;
  #length: number;
  constructor(slots: Int32Array) {
    this.#buffer = slots;
    this.#length = slots.length;
  }
  get slots(): Int32Array {
    return this.#buffer.subarray(0, this.#length);
  }
  /** Takes `slot` out; `column` must still hold the value it was ordered by. */
  remove(slot: number, column: Float64Array): void {
    const at = this.#position(slot, column[slot]!, column);
    if (this.#buffer[at] !== slot) throw new Error(`storefront sort order lost slot ${slot}`);
    this.#buffer.copyWithin(at, at + 1, this.#length);
    this.#length -= 1;
  }
  /** Puts `slot` in by the value `column` holds for it now. */
  insert(slot: number, column: Float64Array): void {
    if (this.#length === this.#buffer.length) this.#grow(this.#length + 1);
    const at = this.#position(slot, column[slot]!, column);
    this.#buffer.copyWithin(at + 1, at, this.#length);
    this.#buffer[at] = slot;
    this.#length += 1;
  }
  /**
   * Puts `changed` (new slots, or slots whose value may have changed: `column` holds their values
   * now) in order: the others keep their order, the changed ones are sorted and merged in.
   */
  merge(changed: Set<number>, column: Float64Array): void {
    const moved = sortSlots(Int32Array.from(changed), column);
    const dropped = new Uint32Array(wordsFor(column.length));
    for (const slot of moved) setBit(dropped, slot);
    // The others, in order, compacted in place.
    const buffer = this.#buffer;
    let keptLength = 0;
    for (let at = 0; at < this.#length; at += 1) {
      const slot = buffer[at]!;
      if ((dropped[slot >>> 5]! & (1 << (slot & 31))) === 0) buffer[keptLength++] = slot;
    }
    const length = keptLength + moved.length;
    const merged = new Int32Array(Math.max(length, buffer.length));
    // Each moved slot's place is found by binary search and the kept run before it copied whole;
    // a batch so large that its searches would read more values than a walk (k log n > n) is
    // merged by walking both.
    if (moved.length * Math.log2(keptLength + 2) < keptLength) {
      let from = 0;
      let at = 0;
      for (const slot of moved) {
        const value = column[slot]!;
        let low = from;
        let high = keptLength;
        while (low < high) {
          const middle = (low + high) >>> 1;
          const other = buffer[middle]!;
          const v = column[other]!;
          if (v < value || (v === value && other < slot)) low = middle + 1;
          else high = middle;
        }
        merged.set(buffer.subarray(from, low), at);
        at += low - from;
        from = low;
        merged[at++] = slot;
      }
      merged.set(buffer.subarray(from, keptLength), at);
    } else {
      let k = 0;
      let m = 0;
      for (let at = 0; at < length; at += 1) {
        if (m === moved.length) merged[at] = buffer[k++]!;
        else if (k === keptLength) merged[at] = moved[m++]!;
        else {
          const a = buffer[k]!;
          const b = moved[m]!;
          const before = column[a]! < column[b]! || (column[a] === column[b] && a < b);
          merged[at] = before ? buffer[k++]! : moved[m++]!;
        }
      }
    }
    this.#buffer = merged;
    this.#length = length;
  }
  #grow(length: number): void {
    const grown = new Int32Array(Math.max(1024, length, this.#buffer.length * 2));
    grown.set(this.#buffer);
    this.#buffer = grown;
  }
  /** The first position whose (value, slot) is not below (`value`, `slot`). */
  #position(slot: number, value: number, column: Float64Array): number {
    let low = 0;
    let high = this.#length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const other = this.#buffer[middle]!;
      const v = column[other]!;
      if (v < value || (v === value && other < slot)) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

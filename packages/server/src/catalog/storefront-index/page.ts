// The page walk: the cursors of one page of the slots a search matches, in the search's order, and
// their number. The matches are the slots set in each of at most three bitsets (each read as it
// is, or flipped), plus a few extra slots listed apart; no result bitset is written.
//
// Guarantees: ties in every sort are broken by cursor; `total` is exact (counted, or given by a
// caller that counted). Limits: a cursor sort walks the bitsets word by word, skipping empty words;
// another sort walks its order slot by slot until the page is full, from where the filter's bound
// on the sort's own column lets matches begin (firstPossible).
import type { FilterExpr } from '../filter/ast.ts';
import type { StorefrontSort } from '../model.ts';
import { compares, type RangeOperator } from './ordering.ts';
import { countAll, nextShared, previousShared, threeSources, wordsFor } from './bits.ts';
import type { StorefrontColumns } from './columns.ts';
import { Growable } from './growable.ts';
import { sortKeyOf } from './sort-orders.ts';

/** What of a search the page walk reads. */
export interface PageRequest {
  sort: StorefrontSort;
  offset: number;
  limit: number;
  /** The search's filter: its bounds on the sort's column tell where in the order matches can begin (firstPossible). */
  filter?: FilterExpr;
}

export const NO_EXTRA = new Int32Array(0);
/** Empty words in a row after which a cursor walk looks for the next set one with a kernel. */
const EMPTY_RUN = 8;

/** Scratch of pageOf, where it marks extra slots: all clear between calls. */
let EXTRA = new Uint32Array(0);

/**
 * The page of the slots set in every bitset of `matches` (undefined: every product; at most
 * three bitsets, each read flipped where its entry of `flips` is -1), or listed in `extras`
 * (slots in none of those, any order), in the search's order, and their number (`counted`, when
 * known).
 */
export function pageOf(
  columns: StorefrontColumns,
  order: (position: number) => number,
  search: PageRequest,
  matches: readonly Uint32Array[] | undefined,
  counted: number | undefined,
  flips: readonly number[] = [],
  extras: Int32Array = NO_EXTRA,
): { cursors: number[]; total: number } {
  const end = search.offset + search.limit;
  if (matches === undefined) {
    const cursors: number[] = [];
    for (let i = search.offset; i < Math.min(end, columns.size); i += 1) cursors.push(columns.cursor.data[order(i)]!);
    return { cursors, total: columns.size };
  }
  const three = threeSources(matches, flips);
  const [a, b, c, fa, fb, fc] = three;
  const size = columns.size;
  const words = wordsFor(size);
  const total = counted ?? countAll(matches, size, flips);
  const slots: number[] = [];
  if (search.sort === 'cursor:asc' || search.sort === 'cursor:desc') {
    // Slots ascend with cursors: walk the set bits word by word, skipping empty words. A flipped
    // bitset holds the last word's slots past the end.
    // A run of EMPTY_RUN empty words hands the rest of the run to a kernel that reads four words
    // a step (nextShared): matches late in the walk (a date bound, as products arrive in date
    // order) cost a vector scan of the words before them, not a JavaScript step per word.
    const ascending = search.sort === 'cursor:asc';
    const lastMask = (size & 31) === 0 ? -1 : (1 << (size & 31)) - 1;
    let empty = 0;
    for (let w = 0; w < words && slots.length < end; w += 1) {
      const at = ascending ? w : words - 1 - w;
      let word = (a[at]! ^ fa) & (b[at]! ^ fb) & (c[at]! ^ fc) & (at === words - 1 ? lastMask : -1);
      if (word === 0) {
        empty += 1;
        if (empty === EMPTY_RUN) {
          empty = 0;
          // The next iteration's word is the next shared one (or the walk ends).
          w = ascending ? nextShared(three, words, at + 1) - 1 : words - 2 - previousShared(three, at);
        }
        continue;
      }
      empty = 0;
      const base = at << 5;
      while (word !== 0 && slots.length < end) {
        const bit = ascending ? 31 - Math.clz32(word & -word) : 31 - Math.clz32(word);
        word &= ~(1 << bit);
        slots.push(base + bit);
      }
    }
    // The extras that come before the last slot walked (all of them if the walk ran out) take
    // their places among those: few, as extras are few among all slots.
    const walked = slots.length;
    const last = walked < end ? (ascending ? size : -1) : slots[walked - 1]!;
    for (const slot of extras) if (ascending ? slot < last : slot > last) slots.push(slot);
    if (slots.length > walked) {
      slots.sort((x, y) => (ascending ? x - y : y - x));
      slots.length = Math.min(slots.length, end);
    }
  } else {
    // Extras are marked in a scratch bitset while the order is walked, and cleared after.
    if (EXTRA.length < words) EXTRA = new Uint32Array(wordsFor(columns.cursor.data.length));
    const x = EXTRA;
    for (const slot of extras) x[slot >>> 5]! |= 1 << (slot & 31);
    try {
      for (let i = firstPossible(columns, order, search); i < size && slots.length < end && slots.length < total; i += 1) {
        const slot = order(i);
        const at = slot >>> 5;
        if (((((a[at]! ^ fa) & (b[at]! ^ fb) & (c[at]! ^ fc)) | x[at]!) & (1 << (slot & 31))) !== 0) slots.push(slot);
      }
    } finally {
      for (const slot of extras) x[slot >>> 5]! &= ~(1 << (slot & 31));
    }
  }
  return { cursors: slots.slice(search.offset).map((slot) => columns.cursor.data[slot]!), total };
}

/**
 * An operand of an AND answered in place (ready-page.ts): the slots of `bits`, read flipped where
 * `flip` is -1, and the `extra` slots, not among those, that pass; for a range leaf, `column`,
 * `operator` and `value` tell whether any slot outside `bits` passes.
 */
export interface ReadySource {
  bits: Uint32Array;
  flip: number;
  extra: Int32Array;
  column: Float64Array | undefined;
  operator: RangeOperator;
  value: number;
}


/** Per extra slot of one source, a bit per other source whose bitset does not hold it (passingExtras). */
const OUTSIDE = new Growable((n) => new Uint8Array(n));
/** The scratch list passingExtras returns a view of. */
const PASSING = new Growable((n) => new Int32Array(n));

/**
 * The extra slots of `sources` that every other source holds, each once (from the first source
 * holding it as extra: a slot outside another's bitset is in it only as one of its extra slots),
 * in no particular order: a view of a scratch list, valid until the next call.
 * One loop per pair of sources, each reading one bitset at the words of one source's extra slots:
 * those are in value order, so on a large catalog every read misses the cache, and a loop whose
 * reads do not wait on one another overlaps the misses, where a slot-by-slot check waited for each.
 */
export function passingExtras(sources: readonly ReadySource[]): Int32Array {
  let passing = 0;
  for (let i = 0; i < sources.length; i += 1) {
    const own = sources[i]!.extra;
    const count = own.length;
    if (count === 0) continue;
    OUTSIDE.ensure(count);
    PASSING.ensure(passing + count);
    const flags = OUTSIDE.data;
    const list = PASSING.data;
    flags.fill(0, 0, count);
    for (let j = 0; j < sources.length; j += 1) {
      if (j === i) continue;
      const { bits, flip } = sources[j]!;
      for (let k = 0; k < count; k += 1) {
        const slot = own[k]!;
        flags[k]! |= ((((bits[slot >>> 5]! ^ flip) >>> (slot & 31)) & 1) ^ 1) << j;
      }
    }
    for (let k = 0; k < count; k += 1) {
      let passes = true;
      for (let j = 0, left = flags[k]!; left !== 0 && passes; j += 1, left >>>= 1) {
        if ((left & 1) === 0) continue;
        const other = sources[j]!;
        passes = j > i && other.column !== undefined && compares(other.column[own[k]!]!, other.operator, other.value);
      }
      if (passes) list[passing++] = own[k]!;
    }
  }
  return PASSING.data.subarray(0, passing);
}

/**
 * The first position of the search's order where a match can be: the order meets the slots of
 * the sort's own column ascending (or descending), so the filter's bounds on that column that the
 * order meets first (lower bounds ascending, upper ones descending; AND operands of the filter,
 * which every match passes) are failed by one run of positions from the start, found by binary
 * search. 0 for a cursor sort, a filter with no such bound, and a column holding NaN (which the
 * order places by slot alone).
 */
export function firstPossible(columns: StorefrontColumns, order: (position: number) => number, search: PageRequest): number {
  const key = sortKeyOf(search.sort);
  const filter = search.filter;
  if (key === undefined || filter === undefined) return 0;
  const leading: { operator: RangeOperator; value: number }[] = [];
  for (const operand of filter.type === 'and' ? filter.operands : [filter]) {
    if (operand.type !== 'compare' || operand.field !== key.field || typeof operand.value !== 'number') continue;
    const lower = operand.operator === '>' || operand.operator === '>=';
    const upper = operand.operator === '<' || operand.operator === '<=';
    if (key.descending ? upper : lower) leading.push({ operator: operand.operator as RangeOperator, value: operand.value });
  }
  const range = columns.builtRangeIndex(key.field);
  if (leading.length === 0 || range === undefined || range.holdsNaN) return 0;
  const column = columns.numbers[key.field].data;
  const passes = (position: number): boolean => leading.every(({ operator, value }) => compares(column[order(position)]!, operator, value));
  let low = 0;
  let high = columns.size;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (passes(middle)) high = middle;
    else low = middle + 1;
  }
  return low;
}

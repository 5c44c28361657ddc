// Answers at once: a search whose parts (its query's words, its shop, its filter's AND operands)
// all have their bitsets at hand is answered from those bitsets in place, in one synchronous step
// (a kept bitset is read before any other search can put it out): counted in one pass that writes
// nothing, its page read word by word from all of them, with no result bitset to write (but one
// AND of the bitsets read as they are, where there are more than three sources). At hand: a kept
// leaf, word or shop, `available`, or a range leaf whose bucket's "under" bitset is kept
// (RangeIndex.split: that bitset, read flipped for `>` and `>=`, plus the members of the value's
// bucket that pass, each checked against the other operands); at most three such range leaves.
// Counted with no bitset instead: an AND of bounds on one number column (by its range index's
// bucket counts and members), and an AND of bounds on two number columns (and `available = true`)
// whose pair table is built (by the table); their pages walked in the listing's order against the
// columns where that walk is short.
import type { FilterExpr } from '../filter/ast.ts';
import { wordsOf } from '../text.ts';
import { andAll, complement, copyBits, countAll, hasBit, setBit } from './bits.ts';
import type { BitsetPool } from './bitset-pool.ts';
import type { NumberField, StorefrontColumns } from './columns.ts';
import type { Evaluator } from './evaluator.ts';
import type { IdleWork } from './idle-work.ts';
import { membersCost } from './leaf-costs.ts';
import type { LeafCache } from './leaf-cache.ts';
import { availableSide, isRangeLeaf, leafKey, shopKey, underKey, wordKey, type Compare } from './leaf-keys.ts';
import { compares, type RangeOperator } from './ordering.ts';
import { firstPossible, NO_EXTRA, pageOf, passingExtras, type PageRequest, type ReadySource } from './page.ts';
import type { PairTables } from './pair-tables.ts';
import type { LeafBase, RangePairCounts } from './range-pair-counts.ts';
import type { RangeSplit } from './range-index.ts';
import { sortKeyOf } from './sort-orders.ts';

/**
 * Positions the table's page walk walks at most, and walks at all when the total says it expects
 * to walk more: past that, the bitsets' page (a word walk) costs less than a check of every position.
 */
const SCAN_MAX = 131_072;
const SCAN_EXPECTED_MAX = 32_768;
/**
 * A walk gives up past this many times the positions the total says to expect (plus
 * SCAN_SLACK): matches bunched late in the order (a bound on a column that grows with the cursor,
 * in a cursor sort) are then paged from the bitsets after a short walk, not a walk of SCAN_MAX.
 */
const SCAN_OVER_EXPECTED = 4;
const SCAN_SLACK = 1_024;

export interface ReadyParts {
  columns: StorefrontColumns;
  work: IdleWork;
  pool: BitsetPool;
  leaves: LeafCache;
  evaluator: Evaluator;
  pairs: PairTables;
  order: (request: PageRequest) => (position: number) => number;
}

/**
 * An AND of range leaves over two number columns, at least one on each (and maybe `available =
 * true`), with their table: `leaves` the bounds on the table's first column, then on its second.
 */
interface RangePair {
  counts: RangePairCounts;
  leaves: readonly [readonly Compare[], readonly Compare[]];
  availableOnly: boolean;
}

type Page = { cursors: number[]; total: number };

export class ReadyPage {
  readonly #parts: ReadyParts;

  constructor(parts: ReadyParts) {
    this.#parts = parts;
  }

  /** The search's page answered at once, or undefined when its parts are not all at hand. */
  answer(search: PageRequest & { text?: string; shopName?: string; filter?: FilterExpr }): Page | undefined {
    const { columns, evaluator, leaves, pool } = this.#parts;
    const filter = search.filter;
    const operands = filter === undefined ? [] : filter.type === 'and' ? filter.operands : [filter];
    const keyed = [...new Set(wordsOf(search.text ?? ''))].map(wordKey);
    if (search.shopName !== undefined) keyed.push(shopKey(search.shopName));
    if (operands.length + keyed.length === 0) return undefined;
    const single = keyed.length === 0 ? this.#singleColumnPage(search, operands) : undefined;
    if (single !== undefined) return single;
    const pair = keyed.length === 0 ? this.#pairOf(operands) : undefined;
    if (pair !== undefined) {
      const scanned = this.#scannedPage(search, pair);
      if (scanned !== undefined) return scanned;
      const paired = this.#pairedSources(pair);
      if (paired !== undefined) return pageOf(columns, this.#parts.order(search), search, paired.bits, paired.total, paired.flips, paired.extras);
    }
    if (!keyed.every((key) => leaves.has(key))) return undefined;
    const version = columns.version;
    const splits = operands.map((operand) => (evaluator.isReady(operand, version) ? null : this.#splitLeaf(operand)));
    if (splits.includes(undefined)) return undefined;
    // The page walk reads at most three sources: the bitsets read as they are are ANDed into one
    // where there are more.
    const splitCount = splits.filter(Boolean).length;
    const plainCount = keyed.length + operands.length - splitCount;
    if (splitCount + Math.min(plainCount, 1) > 3) return undefined;
    const plain = (bits: Uint32Array): ReadySource => ({ bits, flip: 0, extra: NO_EXTRA, column: undefined, operator: '<', value: 0 });
    const keptBits = [
      ...keyed.map((key) => leaves.kept(key)),
      ...operands.map((operand, at) => {
        const split = splits[at];
        return split ? leaves.kept(split.key, 'bucket') : evaluator.ready(operand, version);
      }),
    ];
    // Every bitset is read before any use below: a use of a key not seen before notes it, which
    // may put out a kept bitset (one already read stays as it is until the cache's next keep but one).
    if (keptBits.includes(undefined)) return undefined;
    let sources = keptBits.map((bits, at): ReadySource => {
      const split = at < keyed.length ? null : splits[at - keyed.length];
      return split ? { bits: bits!, flip: split.flip, extra: split.extra, column: split.column, operator: split.operator, value: split.value } : plain(bits!);
    });
    // A use of each range leaf answered from its bucket, as on any other path: once admitted, it
    // is kept whole (made from its parts), and later searches read it with no extra slots to check.
    const whole: [FilterExpr, ReadySource][] = [];
    operands.forEach((operand, at) => {
      if (splits[at] && leaves.use(leafKey(operand as Compare)!, version) === true) whole.push([operand, sources[keyed.length + at]!]);
    });
    const scope = pool.begin(columns.size);
    try {
      if (sources.length > 3) {
        const plainBits = sources.filter((source) => source.column === undefined).map((source) => source.bits);
        const folded = pool.take(scope, false);
        andAll(folded, plainBits, true);
        sources = [plain(folded), ...sources.filter((source) => source.column !== undefined)];
      }
      const bits = sources.map((source) => source.bits);
      const flips = sources.map((source) => source.flip);
      const extras = passingExtras(sources);
      const page = pageOf(columns, this.#parts.order(search), search, bits, countAll(bits, columns.size, flips) + extras.length, flips, extras);
      // Kept once the page is read: a keep may put out bitsets this search reads, and a later keep
      // write into them.
      this.#keepWhole(whole);
      return page;
    } finally {
      pool.end(scope);
    }
  }

  /**
   * An AND of range leaves over two different number columns, one or more on each (and `available
   * = true`, or nothing else), whose pair table is built for the columns as they are: the leaves
   * grouped by the table's columns (field names' order). Undefined for another shape, or when the
   * table is not built: this is then a use of it (its second since a write starts its build).
   */
  #pairOf(operands: readonly FilterExpr[]): RangePair | undefined {
    const ranges = operands.filter(isRangeLeaf);
    const rest = operands.filter((operand) => !isRangeLeaf(operand));
    if (rest.length > 1 || (rest.length === 1 && availableSide(rest[0]!) !== true)) return undefined;
    if (ranges.some((range) => typeof range.value !== 'number')) return undefined;
    const fields = [...new Set(ranges.map((range) => range.field))].sort();
    if (fields.length !== 2) return undefined;
    const counts = this.#parts.pairs.counts([fields[0] as NumberField, fields[1] as NumberField]);
    if (counts === undefined) return undefined;
    return { counts, leaves: [ranges.filter((range) => range.field === fields[0]), ranges.filter((range) => range.field === fields[1])], availableOnly: rest.length === 1 };
  }

  /**
   * The page of a pair's AND walked in the search's order, each slot checked against the two
   * columns (and `available`), its total from countLeaves: no bitset is read or made, so a leaf
   * never seen before costs what a kept one does. Undefined where the walk would be long, as the
   * total says (a selective filter, a deep page; the bitsets' page walks words instead), or turns
   * out to be (matches bunched late in the order).
   */
  #scannedPage(search: PageRequest, pair: RangePair): Page | undefined {
    const { columns, pairs } = this.#parts;
    const { leaves, availableOnly } = pair;
    const total = this.#pairTotal(pair);
    if (total === undefined) return undefined;
    const [x, y] = [columns.numbers[leaves[0][0]!.field as NumberField].data, columns.numbers[leaves[1][0]!.field as NumberField].data];
    const available = columns.available.data;
    const passes = (own: number, bounds: readonly Compare[]): boolean => bounds.every((bound) => compares(own, bound.operator as RangeOperator, bound.value as number));
    const page = this.#walkedPage(search, total, (slot) => (!availableOnly || hasBit(available, slot)) && passes(x[slot]!, leaves[0]) && passes(y[slot]!, leaves[1]));
    if (page !== undefined) pairs.noteScanned();
    return page;
  }

  /**
   * The pair's AND counted by its table: each column's bounds as one interval, the rectangle by
   * inclusion and exclusion of the table's one-sided counts (an interval is what passes its upper
   * bound less what fails its lower one). Undefined where a bound has no base (RangeIndex.base).
   */
  #pairTotal(pair: RangePair): number | undefined {
    const { counts, leaves, availableOnly } = pair;
    const ranges = [counts.first, counts.second];
    const termsOf = (bounds: readonly Compare[], range: (typeof ranges)[number]): { sign: number; leaf: LeafBase }[] | undefined => {
      const lower = tightest(bounds.filter((bound) => bound.operator === '>' || bound.operator === '>='), 1);
      const upper = tightest(bounds.filter((bound) => bound.operator === '<' || bound.operator === '<='), -1);
      const one = (bound: { operator: RangeOperator; value: number }, sign: number): { sign: number; leaf: LeafBase } | undefined => {
        const base = range.base(bound.operator, bound.value);
        return base === undefined ? undefined : { sign, leaf: { ...base, operator: bound.operator, value: bound.value } };
      };
      const terms = lower === undefined ? [one(upper!, 1)] : upper === undefined ? [one(lower, 1)] : emptyInterval(lower, upper) ? [] : [one(upper, 1), one({ operator: lower.operator === '>' ? '<=' : '<', value: lower.value }, -1)];
      return terms.includes(undefined) ? undefined : (terms as { sign: number; leaf: LeafBase }[]);
    };
    const first = termsOf(leaves[0], ranges[0]!);
    const second = termsOf(leaves[1], ranges[1]!);
    if (first === undefined || second === undefined) return undefined;
    let total = 0;
    for (const a of first) for (const b of second) total += a.sign * b.sign * counts.countLeaves(a.leaf, b.leaf, availableOnly);
    return total;
  }

  /**
   * An AND of range leaves over one number column, and maybe an equality on `available`, counted
   * by its range index (RangeIndex.count: the buckets' counts, or their counts of available slots,
   * and the members of at most two buckets) and its page walked in the listing's order against
   * the column; undefined for another shape or where the walk would be long.
   */
  #singleColumnPage(search: PageRequest, operands: readonly FilterExpr[]): Page | undefined {
    const availables = operands.filter((operand) => availableSide(operand) !== undefined);
    const leaves = operands.filter(isRangeLeaf);
    if (availables.length > 1 || leaves.length === 0 || leaves.length + availables.length !== operands.length) return undefined;
    if (!leaves.every((leaf) => typeof leaf.value === 'number' && leaf.field === leaves[0]!.field)) return undefined;
    const side = availables.length === 0 ? undefined : availableSide(availables[0]!)!;
    const { columns } = this.#parts;
    const field = leaves[0]!.field as NumberField;
    const column = columns.numbers[field].data;
    const range = columns.rangeIndex(field);
    const size = columns.size;
    if (!range.hasMembers) {
      // The buckets' members are made between requests (once per column asked of), as a keep is.
      // The column as it is when the task runs: a write may have grown it into a new array since.
      this.#parts.work.later(`members\u0000${field}`, () => range.buildMembers(columns.numbers[field].data, columns.size), () => columns.builtRangeIndex(field) === range, membersCost(size));
      return undefined;
    }
    const bits = columns.available.data;
    const available = side === undefined ? undefined : { bits, side };
    if (available !== undefined && !range.countsAvailable) return undefined;
    const count = (operator: RangeOperator, value: number): number => range.count(column, size, operator, value, available)!;
    // The tightest bound on each side; both: the slots under the upper one less those failing the lower one.
    const lower = tightest(leaves.filter((leaf) => leaf.operator === '>' || leaf.operator === '>='), 1);
    const upper = tightest(leaves.filter((leaf) => leaf.operator === '<' || leaf.operator === '<='), -1);
    let total: number;
    if (lower === undefined) total = count(upper!.operator, upper!.value);
    else if (upper === undefined) total = count(lower.operator, lower.value);
    else if (emptyInterval(lower, upper)) total = 0;
    else total = count(upper.operator, upper.value) - count(lower.operator === '>' ? '<=' : '<', lower.value);
    const inRange = (slot: number): boolean => leaves.every((leaf) => compares(column[slot]!, leaf.operator as RangeOperator, leaf.value as number));
    // Sorted by the bounded column, the slots in range are one run of the order; `available` picks among them.
    const run = side === undefined && sortKeyOf(search.sort)?.field === field && !range.holdsNaN;
    return this.#walkedPage(search, total, side === undefined ? inRange : (slot) => hasBit(bits, slot) === side && inRange(slot), run);
  }

  /**
   * The page of the `total` slots passing `check`, found by walking the listing's order from the
   * first position where a match can be (firstPossible); undefined where the walk would be long,
   * as the total says (a selective filter, a deep page; the bitsets' page walks words instead), or
   * turns out to be (matches bunched late in the order). With `run`, the matches are one run of
   * the order from there (a listing sorted by the column its only bounds are on), so the walk
   * reads the page alone, however many slots precede the run.
   */
  #walkedPage(search: PageRequest, total: number, check: (slot: number) => boolean, run = false): Page | undefined {
    const { columns } = this.#parts;
    const wanted = Math.min(search.offset + search.limit, total);
    if (wanted <= search.offset) return { cursors: [], total };
    const order = this.#parts.order(search);
    const from = firstPossible(columns, order, search);
    // The matches lie among the positions from `from` on.
    const size = columns.size - from;
    const expected = run ? wanted : wanted * (size / total);
    if (expected > SCAN_EXPECTED_MAX) return undefined;
    const limit = from + Math.min(SCAN_MAX, size, SCAN_OVER_EXPECTED * expected + SCAN_SLACK);
    const slots: number[] = [];
    for (let i = from; slots.length < wanted; i += 1) {
      if (i >= limit) return undefined;
      const slot = order(i);
      if (check(slot)) slots.push(slot);
    }
    return { cursors: slots.slice(search.offset).map((slot) => columns.cursor.data[slot]!), total };
  }

  /**
   * A pair's AND as the page walk takes it: the bitsets of each range leaf split as #splitLeaf
   * splits it (and `available`), the extra members in every leaf, and the total, counted by the
   * pair's table instead of a pass over the bitsets; undefined when a leaf does not split.
   */
  #pairedSources(pair: RangePair): { bits: Uint32Array[]; flips: number[]; total: number; extras: Int32Array } | undefined {
    const { columns, leaves } = this.#parts;
    const { counts, availableOnly } = pair;
    // One bound per column: the bucket bitsets take a leaf each.
    if (pair.leaves[0].length !== 1 || pair.leaves[1].length !== 1) return undefined;
    const [first, second] = pair.leaves.map(([operand]) => this.#splitLeaf(operand!));
    if (first === undefined || second === undefined) return undefined;
    const bits = [leaves.kept(first.key, 'bucket')!, leaves.kept(second.key, 'bucket')!];
    const flips = [first.flip, second.flip];
    if (availableOnly) {
      bits.push(columns.available.data);
      flips.push(0);
    }
    const extras = counts.passingExtras(first, second, availableOnly);
    return { bits, flips, total: counts.count(first.split, second.split, availableOnly) + extras.length, extras };
  }

  /**
   * A range leaf that is not kept, as the kept "under" bitset of a bucket and the passing members
   * of its own bucket (RangeIndex.split), where both are at hand; else undefined. Not a use of the
   * leaf or of the bucket.
   */
  #splitLeaf(node: FilterExpr): (Omit<ReadySource, 'bits'> & { key: string; split: RangeSplit; column: Float64Array }) | undefined {
    if (!isRangeLeaf(node) || typeof node.value !== 'number') return undefined;
    const { columns, leaves } = this.#parts;
    const field = node.field as NumberField;
    const operator = node.operator as RangeOperator;
    const column = columns.numbers[field].data;
    const split = columns.rangeIndex(field).split(column, operator, node.value);
    if (split === undefined) return undefined;
    const key = underKey(field, split.under);
    if (!leaves.has(key)) return undefined;
    return { key, split, flip: split.flip, extra: split.extra, column, operator, value: node.value };
  }

  /**
   * Keeps each leaf whole, made from its parts (a bitset read flipped or not, and extra slots).
   * Every leaf is made before the first is kept: a keep may reuse a bitset the cache put out,
   * which another leaf's parts may still be.
   */
  #keepWhole(leaves: readonly (readonly [FilterExpr, ReadySource])[]): void {
    if (leaves.length === 0) return;
    const { columns, pool } = this.#parts;
    const scope = pool.begin(columns.size);
    try {
      const made = leaves.map(([node, source]) => {
        const bits = pool.take(scope, false);
        copyBits(bits, source.bits);
        if (source.flip !== 0) complement(bits, columns.size);
        for (const slot of source.extra) setBit(bits, slot);
        return [leafKey(node as Compare)!, bits] as const;
      });
      for (const [key, bits] of made) this.#parts.leaves.keep(key, bits);
    } finally {
      pool.end(scope);
    }
  }
}

/** Of bounds on one side (`direction` 1: lower bounds, -1: upper), the one that passes fewest values; undefined for none. */
function tightest(leaves: readonly Compare[], direction: 1 | -1): { operator: RangeOperator; value: number } | undefined {
  let best: { operator: RangeOperator; value: number } | undefined;
  for (const leaf of leaves) {
    const bound = { operator: leaf.operator as RangeOperator, value: leaf.value as number };
    const strict = bound.operator === '>' || bound.operator === '<';
    const beats = best === undefined || (bound.value - best.value) * direction > 0 || (bound.value === best.value && strict);
    if (beats) best = bound;
  }
  return best;
}

/** Whether no value passes both a lower and an upper bound. */
function emptyInterval(lower: { operator: RangeOperator; value: number }, upper: { operator: RangeOperator; value: number }): boolean {
  return lower.value > upper.value || (lower.value === upper.value && (lower.operator === '>' || upper.operator === '<'));
}

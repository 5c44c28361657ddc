// The evaluator: the slots a search matches, as one running result that each operand of an AND
// narrows (Meilisearch milli's universe recursion), an empty result ending the AND; its leaves go
// in ascending order of the slots they are estimated to select. A leaf kept in the leaf cache is
// read from there; a leaf not kept narrows by its column (checking only the slots still in the
// result) or by its index (a range index's pass, a posting lists' bitset), whichever leaf-costs.ts
// estimates cheaper, and otherwise makes its bitset (leaf-bits.ts). OR and NOT are word-wise
// operations on bitsets. An admitted leaf is kept at once where the search made its bitset anyway;
// otherwise made whole by the search where its cost fits in the search's slice, else between
// requests (IdleWork), as are a range bucket's bitsets and sorted members.
//
// Guarantees: exact; a search yields to the event loop between leaves once it has worked a slice
// (slices.ts), and whatever it keeps is of the version it began at, never of a later one; what it
// asks to be kept between requests is made of the index as it is then (the leaf cache follows writes).
// Limits: a leaf costs O(products / 32) word operations (fewer for posting lists and narrowing in
// place), plus one check per member of a range value's own bucket.
import type { FilterExpr } from '../filter/ast.ts';
import { wordsOf } from '../text.ts';
import { andAll, andInto, andNotInto, copyBits, isEmpty, narrow, orInto, popcount, wordsFor } from './bits.ts';
import type { BitsetPool } from './bitset-pool.ts';
import type { NumberField, StorefrontColumns } from './columns.ts';
import type { IdleWork } from './idle-work.ts';
import type { LeafBits } from './leaf-bits.ts';
import type { LeafCache } from './leaf-cache.ts';
import { bucketSortCost, columnCheck, columnCost, indexCost, matchesEstimate, rangePassCost } from './leaf-costs.ts';
import { availableSide, isRangeLeaf, leafKey, shopKey, underKey, wordKey, type Compare, type Leaf } from './leaf-keys.ts';
import type { RangeOperator } from './ordering.ts';
import type { RangeIndex } from './range-index.ts';
import { Slices } from './slices.ts';

/** What a search asks for beyond its filter. */
export interface SearchTerms {
  /** Words that must all be among the product's words (title, brand, product type, tags), by `wordsOf`. */
  text?: string;
  /** The shop's name, compared by `foldText`. */
  shopName?: string;
  filter?: FilterExpr;
}

export interface EvaluatorParts {
  columns: StorefrontColumns;
  pool: BitsetPool;
  leaves: LeafCache;
  bits: LeafBits;
  work: IdleWork;
}

export class Evaluator {
  readonly #parts: EvaluatorParts;

  constructor(parts: EvaluatorParts) {
    this.#parts = parts;
  }

  /** The slots the search matches (undefined: every slot), and their number where it was counted on the way. */
  async matches(search: SearchTerms, slices: Slices): Promise<{ bits: Uint32Array | undefined; total?: number | undefined }> {
    const { bits: leafBits } = this.#parts;
    let result: Uint32Array | undefined;
    const and = (bits: Uint32Array): void => {
      if (result === undefined) result = bits;
      else andInto(result, bits);
    };
    if (search.text !== undefined) {
      // A query with no word (only punctuation) narrows nothing.
      for (const word of new Set(wordsOf(search.text))) {
        and(await this.#kept(wordKey(word), slices, () => leafBits.wordBits(word, slices.scope)));
        if (isEmpty(result!)) return { bits: result };
      }
    }
    if (search.shopName !== undefined) {
      const shopName = search.shopName;
      and(await this.#kept(shopKey(shopName), slices, () => leafBits.codedEquals('shop_name', [shopName], leafBits.empty(slices.scope))));
    }
    const filter = search.filter;
    if (filter === undefined || (result !== undefined && isEmpty(result))) return { bits: result };
    return this.#and(result, filter.type === 'and' ? filter.operands : [filter], slices);
  }

  /** Whether `node` is a leaf whose bitset exists already (kept, or the `available` column); not a use of it. */
  isReady(node: FilterExpr, version: number): boolean {
    if (node.type !== 'compare' && node.type !== 'in') return false;
    const available = availableSide(node);
    if (available !== undefined) return available;
    const key = leafKey(node);
    return key !== undefined && version === this.#parts.columns.version && this.#parts.leaves.has(key);
  }

  /**
   * A leaf's bitset where it exists already, to be read at once and not written: the leaf cache's
   * (a use of the leaf), or the `available` column; undefined when it is not (or no longer) kept.
   */
  ready(node: FilterExpr, version: number): Uint32Array | undefined {
    if (node.type !== 'compare' && node.type !== 'in') return undefined;
    const available = availableSide(node);
    if (available !== undefined) return available ? this.#parts.columns.available.data : undefined;
    const key = leafKey(node);
    return key === undefined || version !== this.#parts.columns.version ? undefined : this.#parts.leaves.kept(key);
  }

  /**
   * Keeps under `key`, between requests, the bitset `fill` writes whole of the columns as they are
   * then (any bits it held are to be overwritten), unless `valid` no longer holds; `cost` times it.
   */
  keepLater(key: string, fill: (bits: Uint32Array, scope: Uint32Array[]) => void, cost = 0, valid: () => boolean = () => true): void {
    const { columns, pool, leaves, work } = this.#parts;
    work.later(
      key,
      () => {
        const scope = pool.begin(columns.size);
        try {
          const bits = pool.take(scope, false);
          fill(bits, scope);
          leaves.keep(key, bits);
        } finally {
          pool.end(scope);
        }
      },
      valid,
      cost,
    );
  }

  /** Whether work of `cost` is estimated to fit in what is left of the search's slice: then a keep is made now, else between requests. */
  #fitsNow(cost: number, slices: Slices): boolean {
    return this.#parts.work.fits(cost, slices.remainingMs());
  }

  /** A fresh bitset of the slots `node` matches. */
  async #evaluate(node: FilterExpr, slices: Slices): Promise<Uint32Array> {
    switch (node.type) {
      case 'and':
        return (await this.#and(undefined, node.operands, slices)).bits;
      case 'or': {
        const [first, ...rest] = node.operands;
        const result = await this.#evaluate(first!, slices);
        for (const operand of rest) orInto(result, await this.#evaluate(operand, slices));
        return result;
      }
      case 'not':
        return this.#parts.bits.complement(await this.#evaluate(node.operand, slices));
      case 'in':
      case 'compare':
        await slices.pause();
        return this.#kept(leafKey(node), slices, () => this.#leaf(node, slices));
    }
  }

  /**
   * `into` (undefined: a fresh bitset) narrowed by every operand of an AND, and its number of
   * slots when the last pass counted them. The operands whose bitsets exist already (kept leaves,
   * `available`) are ANDed all in one pass (andAll), which counts the result as it writes it; the
   * others each narrow the result in place, until it is empty (a leaf not reached is not looked
   * up). The ready ones go first, so that narrowing by a leaf that checks each slot left checks
   * fewer; but last when every other operand is a range leaf, whose pass reads every word anyway:
   * then the first range leaf's pass makes the result from nothing, and the count comes with the
   * last pass instead of one of its own.
   * A kept bitset is taken from the cache only where it is read, with no await between: while a
   * search yields, other searches' keeps may put out a bitset and write another leaf into it. One
   * put out meanwhile narrows the result as a leaf not kept.
   */
  async #and(into: Uint32Array | undefined, operands: readonly FilterExpr[], slices: Slices): Promise<{ bits: Uint32Array; total: number | undefined }> {
    const ordered = this.#plan(operands);
    const isReady = ordered.map((operand) => this.isReady(operand, slices.version));
    const readyCount = isReady.filter(Boolean).length;
    const readyLast = readyCount > 0 && readyCount < ordered.length && ordered.every((operand, at) => isReady[at] || isRangeLeaf(operand));
    let result = into;
    let total: number | undefined;
    /** The ready operands' bitsets, taken now; those put out since they were seen, narrowed by. */
    const andReady = async (): Promise<void> => {
      const taken = ordered.filter((_, at) => isReady[at]).map((operand) => [operand, this.ready(operand, slices.version)] as const);
      const bits = taken.flatMap(([, kept]) => (kept === undefined ? [] : [kept]));
      if (bits.length > 0) {
        const fresh = result === undefined;
        result ??= this.#parts.pool.take(slices.scope, false);
        total = andAll(result, bits, fresh);
      }
      for (const [operand, kept] of taken) {
        if (kept !== undefined) continue;
        if (result === undefined) result = await this.#evaluate(operand, slices);
        else {
          total = undefined;
          await this.#narrow(result, operand, slices);
        }
      }
    };
    if (readyCount > 0 && !readyLast) await andReady();
    let emptied = false;
    for (const [at, operand] of ordered.entries()) {
      if (isReady[at]) continue;
      if (result === undefined) {
        result = await this.#evaluate(operand, slices);
        continue;
      }
      if (total === 0 || isEmpty(result)) {
        emptied = true;
        break;
      }
      total = undefined;
      await this.#narrow(result, operand, slices);
    }
    if (readyLast && !emptied) await andReady();
    return { bits: result!, total };
  }

  /**
   * An AND's operands in the order they narrow the result: the composite ones (OR, NOT, nested AND)
   * first, as given; then the leaves, those estimated to select fewest slots first, so the result
   * shrinks (or empties, ending the AND) as early as it can and later leaves check fewer slots.
   */
  #plan(operands: readonly FilterExpr[]): FilterExpr[] {
    const { columns } = this.#parts;
    const composite = operands.filter((operand) => operand.type !== 'compare' && operand.type !== 'in');
    const leaves = operands
      .filter((operand): operand is Leaf => operand.type === 'compare' || operand.type === 'in')
      .map((leaf) => ({ leaf, estimate: matchesEstimate(columns, leaf) }))
      .sort((a, b) => a.estimate - b.estimate)
      .map(({ leaf }) => leaf);
    return [...composite, ...leaves];
  }

  /** Clears in `result` the slots `node` does not match. */
  async #narrow(result: Uint32Array, node: FilterExpr, slices: Slices): Promise<void> {
    const { columns, leaves } = this.#parts;
    if (node.type === 'and') {
      await this.#and(result, node.operands, slices);
      return;
    }
    if (node.type !== 'compare' && node.type !== 'in') {
      andInto(result, await this.#evaluate(node, slices));
      return;
    }
    await slices.pause();
    const available = availableSide(node);
    if (available !== undefined) {
      // The column is a bitset already: narrowing by it needs no copy of it.
      if (available) andInto(result, columns.available.data);
      else andNotInto(result, columns.available.data, result.length);
      return;
    }
    const key = leafKey(node);
    const kept = leaves.use(key, slices.version);
    if (kept instanceof Uint32Array) {
      andInto(result, kept);
      return;
    }
    // A leaf not kept (yet) narrows the result the cheaper way (leaf-costs.ts): by its column,
    // checking only the slots still in the result, or by its index (a range index's pass, or its
    // posting lists' bitset).
    const byColumn = key === undefined ? undefined : columnCheck(columns, node);
    const range: Compare | undefined = isRangeLeaf(node) && typeof node.value === 'number' ? node : undefined;
    if (byColumn !== undefined || range !== undefined) {
      const words = result.length;
      const byIndex = indexCost(columns, node, words);
      // Admitted: made whole now where that fits in the search's slice, and ANDed; else made
      // between requests, and this search narrows as on a first use.
      const wholeCost = byIndex ?? columnCost(byColumn!, words, columns.size, columns.size);
      if (kept && this.#fitsNow(wholeCost, slices)) {
        andInto(result, await this.#kept(key, slices, () => this.#leaf(node, slices), kept));
        return;
      }
      const useColumn = byColumn !== undefined && (byIndex === undefined || columnCost(byColumn, words, popcount(result), columns.size) <= byIndex);
      if (useColumn) narrow(result, byColumn.check);
      else if (range !== undefined) this.#intersect(result, range.field as NumberField, range.operator as RangeOperator, range.value as number, slices);
      if (useColumn || range !== undefined) {
        if (kept) this.#keepWholeLater(node, key!, wholeCost);
        return;
      }
    }
    andInto(result, await this.#kept(key, slices, () => this.#leaf(node, slices), kept));
  }

  /** Makes the leaf `node` whole and keeps it under `key`, between requests. */
  #keepWholeLater(node: Leaf, key: string, cost: number): void {
    this.keepLater(key, (bits, scope) => copyBits(bits, this.#leafNow(node, new Slices(Number.POSITIVE_INFINITY, this.#parts.columns.version, scope))), cost);
  }

  /**
   * The search's own bitset of a leaf (it may write to it): a copy of the one the leaf cache keeps
   * under `key`, or `make()`'s, which the cache keeps when the key is admitted. `kept` is the
   * cache's answer when the caller has already used the key (a use is counted once).
   */
  async #kept(key: string | undefined, slices: Slices, make: () => Uint32Array | Promise<Uint32Array>, kept = this.#parts.leaves.use(key, slices.version)): Promise<Uint32Array> {
    const { columns, pool, leaves } = this.#parts;
    if (kept instanceof Uint32Array) {
      const bits = pool.take(slices.scope, false);
      copyBits(bits, kept);
      return bits;
    }
    const bits = await make();
    // Written to while `make` yielded: the bitset is of neither version.
    if (kept && key !== undefined && slices.version === columns.version) leaves.keep(key, bits);
    return bits;
  }

  async #leaf(node: Leaf, slices: Slices): Promise<Uint32Array> {
    const leafBits = this.#parts.bits;
    if (node.type === 'in' && node.field === 'tags') {
      // One posting list per value, with a chance to yield between them.
      const bits = leafBits.empty(slices.scope);
      for (const value of node.values) {
        await slices.pause();
        leafBits.tagBits(String(value), bits);
      }
      return node.negated ? leafBits.complement(bits) : bits;
    }
    return this.#leafNow(node, slices);
  }

  /** A fresh bitset of the slots the leaf `node` matches, made in one step. */
  #leafNow(node: Leaf, slices: Slices): Uint32Array {
    if (node.type === 'compare') return this.#compareBits(node, slices);
    const leafBits = this.#parts.bits;
    const bits = leafBits.equals(node.field, node.values, slices.scope);
    return node.negated ? leafBits.complement(bits) : bits;
  }

  /** A fresh bitset of the slots the comparison `node` matches, made now. */
  #compareBits(node: Compare, slices: Slices): Uint32Array {
    const leafBits = this.#parts.bits;
    if (node.operator === '=' || node.operator === '!=') {
      const bits = leafBits.equals(node.field, [node.value], slices.scope);
      return node.operator === '=' ? bits : leafBits.complement(bits);
    }
    if (node.field === 'cursor') return leafBits.cursorRange(node.operator, node.value as number, slices.scope);
    // The leaf's pass reads its new bitset as every slot: no fill first.
    const bits = this.#parts.pool.take(slices.scope, false);
    this.#intersect(bits, node.field as NumberField, node.operator, node.value as number, slices, true);
    return bits;
  }

  /**
   * A range leaf over `field`, narrowing `bits`. The slots below the value's bucket and below the
   * next are the same for every value in that bucket: once kept (the leaf cache, from their second
   * use, under keys of their own), a leaf with a value never seen before reads those two bitsets
   * per word instead of the range index's six, and checks the bucket's own members as ever.
   */
  #intersect(bits: Uint32Array, field: NumberField, operator: RangeOperator, value: number, slices: Slices, fresh = false): void {
    const { columns, work } = this.#parts;
    const range = columns.rangeIndex(field);
    const column = columns.numbers[field].data;
    if (Number.isNaN(value)) {
      range.intersect(bits, column, columns.size, operator, value);
      return;
    }
    const bucket = range.bucketOf(value);
    const under = this.#under(range, field, bucket, slices);
    const next = bucket + 1 >= range.buckets ? null : this.#under(range, field, bucket + 1, slices);
    const sortCost = bucketSortCost(columns.size, range.buckets);
    const sortLater = this.#fitsNow(sortCost, slices) ? undefined : (sort: () => void): void => work.later(`sorted\u0000${field}\u0000${bucket}`, sort, () => columns.builtRangeIndex(field) === range, sortCost);
    range.intersect(bits, column, columns.size, operator, value, under === undefined || next === undefined ? undefined : [under, next], fresh, sortLater);
  }

  /** The kept bitset of the slots under `bucket`; once admitted, made now where that fits in the search's slice, else between requests. */
  #under(range: RangeIndex, field: NumberField, bucket: number, slices: Slices): Uint32Array | undefined {
    const { columns, pool, leaves } = this.#parts;
    const key = underKey(field, bucket);
    const kept = leaves.use(key, slices.version, 'bucket');
    if (kept instanceof Uint32Array) return kept;
    if (!kept) return undefined;
    const cost = rangePassCost(wordsFor(columns.size));
    if (!this.#fitsNow(cost, slices)) {
      this.keepLater(key, (bits) => range.under(bits, columns.size, bucket), cost, () => columns.builtRangeIndex(field) === range);
      return undefined;
    }
    const bits = pool.take(slices.scope, false);
    range.under(bits, columns.size, bucket);
    leaves.keep(key, bits);
    return bits;
  }
}

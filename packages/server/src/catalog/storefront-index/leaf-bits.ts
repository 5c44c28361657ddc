// A leaf's bitset made from the columns: posting lists for tags, words, shop, brand and product
// type; the `available` bitset; a run of slots for cursors; a hashed column's look-up for an
// equality on a hashed string; range passes, or a pass over the column, for an equality on a
// number. Every bitset is taken from the pool into the caller's scope.
import type { FilterField, FilterLiteral } from '../filter/ast.ts';
import { foldText } from '../text.ts';
import { clearPastEnd, complement, copyBits, countBelow, fillBits, narrow, orInto, setBit, setRun } from './bits.ts';
import type { BitsetPool } from './bitset-pool.ts';
import { isHashedField, isNumberField, type CodedField, type StorefrontColumns } from './columns.ts';
import { distinctHashes } from './hash.ts';
import { numberEqualityByRanges } from './leaf-costs.ts';
import type { RangeOperator } from './ordering.ts';

export class LeafBits {
  readonly #columns: StorefrontColumns;
  readonly #pool: BitsetPool;

  constructor(columns: StorefrontColumns, pool: BitsetPool) {
    this.#columns = columns;
    this.#pool = pool;
  }

  empty(scope: Uint32Array[]): Uint32Array {
    return this.#pool.take(scope, true);
  }

  universe(scope: Uint32Array[]): Uint32Array {
    const bits = this.#pool.take(scope, false);
    fillBits(bits, true);
    clearPastEnd(bits, this.#columns.size);
    return bits;
  }

  complement(bits: Uint32Array): Uint32Array {
    return complement(bits, this.#columns.size);
  }

  /** Products whose field equals any of the values. */
  equals(field: FilterField, values: readonly FilterLiteral[], scope: Uint32Array[]): Uint32Array {
    const columns = this.#columns;
    if (field === 'tags') {
      const bits = this.empty(scope);
      for (const value of values) this.tagBits(String(value), bits);
      return bits;
    }
    if (field === 'available') {
      const want = new Set(values);
      if (want.size === 2) return this.universe(scope);
      const bits = this.#pool.take(scope, false);
      copyBits(bits, columns.available.data);
      return want.has(true) ? bits : this.complement(bits);
    }
    if (field === 'cursor') {
      const bits = this.empty(scope);
      for (const value of values) {
        const slot = columns.slotOf(value as number);
        if (slot >= 0) setBit(bits, slot);
      }
      return bits;
    }
    if (isNumberField(field)) {
      const column = columns.numbers[field].data;
      const distinct = [...new Set(values as number[])];
      if (numberEqualityByRanges(distinct.length, columns.size)) {
        // Each value as `>= v AND <= v`: two word passes of the range index (the value's own
        // bucket's members checked one by one) instead of a read of every slot's value.
        const range = columns.rangeIndex(field);
        const bits = this.#pool.take(scope, false);
        const one = distinct.length > 1 ? this.#pool.take(scope, false) : bits;
        distinct.forEach((value, at) => {
          const into = at === 0 ? bits : one;
          range.intersect(into, column, columns.size, '>=', value, undefined, true);
          range.intersect(into, column, columns.size, '<=', value);
          if (at > 0) orInto(bits, one);
        });
        return bits;
      }
      const bits = this.universe(scope);
      const want = new Set(values as number[]);
      narrow(bits, (slot) => want.has(column[slot]!));
      return bits;
    }
    if (isHashedField(field)) {
      const hashes = columns.hashes[field].data;
      const lookup = columns.hashLookup(field);
      const bits = this.empty(scope);
      for (const [low, high] of distinctHashes(values)) lookup.forEach(hashes, low, high, (slot) => setBit(bits, slot));
      return bits;
    }
    return this.codedEquals(field as CodedField, values as string[], this.empty(scope));
  }

  /** Sets in `bits` the products whose `field` is one of `values` (folded). */
  codedEquals(field: CodedField, values: readonly string[], bits: Uint32Array): Uint32Array {
    const { dictionary, codes, postings } = this.#columns.coded[field];
    const column = codes.data;
    for (const value of values) {
      const code = dictionary.get(foldText(value));
      if (code !== undefined) postings.setBits(code, bits, (slot, held) => column[slot] === held);
    }
    return bits;
  }

  /** Sets the bits of the products with the tag (folded). */
  tagBits(tag: string, bits: Uint32Array): void {
    const columns = this.#columns;
    const code = columns.terms.find(foldText(tag));
    if (code >= 0) columns.tags.setBits(code, bits, (slot, held) => columns.tagsOf.holds(slot, held));
  }

  /** The products having `word` (one of `wordsOf`) in their title, brand, product type or tags. */
  wordBits(word: string, scope: Uint32Array[]): Uint32Array {
    const columns = this.#columns;
    const bits = this.empty(scope);
    const code = columns.terms.find(word);
    if (code < 0) return bits;
    columns.titleWords.setBits(code, bits, (slot, held) => columns.titleWordsOf.holds(slot, held));
    const holdsTag = (slot: number, held: number): boolean => columns.tagsOf.holds(slot, held);
    if (columns.tagKind.data[code] === 2) columns.tags.setBits(code, bits, holdsTag);
    for (const tag of columns.tagsByWord.get(code) ?? []) columns.tags.setBits(tag, bits, holdsTag);
    for (const { field, code: coded } of columns.codesByWord.get(code) ?? []) {
      const column = columns.coded[field].codes.data;
      columns.coded[field].postings.setBits(coded, bits, (slot, held) => column[slot] === held);
    }
    return bits;
  }

  /** Cursors ascend with slots: the matches of a range over cursors are one run of slots, found by binary search. */
  cursorRange(operator: RangeOperator, value: number, scope: Uint32Array[]): Uint32Array {
    const size = this.#columns.size;
    const low = countBelow(this.#columns.cursor.data, value, operator === '<=' || operator === '>', size);
    const bits = this.empty(scope);
    if (operator === '<' || operator === '<=') setRun(bits, 0, low);
    else setRun(bits, low, size);
    return bits;
  }
}

// The two ways a leaf can narrow a running result, and what each costs, from the structures' own
// statistics (as Lucene's IndexOrDocValuesQuery chooses between a posting list and doc values):
// - by its index: a posting list per value (tags, shop, brand, product type), or a hashed
//   column's look-up (hash-lookup.ts), whose cost is the entries it goes through; or the range
//   index's pass over every word (a range on a number column, two per value of an equality);
// - by its column: each slot still in the result checked against the slot's own value, whose cost
//   is a walk of the result's words plus a check per slot it holds.
// Costs are in word reads; a kernel's pass reads KERNEL_WORDS words per step. `matchesEstimate`
// estimates how many slots a leaf selects, which orders an AND's leaves (evaluator.ts).
//
// Guarantee: both ways select exactly the same slots (the column checks use the matching rules of
// leaf-bits.ts: foldText for strings, 64-bit hashes, === for numbers, `compares` for ranges).
import type { FilterLiteral } from '../filter/ast.ts';
import { foldText } from '../text.ts';
import { countBelow, wordsFor } from './bits.ts';
import { isHashedField, isNumberField, type CodedField, type NumberField, type StorefrontColumns } from './columns.ts';
import { distinctHashes } from './hash.ts';
import { RANGE_BUCKETS } from './range-index.ts';
import { isRangeLeaf, type Compare, type Leaf } from './leaf-keys.ts';
import { compares, type RangeOperator } from './ordering.ts';

/** Words a kernel's pass takes per step. */
const KERNEL_WORDS = 4;
/** Bitsets a range leaf's pass reads per word, its result's included. */
const RANGE_PASS_READS = 7;
/** Reads a check of one slot's tag list costs, about (its count and a few codes). */
const TAG_LIST_READS = 4;

/** A leaf checked slot by slot against the columns: the check, and its reads per slot checked. */
export interface ColumnCheck {
  check: (slot: number) => boolean;
  reads: number;
  /** Whether its reads stay in the caches whatever the slots (a bitset of the catalog: `available`). */
  streams?: boolean;
}

/**
 * The column check of `node`, or undefined for leaves with none (`available` and `cursor`, whose
 * bitsets cost no more than a check; a range whose bound is not a number).
 */
export function columnCheck(columns: StorefrontColumns, node: Leaf): ColumnCheck | undefined {
  const field = node.field;
  if (field === 'available' || field === 'cursor') return undefined;
  const range: Compare | undefined = isRangeLeaf(node) ? node : undefined;
  if (range !== undefined) {
    const value = range.value;
    if (typeof value !== 'number' || !isNumberField(field)) return undefined;
    const column = columns.numbers[field].data;
    const operator = range.operator as RangeOperator;
    return { check: (slot) => compares(column[slot]!, operator, value), reads: 1 };
  }
  const values: readonly FilterLiteral[] = node.type === 'in' ? node.values : [node.value];
  const negated = node.type === 'in' ? node.negated : node.operator === '!=';
  const equal = equalsCheck(columns, field, values);
  if (equal === undefined) return undefined;
  return negated ? { check: (slot) => !equal.check(slot), reads: equal.reads } : equal;
}

/** Whether the slot's `field` equals one of `values`, by the column. */
function equalsCheck(columns: StorefrontColumns, field: string, values: readonly FilterLiteral[]): ColumnCheck | undefined {
  if (isNumberField(field)) {
    const column = columns.numbers[field].data;
    if (values.length === 1) {
      const only = values[0];
      return { check: (slot) => column[slot] === only, reads: 1 };
    }
    const want = new Set(values);
    return { check: (slot) => want.has(column[slot]!), reads: 1 };
  }
  if (isHashedField(field)) {
    const hashes = columns.hashes[field].data;
    const wanted = distinctHashes(values);
    if (wanted.length === 1) {
      const [[low, high]] = wanted as [[number, number]];
      return { check: (slot) => hashes[2 * slot] === low && hashes[2 * slot + 1] === high, reads: 2 };
    }
    return { check: (slot) => wanted.some(([low, high]) => hashes[2 * slot] === low && hashes[2 * slot + 1] === high), reads: 2 * wanted.length };
  }
  if (field === 'tags') {
    const codes = values.map((value) => columns.terms.find(foldText(String(value)))).filter((code) => code >= 0);
    const lists = columns.tagsOf;
    return { check: (slot) => codes.some((code) => lists.holds(slot, code)), reads: TAG_LIST_READS * codes.length };
  }
  if (field === 'shop_name' || field === 'brand' || field === 'product_type') {
    const { dictionary, codes } = columns.coded[field as CodedField];
    const wanted = new Set(values.flatMap((value) => dictionary.get(foldText(value as string)) ?? []));
    const column = codes.data;
    return { check: (slot) => wanted.has(column[slot]!), reads: 1 };
  }
  return undefined;
}

/** Whether the slot has `word` (one of `wordsOf`) among its words, by its term lists and codes: the slots LeafBits.wordBits sets. */
export function wordCheck(columns: StorefrontColumns, word: string): (slot: number) => boolean {
  const code = columns.terms.find(word);
  if (code < 0) return () => false;
  const tags = [...(columns.tagKind.data[code] === 2 ? [code] : []), ...(columns.tagsByWord.get(code) ?? [])];
  const coded = (columns.codesByWord.get(code) ?? []).map(({ field, code: held }) => ({ codes: columns.coded[field].codes.data, held }));
  const { titleWordsOf, tagsOf } = columns;
  return (slot) => titleWordsOf.holds(slot, code) || tags.some((tag) => tagsOf.holds(slot, tag)) || coded.some(({ codes, held }) => codes[slot] === held);
}

/** The column check of `wordCheck`. */
export function wordColumnCheck(columns: StorefrontColumns, word: string): ColumnCheck {
  return { check: wordCheck(columns, word), reads: TAG_LIST_READS };
}

/** The cost of a range index's pass over `words` words (a range leaf made whole, a bucket's "under" bitset). */
export function rangePassCost(words: number): number {
  return (words * RANGE_PASS_READS) / KERNEL_WORDS;
}

/** The cost of making a range index's bucket members (RangeIndex.buildMembers) over `size` slots: a bucket search and two writes per slot. */
export function membersCost(size: number): number {
  return size * (Math.log2(RANGE_BUCKETS) + 2);
}

/** The cost of sorting the members of one of `buckets` buckets of a column of `size` slots, about. */
export function bucketSortCost(size: number, buckets: number): number {
  const members = size / buckets;
  return members * Math.log2(members + 2);
}

/**
 * What a column check's read of a slot costs beyond the check itself, in word reads, when the
 * slots it visits lie far apart: each read waits on memory, while a pass over bitsets streams.
 */
const LINE_MISS = 96;
/**
 * Slots per product of the column that a result must hold for a check's reads to stream (about
 * one slot every four 64-byte lines of an 8-byte column); sparser results pay LINE_MISS per slot,
 * in proportion.
 */
const STREAMING_SHARE = 1 / 32;

/**
 * The cost of narrowing a result of `words` words holding `population` of `size` slots by a
 * column check: a walk of its words, the check's reads, and the wait on memory of a sparse result.
 */
export function columnCost(check: ColumnCheck, words: number, population: number, size: number): number {
  const sparseness = Math.max(0, 1 - population / (size * STREAMING_SHARE));
  return words + population * (check.reads + LINE_MISS * sparseness);
}

/**
 * Whether an equality on a number column with `values` distinct values is made cheaper by the
 * range index (each value two passes, as `>= v AND <= v`) than by reading each of `size` slots' value.
 */
export function numberEqualityByRanges(values: number, size: number): boolean {
  return 2 * values * rangePassCost(wordsFor(size)) < size;
}

/**
 * The cost of narrowing a result of `words` words by the leaf's bitset made and ANDed (posting
 * lists, a hashed column's look-up, a number equality's range passes or its column read whole),
 * or by the range index's pass; undefined for leaves with no such bitset.
 */
export function indexCost(columns: StorefrontColumns, node: Leaf, words: number): number | undefined {
  const field = node.field;
  const range: boolean = isRangeLeaf(node);
  if (range) return rangePassCost(words);
  const values: readonly FilterLiteral[] = node.type === 'in' ? node.values : [node.value];
  // A fresh bitset to clear, then to AND into the result.
  const bitset = (2 * words) / KERNEL_WORDS;
  if (isHashedField(field)) {
    const lookup = columns.hashLookup(field);
    return bitset + distinctHashes(values).reduce((sum, [low]) => sum + lookup.chainLength(low), 0);
  }
  if (isNumberField(field)) {
    const distinct = new Set(values).size;
    return bitset + (numberEqualityByRanges(distinct, columns.size) ? 2 * distinct * rangePassCost(wordsFor(columns.size)) : columns.size);
  }
  if (field === 'tags') {
    const codes = values.map((value) => columns.terms.find(foldText(String(value))));
    return bitset + codes.reduce((sum, code) => sum + (code < 0 ? 0 : columns.tags.entries(code)), 0);
  }
  if (field === 'shop_name' || field === 'brand' || field === 'product_type') {
    const { dictionary, postings } = columns.coded[field as CodedField];
    return bitset + values.reduce<number>((sum, value) => {
      const code = dictionary.get(foldText(value as string));
      return sum + (code === undefined ? 0 : postings.entries(code));
    }, 0);
  }
  return undefined;
}

/**
 * About how many slots `node` selects: posting-list entries for tags, shop, brand and type; the
 * share of range-index buckets on the bound's side for a range (bounds are quantiles of the
 * column); an exact count for cursors; one slot per value for the hashed columns and one bucket's
 * share for a number's equality; half the slots for `available`. Negations select the rest.
 */
export function matchesEstimate(columns: StorefrontColumns, node: Leaf): number {
  const size = columns.size;
  const field = node.field;
  const range: Compare | undefined = node.type === 'compare' && (field === 'cursor' || isRangeLeaf(node)) && !['=', '!='].includes(node.operator) ? node : undefined;
  if (range !== undefined) {
    const value = range.value;
    if (typeof value !== 'number') return size;
    const above = range.operator === '>' || range.operator === '>=';
    if (field === 'cursor') {
      const below = countBelow(columns.cursor.data, value, range.operator === '<=' || range.operator === '>', size);
      return above ? size - below : below;
    }
    const index = columns.rangeIndex(field as NumberField);
    const share = index.bucketOf(value) / index.buckets;
    return size * (above ? 1 - share : share);
  }
  const values: readonly FilterLiteral[] = node.type === 'in' ? node.values : [node.value];
  const negated = node.type === 'in' ? node.negated : node.operator === '!=';
  let selected: number;
  if (field === 'available') selected = size / 2;
  else if (field === 'cursor' || isHashedField(field)) selected = values.length;
  else if (isNumberField(field)) selected = (values.length * size) / RANGE_BUCKETS;
  else selected = indexCost(columns, node, 0) ?? size;
  selected = Math.min(size, selected);
  return negated ? size - selected : selected;
}

/**
 * The cost of answering from `entries` posting-list entries (sparse.ts): each entry's slot read,
 * and checked by `checks` at random (the slots of a list lie far apart); the entries sorted by
 * slot when they come from several lists (`merged`), and by the sort's column when `sorted`.
 */
export function sparseCheckCost(entries: number, checks: readonly ColumnCheck[], merged: boolean, sorted: boolean): number {
  let perSlot = 1;
  for (const check of checks) perSlot += check.reads + (check.streams === true ? 0 : LINE_MISS);
  const log = Math.log2(entries + 2);
  return entries * (perSlot + (merged ? log : 0) + (sorted ? LINE_MISS + log : 0));
}

// The columns and sort orders as a snapshot keeps them: typed arrays in a fixed order, and the rest
// as JSON. Guarantee: `restoreState(stateOf(...))` holds the same columns and orders; an array of
// the wrong kind in a place, or one left over, is refused.
import { arenaCopy, wordsFor } from './bits.ts';
import { CODED_FIELDS, HASHED_FIELDS, NUMBER_FIELDS, type CodedField, type StorefrontColumns } from './columns.ts';
import { SORTED_FIELDS, type SortOrders } from './sort-orders.ts';
import { TermDictionary } from './term-dictionary.ts';
import type { TermLists } from './term-lists.ts';

type TypedArray = Float64Array | Int32Array | Uint32Array | Uint8Array;

/** An index as a snapshot keeps it (StorefrontIndex.state / fromState). */
export interface StorefrontIndexState {
  size: number;
  /** Per coded field, its folded values in code order. */
  coded: Record<'shop_name' | 'brand' | 'product_type', string[]>;
  tagsByWord: [number, number[]][];
  codesByWord: [number, { field: 'brand' | 'product_type' | 'shop_name'; code: number }[]][];
  /** Entries of dropped lists in the tag and title-word buffers. */
  garbage: [number, number];
  arrays: TypedArray[];
}

/** The state of `columns` and `orders` (views into them: write them out before the next write). */
export function stateOf(columns: StorefrontColumns, orders: SortOrders): StorefrontIndexState {
  const size = columns.size;
  const lists = (of: TermLists): TypedArray[] => [of.arena.data.subarray(0, of.used), of.start.data.subarray(0, size)];
  const sortColumns = sortedColumns(columns);
  const arrays: TypedArray[] = [
    columns.cursor.data.subarray(0, size),
    ...NUMBER_FIELDS.map((field) => columns.numbers[field].data.subarray(0, size)),
    columns.available.data.subarray(0, wordsFor(size)),
    ...CODED_FIELDS.map((field) => columns.coded[field].codes.data.subarray(0, size)),
    ...HASHED_FIELDS.map((field) => columns.hashes[field].data.subarray(0, 2 * size)),
    ...lists(columns.tagsOf),
    ...lists(columns.titleWordsOf),
    columns.tagKind.data.subarray(0, columns.terms.size),
    ...columns.terms.parts(),
    ...CODED_FIELDS.flatMap((field) => columns.coded[field].postings.parts()),
    ...columns.tags.parts(),
    ...columns.titleWords.parts(),
    ...SORTED_FIELDS.map((field) => orders.permutation(field, sortColumns, size)),
  ];
  return {
    size,
    coded: Object.fromEntries(CODED_FIELDS.map((field) => [field, [...columns.coded[field].dictionary.keys()]])) as Record<CodedField, string[]>,
    tagsByWord: [...columns.tagsByWord],
    codesByWord: [...columns.codesByWord],
    garbage: [columns.tagsOf.garbage, columns.titleWordsOf.garbage],
    arrays,
  };
}

/** Makes `columns` and `orders` (new, empty) those `state` describes; its arrays become theirs (not copied). */
export function restoreState(state: StorefrontIndexState, columns: StorefrontColumns, orders: SortOrders): void {
  const arrays = [...state.arrays];
  // Each array must be of the kind its place holds; the index's own buffers are typed over ArrayBuffer.
  const next = (kind: new (length: number) => TypedArray): never => {
    const array = arrays.shift();
    if (!(array instanceof kind)) throw new Error('storefront index state: arrays out of order');
    return array as never;
  };
  columns.size = state.size;
  columns.cursor.data = next(Float64Array);
  for (const field of NUMBER_FIELDS) columns.numbers[field].data = next(Float64Array);
  columns.available.data = arenaCopy(next(Uint32Array));
  for (const field of CODED_FIELDS) columns.coded[field].codes.data = next(Int32Array);
  for (const field of HASHED_FIELDS) columns.hashes[field].data = next(Uint32Array);
  for (const [lists, garbage] of [[columns.tagsOf, state.garbage[0]], [columns.titleWordsOf, state.garbage[1]]] as const) {
    lists.arena.data = next(Int32Array);
    lists.used = lists.arena.data.length;
    lists.start.data = next(Uint32Array);
    lists.garbage = garbage;
  }
  columns.tagKind.data = next(Uint8Array);
  columns.terms = TermDictionary.fromParts(next(Uint8Array), next(Uint32Array), next(Uint32Array), next(Int32Array));
  for (const field of CODED_FIELDS) {
    const coded = columns.coded[field];
    state.coded[field].forEach((value, code) => coded.dictionary.set(value, code));
    coded.postings.restore(next(Uint32Array), next(Int32Array));
  }
  columns.tags.restore(next(Uint32Array), next(Int32Array));
  columns.titleWords.restore(next(Uint32Array), next(Int32Array));
  orders.restore(SORTED_FIELDS.map(() => next(Int32Array) as Int32Array));
  for (const [word, tags] of state.tagsByWord) columns.tagsByWord.set(word, tags);
  for (const [word, codes] of state.codesByWord) columns.codesByWord.set(word, codes);
  if (arrays.length !== 0) throw new Error('storefront index state: arrays left over');
}

/** The columns the sort orders read. */
export function sortedColumns(columns: StorefrontColumns): Record<(typeof SORTED_FIELDS)[number], Float64Array> {
  return { updated_at: columns.numbers.updated_at.data, product_published_at: columns.numbers.product_published_at.data };
}

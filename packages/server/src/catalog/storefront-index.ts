// The storefront index: every storefront product's filterable fields in memory, column by column,
// so any expression of the filter language, `query` and `shop_name` are answered the same way
// whatever the storage engine, at a cost bounded by the catalog's size.
//
// Guarantees:
// - One definition of matching: strings compare by `foldText`, `query` by `wordsOf` (text.ts);
//   numbers, timestamps (epoch ms) and cursors as doubles (cursors are exact doubles).
// - Each leaf of a filter is one pass over a typed column or one posting list, producing a bitset;
//   AND, OR, NOT and IN are word-wise operations on bitsets. A request therefore costs at most
//   O(leaves × products / 32) word operations plus one sorted walk for its page, whatever the
//   expression: no input makes it scan row by row through an interpreter.
// - `total` is exact (a population count). Ties in every sort are broken by cursor.
// - A search yields to the event loop whenever it has worked SLICE_MS since it last did (between
//   leaves), so a costly filter delays other requests by about one slice per search in flight
//   instead of by its whole cost. Its answer is the index as it stood when it began: a write
//   meanwhile makes it start again, without yielding.
// Limits: the index holds a few dozen bytes per product plus its distinct strings; a sort other
// than by cursor keeps a permutation that is rebuilt (O(n log n)) on the first read after a change;
// one leaf is one pass and is not divided.
import type { FilterExpr, FilterField, FilterLiteral } from './filter/ast.ts';
import type { StorefrontSort } from './model.ts';
import { foldText, wordsOf } from './text.ts';

/** The fields of one storefront product the index needs; timestamps as epoch milliseconds. */
export interface StorefrontIndexRow {
  cursor: number;
  id: string;
  product_id: string;
  shop_name: string;
  brand: string;
  product_type: string;
  title: string;
  slug: string;
  price_min: number;
  price_max: number;
  price_display: number;
  available: boolean;
  created_at: number;
  updated_at: number;
  product_created_at: number;
  product_published_at: number;
  tags: readonly string[];
}

export interface StorefrontSearch {
  /** Words that must all be among the product's words (title, brand, product type, tags), by `wordsOf`. */
  text?: string;
  /** The shop's name, compared by `foldText`. */
  shopName?: string;
  filter?: FilterExpr;
  sort: StorefrontSort;
  offset: number;
  limit: number;
}

/** Few distinct values: kept as dictionary codes. */
const CODED_FIELDS = ['shop_name', 'brand', 'product_type'] as const;
/** About one value per product: kept as folded strings (a dictionary would only add a map entry). */
const TEXT_FIELDS = ['id', 'product_id', 'title', 'slug'] as const;
const NUMBER_FIELDS = [
  'price_min',
  'price_max',
  'price_display',
  'created_at',
  'updated_at',
  'product_created_at',
  'product_published_at',
] as const;
type CodedField = (typeof CODED_FIELDS)[number];
type TextField = (typeof TEXT_FIELDS)[number];
type StringField = CodedField | TextField;
type NumberField = (typeof NUMBER_FIELDS)[number];

/** Strings to small integers and back: one column of codes per string field. */
class Dictionary {
  readonly #codes = new Map<string, number>();
  code(value: string): number {
    let code = this.#codes.get(value);
    if (code === undefined) {
      code = this.#codes.size;
      this.#codes.set(value, code);
    }
    return code;
  }
  find(value: string): number | undefined {
    return this.#codes.get(value);
  }
}

/** A growable typed array. */
class Column<T extends Float64Array | Int32Array | Uint8Array> {
  data: T;
  readonly #make: (length: number) => T;
  constructor(make: (length: number) => T) {
    this.#make = make;
    this.data = make(1024);
  }
  ensure(length: number): void {
    if (length <= this.data.length) return;
    const grown = this.#make(Math.max(length, this.data.length * 2));
    grown.set(this.data as never);
    this.data = grown;
  }
}

/** Slots holding a term, appended as products are written; stale entries are checked on read. */
class Postings {
  readonly #lists = new Map<number, number[]>();
  readonly terms = new Dictionary();
  /** Entries left behind by rewrites that dropped their term; 0 means every entry is live. */
  stale = 0;
  add(term: number, slot: number): void {
    let list = this.#lists.get(term);
    if (list === undefined) this.#lists.set(term, (list = []));
    list.push(slot);
  }
  list(term: number): readonly number[] {
    return this.#lists.get(term) ?? [];
  }
  entries(): number {
    let total = 0;
    for (const list of this.#lists.values()) total += list.length;
    return total;
  }
  clear(): void {
    this.stale = 0;
    this.#lists.clear();
  }
}

const WORD_BITS = 32;

export class StorefrontIndex {
  #size = 0;
  readonly #slotByCursor = new Map<number, number>();
  readonly #cursor = new Column((n) => new Float64Array(n));
  readonly #available = new Column((n) => new Uint8Array(n));
  readonly #numbers = Object.fromEntries(NUMBER_FIELDS.map((field) => [field, new Column((n) => new Float64Array(n))])) as Record<
    NumberField,
    Column<Float64Array>
  >;
  readonly #coded = Object.fromEntries(
    CODED_FIELDS.map((field) => [field, { dictionary: new Dictionary(), codes: new Column((n) => new Int32Array(n)) }]),
  ) as Record<CodedField, { dictionary: Dictionary; codes: Column<Int32Array> }>;
  readonly #texts = Object.fromEntries(TEXT_FIELDS.map((field) => [field, [] as string[]])) as Record<TextField, string[]>;
  /** Per slot, the tag and word terms it holds now (the truth that stale postings are checked against). */
  #tagsOf: number[][] = [];
  #wordsOf: number[][] = [];
  readonly #tags = new Postings();
  readonly #words = new Postings();
  /** Permutations of slots per non-cursor sort, dropped by every write. */
  readonly #orders = new Map<StorefrontSort, Int32Array>();
  /** Counts writes, so a search that yielded can tell the index changed under it. */
  #version = 0;

  get size(): number {
    return this.#size;
  }

  /** Adds or replaces products (matched by cursor). Rows of new cursors must come in ascending order. */
  upsert(rows: Iterable<StorefrontIndexRow>): void {
    for (const row of rows) {
      let slot = this.#slotByCursor.get(row.cursor);
      if (slot === undefined) {
        slot = this.#size;
        if (slot > 0 && row.cursor <= this.#cursor.data[slot - 1]!) {
          throw new Error(`storefront cursor ${row.cursor} arrived after a larger one; the index needs ascending cursors`);
        }
        this.#size += 1;
        this.#ensure(this.#size);
        this.#slotByCursor.set(row.cursor, slot);
      }
      this.#cursor.data[slot] = row.cursor;
      this.#available.data[slot] = row.available ? 1 : 0;
      // Field by field rather than in a loop over names: this runs once per product at start.
      const numbers = this.#numbers;
      numbers.price_min.data[slot] = row.price_min;
      numbers.price_max.data[slot] = row.price_max;
      numbers.price_display.data[slot] = row.price_display;
      numbers.created_at.data[slot] = row.created_at;
      numbers.updated_at.data[slot] = row.updated_at;
      numbers.product_created_at.data[slot] = row.product_created_at;
      numbers.product_published_at.data[slot] = row.product_published_at;
      const coded = this.#coded;
      coded.shop_name.codes.data[slot] = coded.shop_name.dictionary.code(foldText(row.shop_name));
      coded.brand.codes.data[slot] = coded.brand.dictionary.code(foldText(row.brand));
      coded.product_type.codes.data[slot] = coded.product_type.dictionary.code(foldText(row.product_type));
      const texts = this.#texts;
      texts.id[slot] = foldText(row.id);
      texts.product_id[slot] = foldText(row.product_id);
      texts.title[slot] = foldText(row.title);
      texts.slug[slot] = foldText(row.slug);
      const tags = new Set<string>();
      const words = new Set<string>([...wordsOf(row.title), ...wordsOf(row.brand), ...wordsOf(row.product_type)]);
      for (const tag of row.tags) {
        tags.add(foldText(tag));
        for (const word of wordsOf(tag)) words.add(word);
      }
      this.#tagsOf[slot] = this.#index(this.#tags, this.#tagsOf[slot], tags, slot);
      this.#wordsOf[slot] = this.#index(this.#words, this.#wordsOf[slot], words, slot);
    }
    this.#orders.clear();
    this.#version += 1;
    this.#compactWhenStale();
  }

  /** The page of slots' cursors and the exact number of matches; `sliceMs` is for tests. */
  async search(search: StorefrontSearch, sliceMs = SLICE_MS): Promise<{ cursors: number[]; total: number }> {
    const version = this.#version;
    let matches = await this.#matches(search, new Slices(sliceMs));
    // Written to while it yielded: answer from the index as it is now, in one go.
    if (version !== this.#version) matches = await this.#matches(search, new Slices(Number.POSITIVE_INFINITY));
    const order = this.#order(search.sort);
    const cursors: number[] = [];
    const end = search.offset + search.limit;
    let seen = 0;
    if (matches === undefined) {
      for (let i = search.offset; i < Math.min(end, this.#size); i += 1) cursors.push(this.#cursor.data[order(i)]!);
      return { cursors, total: this.#size };
    }
    const total = popcount(matches);
    for (let i = 0; i < this.#size && seen < end && seen < total; i += 1) {
      const slot = order(i);
      if ((matches[slot >>> 5]! & (1 << (slot & 31))) === 0) continue;
      if (seen >= search.offset) cursors.push(this.#cursor.data[slot]!);
      seen += 1;
    }
    return { cursors, total };
  }

  #ensure(length: number): void {
    this.#cursor.ensure(length);
    this.#available.ensure(length);
    for (const field of NUMBER_FIELDS) this.#numbers[field].ensure(length);
    for (const field of CODED_FIELDS) this.#coded[field].codes.ensure(length);
  }

  #index(postings: Postings, previous: number[] | undefined, terms: Set<string>, slot: number): number[] {
    const codes = Array.from(terms, (term) => postings.terms.code(term));
    for (const code of codes) if (previous === undefined || !previous.includes(code)) postings.add(code, slot);
    if (previous !== undefined) for (const code of previous) if (!codes.includes(code)) postings.stale += 1;
    return codes;
  }

  /** Rebuilds the posting lists once stale entries (from rewritten products) outnumber live ones. */
  #compactWhenStale(): void {
    for (const [postings, of] of [
      [this.#tags, this.#tagsOf],
      [this.#words, this.#wordsOf],
    ] as const) {
      let live = 0;
      for (let slot = 0; slot < this.#size; slot += 1) live += of[slot]!.length;
      if (postings.entries() <= 2 * live + 1024) continue;
      postings.clear();
      for (let slot = 0; slot < this.#size; slot += 1) for (const code of of[slot]!) postings.add(code, slot);
    }
  }

  /** The matching slots as a bitset, or undefined when every product matches. */
  async #matches(search: StorefrontSearch, slices: Slices): Promise<Uint32Array | undefined> {
    let result: Uint32Array | undefined;
    const and = (bits: Uint32Array): void => {
      if (result === undefined) result = bits;
      else for (let i = 0; i < result.length; i += 1) result[i]! &= bits[i]!;
    };
    if (search.text !== undefined) {
      const words = [...new Set(wordsOf(search.text))];
      // A query with no word (only punctuation) narrows nothing, as it always has.
      for (const word of words) and(this.#termBits(this.#words, this.#wordsOf, word));
    }
    if (search.shopName !== undefined) and(this.#stringEquals('shop_name', [search.shopName]));
    if (search.filter !== undefined) and(await this.#evaluate(search.filter, slices));
    return result;
  }

  async #evaluate(node: FilterExpr, slices: Slices): Promise<Uint32Array> {
    switch (node.type) {
      case 'and':
      case 'or': {
        let first: Uint32Array | undefined;
        for (const operand of node.operands) {
          const bits = await this.#evaluate(operand, slices);
          if (first === undefined) first = bits;
          else if (node.type === 'and') for (let i = 0; i < first.length; i += 1) first[i]! &= bits[i]!;
          else for (let i = 0; i < first.length; i += 1) first[i]! |= bits[i]!;
        }
        return first!;
      }
      case 'not':
        return this.#complement(await this.#evaluate(node.operand, slices));
      case 'in':
        if (node.field === 'tags') {
          // One posting list per value, with a chance to yield between them.
          const bits = this.#empty();
          for (const value of node.values) {
            await slices.pause();
            this.#termBits(this.#tags, this.#tagsOf, foldText(String(value)), bits);
          }
          return node.negated ? this.#complement(bits) : bits;
        }
        await slices.pause();
        return this.#leaf(node);
      case 'compare':
        await slices.pause();
        return this.#leaf(node);
    }
  }

  #leaf(node: Extract<FilterExpr, { type: 'compare' | 'in' }>): Uint32Array {
    switch (node.type) {
      case 'compare': {
        if (node.operator === '=' || node.operator === '!=') {
          const bits = this.#equals(node.field, [node.value]);
          return node.operator === '=' ? bits : this.#complement(bits);
        }
        return this.#range(node.field, node.operator, node.value as number);
      }
      case 'in': {
        const bits = this.#equals(node.field, node.values);
        return node.negated ? this.#complement(bits) : bits;
      }
    }
  }

  #empty(): Uint32Array {
    return new Uint32Array(Math.ceil(this.#size / WORD_BITS));
  }

  #complement(bits: Uint32Array): Uint32Array {
    for (let i = 0; i < bits.length; i += 1) bits[i] = ~bits[i]!;
    const spare = bits.length * WORD_BITS - this.#size;
    // Bits past the last product stay clear, so population counts stay exact.
    if (spare > 0) bits[bits.length - 1]! &= 0xffffffff >>> spare;
    return bits;
  }

  /** Products whose field equals any of the values. */
  #equals(field: FilterField, values: readonly FilterLiteral[]): Uint32Array {
    if (field === 'tags') {
      const bits = this.#empty();
      for (const value of values) this.#termBits(this.#tags, this.#tagsOf, foldText(String(value)), bits);
      return bits;
    }
    if (field === 'available') {
      const want = new Set<number>(values.map((value) => (value === true ? 1 : 0)));
      if (want.size === 2) return this.#complement(this.#empty());
      const bits = this.#empty();
      const available = this.#available.data;
      const only = want.has(1) ? 1 : 0;
      for (let slot = 0; slot < this.#size; slot += 1) if (available[slot] === only) setBit(bits, slot);
      return bits;
    }
    if (field === 'cursor' || (NUMBER_FIELDS as readonly string[]).includes(field)) {
      const column = field === 'cursor' ? this.#cursor.data : this.#numbers[field as NumberField].data;
      const bits = this.#empty();
      // One value (the common case) compares directly: a Set look-up per product costs more than the pass.
      if (values.length === 1) {
        const only = values[0] as number;
        for (let slot = 0; slot < this.#size; slot += 1) if (column[slot] === only) setBit(bits, slot);
        return bits;
      }
      const want = new Set(values as number[]);
      for (let slot = 0; slot < this.#size; slot += 1) if (want.has(column[slot]!)) setBit(bits, slot);
      return bits;
    }
    return this.#stringEquals(field as StringField, values as string[]);
  }

  #stringEquals(field: StringField, values: readonly string[]): Uint32Array {
    if ((TEXT_FIELDS as readonly string[]).includes(field)) {
      const texts = this.#texts[field as TextField];
      const wanted = new Set(values.map(foldText));
      const bits = this.#empty();
      for (let slot = 0; slot < this.#size; slot += 1) if (wanted.has(texts[slot]!)) setBit(bits, slot);
      return bits;
    }
    const { dictionary, codes } = this.#coded[field as CodedField];
    const bits = this.#empty();
    const wanted = new Set<number>();
    for (const value of values) {
      const code = dictionary.find(foldText(value));
      if (code !== undefined) wanted.add(code);
    }
    if (wanted.size === 0) return bits;
    const column = codes.data;
    if (wanted.size === 1) {
      const [only] = wanted;
      for (let slot = 0; slot < this.#size; slot += 1) if (column[slot] === only) setBit(bits, slot);
    } else {
      for (let slot = 0; slot < this.#size; slot += 1) if (wanted.has(column[slot]!)) setBit(bits, slot);
    }
    return bits;
  }

  #range(field: FilterField, operator: '<' | '<=' | '>' | '>=', value: number): Uint32Array {
    const column = field === 'cursor' ? this.#cursor.data : this.#numbers[field as NumberField].data;
    const bits = this.#empty();
    const size = this.#size;
    switch (operator) {
      case '<':
        for (let slot = 0; slot < size; slot += 1) if (column[slot]! < value) setBit(bits, slot);
        break;
      case '<=':
        for (let slot = 0; slot < size; slot += 1) if (column[slot]! <= value) setBit(bits, slot);
        break;
      case '>':
        for (let slot = 0; slot < size; slot += 1) if (column[slot]! > value) setBit(bits, slot);
        break;
      case '>=':
        for (let slot = 0; slot < size; slot += 1) if (column[slot]! >= value) setBit(bits, slot);
        break;
    }
    return bits;
  }

  /** Sets the bits of the slots that hold `term` now: its posting list, less the entries a rewrite made stale. */
  #termBits(postings: Postings, of: number[][], term: string, bits = this.#empty()): Uint32Array {
    const code = postings.terms.find(term);
    if (code === undefined) return bits;
    const list = postings.list(code);
    if (postings.stale === 0) for (let i = 0; i < list.length; i += 1) setBit(bits, list[i]!);
    else for (const slot of list) if (of[slot]!.includes(code)) setBit(bits, slot);
    return bits;
  }

  /** Position → slot for a sort. */
  #order(sort: StorefrontSort): (position: number) => number {
    const last = this.#size - 1;
    switch (sort) {
      case 'cursor:asc':
        return (position) => position;
      case 'cursor:desc':
        return (position) => last - position;
      case 'updated_at:asc':
      case 'published_at:asc': {
        const permutation = this.#permutation(sort.startsWith('updated') ? 'updated_at' : 'product_published_at', sort);
        return (position) => permutation[position]!;
      }
      case 'updated_at:desc':
      case 'published_at:desc': {
        const ascending = sort.replace(':desc', ':asc') as StorefrontSort;
        const permutation = this.#permutation(sort.startsWith('updated') ? 'updated_at' : 'product_published_at', ascending);
        // Descending by key, ties by cursor descending: the ascending order read backwards.
        return (position) => permutation[last - position]!;
      }
    }
  }

  #permutation(field: NumberField, key: StorefrontSort): Int32Array {
    let permutation = this.#orders.get(key);
    if (permutation === undefined) {
      const column = this.#numbers[field].data;
      const slots = new Int32Array(this.#size);
      for (let slot = 0; slot < this.#size; slot += 1) slots[slot] = slot;
      // Slots ascend with cursors, so ties by slot are ties by cursor.
      slots.sort((a, b) => column[a]! - column[b]! || a - b);
      this.#orders.set(key, (permutation = slots));
    }
    return permutation;
  }
}

/** Work between two yields of a search to the event loop. */
const SLICE_MS = 2;

/** Tells a search when it has worked a slice, and yields (setImmediate, so I/O runs first) then. */
class Slices {
  readonly #sliceMs: number;
  #since = performance.now();
  constructor(sliceMs: number) {
    this.#sliceMs = sliceMs;
  }
  pause(): Promise<void> | undefined {
    if (performance.now() - this.#since < this.#sliceMs) return undefined;
    return new Promise((resolve) => {
      setImmediate(() => {
        this.#since = performance.now();
        resolve();
      });
    });
  }
}

function setBit(bits: Uint32Array, slot: number): void {
  bits[slot >>> 5]! |= 1 << (slot & 31);
}

function popcount(bits: Uint32Array): number {
  let total = 0;
  for (let i = 0; i < bits.length; i += 1) {
    let word = bits[i]!;
    word -= (word >>> 1) & 0x55555555;
    word = (word & 0x33333333) + ((word >>> 2) & 0x33333333);
    total += (((word + (word >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
  }
  return total;
}

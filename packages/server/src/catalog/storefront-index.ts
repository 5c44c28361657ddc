// The storefront index: every storefront product's filterable fields in memory, column by column,
// so any expression of the filter language, `query` and `shop_name` are answered the same way
// whatever the storage engine, at a cost bounded by the catalog's size.
//
// Guarantees:
// - One definition of matching: strings compare by `foldText`, `query` by `wordsOf` (text.ts);
//   numbers, timestamps (epoch ms) and cursors as doubles (cursors are exact doubles).
// - Each leaf of a filter produces (or, inside an AND, narrows) a bitset: a range over a number
//   column through its range index (range-index.ts: whole buckets from a bitset, one bucket cut by
//   binary search), over cursors a run of slots (cursors ascend with slots), `available` its
//   bitset, shop, brand and product type their slot lists, a tag or word its posting list, any
//   other equality one pass over a typed column. AND, OR, NOT and IN are word-wise operations on
//   bitsets. A request therefore costs O(leaves × products / 32) word operations plus those lists
//   and passes and one walk for its page, whatever the expression: no input makes it scan row by
//   row through an interpreter.
// - `total` is exact (a population count). Ties in every sort are broken by cursor.
// - A search yields to the event loop whenever it has worked SLICE_MS since it last did (between
//   leaves), so a costly filter delays other requests by about one slice per search in flight
//   instead of by its whole cost. Its answer is the index as it stood when it began: a write
//   meanwhile makes it start again, without yielding.
// Limits: the index holds a few dozen bytes per product plus its distinct strings, and about 20
// more per product for each number column with a range index (all of them once `prepare` has
// run); a sort other than by cursor keeps a permutation, moved in place by writes of up to
// INCREMENTAL_ORDER_MAX rows (a memmove per row) and rebuilt (O(n log n)) on the first read after
// a larger one; one leaf is not divided.
import type { FilterExpr, FilterField, FilterLiteral } from './filter/ast.ts';
import type { StorefrontSort } from './model.ts';
import { BitsetPool, complement, countBelow, RangeIndex, wordsFor, type RangeOperator } from './range-index.ts';
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
  /** Entries that are live (every list's length is its share of live + stale). */
  live = 0;
  add(term: number, slot: number): void {
    let list = this.#lists.get(term);
    if (list === undefined) this.#lists.set(term, (list = []));
    list.push(slot);
  }
  list(term: number): readonly number[] {
    return this.#lists.get(term) ?? [];
  }
  /** Drops every entry; the caller adds the live ones again. */
  clear(): void {
    this.stale = 0;
    this.#lists.clear();
  }
}


export class StorefrontIndex {
  #size = 0;
  readonly #slotByCursor = new Map<number, number>();
  readonly #cursor = new Column((n) => new Float64Array(n));
  /** Available products as a bitset (`available = true` is a copy of it). */
  #available = new Uint32Array(wordsFor(1024));
  readonly #numbers = Object.fromEntries(NUMBER_FIELDS.map((field) => [field, new Column((n) => new Float64Array(n))])) as Record<
    NumberField,
    Column<Float64Array>
  >;
  /**
   * Per coded field: its dictionary, each slot's code, and for each code the slots written with it
   * (an entry is live while the slot still holds that code), so `brand = X` costs X's products,
   * not a pass over the catalog.
   */
  readonly #coded = Object.fromEntries(
    CODED_FIELDS.map((field) => [field, { dictionary: new Dictionary(), codes: new Column((n) => new Int32Array(n)), slots: [] as number[][], entries: 0 }]),
  ) as Record<CodedField, { dictionary: Dictionary; codes: Column<Int32Array>; slots: number[][]; entries: number }>;
  readonly #texts = Object.fromEntries(TEXT_FIELDS.map((field) => [field, [] as string[]])) as Record<TextField, string[]>;
  /** Per slot, the tag and word terms it holds now (the truth that stale postings are checked against). */
  #tagsOf: number[][] = [];
  #wordsOf: number[][] = [];
  readonly #tags = new Postings();
  readonly #words = new Postings();
  /** Range indexes of the number columns that range leaves have asked for, kept current by every write. */
  readonly #ranges = new Map<NumberField, RangeIndex>();
  /**
   * Slots in ascending order of a number column (ties by slot), per column a sort has asked for:
   * kept in place through small writes, dropped by larger ones and rebuilt on the next read.
   */
  readonly #orders = new Map<NumberField, SortedSlots>();
  /** The bitsets searches work in. */
  readonly #pool = new BitsetPool();
  /** Counts writes, so a search that yielded can tell the index changed under it. */
  #version = 0;

  get size(): number {
    return this.#size;
  }

  /** Adds or replaces products (matched by cursor). Rows of new cursors must come in ascending order. */
  upsert(rows: Iterable<StorefrontIndexRow>): void {
    const batch = Array.isArray(rows) ? (rows as readonly StorefrontIndexRow[]) : [...rows];
    // Moving a slot within a sort order costs a memmove of the order; past a few hundred rows one
    // O(n log n) rebuild on the next read costs less.
    if (batch.length > INCREMENTAL_ORDER_MAX) this.#orders.clear();
    for (const row of batch) {
      let slot = this.#slotByCursor.get(row.cursor);
      const fresh = slot === undefined;
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
      if (row.available) this.#available[slot >>> 5]! |= 1 << (slot & 31);
      else this.#available[slot >>> 5]! &= ~(1 << (slot & 31));
      for (const field of NUMBER_FIELDS) this.#setNumber(field, slot, row[field], fresh);
      this.#setCode('shop_name', slot, row.shop_name, fresh);
      this.#setCode('brand', slot, row.brand, fresh);
      this.#setCode('product_type', slot, row.product_type, fresh);
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
    this.#version += 1;
    this.#compactWhenStale();
  }

  /**
   * Builds now what searches would otherwise build on first use: every number column's range
   * index with its buckets sorted, and the orders of the non-cursor sorts. Writes later drop only
   * what they touch (see upsert).
   */
  prepare(): void {
    for (const field of NUMBER_FIELDS) this.#rangeIndex(field).sortAll(this.#numbers[field].data, this.#size);
    this.#permutation('updated_at');
    this.#permutation('product_published_at');
  }

  /** The page of slots' cursors and the exact number of matches; `sliceMs` is for tests. */
  async search(search: StorefrontSearch, sliceMs = SLICE_MS): Promise<{ cursors: number[]; total: number }> {
    const version = this.#version;
    this.#pool.begin(this.#size);
    try {
      let matches = await this.#matches(search, new Slices(sliceMs));
      // Written to while it yielded: answer from the index as it is now, in one go.
      if (version !== this.#version) {
        this.#pool.end();
        this.#pool.begin(this.#size);
        matches = await this.#matches(search, new Slices(Number.POSITIVE_INFINITY));
      }
      return this.#page(search, matches);
    } finally {
      this.#pool.end();
    }
  }

  /** The page of `matches` (undefined: every product) in the search's order, and their number. */
  #page(search: StorefrontSearch, matches: Uint32Array | undefined): { cursors: number[]; total: number } {
    const order = this.#order(search.sort);
    const cursors: number[] = [];
    const end = search.offset + search.limit;
    let seen = 0;
    if (matches === undefined) {
      for (let i = search.offset; i < Math.min(end, this.#size); i += 1) cursors.push(this.#cursor.data[order(i)]!);
      return { cursors, total: this.#size };
    }
    const total = popcount(matches);
    if (search.sort === 'cursor:asc' || search.sort === 'cursor:desc') {
      // Slots ascend with cursors: walk the set bits word by word, skipping empty words.
      const ascending = search.sort === 'cursor:asc';
      for (let w = 0; w < matches.length && seen < end; w += 1) {
        let word = matches[ascending ? w : matches.length - 1 - w]!;
        const base = (ascending ? w : matches.length - 1 - w) << 5;
        while (word !== 0 && seen < end) {
          const bit = ascending ? 31 - Math.clz32(word & -word) : 31 - Math.clz32(word);
          word &= ~(1 << bit);
          if (seen >= search.offset) cursors.push(this.#cursor.data[base + bit]!);
          seen += 1;
        }
      }
      return { cursors, total };
    }
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
    for (const field of NUMBER_FIELDS) this.#numbers[field].ensure(length);
    for (const field of CODED_FIELDS) this.#coded[field].codes.ensure(length);
    const capacity = this.#cursor.data.length;
    if (wordsFor(capacity) > this.#available.length) {
      const grown = new Uint32Array(wordsFor(capacity));
      grown.set(this.#available);
      this.#available = grown;
    }
    for (const range of this.#ranges.values()) range.ensure(capacity);
  }

  #index(postings: Postings, previous: number[] | undefined, terms: Set<string>, slot: number): number[] {
    const codes = Array.from(terms, (term) => postings.terms.code(term));
    for (const code of codes) if (previous === undefined || !previous.includes(code)) postings.add(code, slot);
    if (previous !== undefined) for (const code of previous) if (!codes.includes(code)) postings.stale += 1;
    postings.live += codes.length - (previous?.length ?? 0);
    return codes;
  }

  /**
   * Stores a number and keeps the column's range index and sort order current; a rewrite that
   * leaves the value as it was touches neither (a moved slot costs a memmove of the order and
   * drops the sorted members of its buckets).
   */
  #setNumber(field: NumberField, slot: number, value: number, fresh: boolean): void {
    const column = this.#numbers[field].data;
    if (!fresh && Object.is(column[slot], value)) return;
    const order = this.#orders.get(field);
    if (!fresh) order?.remove(slot, column);
    column[slot] = value;
    this.#ranges.get(field)?.set(slot, value);
    order?.insert(slot, column);
  }

  #setCode(field: CodedField, slot: number, value: string, fresh: boolean): void {
    const coded = this.#coded[field];
    const code = coded.dictionary.code(foldText(value));
    if (!fresh && coded.codes.data[slot] === code) return;
    coded.codes.data[slot] = code;
    (coded.slots[code] ??= []).push(slot);
    coded.entries += 1;
  }

  /** Rebuilds the posting lists once stale entries (from rewritten products) outnumber live ones. */
  #compactWhenStale(): void {
    for (const field of CODED_FIELDS) {
      const coded = this.#coded[field];
      if (coded.entries <= 2 * this.#size + 1024) continue;
      coded.slots = [];
      for (let slot = 0; slot < this.#size; slot += 1) (coded.slots[coded.codes.data[slot]!] ??= []).push(slot);
      coded.entries = this.#size;
    }
    for (const [postings, of] of [
      [this.#tags, this.#tagsOf],
      [this.#words, this.#wordsOf],
    ] as const) {
      if (postings.stale <= postings.live + 1024) continue;
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
          // A range leaf narrows what is left in place: one pass, no bitset of its own.
          if (first !== undefined && node.type === 'and' && operand.type === 'compare' && isRange(operand.operator) && operand.field !== 'cursor') {
            await slices.pause();
            const field = operand.field as NumberField;
            this.#rangeIndex(field).intersect(first, this.#numbers[field].data, this.#size, operand.operator, operand.value as number);
            continue;
          }
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
    return this.#pool.take(true);
  }

  #complement(bits: Uint32Array): Uint32Array {
    return complement(bits, this.#size);
  }

  /** Products whose field equals any of the values. */
  #equals(field: FilterField, values: readonly FilterLiteral[]): Uint32Array {
    if (field === 'tags') {
      const bits = this.#empty();
      for (const value of values) this.#termBits(this.#tags, this.#tagsOf, foldText(String(value)), bits);
      return bits;
    }
    if (field === 'available') {
      const want = new Set(values);
      if (want.size === 2) return this.#complement(this.#empty());
      const bits = this.#pool.take(false);
      bits.set(this.#available.subarray(0, bits.length));
      return want.has(true) ? bits : this.#complement(bits);
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
    const { dictionary, codes, slots } = this.#coded[field as CodedField];
    const bits = this.#empty();
    const column = codes.data;
    for (const value of values) {
      const code = dictionary.find(foldText(value));
      const list = code === undefined ? undefined : slots[code];
      if (list === undefined) continue;
      for (let i = 0; i < list.length; i += 1) {
        const slot = list[i]!;
        if (column[slot] === code) setBit(bits, slot);
      }
    }
    return bits;
  }

  #range(field: FilterField, operator: RangeOperator, value: number): Uint32Array {
    const size = this.#size;
    if (field === 'cursor') {
      // Cursors ascend with slots: the matches are one run of slots, found by binary search.
      const low = countBelow(this.#cursor.data.subarray(0, size), value, operator === '<=' || operator === '>');
      const bits = this.#empty();
      if (operator === '<' || operator === '<=') setRun(bits, 0, low);
      else setRun(bits, low, size);
      return bits;
    }
    const numberField = field as NumberField;
    return this.#rangeIndex(numberField).select(this.#numbers[numberField].data, size, operator, value, this.#pool);
  }

  /** The range index of a number column, built on first use and again once the index has doubled. */
  #rangeIndex(field: NumberField): RangeIndex {
    let range = this.#ranges.get(field);
    if (range === undefined || this.#size > 2 * range.builtAt + 1024) {
      range = RangeIndex.build(this.#numbers[field].data, this.#size, this.#cursor.data.length);
      this.#ranges.set(field, range);
    }
    return range;
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
        const permutation = this.#permutation(sort.startsWith('updated') ? 'updated_at' : 'product_published_at');
        return (position) => permutation[position]!;
      }
      case 'updated_at:desc':
      case 'published_at:desc': {
        const permutation = this.#permutation(sort.startsWith('updated') ? 'updated_at' : 'product_published_at');
        // Descending by key, ties by cursor descending: the ascending order read backwards.
        return (position) => permutation[last - position]!;
      }
    }
  }

  #permutation(field: NumberField): Int32Array {
    let order = this.#orders.get(field);
    if (order === undefined) {
      const column = this.#numbers[field].data;
      const slots = new Int32Array(this.#size);
      for (let slot = 0; slot < this.#size; slot += 1) slots[slot] = slot;
      // Slots ascend with cursors, so ties by slot are ties by cursor.
      slots.sort((a, b) => column[a]! - column[b]! || a - b);
      this.#orders.set(field, (order = new SortedSlots(slots)));
    }
    return order.slots;
  }

}

/** Largest write batch that moves slots within the sort orders instead of dropping them. */
const INCREMENTAL_ORDER_MAX = 256;

/** Slots ascending by (column value, slot), with room to grow; `slots` is the live part. */
class SortedSlots {
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
    if (this.#length === this.#buffer.length) {
      const grown = new Int32Array(Math.max(1024, this.#length * 2));
      grown.set(this.#buffer);
      this.#buffer = grown;
    }
    const at = this.#position(slot, column[slot]!, column);
    this.#buffer.copyWithin(at + 1, at, this.#length);
    this.#buffer[at] = slot;
    this.#length += 1;
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

function isRange(operator: string): operator is RangeOperator {
  return operator === '<' || operator === '<=' || operator === '>' || operator === '>=';
}

/** Sets the bits of slots `from` to `to` (exclusive). */
function setRun(bits: Uint32Array, from: number, to: number): void {
  for (let slot = from; slot < to && (slot & 31) !== 0; slot += 1) setBit(bits, slot);
  let slot = from + ((32 - (from & 31)) & 31);
  for (; slot + 32 <= to; slot += 32) bits[slot >>> 5] = 0xffffffff;
  for (; slot < to; slot += 1) setBit(bits, slot);
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

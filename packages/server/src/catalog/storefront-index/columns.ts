// The storefront index's columns: every storefront product's filterable fields, one slot per
// product in ascending cursor order. Per slot: the cursor and each number column as doubles,
// `available` as one bit, shop, brand and product type as dictionary codes, `id`, `product_id`,
// `title` and `slug` as a 64-bit hash of their folded text (hash.ts), and the codes of its tags and
// title words (term-lists.ts). Per term: its posting list; per number column a range index; per
// hashed column an equality asked of, a hash look-up (hash-lookup.ts). No JavaScript object or
// string is kept per product or per tag.
//
// Guarantees: one definition of matching: strings compare by `foldText`, `query` by `wordsOf`
// (text.ts); numbers, timestamps (epoch ms) and cursors as doubles (cursors are exact doubles).
// A product's words are those of its title (posted per product), brand, product type and tags
// (found through the words of each distinct brand, type and tag). Every write keeps the range
// indexes, the hash look-ups and the posting lists current (a rewrite logs; compaction is between
// searches); `version` counts writes.
import { foldText, wordsOf } from '../text.ts';
import { arenaBits } from '../kernels.ts';
import { countBelow, hasBit, setBit, wordsFor } from './bits.ts';
import { Growable } from './growable.ts';
import { hashInto } from './hash.ts';
import { HashLookup } from './hash-lookup.ts';
import { Postings } from './postings.ts';
import { RangeIndex } from './range-index.ts';
import type { SlotChanges } from './slot-changes.ts';
import type { SortedSlots } from './sort-orders.ts';
import { TermDictionary } from './term-dictionary.ts';
import { TermLists } from './term-lists.ts';

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

/** Few distinct values: kept as dictionary codes with a posting list per code. */
export const CODED_FIELDS = ['shop_name', 'brand', 'product_type'] as const;
/** About one value per product: kept as a 64-bit hash of the folded text. */
export const HASHED_FIELDS = ['id', 'product_id', 'title', 'slug'] as const;
export const NUMBER_FIELDS = [
  'price_min',
  'price_max',
  'price_display',
  'created_at',
  'updated_at',
  'product_created_at',
  'product_published_at',
] as const;
export type CodedField = (typeof CODED_FIELDS)[number];
export type HashedField = (typeof HASHED_FIELDS)[number];
export type NumberField = (typeof NUMBER_FIELDS)[number];

export function isNumberField(field: string): field is NumberField {
  return (NUMBER_FIELDS as readonly string[]).includes(field);
}

export function isHashedField(field: string): field is HashedField {
  return (HASHED_FIELDS as readonly string[]).includes(field);
}

/** A string column of few distinct values: folded value → code, each slot's code, each code's slots. */
export interface CodedColumn {
  dictionary: Map<string, number>;
  codes: Growable<Int32Array>;
  postings: Postings;
}

/** Entries a cache of raw values keeps before it is emptied. */
const RAW_CACHE_MAX = 65_536;

export class StorefrontColumns {
  size = 0;
  /** Counts writes, so a search that yielded can tell the columns changed under it. */
  version = 0;
  readonly cursor = new Growable((n) => new Float64Array(n));
  /** Available products as a bitset (`available = true` reads it as it is). */
  readonly available = new Growable((n) => arenaBits(n), 32);
  readonly numbers = Object.fromEntries(NUMBER_FIELDS.map((field) => [field, new Growable((n) => new Float64Array(n))])) as Record<
    NumberField,
    Growable<Float64Array>
  >;
  readonly coded = Object.fromEntries(
    CODED_FIELDS.map((field) => [field, { dictionary: new Map(), codes: new Growable((n) => new Int32Array(n)), postings: new Postings() }]),
  ) as Record<CodedField, CodedColumn>;
  /** Two words per slot: the 64-bit hash of the folded value. */
  readonly hashes = Object.fromEntries(HASHED_FIELDS.map((field) => [field, new Growable((n) => new Uint32Array(n), 2048)])) as Record<
    HashedField,
    Growable<Uint32Array>
  >;
  /** Tags (folded) and words share one dictionary: a tag that is one word has that word's code. */
  terms = new TermDictionary();
  readonly tagsOf = new TermLists();
  readonly titleWordsOf = new TermLists();
  readonly tags = new Postings();
  readonly titleWords = new Postings();
  /** Per term code, as a tag: 0 not seen as a tag, 1 seen, 2 seen and its only word is itself. */
  readonly tagKind = new Growable((n) => new Uint8Array(n));
  /** Word code → tags (other than the word itself) that have that word; few: one per distinct tag word. */
  readonly tagsByWord = new Map<number, number[]>();
  /** Word code → brands and product types that have that word. */
  readonly codesByWord = new Map<number, { field: CodedField; code: number }[]>();
  /**
   * Recently written raw values → their codes, so a repeated value (titles, every shop, brand and
   * type) is folded, split and looked up once: bounded, emptied when full.
   */
  readonly #rawCodes = Object.fromEntries(CODED_FIELDS.map((field) => [field, new Map<string, number>()])) as Record<CodedField, Map<string, number>>;
  readonly #rawTitles = new Map<string, readonly number[]>();
  /** Range indexes of the number columns that range leaves have asked for, kept current by every write. */
  readonly #ranges = new Map<NumberField, RangeIndex>();
  /** Hash look-ups of the hashed columns that equalities have asked for, kept current by every write. */
  readonly #lookups = new Map<HashedField, HashLookup>();
  /** Told the field whose range index was built again. */
  onRangeRebuilt: ((field: NumberField) => void) | undefined;

  /** Slot of `cursor`, or -1: cursors ascend with slots. */
  slotOf(cursor: number): number {
    const at = countBelow(this.cursor.data, cursor, false, this.size);
    return at < this.size && this.cursor.data[at] === cursor ? at : -1;
  }

  /**
   * Writes one row: a new slot for a new cursor (which must be above every cursor held), else its
   * slot rewritten. `orderOf` gives the sort order to move the slot in as a number changes, if any;
   * `changes` notes the slot and the fields it changed. Returns the slot. The caller counts the
   * batch as one version.
   */
  write(row: StorefrontIndexRow, orderOf: (field: NumberField) => SortedSlots | undefined, changes: SlotChanges): number {
    let slot = this.slotOf(row.cursor);
    const fresh = slot < 0;
    if (fresh) {
      slot = this.size;
      if (slot > 0 && row.cursor <= this.cursor.data[slot - 1]!) {
        throw new Error(`storefront cursor ${row.cursor} arrived after a larger one; the index needs ascending cursors`);
      }
      this.size += 1;
      this.#ensure(this.size);
      changes.add(slot);
    } else {
      changes.rewrite(slot);
    }
    const touched = fresh ? undefined : changes.touched;
    this.cursor.data[slot] = row.cursor;
    if (!fresh && hasBit(this.available.data, slot) !== row.available) {
      touched?.add('available');
      // Recorded at the slot's values as they were: the numbers below move it on from there.
      for (const [field, range] of this.#ranges) range.availabilityChanged(this.numbers[field].data[slot]!, row.available);
    }
    if (row.available) setBit(this.available.data, slot);
    else this.available.data[slot >>> 5]! &= ~(1 << (slot & 31));
    for (const field of NUMBER_FIELDS) if (this.#setNumber(field, slot, row[field], fresh, orderOf(field))) touched?.add(field);
    for (const field of CODED_FIELDS) if (this.#setCode(field, slot, row[field], fresh)) touched?.add(field);
    for (const field of HASHED_FIELDS) {
      const hashes = this.hashes[field].data;
      const [low, high] = [hashes[2 * slot]!, hashes[2 * slot + 1]!];
      hashInto(hashes, slot, row[field]);
      const changed = hashes[2 * slot] !== low || hashes[2 * slot + 1] !== high;
      if (changed) touched?.add(field);
      if (fresh || changed) this.#lookups.get(field)?.move(slot, fresh ? undefined : low, hashes[2 * slot]!);
    }
    const tags: number[] = [];
    for (const tag of row.tags) {
      const code = this.#tagCode(tag);
      if (!tags.includes(code)) tags.push(code);
    }
    if (this.#setTerms(this.tags, this.tagsOf, slot, tags, fresh)) touched?.add('tags');
    if (this.#setTerms(this.titleWords, this.titleWordsOf, slot, this.#titleWordCodes(row.title), fresh)) touched?.add('title');
    return slot;
  }

  /** Ends a write batch: a new version; term lists compacted once their stale entries outweigh them. */
  endWrite(): void {
    this.version += 1;
    this.tagsOf.compactWhenWasteful(this.size);
    this.titleWordsOf.compactWhenWasteful(this.size);
  }

  /**
   * The range index of a number column, built on first use and again once the column has doubled;
   * `onRangeRebuilt` hears of each rebuild (what was made of the index before is of other buckets).
   */
  rangeIndex(field: NumberField): RangeIndex {
    let range = this.#ranges.get(field);
    if (range === undefined || this.size > 2 * range.builtAt + 1024) {
      const rebuilt = range !== undefined;
      range = RangeIndex.build(this.numbers[field].data, this.size, this.cursor.data.length, this.available.data);
      this.#ranges.set(field, range);
      if (rebuilt) this.onRangeRebuilt?.(field);
    }
    return range;
  }

  /** The range index of a number column as it stands, not built or rebuilt by this call; undefined when none is. */
  builtRangeIndex(field: NumberField): RangeIndex | undefined {
    return this.#ranges.get(field);
  }

  /** The hash look-up of a hashed column, built on first use and again once the column has doubled. */
  hashLookup(field: HashedField): HashLookup {
    let lookup = this.#lookups.get(field);
    if (lookup === undefined || this.size > 2 * lookup.builtAt + 1024) {
      lookup = HashLookup.build(this.hashes[field].data, this.size, this.cursor.data.length);
      this.#lookups.set(field, lookup);
    }
    return lookup;
  }

  /** Rebuilds posting lists whose logged changes are due (all of them when `all`). */
  compactPostings(all: boolean): void {
    const size = this.size;
    for (const field of CODED_FIELDS) {
      const { codes, postings, dictionary } = this.coded[field];
      if ((all && !postings.clean) || postings.due) postings.compact(size, dictionary.size, (slot, emit) => emit(codes.data[slot]!));
    }
    if ((all && !this.tags.clean) || this.tags.due) this.tags.compact(size, this.terms.size, (slot, emit) => this.tagsOf.forEach(slot, emit));
    if ((all && !this.titleWords.clean) || this.titleWords.due) this.titleWords.compact(size, this.terms.size, (slot, emit) => this.titleWordsOf.forEach(slot, emit));
  }

  /** Gives back the room columns grew into beyond the products held. */
  trim(): void {
    const size = this.size;
    this.cursor.trim(size);
    const capacity = this.cursor.data.length;
    for (const field of NUMBER_FIELDS) this.numbers[field].fit(capacity);
    for (const field of CODED_FIELDS) this.coded[field].codes.fit(capacity);
    for (const field of HASHED_FIELDS) this.hashes[field].fit(2 * capacity);
    this.tagsOf.start.fit(capacity);
    this.titleWordsOf.start.fit(capacity);
    this.available.fit(wordsFor(capacity));
    this.tagsOf.arena.trim(this.tagsOf.used);
    this.titleWordsOf.arena.trim(this.titleWordsOf.used);
    this.terms.trim();
    this.tagKind.trim(this.terms.size);
    for (const range of this.#ranges.values()) range.resize(capacity);
    for (const lookup of this.#lookups.values()) lookup.resize(capacity);
  }

  #ensure(length: number): void {
    this.cursor.ensure(length);
    const capacity = this.cursor.data.length;
    for (const field of NUMBER_FIELDS) this.numbers[field].ensure(capacity);
    for (const field of CODED_FIELDS) this.coded[field].codes.ensure(capacity);
    for (const field of HASHED_FIELDS) this.hashes[field].ensure(2 * capacity);
    this.tagsOf.start.ensure(capacity);
    this.titleWordsOf.start.ensure(capacity);
    this.available.ensure(wordsFor(capacity));
    for (const range of this.#ranges.values()) if (range.capacity < capacity) range.resize(capacity);
    for (const lookup of this.#lookups.values()) if (lookup.capacity < capacity) lookup.resize(capacity);
  }

  /** The distinct codes of the title's words. */
  #titleWordCodes(title: string): readonly number[] {
    let codes = this.#rawTitles.get(title);
    if (codes !== undefined) return codes;
    codes = [...new Set(wordsOf(title))].map((word) => this.terms.code(word));
    remember(this.#rawTitles, title, codes);
    return codes;
  }

  /** The tag's code; the first time a tag is seen, its words are noted. */
  #tagCode(tag: string): number {
    const code = this.terms.codeFolded(tag, foldText);
    this.tagKind.ensure(this.terms.size);
    if (this.tagKind.data[code] !== 0) return code;
    const words = [...new Set(wordsOf(tag))].map((word) => this.terms.code(word));
    this.tagKind.ensure(this.terms.size);
    this.tagKind.data[code] = words.length === 1 && words[0] === code ? 2 : 1;
    for (const word of words) {
      if (word === code) continue;
      let tags = this.tagsByWord.get(word);
      if (tags === undefined) this.tagsByWord.set(word, (tags = []));
      tags.push(code);
    }
    return code;
  }

  /** Sets the slot's terms; whether they changed (a rewrite) or were set (a new slot). */
  #setTerms(postings: Postings, lists: TermLists, slot: number, codes: readonly number[], fresh: boolean): boolean {
    if (fresh) {
      for (const code of codes) postings.add(code, slot);
    } else {
      let added = 0;
      for (const code of codes) {
        if (lists.holds(slot, code)) continue;
        postings.add(code, slot);
        added += 1;
      }
      let dropped = 0;
      lists.forEach(slot, (code) => {
        if (codes.includes(code)) return;
        postings.drop();
        dropped += 1;
      });
      // The same terms (a rewrite of prices, say): the slot keeps its list, so the buffer does not
      // grow (a snapshot loads it with no room to spare).
      if (added === 0 && dropped === 0) return false;
    }
    lists.set(slot, codes, fresh);
    return true;
  }

  /**
   * Stores a number and keeps the column's range index and `order` current; a rewrite that leaves
   * the value as it was touches neither. Whether the value changed (or was set, for a new slot).
   */
  #setNumber(field: NumberField, slot: number, value: number, fresh: boolean, order: SortedSlots | undefined): boolean {
    const column = this.numbers[field].data;
    if (!fresh && Object.is(column[slot], value)) return false;
    if (!fresh) order?.remove(slot, column);
    const previous = column[slot];
    column[slot] = value;
    this.#ranges.get(field)?.set(slot, value, fresh ? undefined : previous, hasBit(this.available.data, slot));
    order?.insert(slot, column);
    return true;
  }

  /** Sets the slot's code of `field`; whether it changed (or was set, for a new slot). */
  #setCode(field: CodedField, slot: number, value: string, fresh: boolean): boolean {
    const coded = this.coded[field];
    let code = this.#rawCodes[field].get(value);
    if (code === undefined) code = this.#codeOf(field, value);
    if (!fresh && coded.codes.data[slot] === code) return false;
    if (!fresh) coded.postings.drop();
    coded.codes.data[slot] = code;
    coded.postings.add(code, slot);
    return true;
  }

  /** The code of a shop, brand or product type (new ones get one, their words noted). */
  #codeOf(field: CodedField, value: string): number {
    const coded = this.coded[field];
    const folded = foldText(value);
    let code = coded.dictionary.get(folded);
    if (code === undefined) {
      code = coded.dictionary.size;
      coded.dictionary.set(folded, code);
      if (field !== 'shop_name') {
        for (const word of new Set(wordsOf(folded))) {
          const wordCode = this.terms.code(word);
          let codes = this.codesByWord.get(wordCode);
          if (codes === undefined) this.codesByWord.set(wordCode, (codes = []));
          codes.push({ field, code });
        }
      }
    }
    remember(this.#rawCodes[field], value, code);
    return code;
  }
}

function remember<T>(cache: Map<string, T>, raw: string, value: T): void {
  if (cache.size >= RAW_CACHE_MAX) cache.clear();
  cache.set(raw, value);
}

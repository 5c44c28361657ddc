// The storefront index: every storefront product's filterable fields in memory, column by column,
// so any expression of the filter language, `query` and `shop_name` are answered the same way
// whatever the storage engine, at a cost bounded by the catalog's size. Documents stay in the
// engine; the index answers with the cursors of one page.
//
// Layout (bitsets.ts holds every set structure): products are slots, in ascending cursor order.
// Per slot: the cursor and each number column as doubles, `available` as one bit, shop, brand and
// product type as dictionary codes, `id`, `product_id`, `title` and `slug` as a 64-bit hash of
// their folded text, and the codes of its tags and title words in one shared buffer. Per term:
// its posting list; per number column a range index; per non-cursor sort a permutation. No
// JavaScript object or string is kept per product or per tag.
//
// Guarantees:
// - One definition of matching: strings compare by `foldText`, `query` by `wordsOf` (text.ts);
//   numbers, timestamps (epoch ms) and cursors as doubles (cursors are exact doubles). A product's
//   words are those of its title (posted per product), brand, product type and tags (found
//   through the words of each distinct brand, type and tag).
// - A search starts from the universe and each leaf of an AND narrows the running result (a range
//   through its range index, an equality over a column by checking only the slots still in the
//   result), an empty result ending the AND. Other leaves produce a bitset: tags, words, shop,
//   brand and product type from posting lists, `available` its bitset, cursors a run of slots.
//   OR, NOT and IN are word-wise operations on bitsets, run by WebAssembly SIMD kernels over the
//   bitsets the index keeps in their memory (kernels.ts). A request therefore costs
//   O(leaves × products / 128) vector operations plus those lists and one walk for its page.
// - `total` is exact (a population count). Ties in every sort are broken by cursor.
// - A leaf (and the slots below a range bound's bucket) used a second time is kept whole in the
//   leaf cache (BitsetCache) until the next write; a later search reads it instead of the
//   columns. Kept bitsets are of the index's current version only.
// - Equality on `id`, `product_id`, `title` and `slug` compares 64-bit hashes of the folded text:
//   a false match needs two different values with the same 64-bit hash.
// - A search yields to the event loop whenever it has worked SLICE_MS since it last did (between
//   leaves), so a costly filter delays other requests by about one slice per search in flight
//   instead of by its whole cost. Its answer is the index as it stood when it began: a write
//   meanwhile makes it start again, without yielding. A search whose filter is an AND of at most
//   three leaves kept already (or `available`, or a range leaf whose bucket's slots below it are
//   kept: those, and its bucket's passing members one by one) is answered at once from their
//   bitsets, in one synchronous step.
// Limits: a write batch of more than INCREMENTAL_ORDER_MAX rows sets its slots aside; the next
// read of a sort order sorts only those and merges them into each order (one pass over the order
// plus O(k log n), or O(n + k log k) for a batch that large); smaller ones move each slot (a
// memmove).
// Posting lists are compacted between searches once rewrites have left enough entries stale.
import type { FilterExpr, FilterField, FilterLiteral } from './filter/ast.ts';
import type { StorefrontSort } from './model.ts';
import { andAll, andInto, andNotInto, arenaCopy, clearPastEnd, complement, copyBits, countAll, countBelow, fillBits, hasBit, isEmpty, narrow, orInto, setBit, setRun, threeSources, wordsFor } from './storefront-index/bits.ts';
import { BitsetCache } from './storefront-index/bitset-cache.ts';
import { BitsetPool } from './storefront-index/bitset-pool.ts';
import { Growable } from './storefront-index/growable.ts';
import { compares, type RangeOperator, valueOrder } from './storefront-index/ordering.ts';
import { Postings } from './storefront-index/postings.ts';
import { RangeIndex, type RangeSplit } from './storefront-index/range-index.ts';
import { TermDictionary } from './storefront-index/term-dictionary.ts';
import { arenaBits } from './kernels.ts';
import { RangePairCounts } from './storefront-index/range-pair-counts.ts';
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

/** Few distinct values: kept as dictionary codes with a posting list per code. */
const CODED_FIELDS = ['shop_name', 'brand', 'product_type'] as const;
/** About one value per product: kept as a 64-bit hash of the folded text. */
const HASHED_FIELDS = ['id', 'product_id', 'title', 'slug'] as const;
const NUMBER_FIELDS = [
  'price_min',
  'price_max',
  'price_display',
  'created_at',
  'updated_at',
  'product_created_at',
  'product_published_at',
] as const;
/** Number columns a sort orders by (besides the cursor). */
const SORTED_FIELDS = ['updated_at', 'product_published_at'] as const;
type CodedField = (typeof CODED_FIELDS)[number];
type HashedField = (typeof HASHED_FIELDS)[number];
type NumberField = (typeof NUMBER_FIELDS)[number];

/** A string column of few distinct values: folded value → code, each slot's code, each code's slots. */
interface CodedColumn {
  dictionary: Map<string, number>;
  codes: Growable<Int32Array>;
  postings: Postings;
}

/** Each slot's list of term codes, as [count, ...codes] in one buffer; a rewrite appends a new list. */
class TermLists {
  readonly arena = new Growable((n) => new Int32Array(n), 4096);
  readonly start = new Growable((n) => new Uint32Array(n));
  used = 0;
  /** Entries of lists no slot points to any more. */
  garbage = 0;

  set(slot: number, codes: readonly number[], fresh: boolean): void {
    if (!fresh) this.garbage += this.arena.data[this.start.data[slot]!]! + 1;
    this.arena.ensure(this.used + codes.length + 1);
    const arena = this.arena.data;
    this.start.data[slot] = this.used;
    arena[this.used] = codes.length;
    for (let i = 0; i < codes.length; i += 1) arena[this.used + 1 + i] = codes[i]!;
    this.used += codes.length + 1;
  }

  holds(slot: number, code: number): boolean {
    const arena = this.arena.data;
    const at = this.start.data[slot]!;
    const end = at + 1 + arena[at]!;
    for (let i = at + 1; i < end; i += 1) if (arena[i] === code) return true;
    return false;
  }

  forEach(slot: number, each: (code: number) => void): void {
    const arena = this.arena.data;
    const at = this.start.data[slot]!;
    const end = at + 1 + arena[at]!;
    for (let i = at + 1; i < end; i += 1) each(arena[i]!);
  }

  /** Rewrites the buffer with only the live lists, once garbage outweighs them. */
  compactWhenWasteful(size: number): void {
    if (this.garbage <= this.used / 2 + 4096) return;
    const arena = new Int32Array(this.used - this.garbage + 1024);
    let used = 0;
    const from = this.arena.data;
    for (let slot = 0; slot < size; slot += 1) {
      const at = this.start.data[slot]!;
      const length = from[at]! + 1;
      arena.set(from.subarray(at, at + length), used);
      this.start.data[slot] = used;
      used += length;
    }
    this.arena.data = arena;
    this.used = used;
    this.garbage = 0;
  }
}

export class StorefrontIndex {
  #size = 0;
  readonly #cursor = new Growable((n) => new Float64Array(n));
  /** Available products as a bitset (`available = true` is a copy of it). */
  readonly #available = new Growable((n) => arenaBits(n), 32);
  readonly #numbers = Object.fromEntries(NUMBER_FIELDS.map((field) => [field, new Growable((n) => new Float64Array(n))])) as Record<
    NumberField,
    Growable<Float64Array>
  >;
  readonly #coded = Object.fromEntries(
    CODED_FIELDS.map((field) => [field, { dictionary: new Map(), codes: new Growable((n) => new Int32Array(n)), postings: new Postings() }]),
  ) as Record<CodedField, CodedColumn>;
  /** Two words per slot: the 64-bit hash of the folded value. */
  readonly #hashes = Object.fromEntries(HASHED_FIELDS.map((field) => [field, new Growable((n) => new Uint32Array(n), 2048)])) as Record<
    HashedField,
    Growable<Uint32Array>
  >;
  /** Tags (folded) and words share one dictionary: a tag that is one word has that word's code. */
  #terms = new TermDictionary();
  readonly #tagsOf = new TermLists();
  readonly #titleWordsOf = new TermLists();
  readonly #tags = new Postings();
  readonly #titleWords = new Postings();
  /** Per term code, as a tag: 0 not seen as a tag, 1 seen, 2 seen and its only word is itself. */
  readonly #tagKind = new Growable((n) => new Uint8Array(n));
  /** Word code → tags (other than the word itself) that have that word; few: one per distinct tag word. */
  readonly #tagsByWord = new Map<number, number[]>();
  /** Word code → brands and product types that have that word. */
  readonly #codesByWord = new Map<number, { field: CodedField; code: number }[]>();
  /**
   * Recently written raw values → their codes, so a repeated value (titles, every shop, brand and
   * type) is folded, split and looked up once: bounded, emptied when full.
   */
  readonly #rawCodes = Object.fromEntries(CODED_FIELDS.map((field) => [field, new Map<string, number>()])) as Record<CodedField, Map<string, number>>;
  readonly #rawTitles = new Map<string, readonly number[]>();
  /** Range indexes of the number columns that range leaves have asked for, kept current by every write. */
  readonly #ranges = new Map<NumberField, RangeIndex>();
  /** Slots in ascending order of a number column (ties by slot), per column a sort has asked for. */
  readonly #orders = new Map<NumberField, SortedSlots>();
  /** Slots written since the sort orders were last merged (see upsert). */
  readonly #unmerged = new Set<number>();
  /** The bitsets searches work in. */
  readonly #pool = new BitsetPool();
  /** Leaves' bitsets that searches used more than once, for the index's current version. */
  readonly #leaves = new BitsetCache(LEAF_CACHE_BYTES, LEAF_CACHE_MIN_KEPT);
  /** Counts writes, so a search that yielded can tell the index changed under it. */
  #version = 0;
  /** Scratch of #page, where it marks extra slots: all clear between searches. */
  #extra = new Uint32Array(0);
  /** Per pair of number fields, its RangePairCounts (once built) and its uses since the version it was built for (#pairCounts). */
  readonly #pairs = new Map<string, { version: number; uses: number; counts: RangePairCounts | undefined }>();
  #pairBuild: Promise<void> | undefined;
  /** What searches asked to be kept, waiting to be made between searches (#later), by key. */
  readonly #waiting = new Map<string, () => void>();
  readonly #laterStats = { made: 0, failed: 0 };
  readonly #pairStats = { counted: 0, scanned: 0, builds: 0, failures: 0 };
  readonly #largeMinSlots: number;

  /**
   * `largeMinSlots`: the catalog size from which the index takes its large-catalog paths (pairs of
   * range leaves counted by RangePairCounts; what a second use keeps, made between searches; tests
   * lower it).
   */
  constructor(options: { largeMinSlots?: number } = {}) {
    this.#largeMinSlots = options.largeMinSlots ?? LARGE_MIN_SLOTS;
  }

  get size(): number {
    return this.#size;
  }

  /** Adds or replaces products (matched by cursor). Rows of new cursors must come in ascending order. */
  upsert(rows: Iterable<StorefrontIndexRow>): void {
    const batch = Array.isArray(rows) ? (rows as readonly StorefrontIndexRow[]) : [...rows];
    // Moving a slot within a sort order costs a memmove of the order; past a few hundred rows the
    // batch's slots are set aside and merged in once, when a sort next reads the order (a large
    // write applied page by page merges once per sorted read, not once per page). While slots wait
    // there, every write joins them: their places in the orders are stale.
    const merged = (batch.length > INCREMENTAL_ORDER_MAX || this.#unmerged.size > 0) && this.#orders.size > 0 ? this.#unmerged : undefined;
    for (const row of batch) {
      let slot = this.#slotOf(row.cursor);
      const fresh = slot < 0;
      if (fresh) {
        slot = this.#size;
        if (slot > 0 && row.cursor <= this.#cursor.data[slot - 1]!) {
          throw new Error(`storefront cursor ${row.cursor} arrived after a larger one; the index needs ascending cursors`);
        }
        this.#size += 1;
        this.#ensure(this.#size);
      }
      merged?.add(slot);
      this.#cursor.data[slot] = row.cursor;
      if (row.available) setBit(this.#available.data, slot);
      else this.#available.data[slot >>> 5]! &= ~(1 << (slot & 31));
      for (const field of NUMBER_FIELDS) this.#setNumber(field, slot, row[field], fresh, merged === undefined);
      this.#setCode('shop_name', slot, row.shop_name, fresh);
      this.#setCode('brand', slot, row.brand, fresh);
      this.#setCode('product_type', slot, row.product_type, fresh);
      for (const field of HASHED_FIELDS) hashInto(this.#hashes[field].data, slot, row[field]);
      const tags: number[] = [];
      for (const tag of row.tags) {
        const code = this.#tagCode(tag);
        if (!tags.includes(code)) tags.push(code);
      }
      this.#setTerms(this.#tags, this.#tagsOf, slot, tags, fresh);
      this.#setTerms(this.#titleWords, this.#titleWordsOf, slot, this.#titleWordCodes(row.title), fresh);
    }
    this.#version += 1;
    // Counts of the version before: given back now, not at their next use.
    this.#pairs.clear();
    this.#tagsOf.compactWhenWasteful(this.#size);
    this.#titleWordsOf.compactWhenWasteful(this.#size);
  }

  /**
   * Builds now what searches would otherwise build on first use (every number column's range
   * index, the posting lists, the orders of the non-cursor sorts; on a catalog of `largeMinSlots`
   * products or more, the RangePairCounts of PREPARED_PAIRS: one pass over every slot each) and
   * gives back the room the columns grew into.
   */
  prepare(): void {
    this.#prepareSearchPaths();
    if (this.#size < this.#largeMinSlots) return;
    for (const fields of PREPARED_PAIRS) {
      const entry = this.#pairs.get(pairKey(fields));
      if (entry?.counts !== undefined && entry.version === this.#version) continue;
      const [first, second] = fields.map((field) => ({ range: this.#rangeIndex(field), column: this.#numbers[field].data }));
      const counts = RangePairCounts.buildNow(first!, second!, this.#available.data, this.#size);
      this.#pairStats.builds += 1;
      this.#pairs.set(pairKey(fields), { version: this.#version, uses: 0, counts });
    }
  }

  /** prepare() but for the pairs' counts. */
  #prepareSearchPaths(): void {
    this.#compactPostings(true);
    this.#trim();
    for (const field of NUMBER_FIELDS) this.#rangeIndex(field);
    for (const field of SORTED_FIELDS) this.#permutation(field);
  }

  /**
   * The index as typed arrays (views into the index: write them out before the next write) and the
   * rest as JSON, for a snapshot; `fromState` makes the same index of them.
   */
  state(): StorefrontIndexState {
    this.#prepareSearchPaths();
    const size = this.#size;
    const lists = (of: TermLists): TypedArray[] => [of.arena.data.subarray(0, of.used), of.start.data.subarray(0, size)];
    const arrays: TypedArray[] = [
      this.#cursor.data.subarray(0, size),
      ...NUMBER_FIELDS.map((field) => this.#numbers[field].data.subarray(0, size)),
      this.#available.data.subarray(0, wordsFor(size)),
      ...CODED_FIELDS.map((field) => this.#coded[field].codes.data.subarray(0, size)),
      ...HASHED_FIELDS.map((field) => this.#hashes[field].data.subarray(0, 2 * size)),
      ...lists(this.#tagsOf),
      ...lists(this.#titleWordsOf),
      this.#tagKind.data.subarray(0, this.#terms.size),
      ...this.#terms.parts(),
      ...CODED_FIELDS.flatMap((field) => this.#coded[field].postings.parts()),
      ...this.#tags.parts(),
      ...this.#titleWords.parts(),
      ...SORTED_FIELDS.map((field) => this.#permutation(field)),
    ];
    return {
      size,
      coded: Object.fromEntries(CODED_FIELDS.map((field) => [field, [...this.#coded[field].dictionary.keys()]])) as Record<CodedField, string[]>,
      tagsByWord: [...this.#tagsByWord],
      codesByWord: [...this.#codesByWord],
      garbage: [this.#tagsOf.garbage, this.#titleWordsOf.garbage],
      arrays,
    };
  }

  /** The index `state` described; the arrays become its own (not copied). */
  static fromState(state: StorefrontIndexState): StorefrontIndex {
    const index = new StorefrontIndex();
    const arrays = [...state.arrays];
    // Each array must be of the kind its place holds; the index's own buffers are typed over ArrayBuffer.
    const next = (kind: new (length: number) => TypedArray): never => {
      const array = arrays.shift();
      if (!(array instanceof kind)) throw new Error('storefront index state: arrays out of order');
      return array as never;
    };
    const size = state.size;
    index.#size = size;
    index.#cursor.data = next(Float64Array);
    for (const field of NUMBER_FIELDS) index.#numbers[field].data = next(Float64Array);
    index.#available.data = arenaCopy(next(Uint32Array));
    for (const field of CODED_FIELDS) index.#coded[field].codes.data = next(Int32Array);
    for (const field of HASHED_FIELDS) index.#hashes[field].data = next(Uint32Array);
    for (const [lists, garbage] of [[index.#tagsOf, state.garbage[0]], [index.#titleWordsOf, state.garbage[1]]] as const) {
      lists.arena.data = next(Int32Array);
      lists.used = lists.arena.data.length;
      lists.start.data = next(Uint32Array);
      lists.garbage = garbage;
    }
    index.#tagKind.data = next(Uint8Array);
    index.#terms = TermDictionary.fromParts(next(Uint8Array), next(Uint32Array), next(Uint32Array), next(Int32Array));
    for (const field of CODED_FIELDS) {
      const coded = index.#coded[field];
      state.coded[field].forEach((value, code) => coded.dictionary.set(value, code));
      coded.postings.restore(next(Uint32Array), next(Int32Array));
    }
    index.#tags.restore(next(Uint32Array), next(Int32Array));
    index.#titleWords.restore(next(Uint32Array), next(Int32Array));
    for (const field of SORTED_FIELDS) index.#orders.set(field, new SortedSlots(next(Int32Array)));
    for (const [word, tags] of state.tagsByWord) index.#tagsByWord.set(word, tags);
    for (const [word, codes] of state.codesByWord) index.#codesByWord.set(word, codes);
    if (arrays.length !== 0) throw new Error('storefront index state: arrays left over');
    // Columns hold exactly `size` slots: the next write grows them. The pairs' counts are left to
    // the owner's prepare(), after it has caught up with changes (each of which would drop them).
    index.#prepareSearchPaths();
    return index;
  }

  /** The page of slots' cursors and the exact number of matches; `sliceMs` is for tests. */
  async search(search: StorefrontSearch, sliceMs = SLICE_MS): Promise<{ cursors: number[]; total: number }> {
    this.#compactPostings(false);
    const ready = this.#readyPage(search);
    if (ready !== undefined) return ready;
    const version = this.#version;
    let scope = this.#pool.begin(this.#size);
    try {
      let matches = await this.#matches(search, new Slices(sliceMs, version, scope));
      // Written to while it yielded: answer from the index as it is now, in one go.
      if (version !== this.#version) {
        this.#pool.end(scope);
        scope = this.#pool.begin(this.#size);
        matches = await this.#matches(search, new Slices(Number.POSITIVE_INFINITY, this.#version, scope));
      }
      return this.#page(search, matches.bits === undefined ? undefined : [matches.bits], matches.total);
    } finally {
      this.#pool.end(scope);
    }
  }

  /** Slot of `cursor`, or -1: cursors ascend with slots. */
  #slotOf(cursor: number): number {
    const at = countBelow(this.#cursor.data, cursor, false, this.#size);
    return at < this.#size && this.#cursor.data[at] === cursor ? at : -1;
  }

  /**
   * A search whose filter is an AND of at most three leaves whose bitsets are at hand, answered
   * from those bitsets in place: counted in one pass that writes nothing, its page read word by
   * word from all of them. A result bitset would be one more bitset to write per search (1.25 MB
   * at ten million products). At hand: a kept leaf, `available`, or a range leaf whose bucket's
   * "under" bitset is kept and whose bucket's members are sorted (RangeIndex.split): that bitset,
   * read flipped for `>` and `>=`, plus the members of the value's bucket that pass, which are
   * checked one by one against the other operands (a few thousand at ten million products, where
   * the leaf's own pass would read and write every word). Undefined for any other search.
   * One synchronous step: a kept bitset is read before any other search can put it out.
   */
  #readyPage(search: StorefrontSearch): { cursors: number[]; total: number } | undefined {
    const filter = search.filter;
    if (search.text !== undefined || search.shopName !== undefined || filter === undefined) return undefined;
    const operands = filter.type === 'and' ? filter.operands : [filter];
    if (operands.length > 3) return undefined;
    const pair = this.#pairOf(operands);
    if (pair !== undefined) {
      const scanned = this.#scannedPage(search, pair);
      if (scanned !== undefined) return scanned;
      const paired = this.#pairedSources(pair);
      if (paired !== undefined) return this.#page(search, paired.bits, paired.total, paired.flips, paired.extras);
    }
    const slices = new Slices(Number.POSITIVE_INFINITY, this.#version, []);
    const splits = operands.map((operand) => (this.#isReady(operand, slices) ? null : this.#splitLeaf(operand)));
    if (splits.includes(undefined)) return undefined;
    const whole: [FilterExpr, ReadySource][] = [];
    const sources = operands.map((operand, at): ReadySource => {
      const split = splits[at];
      if (!split) return { bits: this.#ready(operand, slices)!, flip: 0, extra: NO_EXTRA, column: undefined, operator: '<', value: 0 };
      const source = { bits: this.#leaves.kept(split.key, this.#version, 'bucket')!, flip: split.flip, extra: split.extra, column: split.column, operator: split.operator, value: split.value };
      // A use of the leaf, as on any other path: from its second, it is kept whole (made from its
      // parts), and later searches read it with no extra slots to check.
      if (this.#leaves.lookup(leafKey(operand as Extract<FilterExpr, { type: 'compare' }>)!, this.#version) === true) whole.push([operand, source]);
      return source;
    });
    const bits = sources.map((source) => source.bits);
    const flips = sources.map((source) => source.flip);
    const extras = passingExtras(sources);
    const page = this.#page(search, bits, countAll(bits, this.#size, flips) + extras.length, flips, extras);
    // Kept once the page is read: a keep may put out bitsets this search reads, and a later keep
    // write into them.
    for (const [operand, source] of whole) this.#keepWhole(operand, source);
    return page;
  }

  /**
   * An AND of two range leaves over two different number columns (and `available = true`, or
   * nothing else) on a catalog of at least `largeMinSlots` products, with the columns'
   * RangePairCounts built for the index as it is: the leaves in the order of the counts' columns
   * (field names'). Undefined for another shape, or when the counts are not built: this is then a
   * use of them (their second since a write starts their build).
   */
  #pairOf(operands: readonly FilterExpr[]): RangePair | undefined {
    if (this.#size < this.#largeMinSlots) return undefined;
    let ranges = operands.filter(isRangeLeaf) as Extract<FilterExpr, { type: 'compare' }>[];
    const rest = operands.filter((operand) => !isRangeLeaf(operand));
    if (ranges.length !== 2 || ranges[0]!.field === ranges[1]!.field) return undefined;
    if (rest.length > 1 || (rest.length === 1 && !isAvailableTrue(rest[0]!))) return undefined;
    if (typeof ranges[0]!.value !== 'number' || typeof ranges[1]!.value !== 'number') return undefined;
    if (ranges[0]!.field > ranges[1]!.field) ranges = [ranges[1]!, ranges[0]!];
    const counts = this.#pairCounts([ranges[0]!.field as NumberField, ranges[1]!.field as NumberField]);
    if (counts === undefined) return undefined;
    return { counts, leaves: [ranges[0]!, ranges[1]!], availableOnly: rest.length === 1 };
  }

  /**
   * The page of a pair's AND walked in the search's order, each slot checked against the two
   * columns (and `available`), its total from countLeaves: no bitset is read or made, so a leaf
   * never seen before costs what a kept one does (the bitsets' paths first make its bucket's
   * bitsets, a pass over every slot each, on a large catalog). Undefined where the walk would be
   * long, as the total says (a selective filter, a deep page; the bitsets' page walks words
   * instead), or turns out to be (matches bunched late in the order).
   */
  #scannedPage(search: StorefrontSearch, pair: RangePair): { cursors: number[]; total: number } | undefined {
    const { counts, leaves, availableOnly } = pair;
    const ranges = [counts.first, counts.second];
    const bases = leaves.map((leaf, at) => {
      const base = ranges[at]!.base(leaf.operator as RangeOperator, leaf.value as number);
      return base === undefined ? undefined : { ...base, operator: leaf.operator as RangeOperator, value: leaf.value as number };
    });
    const [first, second] = bases;
    if (first === undefined || second === undefined) return undefined;
    const total = counts.countLeaves(first, second, availableOnly);
    const wanted = Math.min(search.offset + search.limit, total);
    if (wanted <= search.offset) return { cursors: [], total };
    if (wanted * (this.#size / total) > SCAN_EXPECTED_MAX) return undefined;
    const order = this.#order(search.sort);
    const [x, y] = [this.#numbers[leaves[0].field as NumberField].data, this.#numbers[leaves[1].field as NumberField].data];
    const available = this.#available.data;
    const slots: number[] = [];
    for (let i = 0; slots.length < wanted; i += 1) {
      if (i >= SCAN_MAX || i >= this.#size) return undefined;
      const slot = order(i);
      if (availableOnly && !hasBit(available, slot)) continue;
      if (compares(x[slot]!, first.operator, first.value) && compares(y[slot]!, second.operator, second.value)) slots.push(slot);
    }
    this.#pairStats.scanned += 1;
    return { cursors: slots.slice(search.offset).map((slot) => this.#cursor.data[slot]!), total };
  }

  /**
   * A pair's AND as #page takes it: the bitsets of each range leaf split as #splitLeaf splits it
   * (and `available`), the extra members in every leaf, and the total, counted by the pair's
   * RangePairCounts instead of a pass over the bitsets and checks of each extra member against the
   * other bitsets; undefined when a leaf does not split. Whole kept leaves are not read here: the
   * page reads the split bitsets and their members.
   */
  #pairedSources(pair: RangePair): { bits: Uint32Array[]; flips: number[]; total: number; extras: Int32Array } | undefined {
    const { counts, availableOnly } = pair;
    const [first, second] = pair.leaves.map((operand) => this.#splitLeaf(operand));
    if (first === undefined || second === undefined) return undefined;
    const bits = [this.#leaves.kept(first.key, this.#version, 'bucket')!, this.#leaves.kept(second.key, this.#version, 'bucket')!];
    const flips = [first.flip, second.flip];
    if (availableOnly) {
      bits.push(this.#available.data);
      flips.push(0);
    }
    const extras = counts.passingExtras(first, second, availableOnly);
    return { bits, flips, total: counts.count(first.split, second.split, availableOnly) + extras.length, extras };
  }

  /**
   * The RangePairCounts of `fields` (in field-name order) for the index as it is, or undefined:
   * then this is a use of them, and the second since the index was last written starts their
   * build, unless one is running. At most PAIRS_KEPT pairs are kept, the least recently used
   * given up first.
   */
  #pairCounts(fields: readonly [NumberField, NumberField]): RangePairCounts | undefined {
    const key = pairKey(fields);
    const ranges = [this.#rangeIndex(fields[0]), this.#rangeIndex(fields[1])] as const;
    let entry = this.#pairs.get(key);
    if (entry !== undefined && entry.version !== this.#version && entry.uses >= 0) this.#pairs.delete(key);
    else if (entry?.counts !== undefined && entry.counts.first === ranges[0] && entry.counts.second === ranges[1]) {
      // Most recently used last.
      this.#pairs.delete(key);
      this.#pairs.set(key, entry);
      this.#pairStats.counted += 1;
      return entry.counts;
    }
    entry = this.#pairs.get(key) ?? { version: this.#version, uses: 0, counts: undefined };
    this.#pairs.set(key, entry);
    entry.uses += 1;
    if (entry.uses >= 2 && this.#pairBuild === undefined) {
      const version = this.#version;
      const pause = async (): Promise<boolean> => {
        await new Promise((resolve) => setImmediate(resolve));
        return this.#version === version;
      };
      const available = this.#available.data;
      this.#pairBuild = RangePairCounts.build(
        { range: ranges[0], column: this.#numbers[fields[0]].data },
        { range: ranges[1], column: this.#numbers[fields[1]].data },
        available,
        this.#size,
        pause,
      )
        .then((counts) => {
          if (counts === undefined || this.#version !== version) return;
          this.#pairStats.builds += 1;
          this.#pairs.set(key, { version, uses: 0, counts });
          let built = [...this.#pairs.values()].filter((kept) => kept.counts !== undefined).length;
          for (const [other, kept] of this.#pairs) {
            if (built <= PAIRS_KEPT) break;
            if (other === key || kept.counts === undefined) continue;
            this.#pairs.delete(other);
            built -= 1;
          }
        })
        // A build fails only on a bug (no I/O): the pair is then never built again, and counted.
        .catch(() => {
          this.#pairStats.failures += 1;
          this.#pairs.set(key, { version: Number.NaN, uses: Number.NEGATIVE_INFINITY, counts: undefined });
        })
        .finally(() => (this.#pairBuild = undefined));
    }
    return undefined;
  }

  /** Resolves once no RangePairCounts build is running (for tests and benchmarks). */
  async pairCountsBuilt(): Promise<void> {
    await this.#pairBuild;
  }

  /**
   * Searches counted by RangePairCounts, those of them whose page was walked with no bitset
   * (#scannedPage), builds of them that finished (prepare's too), and builds that failed, since the start.
   */
  get pairCountStats(): { counted: number; scanned: number; builds: number; failures: number } {
    return { ...this.#pairStats };
  }

  /** Keeps the leaf `node` whole, made from its parts (`source`: a bitset read flipped or not, and extra slots). */
  #keepWhole(node: FilterExpr, source: ReadySource): void {
    const scope = this.#pool.begin(this.#size);
    try {
      const bits = this.#pool.take(scope, false);
      copyBits(bits, source.bits);
      if (source.flip !== 0) complement(bits, this.#size);
      for (const slot of source.extra) setBit(bits, slot);
      this.#leaves.keep(leafKey(node as Extract<FilterExpr, { type: 'compare' }>)!, bits);
    } finally {
      this.#pool.end(scope);
    }
  }

  /**
   * A range leaf that is not kept, as the kept "under" bitset of a bucket and the passing members
   * of its own bucket (RangeIndex.split), where both are at hand; else undefined. Not a use of the
   * leaf or of the bucket.
   */
  #splitLeaf(node: FilterExpr): (Omit<ReadySource, 'bits'> & { key: string; split: RangeSplit; column: Float64Array }) | undefined {
    if (!isRangeLeaf(node) || node.type !== 'compare' || typeof node.value !== 'number') return undefined;
    const field = node.field as NumberField;
    const operator = node.operator as RangeOperator;
    const column = this.#numbers[field].data;
    const split = this.#rangeIndex(field).split(column, operator, node.value);
    if (split === undefined) return undefined;
    const key = underKey(field, split.under);
    if (!this.#leaves.has(key, this.#version)) return undefined;
    return { key, split, flip: split.flip, extra: split.extra, column, operator, value: node.value };
  }

  /**
   * The page of the slots set in every bitset of `matches` (undefined: every product; at most
   * three bitsets, each read flipped where its entry of `flips` is -1), or listed in `extras`
   * (slots in none of those, any order), in the search's order, and their number (`counted`, when
   * known).
   */
  #page(
    search: StorefrontSearch,
    matches: readonly Uint32Array[] | undefined,
    counted: number | undefined,
    flips: readonly number[] = [],
    extras: Int32Array = NO_EXTRA,
  ): { cursors: number[]; total: number } {
    const order = this.#order(search.sort);
    const end = search.offset + search.limit;
    if (matches === undefined) {
      const cursors: number[] = [];
      for (let i = search.offset; i < Math.min(end, this.#size); i += 1) cursors.push(this.#cursor.data[order(i)]!);
      return { cursors, total: this.#size };
    }
    const [a, b, c, fa, fb, fc] = threeSources(matches, flips);
    const size = this.#size;
    const words = wordsFor(size);
    const total = counted ?? countAll(matches, size, flips);
    const slots: number[] = [];
    if (search.sort === 'cursor:asc' || search.sort === 'cursor:desc') {
      // Slots ascend with cursors: walk the set bits word by word, skipping empty words. A flipped
      // bitset holds the last word's slots past the end.
      const ascending = search.sort === 'cursor:asc';
      const lastMask = (size & 31) === 0 ? -1 : (1 << (size & 31)) - 1;
      for (let w = 0; w < words && slots.length < end; w += 1) {
        const at = ascending ? w : words - 1 - w;
        let word = (a[at]! ^ fa) & (b[at]! ^ fb) & (c[at]! ^ fc) & (at === words - 1 ? lastMask : -1);
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
      if (this.#extra.length < words) this.#extra = new Uint32Array(wordsFor(this.#cursor.data.length));
      const x = this.#extra;
      for (const slot of extras) x[slot >>> 5]! |= 1 << (slot & 31);
      try {
        for (let i = 0; i < size && slots.length < end && slots.length < total; i += 1) {
          const slot = order(i);
          const at = slot >>> 5;
          if (((((a[at]! ^ fa) & (b[at]! ^ fb) & (c[at]! ^ fc)) | x[at]!) & (1 << (slot & 31))) !== 0) slots.push(slot);
        }
      } finally {
        for (const slot of extras) x[slot >>> 5]! &= ~(1 << (slot & 31));
      }
    }
    return { cursors: slots.slice(search.offset).map((slot) => this.#cursor.data[slot]!), total };
  }

  #ensure(length: number): void {
    this.#cursor.ensure(length);
    const capacity = this.#cursor.data.length;
    for (const field of NUMBER_FIELDS) this.#numbers[field].ensure(capacity);
    for (const field of CODED_FIELDS) this.#coded[field].codes.ensure(capacity);
    for (const field of HASHED_FIELDS) this.#hashes[field].ensure(2 * capacity);
    this.#tagsOf.start.ensure(capacity);
    this.#titleWordsOf.start.ensure(capacity);
    this.#available.ensure(wordsFor(capacity));
    for (const range of this.#ranges.values()) if (range.capacity < capacity) range.resize(capacity);
  }

  /** Gives back the room columns grew into beyond the products held. */
  #trim(): void {
    const size = this.#size;
    this.#cursor.trim(size);
    const capacity = this.#cursor.data.length;
    for (const field of NUMBER_FIELDS) this.#numbers[field].fit(capacity);
    for (const field of CODED_FIELDS) this.#coded[field].codes.fit(capacity);
    for (const field of HASHED_FIELDS) this.#hashes[field].fit(2 * capacity);
    this.#tagsOf.start.fit(capacity);
    this.#titleWordsOf.start.fit(capacity);
    this.#available.fit(wordsFor(capacity));
    this.#tagsOf.arena.trim(this.#tagsOf.used);
    this.#titleWordsOf.arena.trim(this.#titleWordsOf.used);
    this.#terms.trim();
    this.#tagKind.trim(this.#terms.size);
    for (const range of this.#ranges.values()) range.resize(capacity);
  }

  /** The distinct codes of the title's words. */
  #titleWordCodes(title: string): readonly number[] {
    let codes = this.#rawTitles.get(title);
    if (codes !== undefined) return codes;
    codes = [...new Set(wordsOf(title))].map((word) => this.#terms.code(word));
    remember(this.#rawTitles, title, codes);
    return codes;
  }

  /** The tag's code; the first time a tag is seen, its words are noted. */
  #tagCode(tag: string): number {
    const code = this.#terms.codeFolded(tag, foldText);
    this.#tagKind.ensure(this.#terms.size);
    if (this.#tagKind.data[code] !== 0) return code;
    const words = [...new Set(wordsOf(tag))].map((word) => this.#terms.code(word));
    this.#tagKind.ensure(this.#terms.size);
    this.#tagKind.data[code] = words.length === 1 && words[0] === code ? 2 : 1;
    for (const word of words) {
      if (word === code) continue;
      let tags = this.#tagsByWord.get(word);
      if (tags === undefined) this.#tagsByWord.set(word, (tags = []));
      tags.push(code);
    }
    return code;
  }

  #setTerms(postings: Postings, lists: TermLists, slot: number, codes: readonly number[], fresh: boolean): void {
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
      // The same terms (a rewrite of prices, say): the slot keeps its list. Appending an equal one
      // grew the buffer, which a snapshot loads without room to spare: at ten million products
      // the first such rewrite copied the whole buffer into one twice its size.
      if (added === 0 && dropped === 0) return;
    }
    lists.set(slot, codes, fresh);
  }

  /**
   * Stores a number and keeps the column's range index and (when `inPlace`) sort order current; a
   * rewrite that leaves the value as it was touches neither.
   */
  #setNumber(field: NumberField, slot: number, value: number, fresh: boolean, inPlace: boolean): void {
    const column = this.#numbers[field].data;
    if (!fresh && Object.is(column[slot], value)) return;
    const order = inPlace ? this.#orders.get(field) : undefined;
    if (!fresh) order?.remove(slot, column);
    const previous = column[slot];
    column[slot] = value;
    this.#ranges.get(field)?.set(slot, value, fresh ? undefined : previous);
    order?.insert(slot, column);
  }

  #setCode(field: CodedField, slot: number, value: string, fresh: boolean): void {
    const coded = this.#coded[field];
    let code = this.#rawCodes[field].get(value);
    if (code === undefined) code = this.#codeOf(field, value);
    if (!fresh && coded.codes.data[slot] === code) return;
    if (!fresh) coded.postings.drop();
    coded.codes.data[slot] = code;
    coded.postings.add(code, slot);
  }

  /** The code of a shop, brand or product type (new ones get one, their words noted). */
  #codeOf(field: CodedField, value: string): number {
    const coded = this.#coded[field];
    const folded = foldText(value);
    let code = coded.dictionary.get(folded);
    if (code === undefined) {
      code = coded.dictionary.size;
      coded.dictionary.set(folded, code);
      if (field !== 'shop_name') {
        for (const word of new Set(wordsOf(folded))) {
          const wordCode = this.#terms.code(word);
          let codes = this.#codesByWord.get(wordCode);
          if (codes === undefined) this.#codesByWord.set(wordCode, (codes = []));
          codes.push({ field, code });
        }
      }
    }
    remember(this.#rawCodes[field], value, code);
    return code;
  }

  /** Rebuilds posting lists whose logged changes are due (all of them when `all`). */
  #compactPostings(all: boolean): void {
    const size = this.#size;
    for (const field of CODED_FIELDS) {
      const { codes, postings, dictionary } = this.#coded[field];
      if ((all && !postings.clean) || postings.due) postings.compact(size, dictionary.size, (slot, emit) => emit(codes.data[slot]!));
    }
    if ((all && !this.#tags.clean) || this.#tags.due) this.#tags.compact(size, this.#terms.size, (slot, emit) => this.#tagsOf.forEach(slot, emit));
    if ((all && !this.#titleWords.clean) || this.#titleWords.due) this.#titleWords.compact(size, this.#terms.size, (slot, emit) => this.#titleWordsOf.forEach(slot, emit));
  }

  /** The slots the search matches (undefined: every slot), and their number where it was counted on the way. */
  async #matches(search: StorefrontSearch, slices: Slices): Promise<{ bits: Uint32Array | undefined; total?: number | undefined }> {
    let result: Uint32Array | undefined;
    const and = (bits: Uint32Array): void => {
      if (result === undefined) result = bits;
      else andInto(result, bits);
    };
    if (search.text !== undefined) {
      // A query with no word (only punctuation) narrows nothing, as it always has.
      for (const word of new Set(wordsOf(search.text))) {
        and(await this.#kept(`word\u0000${word}`, slices, () => this.#wordBits(word, slices)));
        if (isEmpty(result!)) return { bits: result };
      }
    }
    if (search.shopName !== undefined) {
      const shopName = search.shopName;
      and(await this.#kept(`shop\u0000${shopName}`, slices, () => this.#codedEquals('shop_name', [shopName], this.#empty(slices))));
    }
    const filter = search.filter;
    if (filter === undefined || (result !== undefined && isEmpty(result))) return { bits: result };
    return this.#and(result, filter.type === 'and' ? filter.operands : [filter], slices);
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
        return this.#complement(await this.#evaluate(node.operand, slices));
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
    const ordered = leavesLast(operands);
    const isReady = ordered.map((operand) => this.#isReady(operand, slices));
    const readyCount = isReady.filter(Boolean).length;
    const readyLast = readyCount > 0 && readyCount < ordered.length && ordered.every((operand, at) => isReady[at] || isRangeLeaf(operand));
    let result = into;
    let total: number | undefined;
    /** The ready operands' bitsets, taken now; those put out since they were seen, narrowed by. */
    const andReady = async (): Promise<void> => {
      const taken = ordered.filter((_, at) => isReady[at]).map((operand) => [operand, this.#ready(operand, slices)] as const);
      const bits = taken.flatMap(([, kept]) => (kept === undefined ? [] : [kept]));
      if (bits.length > 0) {
        const fresh = result === undefined;
        result ??= this.#pool.take(slices.scope, false);
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

  /** Whether `node` is a leaf whose bitset exists already (kept, or the `available` column); not a use of it. */
  #isReady(node: FilterExpr, slices: Slices): boolean {
    if (node.type !== 'compare' && node.type !== 'in') return false;
    if (node.type === 'compare' && node.field === 'available' && (node.operator === '=' || node.operator === '!=')) {
      return (node.value === true) === (node.operator === '=');
    }
    const key = leafKey(node);
    return key !== undefined && slices.version === this.#version && this.#leaves.has(key, this.#version);
  }

  /**
   * A leaf's bitset where it exists already, to be read at once and not written: the leaf cache's
   * (a use of the leaf), or the `available` column; undefined when it is not (or no longer) kept.
   */
  #ready(node: FilterExpr, slices: Slices): Uint32Array | undefined {
    if (node.type !== 'compare' && node.type !== 'in') return undefined;
    if (node.type === 'compare' && node.field === 'available' && (node.operator === '=' || node.operator === '!=')) {
      return (node.value === true) === (node.operator === '=') ? this.#available.data : undefined;
    }
    const key = leafKey(node);
    return key === undefined || slices.version !== this.#version ? undefined : this.#leaves.kept(key, this.#version);
  }

  /** Clears in `result` the slots `node` does not match. */
  async #narrow(result: Uint32Array, node: FilterExpr, slices: Slices): Promise<void> {
    if (node.type === 'and') {
      await this.#and(result, node.operands, slices);
      return;
    }
    if (node.type !== 'compare' && node.type !== 'in') {
      andInto(result, await this.#evaluate(node, slices));
      return;
    }
    await slices.pause();
    if (node.type === 'compare' && node.field === 'available' && (node.operator === '=' || node.operator === '!=')) {
      // The column is a bitset already: narrowing by it needs no copy of it (as #equals makes).
      if ((node.value === true) === (node.operator === '=')) andInto(result, this.#available.data);
      else andNotInto(result, this.#available.data, result.length);
      return;
    }
    const key = leafKey(node);
    const kept = this.#lookUp(key, slices);
    if (kept instanceof Uint32Array) {
      andInto(result, kept);
      return;
    }
    // A leaf not kept (yet) narrows in place where it can: that skips the words `result` no longer
    // has, where the whole leaf would read them all. On its second use it is made whole and kept;
    // a range leaf on a large catalog is made whole between searches (#later) and narrows in place
    // meanwhile.
    const large = this.#size >= this.#largeMinSlots && key !== undefined && node.type === 'compare' && RANGE_OPERATORS.has(node.operator) && typeof node.value === 'number';
    if (kept && large) this.#laterWhole(node as Extract<FilterExpr, { type: 'compare' }>, key);
    if ((!kept || large) && node.type === 'compare' && node.field !== 'cursor' && (NUMBER_FIELDS as readonly string[]).includes(node.field)) {
      const field = node.field as NumberField;
      const column = this.#numbers[field].data;
      const value = node.value as number;
      if (node.operator === '=') narrow(result, (slot) => column[slot] === value);
      else if (node.operator === '!=') narrow(result, (slot) => column[slot] !== value);
      else this.#intersect(result, field, node.operator, value, slices);
      return;
    }
    if (!kept && node.type === 'compare' && (HASHED_FIELDS as readonly string[]).includes(node.field)) {
      const hashes = this.#hashes[node.field as HashedField].data;
      const [low, high] = hashOf(String(node.value));
      const equal = node.operator === '=';
      narrow(result, (slot) => (hashes[2 * slot] === low && hashes[2 * slot + 1] === high) === equal);
      return;
    }
    andInto(result, await this.#kept(key, slices, () => this.#leaf(node, slices), kept));
  }

  /** Makes the range leaf `node` whole and keeps it under `key`, between searches (#later). */
  #laterWhole(node: Extract<FilterExpr, { type: 'compare' }>, key: string): void {
    this.#keepLater(key, (bits, scope) => this.#intersect(bits, node.field as NumberField, node.operator as RangeOperator, node.value as number, new Slices(Number.POSITIVE_INFINITY, this.#version, scope), true));
  }

  /** Keeps under `key`, between searches (#later), the bitset `fill` writes whole (any bits it held are to be overwritten). */
  #keepLater(key: string, fill: (bits: Uint32Array, scope: Uint32Array[]) => void): void {
    this.#later(key, () => {
      const scope = this.#pool.begin(this.#size);
      try {
        const bits = this.#pool.take(scope, false);
        fill(bits, scope);
        this.#leaves.keep(key, bits);
      } finally {
        this.#pool.end(scope);
      }
    });
  }

  /**
   * The search's own bitset of a leaf (it may write to it): a copy of the one the leaf cache keeps
   * under `key`, or `make()`'s, which the cache keeps when the key is in its second use. `kept` is
   * the cache's answer when the caller has already looked (a look-up counts as a use).
   */
  async #kept(key: string | undefined, slices: Slices, make: () => Uint32Array | Promise<Uint32Array>, kept = this.#lookUp(key, slices)): Promise<Uint32Array> {
    if (kept instanceof Uint32Array) {
      const bits = this.#pool.take(slices.scope, false);
      copyBits(bits, kept);
      return bits;
    }
    const bits = await make();
    // Written to while `make` yielded: the bitset is of neither version.
    if (kept && key !== undefined && slices.version === this.#version) this.#leaves.keep(key, bits);
    return bits;
  }

  /**
   * The leaf cache's answer for `key`. A search the index was written to while it yielded starts
   * again (search) and keeps nothing meanwhile: its bitsets have the size of the index it began on.
   */
  #lookUp(key: string | undefined, slices: Slices, kind: 'leaf' | 'bucket' = 'leaf'): Uint32Array | boolean {
    if (key === undefined || slices.version !== this.#version) return false;
    return this.#leaves.lookup(key, this.#version, kind);
  }

  /** Look-ups of the leaf cache that found a kept bitset, and all look-ups, since the start: of leaves, and of range buckets. */
  get leafCacheStats(): Record<'leaf' | 'bucket', { hits: number; lookups: number }> {
    const of = (kind: string): { hits: number; lookups: number } => ({ hits: 0, lookups: 0, ...this.#leaves.tally.get(kind) });
    return { leaf: of('leaf'), bucket: of('bucket') };
  }

  async #leaf(node: Extract<FilterExpr, { type: 'compare' | 'in' }>, slices: Slices): Promise<Uint32Array> {
    if (node.type === 'in' && node.field === 'tags') {
      // One posting list per value, with a chance to yield between them.
      const bits = this.#empty(slices);
      for (const value of node.values) {
        await slices.pause();
        this.#tagBits(String(value), bits);
      }
      return node.negated ? this.#complement(bits) : bits;
    }
    switch (node.type) {
      case 'compare': {
        if (node.operator === '=' || node.operator === '!=') {
          const bits = this.#equals(node.field, [node.value], slices);
          return node.operator === '=' ? bits : this.#complement(bits);
        }
        return this.#range(node.field, node.operator, node.value as number, slices);
      }
      case 'in': {
        const bits = this.#equals(node.field, node.values, slices);
        return node.negated ? this.#complement(bits) : bits;
      }
    }
  }

  #empty(slices: Slices): Uint32Array {
    return this.#pool.take(slices.scope, true);
  }

  #universe(slices: Slices): Uint32Array {
    const bits = this.#pool.take(slices.scope, false);
    fillBits(bits, true);
    clearPastEnd(bits, this.#size);
    return bits;
  }

  #complement(bits: Uint32Array): Uint32Array {
    return complement(bits, this.#size);
  }

  /** Products whose field equals any of the values. */
  #equals(field: FilterField, values: readonly FilterLiteral[], slices: Slices): Uint32Array {
    if (field === 'tags') {
      const bits = this.#empty(slices);
      for (const value of values) this.#tagBits(String(value), bits);
      return bits;
    }
    if (field === 'available') {
      const want = new Set(values);
      if (want.size === 2) return this.#universe(slices);
      const bits = this.#pool.take(slices.scope, false);
      copyBits(bits, this.#available.data);
      return want.has(true) ? bits : this.#complement(bits);
    }
    if (field === 'cursor') {
      const bits = this.#empty(slices);
      for (const value of values) {
        const slot = this.#slotOf(value as number);
        if (slot >= 0) setBit(bits, slot);
      }
      return bits;
    }
    if ((NUMBER_FIELDS as readonly string[]).includes(field)) {
      const column = this.#numbers[field as NumberField].data;
      const bits = this.#universe(slices);
      // One value (the common case) compares directly: a Set look-up per product costs more than the pass.
      if (values.length === 1) {
        const only = values[0] as number;
        narrow(bits, (slot) => column[slot] === only);
      } else {
        const want = new Set(values as number[]);
        narrow(bits, (slot) => want.has(column[slot]!));
      }
      return bits;
    }
    if ((HASHED_FIELDS as readonly string[]).includes(field)) {
      const hashes = this.#hashes[field as HashedField].data;
      const wanted = values.map((value) => hashOf(String(value)));
      const bits = this.#universe(slices);
      narrow(bits, (slot) => wanted.some(([low, high]) => hashes[2 * slot] === low && hashes[2 * slot + 1] === high));
      return bits;
    }
    return this.#codedEquals(field as CodedField, values as string[], this.#empty(slices));
  }

  #codedEquals(field: CodedField, values: readonly string[], bits: Uint32Array): Uint32Array {
    const { dictionary, codes, postings } = this.#coded[field];
    const column = codes.data;
    for (const value of values) {
      const code = dictionary.get(foldText(value));
      if (code !== undefined) postings.setBits(code, bits, (slot, held) => column[slot] === held);
    }
    return bits;
  }

  /** Sets the bits of the products with the tag (folded). */
  #tagBits(tag: string, bits: Uint32Array): void {
    const code = this.#terms.find(foldText(tag));
    if (code >= 0) this.#tags.setBits(code, bits, (slot, held) => this.#tagsOf.holds(slot, held));
  }

  /** The products having `word` (one of `wordsOf`) in their title, brand, product type or tags. */
  #wordBits(word: string, slices: Slices): Uint32Array {
    const bits = this.#empty(slices);
    const code = this.#terms.find(word);
    if (code < 0) return bits;
    this.#titleWords.setBits(code, bits, (slot, held) => this.#titleWordsOf.holds(slot, held));
    const holdsTag = (slot: number, held: number): boolean => this.#tagsOf.holds(slot, held);
    if (this.#tagKind.data[code] === 2) this.#tags.setBits(code, bits, holdsTag);
    for (const tag of this.#tagsByWord.get(code) ?? []) this.#tags.setBits(tag, bits, holdsTag);
    for (const { field, code: coded } of this.#codesByWord.get(code) ?? []) this.#codedBits(field, coded, bits);
    return bits;
  }

  #codedBits(field: CodedField, code: number, bits: Uint32Array): void {
    const column = this.#coded[field].codes.data;
    this.#coded[field].postings.setBits(code, bits, (slot, held) => column[slot] === held);
  }

  #range(field: FilterField, operator: RangeOperator, value: number, slices: Slices): Uint32Array {
    const size = this.#size;
    if (field === 'cursor') {
      // Cursors ascend with slots: the matches are one run of slots, found by binary search.
      const low = countBelow(this.#cursor.data, value, operator === '<=' || operator === '>', size);
      const bits = this.#empty(slices);
      if (operator === '<' || operator === '<=') setRun(bits, 0, low);
      else setRun(bits, low, size);
      return bits;
    }
    // The leaf's pass reads its new bitset as every slot: no fill first.
    const bits = this.#pool.take(slices.scope, false);
    this.#intersect(bits, field as NumberField, operator, value, slices, true);
    return bits;
  }

  /**
   * A range leaf over `field`, narrowing `bits`. The slots below the value's bucket and below the
   * next are the same for every value in that bucket: once kept (the leaf cache, from their second
   * use, under keys of their own), a leaf with a value never seen before reads those two bitsets
   * per word instead of the range index's six, and checks the bucket's own members as ever.
   */
  #intersect(bits: Uint32Array, field: NumberField, operator: RangeOperator, value: number, slices: Slices, fresh = false): void {
    const range = this.#rangeIndex(field);
    const column = this.#numbers[field].data;
    if (Number.isNaN(value)) {
      range.intersect(bits, column, this.#size, operator, value);
      return;
    }
    const bucket = range.bucketOf(value);
    const under = this.#under(range, field, bucket, slices);
    const next = bucket + 1 >= range.buckets ? null : this.#under(range, field, bucket + 1, slices);
    const sortLater = this.#size >= this.#largeMinSlots ? (sort: () => void) => this.#later(`sorted\u0000${field}\u0000${bucket}`, sort) : undefined;
    range.intersect(bits, column, this.#size, operator, value, under === undefined || next === undefined ? undefined : [under, next], fresh, sortLater);
  }

  /**
   * The kept bitset of the slots under `bucket`, made and kept on its second use (on a catalog of
   * `largeMinSlots` or more, made and kept between searches: #later), else undefined.
   */
  #under(range: RangeIndex, field: NumberField, bucket: number, slices: Slices): Uint32Array | undefined {
    const key = underKey(field, bucket);
    const kept = this.#lookUp(key, slices, 'bucket');
    if (kept instanceof Uint32Array) return kept;
    if (!kept) return undefined;
    if (this.#size >= this.#largeMinSlots) {
      this.#keepLater(key, (bits) => range.under(bits, this.#size, bucket));
      return undefined;
    }
    const bits = this.#pool.take(slices.scope, false);
    range.under(bits, this.#size, bucket);
    this.#leaves.keep(key, bits);
    return bits;
  }

  /**
   * Runs `make` (what a second use keeps: a whole leaf, a bucket's bitset, a bucket's sorted
   * members) between searches, one per turn of the event loop, unless one is waiting under `key`
   * already or the index is written first. On a large catalog each is a pass over every slot:
   * made by the search that asked, it was that search's cost, several times what the search
   * itself costs. Until it is made, searches take the path of a first use. At most LATER_MAX wait;
   * past that a use asks again.
   */
  #later(key: string, make: () => void): void {
    if (this.#waiting.has(key) || this.#waiting.size >= LATER_MAX) return;
    const version = this.#version;
    this.#waiting.set(key, () => {
      if (this.#version === version) make();
    });
    if (this.#waiting.size === 1) setImmediate(() => this.#makeNext());
  }

  #makeNext(): void {
    const first = this.#waiting.entries().next();
    if (first.done === true) return;
    const [key, make] = first.value;
    try {
      make();
      this.#laterStats.made += 1;
    } catch {
      // Only a bug throws here (no I/O): the search path answers without what was not made.
      this.#laterStats.failed += 1;
    } finally {
      this.#waiting.delete(key);
      if (this.#waiting.size > 0) setImmediate(() => this.#makeNext());
    }
  }

  /** What #later made, and what threw instead, since the start. */
  get laterStats(): { made: number; failed: number } {
    return { ...this.#laterStats };
  }

  /** Resolves once nothing waits to be made between searches (for tests and benchmarks). */
  async laterMade(): Promise<void> {
    while (this.#waiting.size > 0) await new Promise((resolve) => setImmediate(resolve));
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
    if (this.#unmerged.size > 0) {
      for (const [sorted, order] of this.#orders) order.merge(this.#unmerged, this.#numbers[sorted].data);
      this.#unmerged.clear();
    }
    let order = this.#orders.get(field);
    if (order === undefined) {
      const slots = new Int32Array(this.#size);
      for (let slot = 0; slot < this.#size; slot += 1) slots[slot] = slot;
      this.#orders.set(field, (order = new SortedSlots(sortSlots(slots, this.#numbers[field].data))));
    }
    return order.slots;
  }
}

/**
 * Bytes of leaf bitsets a StorefrontIndex keeps (BitsetCache): 512 bitsets at a million products;
 * past two million products, LEAF_CACHE_MIN_KEPT bitsets (320 MB at ten million).
 */
const LEAF_CACHE_BYTES = 64 * 2 ** 20;
const LEAF_CACHE_MIN_KEPT = 256;

/**
 * Products from which an AND of two range leaves is counted by RangePairCounts (below it, the
 * pass over their bitsets costs about what the table's scan does, and a build is not worth it),
 * and range leaves' keeps are made between searches (below it, such a pass is short).
 */
const LARGE_MIN_SLOTS = 2_000_000;
/** Keeps waiting to be made between searches at most (#later): about a pass over every slot each. */
const LATER_MAX = 64;
/** RangePairCounts kept at once (about 16 bytes per product each). */
const PAIRS_KEPT = 2;
/**
 * The pairs prepare() builds before the index answers: the price range (`price_min >= X AND
 * price_max <= Y`), the pair a storefront's price filter sends. Other pairs are built on their
 * second use, and every pair again after a write.
 */
const PREPARED_PAIRS: readonly (readonly [NumberField, NumberField])[] = [['price_max', 'price_min']];
/**
 * Positions #scannedPage walks at most, and walks at all when the total says it expects to walk
 * more: past that, the bitsets' page (a word walk) costs less than a check of every position.
 */
const SCAN_MAX = 131_072;
const SCAN_EXPECTED_MAX = 32_768;

/**
 * The leaf cache's key of a leaf, or undefined for leaves that cost no more than copying a kept
 * bitset (`available` is a bitset already; `cursor` a run of slots). Literals keep their JSON
 * type: `"1"` and `1` are different leaves.
 */
function leafKey(node: Extract<FilterExpr, { type: 'compare' | 'in' }>): string | undefined {
  if (node.field === 'available' || node.field === 'cursor') return undefined;
  return node.type === 'compare' ? `${node.field}\u0000${node.operator}\u0000${JSON.stringify(node.value)}` : `${node.field}\u0000${node.negated ? 'NOT IN' : 'IN'}\u0000${JSON.stringify(node.values)}`;
}

/** An AND of two range leaves over two number columns (and maybe `available = true`), with their counts: see #pairOf. */
interface RangePair {
  counts: RangePairCounts;
  leaves: readonly [Extract<FilterExpr, { type: 'compare' }>, Extract<FilterExpr, { type: 'compare' }>];
  availableOnly: boolean;
}

/** The key of a pair of number fields (in field-name order) in StorefrontIndex.#pairs. */
function pairKey(fields: readonly [NumberField, NumberField]): string {
  return `${fields[0]}\u0000${fields[1]}`;
}

/** The leaf cache's key of the slots under `bucket` of the range index of `field`. */
function underKey(field: NumberField, bucket: number): string {
  return `${field}\u0000under\u0000${bucket}`;
}

/**
 * An operand of an AND answered in place (#readyPage): the slots of `bits`, read flipped where
 * `flip` is -1, and the `extra` slots, not among those, that pass; for a range leaf, `column`,
 * `operator` and `value` tell whether any slot outside `bits` passes.
 */
interface ReadySource {
  bits: Uint32Array;
  flip: number;
  extra: Int32Array;
  column: Float64Array | undefined;
  operator: RangeOperator;
  value: number;
}

const NO_EXTRA = new Int32Array(0);

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
function passingExtras(sources: readonly ReadySource[]): Int32Array {
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

function isAvailableTrue(node: FilterExpr): boolean {
  return node.type === 'compare' && node.field === 'available' && (node.operator === '=' || node.operator === '!=') && (node.value === true) === (node.operator === '=');
}

/** A range leaf over a number column (the range index's pass over every word). */
function isRangeLeaf(node: FilterExpr): boolean {
  return node.type === 'compare' && node.field !== 'cursor' && (NUMBER_FIELDS as readonly string[]).includes(node.field) && RANGE_OPERATORS.has(node.operator);
}

const RANGE_OPERATORS: ReadonlySet<string> = new Set(['<', '<=', '>', '>=']);

/** An AND's operands with the leaves that narrow in place (comparisons) last. */
function leavesLast(operands: readonly FilterExpr[]): FilterExpr[] {
  return [...operands.filter((operand) => operand.type !== 'compare'), ...operands.filter((operand) => operand.type === 'compare')];
}

/** Slots ascending by (value, slot): slots ascend with cursors, so ties by slot are ties by cursor. */
function sortSlots(slots: Int32Array, column: Float64Array): Int32Array {
  const order = valueOrder(slots, Float64Array.from(slots, (slot) => column[slot]!));
  return Int32Array.from(order, (at) => slots[at]!);
}

/** Largest write batch that moves slots within the sort orders one by one instead of merging them. */
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

/** Entries a cache of raw values keeps before it is emptied. */
const RAW_CACHE_MAX = 65_536;

function remember<T>(cache: Map<string, T>, raw: string, value: T): void {
  if (cache.size >= RAW_CACHE_MAX) cache.clear();
  cache.set(raw, value);
}

/**
 * The 64-bit hash (two 32-bit words) of `foldText(text)`, as kept for `id`, `product_id`, `title`
 * and `slug`. Printable ASCII is lower-cased as it is hashed (what foldText does to it).
 */
function hashOf(text: string): [number, number] {
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20 || unit > 0x7e) return hashOfFolded(foldText(text));
  }
  return hashOfFolded(text, true);
}

function hashOfFolded(text: string, lowerAscii = false): [number, number] {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i += 1) {
    let unit = text.charCodeAt(i);
    if (lowerAscii && unit >= 0x41 && unit <= 0x5a) unit += 0x20;
    h1 = Math.imul(h1 ^ unit, 2654435761);
    h2 = Math.imul(h2 ^ unit, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return [h1 >>> 0, h2 >>> 0];
}

function hashInto(hashes: Uint32Array, slot: number, text: string): void {
  const [low, high] = hashOf(text);
  hashes[2 * slot] = low;
  hashes[2 * slot + 1] = high;
}

/** Work between two yields of a search to the event loop. */
const SLICE_MS = 2;

/**
 * Tells a search when it has worked a slice, and yields (setImmediate, so I/O runs first) then;
 * carries the search's version and its scope of pooled bitsets (every bitset it takes goes there).
 */
class Slices {
  readonly #sliceMs: number;
  #since = performance.now();
  /** The index's version when the search began. */
  readonly version: number;
  readonly scope: Uint32Array[];
  constructor(sliceMs: number, version: number, scope: Uint32Array[]) {
    this.#sliceMs = sliceMs;
    this.version = version;
    this.scope = scope;
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

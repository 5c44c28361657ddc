// The storefront index: every storefront product's filterable fields in memory, column by column,
// so any expression of the filter language, `query` and `shop_name` are answered the same way
// whatever the storage engine, at a cost bounded by the catalog's size. Documents stay in the
// engine; the index answers with the cursors of one page. How it is built, and the path of a
// search and of a write, are in storefront-index/README.md.
//
// Guarantees:
// - Exact: every answer is what a plain evaluation of the filter over the products gives;
//   `total` is a population count. Ties in every sort are broken by cursor.
// - A search answers for the index as it stood when it began: a write while it yielded makes it
//   start again, without yielding. A search yields to the event loop whenever it has worked a
//   slice (between leaves), so a costly filter delays other requests by about one slice per search
//   in flight instead of by its whole cost.
// - What the leaf cache and the pair tables keep is of the index's current version: a write
//   updates them slot by slot (the slots it added and rewrote), it does not drop them; what waits
//   to be made between requests is made of the index as it is when it runs.
// Limits: a request costs O(leaves × products / 128) vector operations plus posting lists and one
// walk for its page, but for the searches answered with no bitset: those led by short posting
// lists (cost: their entries), and ANDs of bounds on one or two number columns counted by the
// range index or a pair table (cost: a few buckets' members and a short walk).
import type { FilterExpr } from './filter/ast.ts';
import type { StorefrontSort } from './model.ts';
import { BitsetPool } from './storefront-index/bitset-pool.ts';
import { NUMBER_FIELDS, StorefrontColumns, type NumberField, type StorefrontIndexRow } from './storefront-index/columns.ts';
import { Evaluator } from './storefront-index/evaluator.ts';
import { IdleWork } from './storefront-index/idle-work.ts';
import { LeafBits } from './storefront-index/leaf-bits.ts';
import { LeafCache } from './storefront-index/leaf-cache.ts';
import { pageOf, type PageRequest } from './storefront-index/page.ts';
import { PairTables } from './storefront-index/pair-tables.ts';
import { ReadyPage } from './storefront-index/ready-page.ts';
import { SlotChanges } from './storefront-index/slot-changes.ts';
import { SLICE_MS, Slices } from './storefront-index/slices.ts';
import { sparseAnswer } from './storefront-index/sparse.ts';
import { SORTED_FIELDS, SortOrders } from './storefront-index/sort-orders.ts';
import { restoreState, sortedColumns, stateOf, type StorefrontIndexState } from './storefront-index/state.ts';

export type { StorefrontIndexRow } from './storefront-index/columns.ts';
export type { StorefrontIndexState } from './storefront-index/state.ts';

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

export class StorefrontIndex {
  readonly #columns = new StorefrontColumns();
  readonly #orders = new SortOrders();
  /** The bitsets searches work in. */
  readonly #pool = new BitsetPool();
  readonly #work = new IdleWork();
  readonly #leaves: LeafCache;
  readonly #pairs: PairTables;
  readonly #evaluator: Evaluator;
  readonly #ready: ReadyPage;
  #sparseAnswers = 0;

  constructor() {
    const columns = this.#columns;
    this.#leaves = new LeafCache(columns);
    this.#pairs = new PairTables(columns, this.#work);
    this.#evaluator = new Evaluator({ columns, pool: this.#pool, leaves: this.#leaves, bits: new LeafBits(columns, this.#pool), work: this.#work });
    this.#ready = new ReadyPage({
      columns,
      work: this.#work,
      pool: this.#pool,
      leaves: this.#leaves,
      evaluator: this.#evaluator,
      pairs: this.#pairs,
      order: (request) => this.#order(request),
    });
  }

  get size(): number {
    return this.#columns.size;
  }

  /** Adds or replaces products (matched by cursor). Rows of new cursors must come in ascending order. */
  upsert(rows: Iterable<StorefrontIndexRow>): void {
    const batch = Array.isArray(rows) ? (rows as readonly StorefrontIndexRow[]) : [...rows];
    const merged = this.#orders.beginWrite(batch.length);
    const orderOf = merged === undefined ? (field: NumberField) => this.#orders.inPlace(field) : () => undefined;
    const changes = new SlotChanges(this.#columns.size);
    for (const row of batch) {
      const slot = this.#columns.write(row, orderOf, changes);
      merged?.add(slot);
    }
    this.#columns.endWrite();
    this.#leaves.afterWrite(changes);
    this.#pairs.afterWrite(changes);
  }

  /**
   * Builds now what searches would otherwise build on first use (every number column's range
   * index, the posting lists, the orders of the non-cursor sorts) and gives back the room the
   * columns grew into.
   */
  prepare(): void {
    this.#prepareSearchPaths();
  }

  /**
   * The index as typed arrays (views into the index: write them out before the next write) and the
   * rest as JSON, for a snapshot; `fromState` makes the same index of them.
   */
  state(): StorefrontIndexState {
    this.#prepareSearchPaths();
    return stateOf(this.#columns, this.#orders);
  }

  /** The index `state` described; the arrays become its own (not copied). */
  static fromState(state: StorefrontIndexState): StorefrontIndex {
    const index = new StorefrontIndex();
    restoreState(state, index.#columns, index.#orders);
    // Columns hold exactly `size` slots: the next write grows them.
    index.#prepareSearchPaths();
    return index;
  }

  /**
   * The page of slots' cursors and the exact number of matches. `sliceMs`: the work between two
   * yields to the event loop (0: yield before every leaf; Infinity: never yield).
   */
  async search(search: StorefrontSearch, sliceMs = SLICE_MS): Promise<{ cursors: number[]; total: number }> {
    const columns = this.#columns;
    columns.compactPostings(false);
    const sparse = sparseAnswer(columns, search);
    if (sparse !== undefined) {
      this.#sparseAnswers += 1;
      return sparse;
    }
    const ready = this.#ready.answer(search);
    if (ready !== undefined) return ready;
    const version = columns.version;
    let scope = this.#pool.begin(columns.size);
    try {
      let matches = await this.#evaluator.matches(search, new Slices(sliceMs, version, scope));
      // Written to while it yielded: answer from the index as it is now, in one go.
      if (version !== columns.version) {
        this.#pool.end(scope);
        scope = this.#pool.begin(columns.size);
        matches = await this.#evaluator.matches(search, new Slices(Number.POSITIVE_INFINITY, columns.version, scope));
      }
      return pageOf(columns, this.#order(search), search, matches.bits === undefined ? undefined : [matches.bits], matches.total);
    } finally {
      this.#pool.end(scope);
    }
  }

  /**
   * Searches counted by a pair table, those of them whose page was walked with no bitset, builds
   * of tables that finished, and builds or follows of a write that failed, since the start.
   */
  get pairCountStats(): { counted: number; scanned: number; builds: number; failures: number } {
    return this.#pairs.stats;
  }

  /** Searches answered from posting lists alone, with no bitset (storefront-index/sparse.ts), since the start. */
  get sparseAnswers(): number {
    return this.#sparseAnswers;
  }

  /** Look-ups of the leaf cache that found a kept bitset, and all look-ups, since the start: of leaves, and of range buckets. */
  get leafCacheStats(): Record<'leaf' | 'bucket', { hits: number; lookups: number }> {
    return this.#leaves.stats;
  }

  /** What was made between searches, and what threw instead, since the start. */
  get laterStats(): { made: number; failed: number } {
    return this.#work.stats;
  }

  /** Resolves once nothing waits to be made between requests: no keep waits, no pair table is being built. */
  async idle(): Promise<void> {
    await this.#work.idle();
  }

  #prepareSearchPaths(): void {
    const columns = this.#columns;
    columns.compactPostings(true);
    columns.trim();
    for (const field of NUMBER_FIELDS) columns.rangeIndex(field);
    for (const field of SORTED_FIELDS) this.#orders.permutation(field, sortedColumns(columns), columns.size);
  }

  #order(request: PageRequest): (position: number) => number {
    return this.#orders.order(request.sort, sortedColumns(this.#columns), this.#columns.size);
  }
}

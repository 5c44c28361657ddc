// The pair tables: per pair of number columns an AND of range leaves has used, its RangePairCounts,
// which counts such an AND (and `available`) without reading a bitset.
//
// Guarantees: a table answers only for the range indexes it was built from, and follows every write
// slot by slot (the slots a batch added, and those it rewrote where it changed one of the pair's
// columns or `available`), so it answers for the columns as they are. Slots written while a table
// is being built are followed once the build ends.
// Limits: at most PAIRS_KEPT tables (about 18 bytes per product each), the least recently used
// given up first. A table is built on its pair's second use, as a job of IdleWork: one at a time, in
// slices that yield to the event loop. A batch too large to follow slot by slot (SlotChanges.bulk,
// or rewrites that move more than FOLLOW_MOVES_PER_SLOT places per slot held between buckets, or
// added slots whose placing sweeps do), or a range index built again (its column doubled), makes the
// tables it concerns stale: rebuilt whole on the pair's next use; a build under way is then given
// up.
import type { NumberField, StorefrontColumns } from './columns.ts';
import type { IdleWork } from './idle-work.ts';
import { RangePairCounts } from './range-pair-counts.ts';
import type { SlotChanges } from './slot-changes.ts';

/** RangePairCounts kept at once. */
const PAIRS_KEPT = 2;
/**
 * Places a batch may move in a table, per slot it holds, before the table is built again instead:
 * a build reads each slot a few times, in slices, and meanwhile the pair's searches go without a
 * table; a move between buckets is a cache miss on a large table. Following is preferred up to a
 * few builds' cost.
 */
const FOLLOW_MOVES_PER_SLOT = 64;

interface Entry {
  fields: readonly [NumberField, NumberField];
  /** Uses while no table is kept; -Infinity once a build failed (never built again). */
  uses: number;
  counts: RangePairCounts | undefined;
}

/** The build under way: its pair, and the slots rewritten since it began (undefined: too many, it is given up). */
interface Building {
  key: string;
  written: Set<number> | undefined;
}

export class PairTables {
  readonly #columns: StorefrontColumns;
  readonly #work: IdleWork;
  readonly #pairs = new Map<string, Entry>();
  readonly #stats = { counted: 0, scanned: 0, builds: 0, failures: 0 };
  #building: Building | undefined;

  constructor(columns: StorefrontColumns, work: IdleWork) {
    this.#columns = columns;
    this.#work = work;
  }

  /**
   * The table of `fields` (in field-name order), counted as a use of it; or undefined: then this is
   * a use, and the second one starts its build, unless one is running.
   */
  counts(fields: readonly [NumberField, NumberField]): RangePairCounts | undefined {
    const columns = this.#columns;
    const key = pairKey(fields);
    const ranges = [columns.rangeIndex(fields[0]), columns.rangeIndex(fields[1])] as const;
    let entry = this.#pairs.get(key);
    if (entry?.counts !== undefined) {
      if (entry.counts.first === ranges[0] && entry.counts.second === ranges[1]) {
        // Most recently used last.
        this.#pairs.delete(key);
        this.#pairs.set(key, entry);
        this.#stats.counted += 1;
        return entry.counts;
      }
      // Of a range index built again since: its next use builds it anew.
      entry = { fields, uses: 1, counts: undefined };
    }
    entry ??= { fields, uses: 0, counts: undefined };
    this.#pairs.set(key, entry);
    entry.uses += 1;
    if (entry.uses >= 2) this.#work.job(() => this.#build(key, fields, ranges));
    return undefined;
  }

  /** Follows a write batch: each kept table, slot by slot; the build under way notes the slots it must follow when done. */
  afterWrite(changes: SlotChanges): void {
    if (changes.empty) return;
    const columns = this.#columns;
    const building = this.#building;
    if (building?.written !== undefined) {
      if (changes.bulk) building.written = undefined;
      else for (const slot of changes.rewritten) building.written.add(slot);
    }
    for (const [key, entry] of this.#pairs) {
      const counts = entry.counts;
      if (counts === undefined) continue;
      const [x, y] = entry.fields;
      const stale = (): void => void this.#pairs.set(key, { fields: entry.fields, uses: 1, counts: undefined });
      if (changes.bulk || counts.first !== columns.builtRangeIndex(x) || counts.second !== columns.builtRangeIndex(y)) {
        // Given back now, not at its next use, which builds it again.
        stale();
        continue;
      }
      try {
        counts.rebind(columns.numbers[x].data, columns.numbers[y].data, columns.available.data);
        const budget = FOLLOW_MOVES_PER_SLOT * counts.size;
        let moves = 0;
        const rewritten = changes.touched.has(x) || changes.touched.has(y) || changes.touched.has('available') ? changes.rewritten : [];
        for (const slot of rewritten) if ((moves += counts.follow(slot)) > budget) break;
        if (moves <= budget) for (const slot of changes.added) counts.follow(slot);
        if (moves > budget || (moves += counts.settle()) > budget) stale();
      } catch {
        // Only a bug throws here (no I/O): the write stands, the table goes, and the pair is never built again, counted.
        this.#stats.failures += 1;
        this.#pairs.set(key, { fields: entry.fields, uses: Number.NEGATIVE_INFINITY, counts: undefined });
      }
    }
  }

  /** Notes a search whose page was walked with no bitset. */
  noteScanned(): void {
    this.#stats.scanned += 1;
  }

  /** Searches counted by a table, those of them whose page was walked with no bitset, builds that finished, and builds or follows that failed, since the start. */
  get stats(): { counted: number; scanned: number; builds: number; failures: number } {
    return { ...this.#stats };
  }

  /**
   * Builds the table of `fields`, in slices that yield; then follows the slots written meanwhile
   * and keeps it, unless a write was too large to follow or a range index was built again.
   */
  #build(key: string, fields: readonly [NumberField, NumberField], ranges: readonly [RangePairCounts['first'], RangePairCounts['second']]): Promise<void> {
    const columns = this.#columns;
    const building: Building = { key, written: new Set() };
    this.#building = building;
    const current = (): boolean => building.written !== undefined && columns.builtRangeIndex(fields[0]) === ranges[0] && columns.builtRangeIndex(fields[1]) === ranges[1];
    const pause = async (): Promise<boolean> => {
      await new Promise((resolve) => setImmediate(resolve));
      return current();
    };
    return RangePairCounts.build(
      { range: ranges[0], column: columns.numbers[fields[0]].data },
      { range: ranges[1], column: columns.numbers[fields[1]].data },
      columns.available.data,
      columns.size,
      pause,
    )
      .then((counts) => {
        if (counts === undefined || !current()) return;
        // The build read each slot once, some before a write and some after: those written
        // meanwhile are followed to what they hold now, and those added are added.
        counts.rebind(columns.numbers[fields[0]].data, columns.numbers[fields[1]].data, columns.available.data);
        for (const slot of building.written!) if (slot < counts.size) counts.follow(slot);
        for (let slot = counts.size; slot < columns.size; slot += 1) counts.follow(slot);
        counts.settle();
        this.#stats.builds += 1;
        this.#pairs.set(key, { fields, uses: 0, counts });
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
        this.#stats.failures += 1;
        this.#pairs.set(key, { fields, uses: Number.NEGATIVE_INFINITY, counts: undefined });
      })
      .finally(() => {
        if (this.#building === building) this.#building = undefined;
      });
  }
}

/** The key of a pair of number fields (in field-name order). */
function pairKey(fields: readonly [NumberField, NumberField]): string {
  return `${fields[0]}\u0000${fields[1]}`;
}

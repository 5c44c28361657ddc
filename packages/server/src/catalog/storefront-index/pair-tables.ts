// The pair tables: per pair of number columns an AND of range leaves has used, its RangePairCounts,
// which counts such an AND (and `available`) without reading a bitset.
//
// Guarantees: a table answers only for the columns' version it was built for and the range indexes
// it was built from. Limits: at most PAIRS_KEPT tables (about 16 bytes per product each), the least
// recently used given up first. A table is built on its pair's second use (on its first after a
// write, for a pair whose table the write made stale), as a job of IdleWork: one at a time, in
// slices that yield to the event loop, given up when the columns are written. A write makes every
// table stale: it is rebuilt whole.
import type { NumberField, StorefrontColumns } from './columns.ts';
import type { IdleWork } from './idle-work.ts';
import { RangePairCounts } from './range-pair-counts.ts';

/** RangePairCounts kept at once. */
const PAIRS_KEPT = 2;

interface Entry {
  version: number;
  uses: number;
  counts: RangePairCounts | undefined;
}

export class PairTables {
  readonly #columns: StorefrontColumns;
  readonly #work: IdleWork;
  readonly #pairs = new Map<string, Entry>();
  readonly #stats = { counted: 0, scanned: 0, builds: 0, failures: 0 };

  constructor(columns: StorefrontColumns, work: IdleWork) {
    this.#columns = columns;
    this.#work = work;
  }

  /**
   * The table of `fields` (in field-name order) for the columns as they are, counted as a use of
   * it; or undefined: then this is a use, and the second since the columns were last written
   * starts its build, unless one is running.
   */
  counts(fields: readonly [NumberField, NumberField]): RangePairCounts | undefined {
    const columns = this.#columns;
    const key = pairKey(fields);
    const ranges = [columns.rangeIndex(fields[0]), columns.rangeIndex(fields[1])] as const;
    let entry = this.#pairs.get(key);
    if (entry !== undefined && entry.version !== columns.version && entry.uses >= 0) this.#pairs.delete(key);
    else if (entry?.counts !== undefined && entry.counts.first === ranges[0] && entry.counts.second === ranges[1]) {
      // Most recently used last.
      this.#pairs.delete(key);
      this.#pairs.set(key, entry);
      this.#stats.counted += 1;
      return entry.counts;
    }
    entry = this.#pairs.get(key) ?? { version: columns.version, uses: 0, counts: undefined };
    this.#pairs.set(key, entry);
    entry.uses += 1;
    if (entry.uses >= 2) this.#work.job(() => this.#build(key, fields, ranges));
    return undefined;
  }

  /**
   * Gives back the tables of the version before a write (called on each write). The pairs they
   * were of stay noted as used once at the new version: their next use starts their build.
   */
  dropStale(): void {
    const used = [...this.#pairs].filter(([, entry]) => entry.counts !== undefined).map(([key]) => key);
    this.#pairs.clear();
    for (const key of used) this.#pairs.set(key, { version: this.#columns.version, uses: 1, counts: undefined });
  }

  /** Notes a search whose page was walked with no bitset. */
  noteScanned(): void {
    this.#stats.scanned += 1;
  }

  /** Searches counted by a table, those of them whose page was walked with no bitset, builds that finished, and builds that failed, since the start. */
  get stats(): { counted: number; scanned: number; builds: number; failures: number } {
    return { ...this.#stats };
  }

  /** Builds the table of `fields`, in slices that yield; keeps it if the columns were not written meanwhile. */
  #build(key: string, fields: readonly [NumberField, NumberField], ranges: readonly [RangePairCounts['first'], RangePairCounts['second']]): Promise<void> {
    const columns = this.#columns;
    const version = columns.version;
    const pause = async (): Promise<boolean> => {
      await new Promise((resolve) => setImmediate(resolve));
      return columns.version === version;
    };
    return RangePairCounts.build(
      { range: ranges[0], column: columns.numbers[fields[0]].data },
      { range: ranges[1], column: columns.numbers[fields[1]].data },
      columns.available.data,
      columns.size,
      pause,
    )
      .then((counts) => {
        if (counts === undefined || columns.version !== version) return;
        this.#stats.builds += 1;
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
        this.#stats.failures += 1;
        this.#pairs.set(key, { version: Number.NaN, uses: Number.NEGATIVE_INFINITY, counts: undefined });
      });
  }
}

/** The key of a pair of number fields (in field-name order). */
function pairKey(fields: readonly [NumberField, NumberField]): string {
  return `${fields[0]}\u0000${fields[1]}`;
}

// SqlitePriceLog: the embedded price log, by default in the catalog's database file (its own
// table, `price_events`), shared by every process that opens the same file.
//
// Guarantees:
// - ids come from an AUTOINCREMENT rowid: SQLite keeps the highest id ever issued in
//   `sqlite_sequence`, so ids are strictly increasing across processes and never reused, also
//   after pruning, a crash or a restart;
// - a NEW log (no table, or a database file replaced by an empty one) starts its counter at its
//   creation time in ms × 1000, so its ids are above every id an earlier log on that path could
//   have issued (unless that log averaged more than 1,000 events per millisecond of its life, or
//   the clock went back): a resume point from the lost log is below the new oldest id and gets a
//   `reset` instead of having new events dropped as duplicates. Ids have 16 digits;
// - append() commits one IMMEDIATE transaction with `synchronous = FULL` in WAL mode: once it
//   resolves the events survive `kill -9` and power loss;
// - the same transaction upserts each event into `price_latest` (one row per product, variant,
//   source and market; never pruned), and latestPrices() reads those rows and the newest id in
//   one statement (one snapshot of the database), so the snapshot and its position always agree;
// - reads return only the newest RETAINED_EVENTS rows (by id) even when more are still stored;
//   rows older than that are deleted in batches of `pruneBatchSize` after appends;
// - follow() sees appends made through the same SqlitePriceLog at once, and those of other
//   instances (other processes, or another thread such as the stream listener's) within one poll
//   interval (an indexed `id > ?` query, default every 10 ms).
// Failure modes: a locked database waits up to `busyTimeoutMs` before failing; any engine error
// surfaces as ServiceUnavailable. Calls are synchronous inside (node:sqlite), so a slow disk
// stalls the event loop for the length of one commit.
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { ServiceUnavailable } from '../../catalog/errors.ts';
import { BUSY_TIMEOUT_MS, PAGE_CACHE_KIB } from '../../store/sqlite/sqlite-settings.ts';
import { storageFullError } from '../../store/storage-full.ts';
import type { PriceEvent } from '../../catalog/model.ts';
import { RETAINED_EVENTS, toAppendRecord, type LatestPrices, type LatestPricesQuery, type PriceLog, type StoredPriceEvent } from '../price-log.ts';
import { storedJson } from '../../catalog/raw-json.ts';

export interface SqlitePriceLogOptions {
  /** How often follow() looks for appends by other processes. */
  pollIntervalMs?: number;
  /** Rows deleted per statement when pruning, and appends between prunes. */
  pruneBatchSize?: number;
  busyTimeoutMs?: number;
  /** The counter a new log starts at (its first id is this + 1); default: now in ms × 1000. */
  newLogCounter?: number;
}

/**
 * The latest-price rows are kept in (product, id) order, so that a product's rows are read in the
 * order the answer lists them, without a sort; the unique index on (product, key) is what an
 * append upserts by.
 */
const LATEST_COLUMNS = `
  product_id TEXT NOT NULL,
  latest_key TEXT NOT NULL,
  id INTEGER NOT NULL,
  topic TEXT NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (product_id, id)`;

/**
 * Moves the rows of a latest-price table written by an earlier version (keyed by product and
 * key, read with a sort) into the (product, id) layout; run in the transaction that checked the layout.
 */
const MIGRATE_LATEST = `
ALTER TABLE price_latest RENAME TO price_latest_by_key;
CREATE TABLE price_latest (${LATEST_COLUMNS}) WITHOUT ROWID;
CREATE UNIQUE INDEX price_latest_key ON price_latest (product_id, latest_key);
INSERT INTO price_latest (product_id, latest_key, id, topic, data) SELECT product_id, latest_key, id, topic, data FROM price_latest_by_key;
DROP TABLE price_latest_by_key;`;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS price_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  topic TEXT NOT NULL,
  data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS price_latest (${LATEST_COLUMNS}) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS price_latest_key ON price_latest (product_id, latest_key);`;

/** The latest event of each key among the stored events, keyed as toAppendRecord keys them. */
const BACKFILL_LATEST = `
INSERT INTO price_latest (product_id, latest_key, id, topic, data)
SELECT json_extract(data, '$.product_id'),
       json_extract(data, '$.variant_id') || '|' || json_extract(data, '$.source') || '|' || json_extract(data, '$.market'),
       id, topic, data
FROM price_events
WHERE json_valid(data) AND json_type(data, '$.product_id') = 'text' AND json_type(data, '$.variant_id') = 'text'
ORDER BY id
ON CONFLICT (product_id, latest_key) DO UPDATE SET id = excluded.id, topic = excluded.topic, data = excluded.data`;

/** The id of the oldest retained row: the RETAINED_EVENTS-th newest, or the oldest stored. */
const OLDEST_RETAINED = `coalesce(
  (SELECT id FROM price_events ORDER BY id DESC LIMIT 1 OFFSET ${RETAINED_EVENTS - 1}),
  (SELECT min(id) FROM price_events))`;

const FOLLOW_PAGE = 512;

export class SqlitePriceLog implements PriceLog {
  readonly #db: DatabaseSync;
  readonly #pollIntervalMs: number;
  readonly #pruneBatchSize: number;
  readonly #insert: StatementSync;
  readonly #upsertLatest: StatementSync;
  readonly #readLatest: StatementSync;
  readonly #readAfter: StatementSync;
  readonly #tail: StatementSync;
  readonly #bounds: StatementSync;
  readonly #prune: StatementSync;
  /** Followers of this process waiting for the next append or poll. */
  readonly #wakers = new Set<() => void>();
  #appendsSincePrune = 0;
  #closed = false;
  readonly #path: string;

  constructor(path: string, options: SqlitePriceLogOptions = {}) {
    this.#path = path;
    this.#pollIntervalMs = options.pollIntervalMs ?? 10;
    this.#pruneBatchSize = options.pruneBatchSize ?? 1000;
    const busyTimeoutMs = options.busyTimeoutMs ?? BUSY_TIMEOUT_MS;
    try {
      this.#db = new DatabaseSync(path, { timeout: busyTimeoutMs });
      // The latest-price rows are read at random (one product per getProductPrices): the catalog's
      // page cache, so that they are read from memory rather than from the file.
      this.#db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA cache_size = -${PAGE_CACHE_KIB};`);
      const hadLatest = this.#db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'price_latest'").get() !== undefined;
      if (hadLatest) this.#migrateLatest();
      this.#db.exec(SCHEMA);
      // A log written before the latest-price store existed: fill it from the events still held.
      if (!hadLatest) this.#db.exec(BACKFILL_LATEST);
      this.#startCounterOfNewLog(options.newLogCounter ?? Date.now() * 1000);
      this.#insert = this.#db.prepare('INSERT INTO price_events (topic, data) VALUES (?, ?) RETURNING id');
      this.#upsertLatest = this.#db.prepare(
        'INSERT INTO price_latest (product_id, latest_key, id, topic, data) VALUES (?, ?, ?, ?, ?) ' +
          'ON CONFLICT (product_id, latest_key) DO UPDATE SET id = excluded.id, topic = excluded.topic, data = excluded.data',
      );
      // The answer's JSON array joined by SQLite (no row object nor string per event), narrowed by
      // the topic `price:<source>:<market>` (exact comparisons, no pattern), with the newest id in
      // the same statement: one statement reads one snapshot, as a transaction would. The rows
      // are joined in the order of the subquery's ORDER BY, which the primary key gives without
      // a sort (SQLite does not flatten an ordered subquery into an aggregate; an ORDER BY inside
      // group_concat would sort them again).
      this.#readLatest = this.#db.prepare(
        `SELECT (SELECT coalesce(max(id), 0) FROM price_events) AS newest,
                (SELECT '[' || coalesce(group_concat(data, ','), '') || ']' FROM
                  (SELECT data FROM price_latest
                   WHERE product_id = :product
                     AND (:source IS NULL OR substr(topic, 1, length(:source) + 7) = 'price:' || :source || ':')
                     AND (:market IS NULL OR substr(topic, -length(:market) - 1) = ':' || :market)
                   ORDER BY id)) AS data`,
      );
      this.#readAfter = this.#db.prepare(
        `SELECT id, topic, data FROM price_events WHERE id > ? AND id >= coalesce(${OLDEST_RETAINED}, 0) ORDER BY id LIMIT ?`,
      );
      this.#tail = this.#db.prepare(`SELECT id, topic, data FROM price_events WHERE id > ? ORDER BY id LIMIT ${FOLLOW_PAGE}`);
      this.#bounds = this.#db.prepare(`SELECT ${OLDEST_RETAINED} AS oldest, (SELECT max(id) FROM price_events) AS newest`);
      this.#prune = this.#db.prepare(
        'DELETE FROM price_events WHERE id IN (SELECT id FROM price_events WHERE id < ? ORDER BY id LIMIT ?)',
      );
    } catch (error) {
      throw storageFullError('price log', path, error) ?? new ServiceUnavailable('price log', { cause: error });
    }
  }

  async append(events: readonly PriceEvent[] | readonly string[]): Promise<StoredPriceEvent[]> {
    // Validate every item before the transaction so a bad item stores nothing.
    const records = (events as readonly (PriceEvent | string)[]).map(toAppendRecord);
    if (records.length === 0) return [];
    const stored = this.#guard(() => {
      this.#db.exec('BEGIN IMMEDIATE');
      try {
        const out: StoredPriceEvent[] = [];
        for (const { topic, data, latest } of records) {
          const row = this.#insert.get(topic, data) as { id: number };
          if (latest !== null) this.#upsertLatest.run(latest.productId, latest.key, row.id, topic, data);
          out.push({ id: row.id, topic, data });
        }
        this.#db.exec('COMMIT');
        return out;
      } catch (error) {
        if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
        throw error;
      }
    });
    this.#wakeFollowers();
    this.#appendsSincePrune += stored.length;
    if (this.#appendsSincePrune >= this.#pruneBatchSize) {
      this.#appendsSincePrune = 0;
      this.#pruneOldRows();
    }
    return stored;
  }

  /** Moves a latest-price table of the earlier layout into the current one (MIGRATE_LATEST), once: the first process to open the file does it. */
  #migrateLatest(): void {
    const layout = this.#db.prepare("SELECT pk FROM pragma_table_info('price_latest') WHERE name = 'id'");
    if ((layout.get() as { pk: number } | undefined)?.pk !== 0) return;
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      // Checked again under the write lock: another process may have moved the rows meanwhile.
      if ((layout.get() as { pk: number } | undefined)?.pk === 0) this.#db.exec(MIGRATE_LATEST);
      this.#db.exec('COMMIT');
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  async readAfter(afterId: number, limit: number): Promise<StoredPriceEvent[]> {
    return this.#guard(() => this.#readAfter.all(afterId, limit) as unknown as StoredPriceEvent[]);
  }

  async latestPrices(productId: string, query: LatestPricesQuery = {}): Promise<LatestPrices> {
    return this.#guard(() => {
      const row = this.#readLatest.get({ product: productId, source: query.source ?? null, market: query.market ?? null }) as { newest: number; data: string };
      return { data: storedJson(row.data), position: row.newest };
    });
  }

  async bounds(): Promise<{ oldestId: number; newestId: number } | null> {
    const row = this.#guard(() => this.#bounds.get() as { oldest: number | null; newest: number | null });
    return row.oldest === null || row.newest === null ? null : { oldestId: row.oldest, newestId: row.newest };
  }

  async *follow(afterId: number, signal: AbortSignal): AsyncIterable<StoredPriceEvent> {
    let cursor = afterId;
    while (!signal.aborted && !this.#closed) {
      const rows = this.#guard(() => this.#tail.all(cursor) as unknown as StoredPriceEvent[]);
      for (const row of rows) {
        cursor = row.id;
        yield row;
        if (signal.aborted) return;
      }
      if (rows.length < FOLLOW_PAGE) await this.#nextPoll(signal);
    }
  }

  async ping(): Promise<void> {
    this.#guard(() => this.#db.prepare('SELECT 1').get());
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#wakeFollowers();
    this.#db.close();
  }

  /**
   * Sets the AUTOINCREMENT counter of a log that has none yet (a new table); an existing counter,
   * even of an emptied table, is kept, so ids still never go back. One IMMEDIATE transaction, so
   * two processes opening a new file at once agree.
   */
  #startCounterOfNewLog(counter: number): void {
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      const known = this.#db.prepare("SELECT 1 FROM sqlite_sequence WHERE name = 'price_events'").get();
      const empty = this.#db.prepare('SELECT 1 FROM price_events LIMIT 1').get() === undefined;
      if (known === undefined && empty) {
        this.#db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('price_events', ?)").run(Math.max(0, Math.trunc(counter)));
      }
      this.#db.exec('COMMIT');
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
      throw error;
    }
  }

  /** Deletes rows below the retained window, a batch per statement so writers are never held long. */
  #pruneOldRows(): void {
    try {
      const bounds = this.#bounds.get() as { oldest: number | null };
      if (bounds.oldest === null) return;
      for (;;) {
        const { changes } = this.#prune.run(bounds.oldest, this.#pruneBatchSize);
        if (Number(changes) < this.#pruneBatchSize) break;
      }
    } catch {
      // Pruning is housekeeping: reads never return old rows anyway, and the next append retries.
    }
  }

  #nextPoll(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.#wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, this.#pollIntervalMs);
      signal.addEventListener('abort', done, { once: true });
      this.#wakers.add(done);
    });
  }

  #wakeFollowers(): void {
    for (const wake of [...this.#wakers]) wake();
  }

  #guard<T>(work: () => T): T {
    if (this.#closed) throw new ServiceUnavailable('price log');
    try {
      return work();
    } catch (error) {
      throw storageFullError('price log', this.#path, error) ?? new ServiceUnavailable('price log', { cause: error });
    }
  }
}

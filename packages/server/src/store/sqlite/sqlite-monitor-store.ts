// SqliteMonitorStore: the MonitorStore port on node:sqlite, in the catalog database (tables of
// migrations 7 to 10: `monitors`, `monitor_filters`, `monitor_baselines` and
// `monitor_baseline_log`, `monitor_changes`, `monitor_deliveries`). A round's baselines are
// appended to the log and folded into monitor_baselines once the log holds FOLD_ROWS rows: a round
// writes a few pages instead of a page per monitor (migration 10 says why).
// SQLite has one writer at a time: advance() and claimDue() are each one IMMEDIATE transaction, so two processes on one file never
// store a change twice or claim one delivery together. Times are epoch milliseconds.
// Failure modes: node:sqlite waits on the event loop's thread, so the delivery's writes (advance,
// claimDue, recordAttempts) wait at most WRITE_WAIT_MS for another connection's write: long
// enough for a batch of published prices or another instance's round, not for an import's batch;
// then they fail with ServiceUnavailable and the round (or the record) is tried again. (An
// instance's own reader and sender take turns before they reach the lock: takingTurns in
// monitors/delivery-loop.ts.) claimDue writes only when a read found something due.
// ServiceUnavailable once the database is closed.
import type { PriceChange } from '@catalog/contract';
import type { Baselines } from '../../monitors/price-changes.ts';
import { digestKey, idPrefixOf, keyIdOf } from '../key-store.ts';
import { generateMonitorId, generateMonitorSecret, MAX_CHANGES_PER_DELIVERY, type Monitor, type MonitorSettings, type MonitorView } from '../../monitors/monitor.ts';
import {
  baselinesByMonitor,
  MonitorKeyRefused,
  type Advanced,
  type BaselineRow,
  type AttemptRecord,
  type Claim,
  Claiming,
  type ComposeDelivery,
  type DeliveryOutcome,
  type DeliveryTotals,
  type DueDelivery,
  type MonitorAdvance,
  type MonitorReaderState,
  type MonitorStore,
} from '../../monitors/monitor-store.ts';
import { ServiceUnavailable } from '../../catalog/errors.ts';
import type { SqliteDatabase } from './sqlite-database.ts';
import { BUSY_TIMEOUT_MS } from './sqlite-settings.ts';

interface MonitorRow {
  id: string;
  key_revoked: number;
  key_digest: Uint8Array;
  url: string;
  filter: string;
  min_change_percent: number;
  min_interval_ms: number;
  enabled: number;
  disabled_reason: string | null;
  created_at: number;
  last_success_at: number | null;
  last_failure_at: number | null;
  last_failure_reason: string | null;
  backlog: number;
  oldest_due_at: number | null;
}

const SQLITE_BUSY = 5;
/** How long a monitor write waits for the write lock (see the failure modes above). */
const WRITE_WAIT_MS = 50;
/**
 * The baseline log's length at which advance() folds it into monitor_baselines, in the same
 * transaction: a fold rewrites the pages of every monitor it names once; reading a monitor's
 * baselines scans the log (it has no index by monitor), which this bounds.
 */
const FOLD_ROWS = 200_000;

/** Enabled monitors of keys that are not revoked. */
const ACTIVE = 'm.enabled = 1 AND k.revoked_at IS NULL';
/** Whether delivery `d`'s monitor is active: its monitor looked up by key, for a walk led by the deliveries. */
const DELIVERY_ACTIVE = `(SELECT ${ACTIVE} FROM monitors m JOIN api_keys k ON k.digest = m.key_digest WHERE m.id = d.monitor_id)`;

const VIEW = `
  SELECT m.id, m.key_digest, k.revoked_at IS NOT NULL AS key_revoked, m.url, f.filter, m.min_change_percent, m.min_interval_ms, m.enabled, m.disabled_reason, m.created_at,
         m.last_success_at, m.last_failure_at, m.last_failure_reason,
         (SELECT count(*) FROM monitor_changes c WHERE c.monitor_id = m.id) + coalesce((SELECT d.changes FROM monitor_deliveries d WHERE d.monitor_id = m.id), 0) AS backlog,
         (SELECT min(due_at) FROM (SELECT c.due_at FROM monitor_changes c WHERE c.monitor_id = m.id UNION ALL SELECT d.first_due_at FROM monitor_deliveries d WHERE d.monitor_id = m.id)) AS oldest_due_at
  FROM monitors m JOIN api_keys k ON k.digest = m.key_digest JOIN monitor_filters f ON f.monitor_id = m.id`;

export class SqliteMonitorStore implements MonitorStore {
  readonly #database: SqliteDatabase;

  constructor(database: SqliteDatabase) {
    this.#database = database;
  }

  async addMonitor(keyOrId: string, settings: MonitorSettings, position: number | null = null): Promise<{ monitor: Monitor; secret: string }> {
    const prefix = idPrefixOf(keyOrId);
    const keys = (
      prefix === null
        ? this.#database.statement('SELECT digest, plan, revoked_at FROM api_keys WHERE digest = ?').all(digestKey(keyOrId))
        : this.#database.statement("SELECT digest, plan, revoked_at FROM api_keys WHERE hex(digest) LIKE ? || '%'").all(prefix.toUpperCase())
    ) as unknown as { digest: Uint8Array; plan: string; revoked_at: string | null }[];
    const [key] = keys;
    if (key === undefined || keys.length > 1) throw new MonitorKeyRefused('no such key: give the key itself or its id from `catalog keys list`');
    if (key.revoked_at !== null) throw new MonitorKeyRefused(`key ${keyIdOf(key.digest)} is revoked`);
    if (key.plan !== 'pro') throw new MonitorKeyRefused(`key ${keyIdOf(key.digest)} is on the ${key.plan} plan; monitors need a pro key`);
    const monitor: Monitor = { ...settings, id: generateMonitorId(), keyId: keyIdOf(key.digest), enabled: true, disabledReason: null, createdAt: Date.now() };
    const secret = generateMonitorSecret();
    this.#database.transaction(() => {
      this.#database
        .statement('INSERT INTO monitors (id, key_digest, url, min_change_percent, min_interval_ms, secret, created_at, position) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
        .run(monitor.id, key.digest, monitor.url, monitor.minChangePercent, monitor.minIntervalMs, secret, monitor.createdAt, position);
      this.#database.statement('INSERT INTO monitor_filters (monitor_id, filter) VALUES (?, ?)').run(monitor.id, monitor.filter);
    });
    return { monitor, secret };
  }

  async listMonitors(key?: string): Promise<MonitorView[]> {
    const rows = (
      key === undefined
        ? this.#database.statement(`${VIEW} ORDER BY m.created_at, m.id`).all()
        : this.#database.statement(`${VIEW} WHERE m.key_digest = ? ORDER BY m.created_at, m.id`).all(digestKey(key))
    ) as unknown as MonitorRow[];
    return rows.map(viewOf);
  }

  async removeMonitor(id: string): Promise<boolean> {
    return this.#database.transaction(() => {
      this.#database.statement('DELETE FROM monitor_changes WHERE monitor_id = ?').run(id);
      this.#database.statement('DELETE FROM monitor_deliveries WHERE monitor_id = ?').run(id);
      this.#database.statement('DELETE FROM monitor_baselines WHERE monitor_id = ?').run(id);
      this.#database.statement('DELETE FROM monitor_baseline_log WHERE monitor_id = ?').run(id);
      this.#database.statement('DELETE FROM monitor_filters WHERE monitor_id = ?').run(id);
      return Number(this.#database.statement('DELETE FROM monitors WHERE id = ?').run(id).changes) === 1;
    });
  }

  async enableMonitor(id: string): Promise<Monitor | null> {
    return this.#database.transaction(() => {
      const row = this.#database.statement(`${VIEW} WHERE m.id = ? AND k.revoked_at IS NULL`).get(id) as MonitorRow | undefined;
      if (row === undefined) return null;
      this.#database.statement('UPDATE monitors SET enabled = 1, disabled_reason = NULL WHERE id = ?').run(id);
      this.#database.statement('UPDATE monitor_deliveries SET next_attempt_at = 0, lease_until = 0 WHERE monitor_id = ?').run(id);
      return { ...monitorOf(row), enabled: true, disabledReason: null };
    });
  }

  async readerStates(): Promise<MonitorReaderState[]> {
    const rows = this.#database
      .statement(`SELECT m.id, m.min_change_percent, m.position FROM monitors m JOIN api_keys k ON k.digest = m.key_digest WHERE ${ACTIVE} ORDER BY m.id`)
      .all() as unknown as { id: string; min_change_percent: number; position: number | null }[];
    return rows.map((row) => ({ id: row.id, minChangePercent: row.min_change_percent, position: row.position }));
  }

  async filtersOf(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    const rows = this.#database.statement('SELECT monitor_id AS id, filter FROM monitor_filters WHERE monitor_id IN (SELECT value FROM json_each(?))').all(JSON.stringify(ids)) as unknown as { id: string; filter: string }[];
    return new Map(rows.map((row) => [row.id, row.filter]));
  }

  async baselinesOf(ids: readonly string[]): Promise<Map<string, Baselines>> {
    if (ids.length === 0) return new Map();
    const rows = this.#database
      .statement('SELECT m.id, b.key, b.price FROM monitors m LEFT JOIN monitor_baselines b ON b.monitor_id = m.id WHERE m.id IN (SELECT value FROM json_each(?))')
      .all(JSON.stringify(ids)) as unknown as BaselineRow[];
    const baselines = baselinesByMonitor(rows);
    const logged = this.#database
      .statement('SELECT monitor_id, key, price FROM monitor_baseline_log WHERE monitor_id IN (SELECT value FROM json_each(?)) ORDER BY seq')
      .all(JSON.stringify(ids)) as unknown as { monitor_id: string; key: string; price: number }[];
    for (const row of logged) {
      const of = baselines.get(row.monitor_id);
      if (of !== undefined) of[row.key] = row.price;
    }
    return baselines;
  }

  /** `work` in one transaction, unless another connection holds the write lock for more than WRITE_WAIT_MS: then ServiceUnavailable. */
  #briefly<T>(work: () => T): T {
    const db = this.#database.connection();
    db.exec(`PRAGMA busy_timeout = ${WRITE_WAIT_MS}`);
    try {
      return this.#database.transaction(work);
    } catch (error) {
      if ((((error as { errcode?: number }).errcode ?? 0) & 0xff) === SQLITE_BUSY) throw new ServiceUnavailable('monitor store (another connection is writing)', { cause: error });
      throw error;
    } finally {
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  async advance(updates: readonly MonitorAdvance[], now: number, compose: ComposeDelivery, claim?: Claim): Promise<Advanced> {
    if (updates.length === 0) return { stored: [], claimed: [] };
    return this.#briefly(() => {
      const claiming = new Claiming(now, claim);
      // A monitor with nothing waiting, no delivery under way and its interval passed gets its
      // delivery formed from the changes given, which are stored only beyond the first delivery's.
      const idle = this.#database.statement(
        `SELECT pending_reset, url, secret, next_delivery_at <= ? AND NOT EXISTS (SELECT 1 FROM monitor_deliveries d WHERE d.monitor_id = m.id)
           AND NOT EXISTS (SELECT 1 FROM monitor_changes c WHERE c.monitor_id = m.id) AS idle FROM monitors m WHERE id = ?`,
      );
      const move = this.#database.statement(
        `UPDATE monitors SET position = ?, pending_reset = CASE WHEN ? THEN 0 ELSE pending_reset OR ? END, next_delivery_at = CASE WHEN ? THEN ? + min_interval_ms ELSE next_delivery_at END
         WHERE id = ? AND position IS ? AND enabled = 1 AND EXISTS (SELECT 1 FROM api_keys k WHERE k.digest = monitors.key_digest AND k.revoked_at IS NULL)`,
      );
      const baseline = this.#database.statement('INSERT INTO monitor_baseline_log (monitor_id, key, price) VALUES (?, ?, ?)');
      const insert = this.#database.statement('INSERT INTO monitor_changes (monitor_id, change, due_at) VALUES (?, ?, ?)');
      const forming: string[] = [];
      const stored = updates.map((update) => {
        const state = update.changes.length === 0 ? undefined : (idle.get(now, update.id) as { pending_reset: number; url: string; secret: string; idle: number } | undefined);
        const direct = state?.idle === 1 ? 1 : 0;
        const moved = move.run(update.to, direct, update.reset ? 1 : 0, direct, now, update.id, update.from);
        if (Number(moved.changes) !== 1) return false;
        for (const [key, price] of Object.entries(update.baselines ?? {})) baseline.run(update.id, key, price);
        let waiting = update.changes;
        if (direct === 1) {
          const first = update.changes.slice(0, MAX_CHANGES_PER_DELIVERY);
          const { messageId, body } = compose(update.id, first, update.reset || state!.pending_reset === 1, now);
          this.#insertDelivery(claiming, { messageId, monitorId: update.id, url: state!.url, secret: state!.secret, body, attempts: 0, firstDueAt: now }, first.length);
          waiting = update.changes.slice(first.length);
        } else if (waiting.length > 0) forming.push(update.id);
        for (const change of waiting) insert.run(update.id, JSON.stringify(change), now);
        return true;
      });
      this.#form(forming, now, compose, claiming);
      this.#foldBaselines();
      return { stored, claimed: claiming.claimed };
    });
  }

  /** Folds the baseline log into monitor_baselines once it holds FOLD_ROWS rows; inside a transaction. */
  #foldBaselines(): void {
    const { first, last } = this.#database.statement('SELECT min(seq) AS first, max(seq) AS last FROM monitor_baseline_log').get() as { first: number | null; last: number | null };
    if (first === null || last === null || last - first + 1 < FOLD_ROWS) return;
    // In key order, each monitor's pages are written once; a key's newest row comes last and wins.
    // (The WHERE keeps SQLite from reading ON CONFLICT as a join's ON.)
    this.#database
      .statement(
        `INSERT INTO monitor_baselines (monitor_id, key, price)
         SELECT monitor_id, key, price FROM monitor_baseline_log WHERE seq <= ?1 ORDER BY monitor_id, key, seq
         ON CONFLICT (monitor_id, key) DO UPDATE SET price = excluded.price`,
      )
      .run(last);
    this.#database.statement('DELETE FROM monitor_baseline_log WHERE seq <= ?').run(last);
  }

  /** Stores a delivery just formed: claimed for the caller while `claiming` has room, else due at once. */
  #insertDelivery(claiming: Claiming, delivery: DueDelivery, changes: number): void {
    const leaseUntil = claiming.take(delivery);
    this.#database
      .statement('INSERT INTO monitor_deliveries (id, monitor_id, body, changes, first_due_at, next_attempt_at, lease_until) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(delivery.messageId, delivery.monitorId, delivery.body, changes, delivery.firstDueAt, leaseUntil ?? claiming.now, leaseUntil ?? 0);
  }

  async claimDue(now: number, limit: number, leaseMs: number, compose: ComposeDelivery, formAll = true): Promise<DueDelivery[]> {
    // Two reads, the second only when asked: the first walks the due index, the second every monitor with changes waiting.
    const due = this.#database.statement(`SELECT EXISTS (SELECT 1 FROM monitor_deliveries d WHERE d.next_attempt_at <= ?1 AND d.lease_until <= ?1 AND ${DELIVERY_ACTIVE}) AS due`).get(now) as { due: number };
    const forming =
      formAll &&
      (
        this.#database
          .statement(
            `SELECT EXISTS (SELECT 1 FROM monitor_changes c JOIN monitors m ON m.id = c.monitor_id JOIN api_keys k ON k.digest = m.key_digest WHERE ${ACTIVE} AND m.next_delivery_at <= ? AND NOT EXISTS (SELECT 1 FROM monitor_deliveries d WHERE d.monitor_id = m.id)) AS forming`,
          )
          .get(now) as { forming: number }
      ).forming === 1;
    if (!forming && due.due === 0) return [];
    return this.#briefly(() => {
      const claiming = new Claiming(now, { limit, leaseMs });
      if (forming) this.#form(null, now, compose, claiming);
      this.#claimDueIn(claiming);
      return claiming.claimed;
    });
  }

  /** Claims deliveries due at `claiming.now`, oldest due first, while it has room; inside a transaction. */
  #claimDueIn(claiming: Claiming): void {
    if (claiming.room === 0) return;
    // CROSS JOIN: the due index leads (a claimed delivery's next attempt is its lease's end, so
    // the walk meets only what is due), each candidate's monitor looked up by its key.
    const due = this.#database
      .statement(
        `SELECT d.id, d.monitor_id, m.url, m.secret, d.body, d.attempts, d.first_due_at FROM monitor_deliveries d
         CROSS JOIN monitors m ON m.id = d.monitor_id CROSS JOIN api_keys k ON k.digest = m.key_digest
         WHERE ${ACTIVE} AND d.next_attempt_at <= ?1 AND d.lease_until <= ?1 ORDER BY d.next_attempt_at LIMIT ?2`,
      )
      .all(claiming.now, claiming.room) as unknown as { id: string; monitor_id: string; url: string; secret: string; body: string; attempts: number; first_due_at: number }[];
    const lease = this.#database.statement('UPDATE monitor_deliveries SET lease_until = ?1, next_attempt_at = ?1 WHERE id = ?2');
    for (const row of due) {
      lease.run(claiming.take({ messageId: row.id, monitorId: row.monitor_id, url: row.url, secret: row.secret, body: row.body, attempts: row.attempts, firstDueAt: row.first_due_at }), row.id);
    }
  }

  /**
   * Forms the next delivery of each of `ids` (every monitor when null) that has changes, none under
   * way and its interval passed, claimed for the caller while `claiming` has room; inside a transaction.
   */
  #form(ids: readonly string[] | null, now: number, compose: ComposeDelivery, claiming: Claiming): void {
    if (ids?.length === 0) return;
    const forming = (
      ids === null
        ? this.#database
            .statement(
              `SELECT m.id, m.url, m.secret, m.min_interval_ms, m.pending_reset FROM (SELECT DISTINCT monitor_id FROM monitor_changes) c
               JOIN monitors m ON m.id = c.monitor_id JOIN api_keys k ON k.digest = m.key_digest
               WHERE ${ACTIVE} AND m.next_delivery_at <= ? AND NOT EXISTS (SELECT 1 FROM monitor_deliveries d WHERE d.monitor_id = m.id)`,
            )
            .all(now)
        : this.#database
            .statement(
              `SELECT m.id, m.url, m.secret, m.min_interval_ms, m.pending_reset FROM monitors m JOIN api_keys k ON k.digest = m.key_digest
               WHERE m.id IN (SELECT value FROM json_each(?)) AND ${ACTIVE} AND m.next_delivery_at <= ?
                 AND NOT EXISTS (SELECT 1 FROM monitor_deliveries d WHERE d.monitor_id = m.id)
                 AND EXISTS (SELECT 1 FROM monitor_changes c WHERE c.monitor_id = m.id)`,
            )
            .all(JSON.stringify(ids), now)
    ) as unknown as { id: string; url: string; secret: string; min_interval_ms: number; pending_reset: number }[];
    for (const monitor of forming) {
      const rows = this.#database
        .statement('SELECT seq, change, due_at FROM monitor_changes WHERE monitor_id = ? ORDER BY seq LIMIT ?')
        .all(monitor.id, MAX_CHANGES_PER_DELIVERY) as unknown as { seq: number; change: string; due_at: number }[];
      const changes = rows.map((row) => JSON.parse(row.change) as PriceChange);
      const { messageId, body } = compose(monitor.id, changes, monitor.pending_reset === 1, now);
      const firstDueAt = Math.min(...rows.map((row) => row.due_at));
      this.#insertDelivery(claiming, { messageId, monitorId: monitor.id, url: monitor.url, secret: monitor.secret, body, attempts: 0, firstDueAt }, changes.length);
      this.#database.statement('DELETE FROM monitor_changes WHERE monitor_id = ? AND seq <= ?').run(monitor.id, rows.at(-1)!.seq);
      this.#database.statement('UPDATE monitors SET pending_reset = 0, next_delivery_at = ? WHERE id = ?').run(now + monitor.min_interval_ms, monitor.id);
    }
  }

  async recordAttempts(records: readonly AttemptRecord[], now: number, compose: ComposeDelivery, claim?: Claim): Promise<DueDelivery[]> {
    if (records.length === 0) return [];
    return this.#briefly(() => {
      const claiming = new Claiming(now, claim);
      for (const { delivery, outcome } of records) this.#record(delivery, outcome);
      this.#form(records.filter((record) => record.outcome.result === 'delivered').map((record) => record.delivery.monitorId), now, compose, claiming);
      this.#claimDueIn(claiming);
      return claiming.claimed;
    });
  }

  #record(delivery: DueDelivery, outcome: DeliveryOutcome): void {
    switch (outcome.result) {
      case 'delivered':
        this.#database.statement('DELETE FROM monitor_deliveries WHERE id = ?').run(delivery.messageId);
        this.#database.statement('UPDATE monitors SET last_success_at = ? WHERE id = ?').run(outcome.at, delivery.monitorId);
        return;
      case 'failed':
        this.#database
          .statement('UPDATE monitor_deliveries SET attempts = attempts + 1, next_attempt_at = ?, lease_until = 0, last_error = ? WHERE id = ?')
          .run(outcome.retryAt, outcome.reason, delivery.messageId);
        this.#database.statement('UPDATE monitors SET last_failure_at = ?, last_failure_reason = ? WHERE id = ?').run(outcome.at, outcome.reason, delivery.monitorId);
        return;
      case 'disabled':
        this.#database
          .statement('UPDATE monitor_deliveries SET attempts = attempts + 1, lease_until = 0, last_error = ? WHERE id = ?')
          .run(outcome.reason, delivery.messageId);
        this.#database
          .statement('UPDATE monitors SET enabled = 0, disabled_reason = ?, last_failure_at = ?, last_failure_reason = ? WHERE id = ?')
          .run(outcome.reason, outcome.at, outcome.reason, delivery.monitorId);
        return;
    }
  }

  async deliveryTotals(): Promise<DeliveryTotals> {
    const row = this.#database
      .statement(
        `SELECT
           (SELECT count(*) FROM monitor_changes c JOIN monitors m ON m.id = c.monitor_id WHERE m.enabled = 1)
             + (SELECT coalesce(sum(d.changes), 0) FROM monitor_deliveries d JOIN monitors m ON m.id = d.monitor_id WHERE m.enabled = 1) AS backlog,
           (SELECT min(due_at) FROM (SELECT c.due_at FROM monitor_changes c JOIN monitors m ON m.id = c.monitor_id WHERE m.enabled = 1
              UNION ALL SELECT d.first_due_at FROM monitor_deliveries d JOIN monitors m ON m.id = d.monitor_id WHERE m.enabled = 1)) AS oldest_due_at,
           (SELECT count(*) FROM monitors WHERE enabled = 0) AS disabled`,
      )
      .get() as { backlog: number; oldest_due_at: number | null; disabled: number };
    return { backlog: row.backlog, oldestDueAt: row.oldest_due_at, disabledMonitors: row.disabled };
  }
}

function monitorOf(row: MonitorRow): Monitor {
  return {
    id: row.id,
    keyId: keyIdOf(row.key_digest),
    url: row.url,
    filter: row.filter,
    minChangePercent: row.min_change_percent,
    minIntervalMs: row.min_interval_ms,
    // A revoked key's monitors stop: shown as disabled, for that reason, while it stays revoked.
    enabled: row.enabled === 1 && row.key_revoked === 0,
    disabledReason: row.key_revoked === 0 ? row.disabled_reason : 'its key is revoked',
    createdAt: row.created_at,
  };
}

function viewOf(row: MonitorRow): MonitorView {
  return {
    ...monitorOf(row),
    delivery: {
      lastSuccessAt: row.last_success_at,
      lastFailureAt: row.last_failure_at,
      lastFailureReason: row.last_failure_reason,
      backlog: row.backlog,
      oldestDueAt: row.oldest_due_at,
    },
  };
}

// PostgresMonitorStore: the MonitorStore port on PostgreSQL (tables of migrations 10 to 12:
// `monitors`, `monitor_baselines` and `monitor_baseline_log`, `monitor_changes`,
// `monitor_deliveries`). A round's baselines are appended to the log and folded into
// monitor_baselines once the log holds FOLD_ROWS rows (migration 12 says why). Several instances
// share it: advance() writes only when the monitor's position is still the one read (an UPDATE …
// WHERE position IS NOT DISTINCT FROM, under the monitor's row lock; a monitor another transaction
// holds is left out and said `held`, never waited for), and claimDue() forms and claims deliveries
// under FOR UPDATE SKIP LOCKED, so each delivery is made by one instance.
// Times are epoch milliseconds. Failure modes: database unreachable → ServiceUnavailable.
import type pg from 'pg';
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
import { inTransaction, unavailableOnOutage } from './pg-pool.ts';

const WHAT = 'monitor store';
/**
 * The baseline log's length at which advance() folds it into monitor_baselines, in the same
 * transaction (one instance at a time: FOLD_LOCK); reading a monitor's baselines scans the log (it
 * has no index by monitor), which this bounds.
 */
const FOLD_ROWS = 200_000;
/** The transaction-level advisory lock an instance folds the baseline log under. */
const FOLD_LOCK = 5_117_051;

interface MonitorRow {
  id: string;
  key_revoked: boolean;
  key_digest: Buffer;
  url: string;
  filter: string;
  min_change_percent: number;
  min_interval_ms: number;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: number;
  last_success_at: number | null;
  last_failure_at: number | null;
  last_failure_reason: string | null;
  backlog: number;
  oldest_due_at: number | null;
}

const ACTIVE = 'm.enabled AND k.revoked_at IS NULL';
/**
 * A delivery `d` whose monitor is active, checked row by row (a subquery per delivery, which the
 * planner cannot turn into a join): the claim walks the due index in order and looks up each
 * candidate's monitor, whatever the tables' statistics say, instead of joining every monitor and
 * sorting every delivery, bodies included.
 */
const DELIVERY_ACTIVE = `(SELECT ${ACTIVE} FROM monitors m JOIN api_keys k ON k.digest = m.key_digest WHERE m.id = d.monitor_id)`;

const VIEW = `
  SELECT m.id, m.key_digest, k.revoked_at IS NOT NULL AS key_revoked, m.url, m.filter, m.min_change_percent, m.min_interval_ms, m.enabled, m.disabled_reason, m.created_at,
         m.last_success_at, m.last_failure_at, m.last_failure_reason,
         (SELECT count(*) FROM monitor_changes c WHERE c.monitor_id = m.id) + coalesce((SELECT d.changes FROM monitor_deliveries d WHERE d.monitor_id = m.id), 0) AS backlog,
         least((SELECT min(c.due_at) FROM monitor_changes c WHERE c.monitor_id = m.id), (SELECT d.first_due_at FROM monitor_deliveries d WHERE d.monitor_id = m.id)) AS oldest_due_at
  FROM monitors m JOIN api_keys k ON k.digest = m.key_digest`;

export class PostgresMonitorStore implements MonitorStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  addMonitor(keyOrId: string, settings: MonitorSettings, position: number | null = null): Promise<{ monitor: Monitor; secret: string }> {
    return unavailableOnOutage(WHAT, async () => {
      const prefix = idPrefixOf(keyOrId);
      const { rows: keys } =
        prefix === null
          ? await this.#pool.query<{ digest: Buffer; plan: string; revoked_at: Date | null }>('SELECT digest, plan, revoked_at FROM api_keys WHERE digest = $1', [digestKey(keyOrId)])
          : await this.#pool.query<{ digest: Buffer; plan: string; revoked_at: Date | null }>("SELECT digest, plan, revoked_at FROM api_keys WHERE encode(digest, 'hex') LIKE $1 || '%'", [prefix]);
      const [key] = keys;
      if (key === undefined || keys.length > 1) throw new MonitorKeyRefused('no such key: give the key itself or its id from `catalog keys list`');
      if (key.revoked_at !== null) throw new MonitorKeyRefused(`key ${keyIdOf(key.digest)} is revoked`);
      if (key.plan !== 'pro') throw new MonitorKeyRefused(`key ${keyIdOf(key.digest)} is on the ${key.plan} plan; monitors need a pro key`);
      const monitor: Monitor = { ...settings, id: generateMonitorId(), keyId: keyIdOf(key.digest), enabled: true, disabledReason: null, createdAt: Date.now() };
      const secret = generateMonitorSecret();
      await this.#pool.query(
        'INSERT INTO monitors (id, key_digest, url, filter, min_change_percent, min_interval_ms, secret, created_at, position) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
        [monitor.id, key.digest, monitor.url, monitor.filter, monitor.minChangePercent, monitor.minIntervalMs, secret, monitor.createdAt, position],
      );
      return { monitor, secret };
    });
  }

  listMonitors(key?: string): Promise<MonitorView[]> {
    return unavailableOnOutage(WHAT, async () => {
      const { rows } =
        key === undefined
          ? await this.#pool.query<MonitorRow>(`${VIEW} ORDER BY m.created_at, m.id`)
          : await this.#pool.query<MonitorRow>(`${VIEW} WHERE m.key_digest = $1 ORDER BY m.created_at, m.id`, [digestKey(key)]);
      return rows.map(viewOf);
    });
  }

  removeMonitor(id: string): Promise<boolean> {
    return unavailableOnOutage(WHAT, () =>
      inTransaction(this.#pool, async (client) => {
        // The monitor's row first: every writer of its outbox rows holds that lock, so none is written after these
        // deletes. The baseline log before the baselines: a fold under way moves log rows into monitor_baselines.
        const { rowCount } = await client.query('SELECT 1 FROM monitors WHERE id = $1 FOR UPDATE', [id]);
        if (rowCount !== 1) return false;
        for (const table of ['monitor_changes', 'monitor_deliveries', 'monitor_baseline_log', 'monitor_baselines']) {
          await client.query(`DELETE FROM ${table} WHERE monitor_id = $1`, [id]);
        }
        await client.query('DELETE FROM monitors WHERE id = $1', [id]);
        return true;
      }),
    );
  }

  enableMonitor(id: string): Promise<Monitor | null> {
    return unavailableOnOutage(WHAT, () =>
      inTransaction(this.#pool, async (client) => {
        const { rows } = await client.query<MonitorRow>(`${VIEW} WHERE m.id = $1 AND k.revoked_at IS NULL`, [id]);
        const row = rows[0];
        if (row === undefined) return null;
        await client.query('UPDATE monitors SET enabled = true, disabled_reason = NULL WHERE id = $1', [id]);
        await client.query('UPDATE monitor_deliveries SET next_attempt_at = 0, lease_until = 0 WHERE monitor_id = $1', [id]);
        return { ...monitorOf(row), enabled: true, disabledReason: null };
      }),
    );
  }

  readerStates(): Promise<MonitorReaderState[]> {
    return unavailableOnOutage(WHAT, async () => {
      const { rows } = await this.#pool.query<{ id: string; min_change_percent: number; position: number | null }>(
        `SELECT m.id, m.min_change_percent, m.position FROM monitors m JOIN api_keys k ON k.digest = m.key_digest WHERE ${ACTIVE} ORDER BY m.id`,
      );
      return rows.map((row) => ({ id: row.id, minChangePercent: row.min_change_percent, position: row.position }));
    });
  }

  filtersOf(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return Promise.resolve(new Map());
    return unavailableOnOutage(WHAT, async () => {
      const { rows } = await this.#pool.query<{ id: string; filter: string }>('SELECT id, filter FROM monitors WHERE id = ANY($1::text[])', [ids]);
      return new Map(rows.map((row) => [row.id, row.filter]));
    });
  }

  baselinesOf(ids: readonly string[]): Promise<Map<string, Baselines>> {
    if (ids.length === 0) return Promise.resolve(new Map());
    return unavailableOnOutage(WHAT, async () => {
      const { rows } = await this.#pool.query<BaselineRow>(
        'SELECT m.id, b.key, b.price FROM monitors m LEFT JOIN monitor_baselines b ON b.monitor_id = m.id WHERE m.id = ANY($1::text[])',
        [ids],
      );
      const baselines = baselinesByMonitor(rows);
      const { rows: logged } = await this.#pool.query<{ monitor_id: string; key: string; price: number }>(
        'SELECT monitor_id, key, price FROM monitor_baseline_log WHERE monitor_id = ANY($1::text[]) ORDER BY seq',
        [ids],
      );
      for (const row of logged) {
        const of = baselines.get(row.monitor_id);
        if (of !== undefined) of[row.key] = row.price;
      }
      return baselines;
    });
  }

  advance(updates: readonly MonitorAdvance[], now: number, compose: ComposeDelivery, claim?: Claim): Promise<Advanced> {
    if (updates.length === 0) return Promise.resolve({ stored: [], claimed: [] });
    return unavailableOnOutage(WHAT, () =>
      inTransaction(this.#pool, async (client) => {
        const claiming = new Claiming(now, claim);
        // A monitor another transaction holds (the sender recording or forming its delivery, another
        // instance's round) is left out, `held`, rather than waited for: a round of a thousand
        // monitors would wait for every sender transaction that holds one of them.
        const { rows: free } = await client.query<{ id: string }>('SELECT id FROM monitors WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE SKIP LOCKED', [
          updates.map((update) => update.id),
        ]);
        const unheld = new Set(free.map((row) => row.id));
        const writing = updates.filter((update) => unheld.has(update.id));
        // A monitor with nothing waiting, no delivery under way and its interval passed gets its
        // delivery formed from the changes given, which are stored only beyond the first delivery's.
        // Read once the locks are held: every writer of a monitor's changes and deliveries holds it.
        const { rows: idleRows } = await client.query<{ id: string; pending_reset: boolean; url: string; secret: string }>(
          `SELECT m.id, m.pending_reset, m.url, m.secret FROM monitors m WHERE m.id = ANY($1::text[]) AND m.next_delivery_at <= $2
             AND NOT EXISTS (SELECT 1 FROM monitor_deliveries d WHERE d.monitor_id = m.id) AND NOT EXISTS (SELECT 1 FROM monitor_changes c WHERE c.monitor_id = m.id)`,
          [writing.filter((update) => update.changes.length > 0).map((update) => update.id), now],
        );
        const idle = new Map(idleRows.map((row) => [row.id, row]));
        const { rows } = await client.query<{ id: string }>(
          `UPDATE monitors m SET position = t.to_position,
             pending_reset = CASE WHEN t.direct THEN false ELSE m.pending_reset OR t.reset END,
             next_delivery_at = CASE WHEN t.direct THEN $6 + m.min_interval_ms ELSE m.next_delivery_at END
           FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::boolean[], $5::boolean[]) AS t(id, from_position, to_position, reset, direct)
           WHERE m.id = t.id AND m.position IS NOT DISTINCT FROM t.from_position AND m.enabled
             AND EXISTS (SELECT 1 FROM api_keys k WHERE k.digest = m.key_digest AND k.revoked_at IS NULL)
           RETURNING m.id`,
          [
            writing.map((update) => update.id),
            writing.map((update) => update.from),
            writing.map((update) => update.to),
            writing.map((update) => update.reset),
            writing.map((update) => idle.has(update.id)),
            now,
          ],
        );
        const moved = new Set(rows.map((row) => row.id));
        const baselines = updates.filter((update) => moved.has(update.id)).flatMap((update) => Object.entries(update.baselines ?? {}).map(([key, price]) => ({ id: update.id, key, price })));
        if (baselines.length > 0) {
          await client.query('INSERT INTO monitor_baseline_log (monitor_id, key, price) SELECT * FROM unnest($1::text[], $2::text[], $3::double precision[])', [
            baselines.map((b) => b.id),
            baselines.map((b) => b.key),
            baselines.map((b) => b.price),
          ]);
          await foldBaselines(client);
        }
        const changed = updates.filter((update) => moved.has(update.id) && update.changes.length > 0);
        const formed = changed
          .filter((update) => idle.has(update.id))
          .map((update) => {
            const first = update.changes.slice(0, MAX_CHANGES_PER_DELIVERY);
            const monitor = idle.get(update.id)!;
            const { messageId, body } = compose(update.id, first, update.reset || monitor.pending_reset, now);
            return { delivery: { messageId, monitorId: update.id, url: monitor.url, secret: monitor.secret, body, attempts: 0, firstDueAt: now }, changes: first.length };
          });
        await insertDeliveries(client, claiming, formed);
        const waiting = changed.map((update) => ({ id: update.id, changes: idle.has(update.id) ? update.changes.slice(MAX_CHANGES_PER_DELIVERY) : update.changes })).filter((w) => w.changes.length > 0);
        if (waiting.length > 0) {
          // Inserted in the order given, so each monitor's changes keep the log's order in `seq`.
          await client.query('INSERT INTO monitor_changes (monitor_id, change, due_at) SELECT monitor_id, change, $3 FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(monitor_id, change, n) ORDER BY n', [
            waiting.flatMap((w) => w.changes.map(() => w.id)),
            waiting.flatMap((w) => w.changes.map((change) => JSON.stringify(change))),
            now,
          ]);
        }
        await this.#form(client, changed.filter((update) => !idle.has(update.id)).map((update) => update.id), now, compose, claiming);
        return { stored: updates.map((update) => moved.has(update.id)), held: updates.map((update) => !unheld.has(update.id)), claimed: claiming.claimed };
      }),
    );
  }

  claimDue(now: number, limit: number, leaseMs: number, compose: ComposeDelivery, formAll = true): Promise<DueDelivery[]> {
    return unavailableOnOutage(WHAT, async () => {
      // Most rounds find nothing due: a read instead of a transaction. The second read, of every
      // monitor with changes waiting, only when asked.
      const { rows: due } = await this.#pool.query<{ due: boolean }>(`SELECT EXISTS (SELECT 1 FROM monitor_deliveries d WHERE d.next_attempt_at <= $1 AND d.lease_until <= $1 AND ${DELIVERY_ACTIVE}) AS due`, [now]);
      const forming =
        formAll &&
        (
          await this.#pool.query<{ forming: boolean }>(
            `SELECT EXISTS (SELECT 1 FROM monitor_changes c JOIN monitors m ON m.id = c.monitor_id JOIN api_keys k ON k.digest = m.key_digest WHERE ${ACTIVE} AND m.next_delivery_at <= $1 AND NOT EXISTS (SELECT 1 FROM monitor_deliveries d WHERE d.monitor_id = m.id)) AS forming`,
            [now],
          )
        ).rows[0]?.forming === true;
      if (!forming && due[0]?.due !== true) return [];
      return inTransaction(this.#pool, async (client) => {
        const claiming = new Claiming(now, { limit, leaseMs });
        if (forming) await this.#form(client, null, now, compose, claiming);
        await claimDueIn(client, claiming);
        return claiming.claimed;
      });
    });
  }

  /**
   * Forms the next delivery of each of `ids` (every monitor when null) that has changes, none under
   * way and its interval passed, claimed for the caller while `claiming` has room; inside a transaction.
   */
  async #form(client: pg.PoolClient, ids: readonly string[] | null, now: number, compose: ComposeDelivery, claiming: Claiming): Promise<void> {
    if (ids?.length === 0) return;
    const { rows: forming } =
      ids === null
    ? await client.query<{ id: string; url: string; secret: string; min_interval_ms: number; pending_reset: boolean }>(
        `SELECT m.id, m.url, m.secret, m.min_interval_ms, m.pending_reset FROM (SELECT DISTINCT monitor_id FROM monitor_changes) c
         JOIN monitors m ON m.id = c.monitor_id JOIN api_keys k ON k.digest = m.key_digest
         WHERE ${ACTIVE} AND m.next_delivery_at <= $1
           AND NOT EXISTS (SELECT 1 FROM monitor_deliveries d WHERE d.monitor_id = m.id)
         FOR UPDATE OF m SKIP LOCKED`,
        [now],
      )
    : await client.query<{ id: string; url: string; secret: string; min_interval_ms: number; pending_reset: boolean }>(
        `SELECT m.id, m.url, m.secret, m.min_interval_ms, m.pending_reset FROM monitors m JOIN api_keys k ON k.digest = m.key_digest
         WHERE m.id = ANY($2::text[]) AND ${ACTIVE} AND m.next_delivery_at <= $1
           AND NOT EXISTS (SELECT 1 FROM monitor_deliveries d WHERE d.monitor_id = m.id)
           AND EXISTS (SELECT 1 FROM monitor_changes c WHERE c.monitor_id = m.id)
         FOR UPDATE OF m SKIP LOCKED`,
        [now, ids],
      );
    if (forming.length === 0) return;
    const { rows } = await client.query<{ monitor_id: string; seq: number; change: string; due_at: number }>(
      `SELECT monitor_id, seq, change, due_at FROM (
         SELECT c.monitor_id, c.seq, c.change, c.due_at, row_number() OVER (PARTITION BY c.monitor_id ORDER BY c.seq) AS n
         FROM monitor_changes c WHERE c.monitor_id = ANY($1::text[])) oldest
       WHERE n <= $2 ORDER BY monitor_id, seq`,
      [forming.map((monitor) => monitor.id), MAX_CHANGES_PER_DELIVERY],
    );
    const byMonitor = new Map<string, typeof rows>();
    for (const row of rows) {
      const list = byMonitor.get(row.monitor_id);
      if (list === undefined) byMonitor.set(row.monitor_id, [row]);
      else list.push(row);
    }
    const formed: { delivery: DueDelivery; changes: number; seqs: number[]; nextDeliveryAt: number }[] = [];
    for (const monitor of forming) {
      // Another instance formed it between the look-up and the lock.
      const oldest = byMonitor.get(monitor.id);
      if (oldest === undefined) continue;
      const changes = oldest.map((row) => JSON.parse(row.change) as PriceChange);
      const { messageId, body } = compose(monitor.id, changes, monitor.pending_reset, now);
      const firstDueAt = Math.min(...oldest.map((row) => Number(row.due_at)));
      const delivery = { messageId, monitorId: monitor.id, url: monitor.url, secret: monitor.secret, body, attempts: 0, firstDueAt };
      formed.push({ delivery, changes: changes.length, seqs: oldest.map((row) => row.seq), nextDeliveryAt: now + Number(monitor.min_interval_ms) });
    }
    const stored = await insertDeliveries(client, claiming, formed);
    const kept = formed.filter((f) => stored.has(f.delivery.monitorId));
    if (kept.length === 0) return;
    // By key: each row found through the primary key, whatever the statistics say.
    await client.query('DELETE FROM monitor_changes WHERE seq = ANY($1::bigint[])', [kept.flatMap((f) => f.seqs)]);
    await client.query('UPDATE monitors m SET pending_reset = false, next_delivery_at = t.next_delivery_at FROM unnest($1::text[], $2::bigint[]) AS t(id, next_delivery_at) WHERE m.id = t.id', [
      kept.map((f) => f.delivery.monitorId),
      kept.map((f) => f.nextDeliveryAt),
    ]);
  }

  recordAttempts(records: readonly AttemptRecord[], now: number, compose: ComposeDelivery, claim?: Claim): Promise<DueDelivery[]> {
    if (records.length === 0) return Promise.resolve([]);
    return unavailableOnOutage(WHAT, () =>
      inTransaction(this.#pool, async (client) => {
        const claiming = new Claiming(now, claim);
        // The advance's lock order, so the two never wait on each other in a cycle.
        await client.query('SELECT id FROM monitors WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE', [records.map((record) => record.delivery.monitorId)]);
        const of = (result: DeliveryOutcome['result']) => records.filter((record) => record.outcome.result === result);
        const delivered = of('delivered');
        if (delivered.length > 0) {
          await client.query('DELETE FROM monitor_deliveries WHERE id = ANY($1::text[])', [delivered.map((record) => record.delivery.messageId)]);
          await client.query('UPDATE monitors m SET last_success_at = t.at FROM unnest($1::text[], $2::bigint[]) AS t(id, at) WHERE m.id = t.id', [
            delivered.map((record) => record.delivery.monitorId),
            delivered.map((record) => record.outcome.at),
          ]);
        }
        for (const { delivery, outcome } of records) {
          switch (outcome.result) {
            case 'delivered':
              break;
            case 'failed':
              await client.query('UPDATE monitor_deliveries SET attempts = attempts + 1, next_attempt_at = $1, lease_until = 0, last_error = $2 WHERE id = $3', [
                outcome.retryAt,
                outcome.reason,
                delivery.messageId,
              ]);
              await client.query('UPDATE monitors SET last_failure_at = $1, last_failure_reason = $2 WHERE id = $3', [outcome.at, outcome.reason, delivery.monitorId]);
              break;
            case 'disabled':
              await client.query('UPDATE monitor_deliveries SET attempts = attempts + 1, lease_until = 0, last_error = $1 WHERE id = $2', [outcome.reason, delivery.messageId]);
              await client.query('UPDATE monitors SET enabled = false, disabled_reason = $1, last_failure_at = $2, last_failure_reason = $1 WHERE id = $3', [
                outcome.reason,
                outcome.at,
                delivery.monitorId,
              ]);
              break;
          }
        }
        await this.#form(client, delivered.map((record) => record.delivery.monitorId), now, compose, claiming);
        await claimDueIn(client, claiming);
        return claiming.claimed;
      }),
    );
  }

  deliveryTotals(): Promise<DeliveryTotals> {
    return unavailableOnOutage(WHAT, async () => {
      const { rows } = await this.#pool.query<{ backlog: number; oldest_due_at: number | null; disabled: number }>(
        `SELECT
           (SELECT count(*) FROM monitor_changes c JOIN monitors m ON m.id = c.monitor_id WHERE m.enabled)
             + (SELECT coalesce(sum(d.changes), 0) FROM monitor_deliveries d JOIN monitors m ON m.id = d.monitor_id WHERE m.enabled) AS backlog,
           least((SELECT min(c.due_at) FROM monitor_changes c JOIN monitors m ON m.id = c.monitor_id WHERE m.enabled),
                 (SELECT min(d.first_due_at) FROM monitor_deliveries d JOIN monitors m ON m.id = d.monitor_id WHERE m.enabled)) AS oldest_due_at,
           (SELECT count(*) FROM monitors WHERE NOT enabled) AS disabled`,
      );
      const row = rows[0]!;
      return { backlog: Number(row.backlog), oldestDueAt: row.oldest_due_at, disabledMonitors: Number(row.disabled) };
    });
  }
}

/**
 * Folds the baseline log into monitor_baselines once it holds FOLD_ROWS rows, unless another
 * instance is folding it; inside a transaction. The rows folded are exactly those deleted; a row
 * committed meanwhile stays for the next fold, and cannot be older than a folded row of its
 * monitor (a monitor's writers hold its row). A key's newest row wins.
 */
async function foldBaselines(client: pg.PoolClient): Promise<void> {
  const { rows } = await client.query<{ last: string | null; length: string | null }>('SELECT max(seq) AS last, max(seq) - min(seq) + 1 AS length FROM monitor_baseline_log');
  const [{ last, length } = { last: null, length: null }] = rows;
  if (last === null || Number(length) < FOLD_ROWS) return;
  const { rows: lock } = await client.query<{ held: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS held', [FOLD_LOCK]);
  if (lock[0]?.held !== true) return;
  await client.query(
    `WITH folded AS (DELETE FROM monitor_baseline_log WHERE seq <= $1 RETURNING seq, monitor_id, key, price)
     INSERT INTO monitor_baselines (monitor_id, key, price)
     SELECT DISTINCT ON (monitor_id, key) monitor_id, key, price FROM folded ORDER BY monitor_id, key, seq DESC
     ON CONFLICT (monitor_id, key) DO UPDATE SET price = excluded.price`,
    [last],
  );
}

/** Claims deliveries due at `claiming.now`, oldest due first, while it has room; inside a transaction. */
async function claimDueIn(client: pg.PoolClient, claiming: Claiming): Promise<void> {
  if (claiming.room === 0) return;
  const { rows } = await client.query<{ id: string; monitor_id: string; url: string; secret: string; body: string; attempts: number; first_due_at: number }>(
    // OFFSET 0 keeps the look-up of each claimed delivery's monitor a look-up (not a join of every monitor).
    `SELECT due.id, due.monitor_id, m.url, m.secret, due.body, due.attempts, due.first_due_at
     FROM (SELECT d.id, d.monitor_id, d.body, d.attempts, d.first_due_at FROM monitor_deliveries d
           WHERE d.next_attempt_at <= $1 AND d.lease_until <= $1 AND ${DELIVERY_ACTIVE}
           ORDER BY d.next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED) due
     CROSS JOIN LATERAL (SELECT m.url, m.secret FROM monitors m WHERE m.id = due.monitor_id OFFSET 0) m`,
    [claiming.now, claiming.room],
  );
  if (rows.length === 0) return;
  for (const row of rows) claiming.take({ messageId: row.id, monitorId: row.monitor_id, url: row.url, secret: row.secret, body: row.body, attempts: row.attempts, firstDueAt: row.first_due_at });
  // The next attempt moves to the lease's end too: the due index's walk meets only what is due.
  await client.query('UPDATE monitor_deliveries SET lease_until = $1, next_attempt_at = $1 WHERE id = ANY($2::text[])', [claiming.leaseEnd, rows.map((row) => row.id)]);
}

/**
 * Stores deliveries just formed, each claimed for the caller while `claiming` has room, else due at
 * once; one whose monitor already has one (another instance formed it meanwhile) is left out, and
 * not claimed. Returns the monitors whose delivery was stored.
 */
async function insertDeliveries(client: pg.PoolClient, claiming: Claiming, formed: readonly { delivery: DueDelivery; changes: number }[]): Promise<Set<string>> {
  if (formed.length === 0) return new Set();
  const leases = formed.map(({ delivery }) => claiming.take(delivery));
  const { rows } = await client.query<{ monitor_id: string }>(
    `INSERT INTO monitor_deliveries (id, monitor_id, body, changes, first_due_at, next_attempt_at, lease_until)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::bigint[], $6::bigint[], $7::bigint[])
     ON CONFLICT (monitor_id) DO NOTHING RETURNING monitor_id`,
    [
      formed.map((f) => f.delivery.messageId),
      formed.map((f) => f.delivery.monitorId),
      formed.map((f) => f.delivery.body),
      formed.map((f) => f.changes),
      formed.map((f) => f.delivery.firstDueAt),
      leases.map((lease) => lease ?? claiming.now),
      leases.map((lease) => lease ?? 0),
    ],
  );
  const stored = new Set(rows.map((row) => row.monitor_id));
  claiming.keep((delivery) => stored.has(delivery.monitorId));
  return stored;
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
    enabled: row.enabled && !row.key_revoked,
    disabledReason: row.key_revoked ? 'its key is revoked' : row.disabled_reason,
    createdAt: row.created_at,
  };
}

function viewOf(row: MonitorRow): MonitorView {
  return {
    ...monitorOf(row),
    delivery: { lastSuccessAt: row.last_success_at, lastFailureAt: row.last_failure_at, lastFailureReason: row.last_failure_reason, backlog: Number(row.backlog), oldestDueAt: row.oldest_due_at },
  };
}

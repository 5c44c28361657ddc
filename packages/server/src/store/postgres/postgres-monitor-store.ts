// PostgresMonitorStore: the MonitorStore port on PostgreSQL (tables of migration 10: `monitors`,
// `monitor_changes`, `monitor_deliveries`). Several instances share it: advance() writes only
// when the monitor's position is still the one read (an UPDATE … WHERE position IS NOT DISTINCT
// FROM, which waits for a concurrent one and then finds the position moved), and claimDue() forms
// and claims deliveries under FOR UPDATE SKIP LOCKED, so each delivery is made by one instance.
// Times are epoch milliseconds. Failure modes: database unreachable → ServiceUnavailable.
import type pg from 'pg';
import type { PriceChange } from '@catalog/contract';
import { digestKey, idPrefixOf, keyIdOf } from '../key-store.ts';
import { generateMonitorId, generateMonitorSecret, MAX_CHANGES_PER_DELIVERY, type Monitor, type MonitorSettings, type MonitorView } from '../../monitors/monitor.ts';
import {
  MonitorKeyRefused,
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
    return unavailableOnOutage(WHAT, async () => (await this.#pool.query('DELETE FROM monitors WHERE id = $1', [id])).rowCount === 1);
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
      const { rows } = await this.#pool.query<{ id: string; filter: string; min_change_percent: number; position: number | null; baselines: string }>(
        `SELECT m.id, m.filter, m.min_change_percent, m.position, m.baselines FROM monitors m JOIN api_keys k ON k.digest = m.key_digest WHERE ${ACTIVE} ORDER BY m.id`,
      );
      return rows.map((row) => ({ id: row.id, filter: row.filter, minChangePercent: row.min_change_percent, position: row.position, baselines: JSON.parse(row.baselines) as Record<string, number> }));
    });
  }

  advance(update: MonitorAdvance): Promise<boolean> {
    return unavailableOnOutage(WHAT, () =>
      inTransaction(this.#pool, async (client) => {
        const moved = await client.query('UPDATE monitors SET position = $1, baselines = $2, pending_reset = pending_reset OR $3 WHERE id = $4 AND position IS NOT DISTINCT FROM $5', [
          update.to,
          JSON.stringify(update.baselines),
          update.reset,
          update.id,
          update.from,
        ]);
        if (moved.rowCount !== 1) return false;
        if (update.changes.length > 0) {
          await client.query('INSERT INTO monitor_changes (monitor_id, change, due_at) SELECT $1, change, $3 FROM unnest($2::text[]) WITH ORDINALITY AS t(change, n) ORDER BY n', [
            update.id,
            update.changes.map((change) => JSON.stringify(change)),
            Date.now(),
          ]);
        }
        return true;
      }),
    );
  }

  claimDue(now: number, limit: number, leaseMs: number, compose: ComposeDelivery): Promise<DueDelivery[]> {
    return unavailableOnOutage(WHAT, async () => {
      // Most rounds find nothing due: one read instead of two transactions.
      const { rows: due } = await this.#pool.query<{ due: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM monitor_changes c JOIN monitors m ON m.id = c.monitor_id JOIN api_keys k ON k.digest = m.key_digest WHERE ${ACTIVE} AND m.next_delivery_at <= $1)
             OR EXISTS (SELECT 1 FROM monitor_deliveries d JOIN monitors m ON m.id = d.monitor_id JOIN api_keys k ON k.digest = m.key_digest WHERE ${ACTIVE} AND d.next_attempt_at <= $1 AND d.lease_until <= $1) AS due`,
        [now],
      );
      if (due[0]?.due !== true) return [];
      await inTransaction(this.#pool, async (client) => {
        const { rows: forming } = await client.query<{ id: string; min_interval_ms: number; pending_reset: boolean }>(
          `SELECT m.id, m.min_interval_ms, m.pending_reset FROM monitors m JOIN api_keys k ON k.digest = m.key_digest
           WHERE ${ACTIVE} AND m.next_delivery_at <= $1
             AND NOT EXISTS (SELECT 1 FROM monitor_deliveries d WHERE d.monitor_id = m.id)
             AND EXISTS (SELECT 1 FROM monitor_changes c WHERE c.monitor_id = m.id)
           FOR UPDATE OF m SKIP LOCKED`,
          [now],
        );
        for (const monitor of forming) {
          const { rows } = await client.query<{ seq: number; change: string; due_at: number }>('SELECT seq, change, due_at FROM monitor_changes WHERE monitor_id = $1 ORDER BY seq LIMIT $2', [
            monitor.id,
            MAX_CHANGES_PER_DELIVERY,
          ]);
          // Another instance formed it between the look-up and the lock.
          if (rows.length === 0) continue;
          const changes = rows.map((row) => JSON.parse(row.change) as PriceChange);
          const { messageId, body } = compose(monitor.id, changes, monitor.pending_reset, now);
          const inserted = await client.query(
            'INSERT INTO monitor_deliveries (id, monitor_id, body, changes, first_due_at, next_attempt_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (monitor_id) DO NOTHING',
            [messageId, monitor.id, body, changes.length, Math.min(...rows.map((row) => row.due_at)), now],
          );
          if (inserted.rowCount !== 1) continue;
          await client.query('DELETE FROM monitor_changes WHERE monitor_id = $1 AND seq <= $2', [monitor.id, rows.at(-1)!.seq]);
          await client.query('UPDATE monitors SET pending_reset = false, next_delivery_at = $1 WHERE id = $2', [now + monitor.min_interval_ms, monitor.id]);
        }
      });
      return inTransaction(this.#pool, async (client) => {
        const { rows } = await client.query<{ id: string; monitor_id: string; url: string; secret: string; body: string; attempts: number; first_due_at: number }>(
          `SELECT d.id, d.monitor_id, m.url, m.secret, d.body, d.attempts, d.first_due_at FROM monitor_deliveries d
           JOIN monitors m ON m.id = d.monitor_id JOIN api_keys k ON k.digest = m.key_digest
           WHERE ${ACTIVE} AND d.next_attempt_at <= $1 AND d.lease_until <= $1
           ORDER BY d.next_attempt_at LIMIT $2
           FOR UPDATE OF d SKIP LOCKED`,
          [now, limit],
        );
        if (rows.length > 0) await client.query('UPDATE monitor_deliveries SET lease_until = $1 WHERE id = ANY($2::text[])', [now + leaseMs, rows.map((row) => row.id)]);
        return rows.map((row) => ({ messageId: row.id, monitorId: row.monitor_id, url: row.url, secret: row.secret, body: row.body, attempts: row.attempts, firstDueAt: row.first_due_at }));
      });
    });
  }

  recordAttempt(delivery: DueDelivery, outcome: DeliveryOutcome): Promise<void> {
    return unavailableOnOutage(WHAT, () =>
      inTransaction(this.#pool, async (client) => {
        switch (outcome.result) {
          case 'delivered':
            await client.query('DELETE FROM monitor_deliveries WHERE id = $1', [delivery.messageId]);
            await client.query('UPDATE monitors SET last_success_at = $1 WHERE id = $2', [outcome.at, delivery.monitorId]);
            return;
          case 'failed':
            await client.query('UPDATE monitor_deliveries SET attempts = attempts + 1, next_attempt_at = $1, lease_until = 0, last_error = $2 WHERE id = $3', [
              outcome.retryAt,
              outcome.reason,
              delivery.messageId,
            ]);
            await client.query('UPDATE monitors SET last_failure_at = $1, last_failure_reason = $2 WHERE id = $3', [outcome.at, outcome.reason, delivery.monitorId]);
            return;
          case 'disabled':
            await client.query('UPDATE monitor_deliveries SET attempts = attempts + 1, lease_until = 0, last_error = $1 WHERE id = $2', [outcome.reason, delivery.messageId]);
            await client.query('UPDATE monitors SET enabled = false, disabled_reason = $1, last_failure_at = $2, last_failure_reason = $1 WHERE id = $3', [
              outcome.reason,
              outcome.at,
              delivery.monitorId,
            ]);
            return;
        }
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

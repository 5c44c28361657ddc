import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildPriceChange } from '@catalog/contract/testing';
import { priceChangedBody } from '../../src/monitors/monitor.ts';
import type { ComposeDelivery } from '../../src/monitors/monitor-store.ts';
import { SqliteDatabase } from '../../src/store/sqlite/sqlite-database.ts';
import { SqliteKeyStore } from '../../src/store/sqlite/sqlite-key-store.ts';
import { SqliteMonitorStore } from '../../src/store/sqlite/sqlite-monitor-store.ts';
import { FakeKeyStore } from '../support/fake-catalog-store.ts';
import { expectMatchesSpec } from '../support/spec-validator.ts';
import { startApp, type RunningApp } from './harness.ts';


const compose: ComposeDelivery = (id, changes, reset, now) => ({ messageId: `msg_${randomBytes(4).toString('hex')}`, body: priceChangedBody(id, changes, reset, now) });
describe('listMonitors', () => {
  let dir: string;
  let database: SqliteDatabase;
  let monitors: SqliteMonitorStore;
  let app: RunningApp;
  let mine: string;
  let theirs: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'list-monitors-'));
    database = new SqliteDatabase(join(dir, 'catalog.db'));
    monitors = new SqliteMonitorStore(database);
    const keys = new SqliteKeyStore(database);
    [mine, theirs] = [await keys.createKey('pro'), await keys.createKey('pro')];
    app = await startApp({ monitors, keys: new FakeKeyStore({ [mine]: 'pro', [theirs]: 'pro' }) });
  });
  afterEach(async () => {
    await app.close();
    database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("returns the key's own monitors with their delivery state, never a secret", async () => {
    const { monitor, secret } = await monitors.addMonitor(mine, { url: 'https://hooks.example.com/a', filter: 'market = "US"', minChangePercent: 2.5, minIntervalMs: 60_000 });
    await monitors.addMonitor(theirs, { url: 'https://hooks.example.com/b', filter: 'market = "UK"', minChangePercent: 5, minIntervalMs: 0 });
    await monitors.advance([{ id: monitor.id, from: null, to: 1, baselines: {}, changes: [buildPriceChange(), buildPriceChange()], reset: false }], Date.now(), compose);
    const [delivery] = await monitors.claimDue(Date.now(), 1, 30_000, compose);
    await monitors.recordAttempts([{ delivery: delivery!, outcome: { result: 'failed', at: Date.parse('2026-12-07T10:00:00Z'), reason: 'HTTP 500', retryAt: Date.now() + 60_000 } }], Date.parse('2026-12-07T10:00:00Z'), compose);

    const response = await app.get('/v2/monitors', { key: mine });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toContain(secret);
    const body = JSON.parse(text) as { data: unknown[] };
    expectMatchesSpec('listMonitors', 200, body);
    expect(body.data).toEqual([
      {
        id: monitor.id,
        url: 'https://hooks.example.com/a',
        filter: 'market = "US"',
        min_change_percent: 2.5,
        min_interval_seconds: 60,
        enabled: true,
        disabled_reason: null,
        created_at: new Date(monitor.createdAt).toISOString(),
        delivery: { last_success_at: null, last_failure_at: '2026-12-07T10:00:00.000Z', last_failure_reason: 'HTTP 500', backlog: 2, oldest_due_at: expect.any(String) },
      },
    ]);
  });

  it('returns an empty list to a key without monitors', async () => {
    const response = await app.get('/v2/monitors', { key: theirs });
    const body = (await response.json()) as { data: unknown[] };
    expectMatchesSpec('listMonitors', 200, body);
    expect(body.data).toEqual([]);
  });
});

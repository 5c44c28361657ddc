// A `catalog serve` killed with SIGKILL while monitor deliveries are in flight, and started again,
// on both engines (SQLite catalog with the SQLite price log; PostgreSQL with the Redis price log):
// every change is delivered at least once, a delivery sent again carries the webhook-id (and body)
// it had, and each monitor's changes arrive in log order. The receiver answers slowly, so a
// delivery it has received is still unanswered, and so unrecorded, when the server dies.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { PriceChangedWebhook } from '@catalog/contract';
import { buildPriceEvent } from '@catalog/contract/testing';
import { silentLogger } from '../../src/logger.ts';
import { openPriceLog } from '../../src/prices/open-price-log.ts';
import { openCatalogStores } from '../../src/store/open-store.ts';
import { MAIN } from '../cli/run-cli.ts';
import { createTestDatabase } from '../support/postgres-test-database.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const REDIS = 'redis://127.0.0.1:6379';
const PRODUCTS = ['p1', 'p2', 'p3'];
const BATCHES = 6;

interface Setup {
  db: string;
  priceLog: string;
  cleanup(): Promise<void>;
}

async function setUp(engine: 'sqlite' | 'postgres'): Promise<Setup> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'monitor-kill-'));
    const db = `sqlite:${join(dir, 'catalog.db')}`;
    return { db, priceLog: db, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const database = await createTestDatabase();
  const prefix = `test:monitor-kill:${randomBytes(6).toString('hex')}:`;
  return {
    db: database.url(),
    priceLog: `${REDIS}?prefix=${encodeURIComponent(prefix)}`,
    cleanup: async () => {
      await database.drop();
      const redis = new Redis(REDIS);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    },
  };
}

/** `catalog serve` on port 0; resolves once it listens. Monitor attempts time out after 1 s, so a dead instance's claims end 7 s later. */
function serve(setup: Setup): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [MAIN, 'serve', '--db', setup.db, '--price-log', setup.priceLog, '--port', '0', '--sse-port', '0', '--monitor-private-endpoints', 'allow', '--monitor-timeout-ms', '1000'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${output}`)), 30_000);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      if (!output.includes('"listening"')) return;
      clearTimeout(timer);
      resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}:\n${output}`)));
  });
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

async function until(done: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe.each(['sqlite', 'postgres'] as const)('a serve killed with SIGKILL during deliveries, on %s', (engine) => {
  const servers: ChildProcess[] = [];
  let receiver: WebhookReceiver | undefined;
  let setup: Setup | undefined;
  afterEach(async () => {
    await Promise.all(servers.splice(0).map(kill));
    await receiver?.close();
    await setup?.cleanup();
  });

  // Two starts of serve and a claim's lease: about 12 s alone, up to 30 s on a loaded two-core machine.
  it('delivers every change at least once after the restart, a repeat with its webhook-id, each monitor in log order', { timeout: 60_000 }, async () => {
    setup = await setUp(engine);
    receiver = await startWebhookReceiver([{ status: 204 }], { delayMs: 300 });
    const stores = await openCatalogStores(setup.db, silentLogger);
    const monitorOf = new Map<string, string>();
    try {
      const key = await stores.keys.createKey('pro');
      for (const product of PRODUCTS) {
        // Position 0: the log is empty, so every event published from here on is the monitor's.
        const { monitor } = await stores.monitors.addMonitor(key, { url: receiver.url, filter: `product_id = "${product}"`, minChangePercent: 0, minIntervalMs: 0 }, 0);
        monitorOf.set(monitor.id, product);
      }
    } finally {
      await stores.close();
    }
    servers.push(await serve(setup));

    const log = await openPriceLog(setup.priceLog, silentLogger);
    const published = new Map<string, number[]>(PRODUCTS.map((product) => [product, []]));
    try {
      for (let batch = 0; batch < BATCHES; batch++) {
        const events = PRODUCTS.flatMap((product) => [0, 1].map((n) => buildPriceEvent({ product_id: product, variant_id: `v${n}`, market: 'US', price: 100 + batch * 10 + n })));
        for (const stored of await log.append(events)) {
          const product = (JSON.parse(stored.data) as { product_id: string }).product_id;
          published.get(product)!.push(stored.id);
        }
        if (batch === 1) {
          // Killed as a delivery arrives: it is unanswered, so the restarted instance sends it again.
          const seen = receiver.received.length;
          await until(() => receiver!.received.length > seen, 10_000, () => `no delivery arrived (${seen} so far)`);
          await kill(servers.pop()!);
          servers.push(await serve(setup));
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await log.close();
    }

    const deliveredOf = (): Map<string, Set<number>> => {
      const delivered = new Map<string, Set<number>>();
      for (const delivery of receiver!.received) {
        const { data } = JSON.parse(delivery.body) as PriceChangedWebhook;
        const ids = delivered.get(monitorOf.get(data.monitor_id)!) ?? new Set<number>();
        for (const change of data.changes) ids.add(change.stream_id);
        delivered.set(monitorOf.get(data.monitor_id)!, ids);
      }
      return delivered;
    };
    await until(
      () => PRODUCTS.every((product) => published.get(product)!.every((id) => deliveredOf().get(product)?.has(id) === true)),
      20_000,
      () => JSON.stringify({ published: [...published], delivered: [...deliveredOf()].map(([product, ids]) => [product, [...ids]]) }),
    );

    const bodyById = new Map<string, string>();
    const idsByChange = new Map<string, Set<string>>();
    const firstSeen = new Map<string, number[]>();
    let repeats = 0;
    for (const delivery of receiver.received) {
      const webhookId = String(delivery.headers['webhook-id']);
      const { data } = JSON.parse(delivery.body) as PriceChangedWebhook;
      const known = bodyById.get(webhookId);
      if (known !== undefined) {
        repeats += 1;
        expect(delivery.body).toBe(known);
        continue;
      }
      bodyById.set(webhookId, delivery.body);
      for (const change of data.changes) {
        const key = `${data.monitor_id}|${change.stream_id}`;
        idsByChange.set(key, (idsByChange.get(key) ?? new Set()).add(webhookId));
        firstSeen.set(data.monitor_id, [...(firstSeen.get(data.monitor_id) ?? []), change.stream_id]);
      }
    }
    // The delivery in flight at the kill came again, with its webhook-id; no change went out under two ids.
    expect(repeats).toBeGreaterThan(0);
    expect([...idsByChange.values()].every((ids) => ids.size === 1)).toBe(true);
    for (const [monitorId, ids] of firstSeen) expect(ids).toEqual(published.get(monitorOf.get(monitorId)!));
  });
});

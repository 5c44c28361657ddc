// The monitors' reader and sender end to end on both engines, linked as monitor-thread.ts links them (in one thread here) (SQLite catalog with the SQLite price log;
// PostgreSQL with the Redis price log), against a real node:http receiver on port 0: what is
// delivered, signed and in order; retries with the same webhook-id; 410 and a spent schedule
// disable the monitor; a restart resumes. Signatures are checked with `standardwebhooks`, bodies
// against the contract's `priceChanged` schema.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PriceChange, PriceChangedWebhook } from '@catalog/contract';
import { buildPriceEvent } from '@catalog/contract/testing';
import { silentLogger } from '../../src/logger.ts';
import { DeliveryLink, takingTurns } from '../../src/monitors/delivery-loop.ts';
import { MonitorReader } from '../../src/monitors/monitor-reader.ts';
import { MonitorSender, type MonitorSenderOptions } from '../../src/monitors/monitor-sender.ts';
import type { MonitorSettings } from '../../src/monitors/monitor.ts';
import type { MonitorStore } from '../../src/monitors/monitor-store.ts';
import { WebhookSender } from '../../src/monitors/webhook-sender.ts';
import type { PriceLog } from '../../src/prices/price-log.ts';
import { openRedisPriceLog } from '../../src/prices/redis/redis-price-log.ts';
import { SqlitePriceLog } from '../../src/prices/sqlite/sqlite-price-log.ts';
import type { KeyAdministration } from '../../src/store/key-store.ts';
import { openCatalogStores } from '../../src/store/open-store.ts';
import { createTestDatabase } from '../support/postgres-test-database.ts';
import { expectMatchesWebhook } from '../support/spec-validator.ts';
import { startWebhookReceiver, type ReceivedDelivery, type ReceiverAnswer, type WebhookReceiver } from '../support/webhook-receiver.ts';

interface Delivery {
  stop(): Promise<void>;
}

/** A reader and a sender on one link, as each instance runs them (in two threads there). */
function startReaderAndSender(options: { store: MonitorStore; oneWriter: boolean; log: PriceLog; sender: MonitorSenderOptions['sender']; retryScheduleMs: number[] }): Delivery {
  const link = new DeliveryLink();
  const common = { store: options.oneWriter ? takingTurns(options.store, link) : options.store, link, logger: silentLogger, pollMs: 20 };
  const reader = new MonitorReader({ ...common, log: options.log });
  const sender = new MonitorSender({ ...common, sender: options.sender, retryScheduleMs: options.retryScheduleMs, timeoutMs: 2_000 });
  sender.start();
  reader.start();
  return {
    stop: async () => {
      await reader.stop();
      await sender.stop();
    },
  };
}

interface Engine {
  monitors: MonitorStore;
  /** Another connection (SQLite) or pool (PostgreSQL) to the same store, as a second instance has. */
  openInstanceStore(): Promise<{ monitors: MonitorStore; close(): Promise<void> }>;
  keys: KeyAdministration;
  log: PriceLog;
  /** Empties the price log as a Redis restart without persistence does (Redis only). */
  loseLogData?(): Promise<void>;
  cleanup(): Promise<void>;
}

const REDIS_URL = 'redis://127.0.0.1:6379';

async function openEngine(engine: 'sqlite' | 'postgres'): Promise<Engine> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'monitor-delivery-'));
    const stores = await openCatalogStores(`sqlite:${join(dir, 'catalog.db')}`, silentLogger);
    const log = new SqlitePriceLog(join(dir, 'catalog.db'), { pollIntervalMs: 5 });
    return {
      monitors: stores.monitors,
      openInstanceStore: () => openCatalogStores(`sqlite:${join(dir, 'catalog.db')}`, silentLogger),
      keys: stores.keys,
      log,
      cleanup: async () => {
        await log.close();
        await stores.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const database = await createTestDatabase();
  const stores = await openCatalogStores(database.url(), silentLogger);
  const prefix = `test:monitors:${randomBytes(6).toString('hex')}:`;
  const log = await openRedisPriceLog(REDIS_URL, silentLogger, { keyPrefix: prefix });
  const deleteKeys = async (): Promise<void> => {
    const admin = new Redis(REDIS_URL);
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    admin.disconnect();
  };
  return {
    monitors: stores.monitors,
    openInstanceStore: () => openCatalogStores(database.url(), silentLogger),
    keys: stores.keys,
    log,
    loseLogData: deleteKeys,
    cleanup: async () => {
      await log.close();
      await stores.close();
      await database.drop();
      await deleteKeys();
    },
  };
}

const changesOf = (deliveries: readonly ReceivedDelivery[]): PriceChange[] => deliveries.flatMap((delivery) => (JSON.parse(delivery.body) as PriceChangedWebhook).data.changes);

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each(['sqlite', 'postgres'] as const)('monitor delivery on %s', (engineName) => {
  let engine: Engine;
  let proKey: string;
  const running: Delivery[] = [];
  const receivers: WebhookReceiver[] = [];

  beforeEach(async () => {
    engine = await openEngine(engineName);
    proKey = await engine.keys.createKey('pro');
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((delivery) => delivery.stop()));
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
    await engine.cleanup();
  });

  function startDelivery(retryScheduleMs: number[] = [0, 50, 50], store: MonitorStore = engine.monitors): Delivery {
    const delivery = startReaderAndSender({ store, oneWriter: engineName === 'sqlite', log: engine.log, sender: new WebhookSender({ timeoutMs: 2_000, endpointConcurrency: 2, allowPrivateEndpoints: true }), retryScheduleMs });
    running.push(delivery);
    return delivery;
  }

  async function receiver(answers?: ReceiverAnswer[]): Promise<WebhookReceiver> {
    const started = await startWebhookReceiver(answers);
    receivers.push(started);
    return started;
  }

  /** A monitor the running delivery has begun to read for (from the log's newest event). */
  async function monitor(url: string, overrides: Partial<MonitorSettings> = {}): Promise<{ id: string; secret: string }> {
    const { monitor: added, secret } = await engine.monitors.addMonitor(proKey, { url, filter: 'product_id = "p1" AND market = "US"', minChangePercent: 5, minIntervalMs: 0, ...overrides });
    await until(() => engine.monitors.readerStates(), (states) => states.some((state) => state.id === added.id && state.position !== null));
    return { id: added.id, secret };
  }

  const price = (overrides: Parameters<typeof buildPriceEvent>[0]) => buildPriceEvent({ product_id: 'p1', variant_id: 'v1', market: 'US', ...overrides });

  function expectSigned(delivery: ReceivedDelivery, secret: string): void {
    const headers = { 'webhook-id': String(delivery.headers['webhook-id']), 'webhook-timestamp': String(delivery.headers['webhook-timestamp']), 'webhook-signature': String(delivery.headers['webhook-signature']) };
    expect(() => new Webhook(secret).verify(delivery.body, headers)).not.toThrow();
    expect(() => new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(delivery.body, headers)).toThrow();
    expect(headers['webhook-id']).toMatch(/^msg_/);
    expectMatchesWebhook('priceChanged', JSON.parse(delivery.body));
  }

  it('delivers, signed and in log order, the changes its filter and threshold select, and resumes after a restart', async () => {
    const endpoint = await receiver();
    const first = startDelivery();
    const { id, secret } = await monitor(endpoint.url);
    const [a, , , , e] = await engine.log.append([
      price({ price: 100 }),
      price({ product_id: 'p2', price: 50 }),
      price({ price: 102 }),
      price({ market: 'UK', price: 100 }),
      price({ price: 110 }),
    ]);
    const delivered = await until(async () => changesOf(endpoint.received), (changes) => changes.length >= 2);
    for (const delivery of endpoint.received) expectSigned(delivery, secret);
    expect(delivered.map(({ stream_id, price: at, previous_price, change_percent }) => ({ stream_id, price: at, previous_price, change_percent }))).toEqual([
      { stream_id: a!.id, price: 100, previous_price: null, change_percent: null },
      { stream_id: e!.id, price: 110, previous_price: 100, change_percent: 10 },
    ]);
    expect((JSON.parse(endpoint.received[0]!.body) as PriceChangedWebhook).data).toMatchObject({ monitor_id: id, reset: false });

    await first.stop();
    const [g] = await engine.log.append([price({ price: 99 })]);
    startDelivery();
    const after = await until(async () => changesOf(endpoint.received), (changes) => changes.length >= 3);
    expect(after[2]).toMatchObject({ stream_id: g!.id, previous_price: 110, price: 99, change_percent: -10 });
    const [view] = await until(() => engine.monitors.listMonitors(proKey), ([listed]) => listed?.delivery.backlog === 0);
    expect(view!.delivery.lastSuccessAt).not.toBeNull();
  });

  it('retries a failing endpoint with the same webhook-id and body until it answers 2xx, honouring Retry-After', async () => {
    const endpoint = await receiver([{ status: 500 }, { status: 503, headers: { 'retry-after': '0' } }, { status: 200 }]);
    startDelivery([0, 50, 5_000]);
    const { secret } = await monitor(endpoint.url, { minChangePercent: 0 });
    await engine.log.append([price({ price: 100 })]);
    const attempts = await endpoint.waitFor(3);
    expect(new Set(attempts.map((attempt) => attempt.headers['webhook-id'])).size).toBe(1);
    expect(new Set(attempts.map((attempt) => attempt.body)).size).toBe(1);
    for (const attempt of attempts) expectSigned(attempt, secret);
    const [view] = await until(() => engine.monitors.listMonitors(proKey), ([listed]) => listed?.delivery.lastSuccessAt !== null);
    expect(view!.delivery).toMatchObject({ lastFailureReason: 'HTTP 503', backlog: 0 });
  });

  it('with two instances, each with its own connection to the shared outbox, delivers each batch once and each change once, in order', async () => {
    const endpoint = await receiver();
    const second = await engine.openInstanceStore();
    try {
      startDelivery();
      startDelivery(undefined, second.monitors);
      const { secret } = await monitor(endpoint.url, { minChangePercent: 0 });
      const published: number[] = [];
      // In several batches, so that the instances race to read and to claim more than once.
      for (let batch = 0; batch < 5; batch++) {
        const appended = await engine.log.append(Array.from({ length: 10 }, (_, n) => price({ variant_id: `v${batch}-${n}`, price: 100 + n })));
        published.push(...appended.map((event) => event.id));
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
      await until(async () => changesOf(endpoint.received), (changes) => changes.length >= published.length);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(changesOf(endpoint.received).map((change) => change.stream_id)).toEqual(published);
      const webhookIds = endpoint.received.map((delivery) => delivery.headers['webhook-id']);
      expect(new Set(webhookIds).size).toBe(webhookIds.length);
      for (const delivery of endpoint.received) expectSigned(delivery, secret);
    } finally {
      await Promise.all(running.splice(0).map((delivery) => delivery.stop()));
      await second.close();
    }
  });

  it('reads first: with more than a page of events behind it, starts no attempt until the reader has caught up, and loses none', async () => {
    const endpoint = await receiver();
    const newest = (await engine.log.bounds())?.newestId ?? 0;
    const { monitor: added } = await engine.monitors.addMonitor(proKey, { url: endpoint.url, filter: 'product_id = "p1" AND market = "US"', minChangePercent: 0, minIntervalMs: 0 }, newest);
    // More than the reader's page (2,000 events), every one a change.
    const published = (await engine.log.append(Array.from({ length: 2_500 }, (_, n) => price({ variant_id: `v${n % 50}`, price: 100 + n })))).map((event) => event.id);
    const sender = new WebhookSender({ timeoutMs: 2_000, endpointConcurrency: 2, allowPrivateEndpoints: true });
    const positionsAtSends: (number | null)[] = [];
    const delivery = startReaderAndSender({
      store: engine.monitors,
      oneWriter: engineName === 'sqlite',
      log: engine.log,
      sender: {
        async send(attempt) {
          positionsAtSends.push((await engine.monitors.readerStates()).find((state) => state.id === added.id)?.position ?? null);
          return sender.send(attempt);
        },
      },
      retryScheduleMs: [0],
    });
    running.push(delivery);
    await until(async () => changesOf(endpoint.received), (changes) => changes.length >= published.length, 20_000);
    expect(changesOf(endpoint.received).map((change) => change.stream_id)).toEqual(published);
    // The first page was stored before any attempt, and the first attempt waited for the second.
    expect(positionsAtSends[0]).toBe(published.at(-1));
    expect(endpoint.received.some((received) => (JSON.parse(received.body) as PriceChangedWebhook).data.reset)).toBe(false);
  });

  it.runIf(engineName === 'postgres')('after the price log lost its data, resumes at the oldest event left and says reset', async () => {
    const endpoint = await receiver();
    startDelivery();
    await monitor(endpoint.url);
    await engine.log.append([price({ price: 100 })]);
    await endpoint.waitFor(1);
    await engine.loseLogData!();
    const [after] = await engine.log.append([price({ price: 120 })]);
    await endpoint.waitFor(2);
    const second = JSON.parse(endpoint.received[1]!.body) as PriceChangedWebhook;
    expect(second.data.reset).toBe(true);
    expect(second.data.changes).toEqual([expect.objectContaining({ stream_id: after!.id, previous_price: 100, price: 120, change_percent: 20 })]);
  });

  it('disables a monitor whose endpoint answers 410, and one whose retry schedule is spent, saying why', async () => {
    const gone = await receiver([{ status: 410 }]);
    const failing = await receiver([{ status: 500 }]);
    startDelivery([0, 20]);
    const goneMonitor = await monitor(gone.url);
    const failingMonitor = await monitor(failing.url);
    await engine.log.append([price({ price: 100 }), price({ price: 200 })]);
    const views = await until(() => engine.monitors.listMonitors(proKey), (listed) => listed.every((view) => !view.enabled));
    expect(views.find((view) => view.id === goneMonitor.id)).toMatchObject({ disabledReason: 'the endpoint answered 410 Gone' });
    expect(views.find((view) => view.id === failingMonitor.id)!.disabledReason).toMatch(/^every attempt failed for .* \(3 attempts\), the last: HTTP 500$/);
    expect(gone.received).toHaveLength(1);
    expect(failing.received).toHaveLength(3);
    expect(await engine.monitors.deliveryTotals()).toMatchObject({ disabledMonitors: 2 });
  });
});

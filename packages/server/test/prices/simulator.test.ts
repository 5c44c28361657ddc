import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { formatNanoseconds, MARKETS, PriceSimulator, runSimulator, seededRandom, syntheticVariants } from '../../src/prices/simulator.ts';
import { SqlitePriceLog } from '../../src/prices/sqlite/sqlite-price-log.ts';
import { createPriceEventValidator } from '../../src/cli/prices.ts';

describe('PriceSimulator', () => {
  const validate = createPriceEventValidator();

  it('produces events that satisfy the PriceEvent schema, with the market currency', () => {
    const simulator = new PriceSimulator(syntheticVariants(20), { random: seededRandom(7) });
    for (let i = 0; i < 500; i += 1) {
      const event = simulator.next();
      expect(validate(JSON.stringify(event))).toBeNull();
      const market = MARKETS.find((m) => m.code.toUpperCase() === event.market);
      expect(event.currency).toBe(market?.currency);
    }
  });

  it('moves each price by plausible steps', () => {
    const variant = { id: 'v', product_id: 'p', sku: 'DD1391-100', size: '10', price: 150, currency: 'USD' };
    const simulator = new PriceSimulator([variant], { random: seededRandom(3) });
    const last = new Map<string, number>();
    for (let i = 0; i < 2000; i += 1) {
      const event = simulator.next();
      const key = `${event.source}:${event.market}`;
      const previous = last.get(key);
      if (previous !== undefined && event.market !== 'JP') {
        expect(Math.abs(event.price / previous - 1)).toBeLessThanOrEqual(0.16);
      }
      if (event.market === 'US') expect(event.price).toBeGreaterThan(20);
      last.set(key, event.price);
    }
  });

  it('formats nanosecond timestamps', () => {
    expect(formatNanoseconds(1_795_442_587_123_456_789n)).toBe('2026-11-23T14:03:07.123456789Z');
    expect(formatNanoseconds(1_795_442_587_000_000_001n)).toBe('2026-11-23T14:03:07.000000001Z');
  });
});

describe('runSimulator', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('appends about `rate` events per second until aborted', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'simulator-'));
    const log = new SqlitePriceLog(path.join(dir, 'catalog.db'), { newLogCounter: 0 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    const total = await runSimulator({ rate: 200, variants: syntheticVariants(10), priceLog: log, signal: controller.signal });
    expect(total).toBeGreaterThan(50);
    expect(total).toBeLessThan(150);
    expect((await log.bounds())?.newestId).toBe(total);
    await log.close();
  });
});

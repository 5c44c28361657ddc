import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger, type Logger } from '../../src/logger.ts';
import { registry } from '../../src/metrics.ts';
import { READINESS } from '../../src/stream/readiness.ts';
import { SqlitePriceLog } from '../../src/prices/sqlite/sqlite-price-log.ts';
import { BatchEncoder } from '../../src/stream/batch-encoder.ts';
import { encodeSubscription } from '../../src/stream/encoded-subscription.ts';
import { encodeEvent } from '@catalog/contract/stream';
import { PriceHub } from '../../src/stream/hub.ts';
import { SubscriberOverflow } from '../../src/stream/subscription.ts';
import { buildPriceEventOnTopic } from '@catalog/contract/testing';
import { logWhoseFollowFails } from '../prices/failing-log.ts';

const US = 'price:marketplacea:us';
const OPTIONS = { opening: 'retry: 2000\n\n', unavailableRetryMs: 5000, log: silentLogger };

describe('encodeSubscription', () => {
  let dir: string;
  let log: SqlitePriceLog;
  let hub: PriceHub;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'encoded-'));
    log = new SqlitePriceLog(path.join(dir, 'catalog.db'));
    hub = new PriceHub(log, silentLogger);
  });
  afterEach(async () => {
    await hub.stop();
    await log.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('yields each batch as the bytes of its frames, and ends when the subscription ends', async () => {
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    const body = encodeSubscription(subscription, new BatchEncoder(), OPTIONS);
    const frames = body[Symbol.asyncIterator]();
    expect((await frames.next()).value).toBe('retry: 2000\n\n');
    const stored = await log.append([buildPriceEventOnTopic(US), buildPriceEventOnTopic(US)]);
    const first = await frames.next();
    expect(first.value?.toString()).toBe(stored.map((event) => encodeEvent({ id: event.id, event: event.topic, data: event.data })).join(''));
    subscription.end();
    expect(await frames.next()).toEqual({ done: true, value: undefined });
  });

  it('ends with a retry frame when the price log fails under it', async () => {
    const broken = new PriceHub(logWhoseFollowFails(), silentLogger);
    const subscription = await broken.subscribe({ topics: new Set([US]), lastEventId: null });
    const frames = encodeSubscription(subscription, new BatchEncoder(), OPTIONS)[Symbol.asyncIterator]();
    await frames.next();
    expect((await frames.next()).value).toBe('retry: 5000\n\n');
    expect((await frames.next()).done).toBe(true);
    await broken.stop();
  });

  it('warns once, naming the request, when the price log fails under it', async () => {
    const warnings: [string, Record<string, unknown> | undefined][] = [];
    const logger: Logger = { ...silentLogger, warn: (message, fields) => void warnings.push([message, fields]) };
    for (const requestId of ['req-1', undefined]) {
      const broken = new PriceHub(logWhoseFollowFails(), silentLogger);
      const subscription = await broken.subscribe({ topics: new Set([US]), lastEventId: null });
      const options = { ...OPTIONS, log: logger, ...(requestId === undefined ? {} : { requestId }) };
      const frames = encodeSubscription(subscription, new BatchEncoder(), options)[Symbol.asyncIterator]();
      await frames.next();
      await frames.next();
      await broken.stop();
    }
    expect(warnings.map(([message]) => message)).toEqual(['price log unavailable; stream ended with a retry hint', 'price log unavailable; stream ended with a retry hint']);
    expect(warnings[0]?.[1]).toMatchObject({ request_id: 'req-1', error: expect.any(Error) });
    expect(Object.keys(warnings[1]?.[1] ?? {})).toEqual(['error']);
  });

  it('has its opening frame readable at once, and its end', async () => {
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    const body = encodeSubscription(subscription, new BatchEncoder(), OPTIONS);
    expect(body[READINESS]!.whenReadable(() => {})).toBe(true);
    const frames = body[Symbol.asyncIterator]();
    await frames.next();
    await frames.return?.();
    expect(body[READINESS]!.whenReadable(() => {})).toBe(true);
  });

  it('counts the events it delivers in catalog_stream_events_delivered_total', async () => {
    const delivered = async (): Promise<number> => (await registry.getSingleMetric('catalog_stream_events_delivered_total')!.get()).values[0]?.value ?? 0;
    const before = await delivered();
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    const frames = encodeSubscription(subscription, new BatchEncoder(), OPTIONS)[Symbol.asyncIterator]();
    await frames.next();
    await log.append([buildPriceEventOnTopic(US), buildPriceEventOnTopic(US)]);
    await frames.next();
    expect((await delivered()) - before).toBe(2);
  });

  it('throws any other end to the writer', async () => {
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    const frames = encodeSubscription(subscription, new BatchEncoder(), OPTIONS)[Symbol.asyncIterator]();
    await frames.next();
    subscription.end(new SubscriberOverflow(10));
    await expect(frames.next()).rejects.toBeInstanceOf(SubscriberOverflow);
  });

  it('ends the subscription and closes once when returned, even if never iterated', async () => {
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    let closes = 0;
    const body = encodeSubscription(subscription, new BatchEncoder(), { ...OPTIONS, onClose: () => (closes += 1) });
    const frames = body[Symbol.asyncIterator]();
    await frames.return?.();
    expect(subscription.signal.aborted).toBe(true);
    expect(closes).toBe(1);
    await frames.return?.();
    expect(await frames.next()).toEqual({ done: true, value: undefined });
    expect(subscription.signal.aborted).toBe(true);
    expect(closes).toBe(1);
  });

  it('closes once when the subscription ends and the body has been read to its end', async () => {
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    let closes = 0;
    const frames = encodeSubscription(subscription, new BatchEncoder(), { ...OPTIONS, onClose: () => (closes += 1) })[Symbol.asyncIterator]();
    await frames.next();
    subscription.end();
    expect(await frames.next()).toEqual({ done: true, value: undefined });
    expect(closes).toBe(1);
  });
});

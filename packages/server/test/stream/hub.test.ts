import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceUnavailable } from '../../src/catalog/errors.ts';
import { silentLogger } from '../../src/logger.ts';
import { RETAINED_EVENTS, type PriceLog, type StoredPriceEvent } from '../../src/prices/price-log.ts';
import { SqlitePriceLog } from '../../src/prices/sqlite/sqlite-price-log.ts';
import { PriceHub } from '../../src/stream/hub.ts';
import { SubscriberOverflow, type StreamItem, type Subscription } from '../../src/stream/subscription.ts';
import { eventOnTopic } from '../prices/builders.ts';

const US = 'price:marketplacea:us';
const NL = 'price:marketplaceb:nl';

async function take(subscription: Subscription | AsyncIterator<StreamItem>, count: number): Promise<StreamItem[]> {
  const iterator = Symbol.asyncIterator in subscription ? subscription[Symbol.asyncIterator]() : subscription;
  const items: StreamItem[] = [];
  while (items.length < count) {
    const result = await iterator.next();
    if (result.done === true) break;
    items.push(result.value);
  }
  return items;
}

const ids = (items: StreamItem[]): number[] => items.flatMap((item) => (item.kind === 'event' ? [item.event.id] : []));

describe('PriceHub', () => {
  let dir: string;
  let log: SqlitePriceLog;
  let hub: PriceHub;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-'));
    log = new SqlitePriceLog(path.join(dir, 'catalog.db'));
    hub = new PriceHub(log, silentLogger, { replayPageSize: 3 });
  });
  afterEach(async () => {
    await hub.stop();
    await log.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const publish = (...topics: string[]): Promise<StoredPriceEvent[]> => log.append(topics.map(eventOnTopic));

  it('offers each event only to the subscriptions of its topic', async () => {
    const us = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    const both = await hub.subscribe({ topics: new Set([US, NL]), lastEventId: null });
    const stored = await publish(US, NL, US);
    expect(ids(await take(us, 2))).toEqual([stored[0]?.id, stored[2]?.id]);
    expect(ids(await take(both, 3))).toEqual(stored.map((event) => event.id));
  });

  it('starts a subscription without Last-Event-ID after the newest stored event', async () => {
    await publish(US, US);
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    const [next] = await publish(US);
    expect(ids(await take(subscription, 1))).toEqual([next?.id]);
  });

  it('replays across pages then continues live without gap or duplicate', async () => {
    const before = await publish(US, NL, US, US, NL, US, US);
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: before[0]?.id ?? 0 });
    const iterator = subscription[Symbol.asyncIterator]();
    const first = await take(iterator, 1);
    const during = await publish(US, NL, US);
    const rest = await take(iterator, 5);
    const expected = [...before.slice(1), ...during].filter((event) => event.topic === US).map((event) => event.id);
    expect(ids([...first, ...rest])).toEqual(expected);
  });

  it('sends a reset where the retained window moves past a replay still being read, then goes on', async () => {
    const before = await publish(US, US, US, US, US, US);
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: before[0]?.id ?? 0 });
    const iterator = subscription[Symbol.asyncIterator]();
    // The first page (three events) is read; the rest of the replay is pruned before it is read.
    const first = await take(iterator, 1);
    await log.append(Array.from({ length: RETAINED_EVENTS + 2 }, () => eventOnTopic(NL)));
    const [after] = await publish(US);
    const oldestRetained = (after?.id ?? 0) - RETAINED_EVENTS + 1;
    const rest = await take(iterator, 4);
    const lastOfPage = before[3]?.id ?? 0;
    expect([...first, ...rest]).toEqual([
      { kind: 'event', event: before[1] },
      { kind: 'event', event: before[2] },
      { kind: 'event', event: before[3] },
      { kind: 'reset', requestedId: lastOfPage, oldestId: oldestRetained },
      { kind: 'event', event: after },
    ]);
  });

  it('ends a subscription that is not taking events once its queue exceeds the limit, without slowing the others', async () => {
    const small = new PriceHub(log, silentLogger, { maxQueuedBytes: 2000 });
    try {
      const stalled = await small.subscribe({ topics: new Set([US]), lastEventId: null });
      const reading = await small.subscribe({ topics: new Set([US]), lastEventId: null });
      const stored = await publish(...Array.from({ length: 20 }, () => US));
      expect(ids(await take(reading, 20))).toEqual(stored.map((event) => event.id));
      await expect(take(stalled, 20)).rejects.toBeInstanceOf(SubscriberOverflow);
      expect(small.subscriberCount).toBe(1);
    } finally {
      await small.stop();
    }
  });

  it('ends every subscription cleanly on stop', async () => {
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    const iterating = take(subscription, 1);
    await hub.stop();
    expect(await iterating).toEqual([]);
    await expect(hub.subscribe({ topics: new Set([US]), lastEventId: null })).rejects.toBeInstanceOf(ServiceUnavailable);
  });

  it('ends a subscription when its signal aborts', async () => {
    const controller = new AbortController();
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: null, signal: controller.signal });
    const iterating = take(subscription, 1);
    controller.abort();
    expect(await iterating).toEqual([]);
    expect(hub.subscriberCount).toBe(0);
  });

  it('refuses to subscribe with ServiceUnavailable when the log cannot answer', async () => {
    await log.close();
    await expect(hub.subscribe({ topics: new Set([US]), lastEventId: 0 })).rejects.toBeInstanceOf(ServiceUnavailable);
  });

  it('ends subscriptions with ServiceUnavailable when following the log fails', async () => {
    const failing: PriceLog = {
      append: async () => [],
      readAfter: async () => [],
      bounds: async () => null,
      follow: async function* () {
        await new Promise((resolve) => setTimeout(resolve, 10));
        yield* [];
        throw new Error('disk gone');
      },
      ping: async () => {},
      close: async () => {},
    };
    const broken = new PriceHub(failing, silentLogger);
    const subscription = await broken.subscribe({ topics: new Set([US]), lastEventId: null });
    await expect(take(subscription, 1)).rejects.toBeInstanceOf(ServiceUnavailable);
    await broken.stop();
  });
});

describe('Subscription.handOverTo', () => {
  let dir: string;
  let log: SqlitePriceLog;
  let hub: PriceHub;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-live-'));
    log = new SqlitePriceLog(path.join(dir, 'catalog.db'));
    hub = new PriceHub(log, silentLogger, { replayPageSize: 2 });
  });
  afterEach(async () => {
    await hub.stop();
    await log.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('yields the replay through the iterator, then hands live events to the sink, with no gap and no duplicate', async () => {
    const before = await log.append([eventOnTopic(US), eventOnTopic(US), eventOnTopic(NL), eventOnTopic(US)]);
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: 0 });
    const sunk: number[] = [];
    subscription.handOverTo((item) => {
      if (item.kind === 'event') sunk.push(item.event.id);
    });
    const iterator = subscription[Symbol.asyncIterator]();
    const taken = await take(iterator, 1);
    const during = await log.append([eventOnTopic(US), eventOnTopic(NL)]);
    taken.push(...(await take(iterator, 100)));
    const after = await log.append([eventOnTopic(US), eventOnTopic(US)]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const expected = [...before, ...during, ...after].filter((event) => event.topic === US).map((event) => event.id);
    expect([...ids(taken), ...sunk]).toEqual(expected);
    expect(sunk).toEqual(after.map((event) => event.id));
  });

  it('ends the subscription, not the hub, when a sink throws', async () => {
    const failing = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    const healthy = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    failing.handOverTo(() => {
      throw new Error('socket gone');
    });
    expect(await take(failing, 1)).toEqual([]);
    const [event] = await log.append([eventOnTopic(US)]);
    expect(ids(await take(healthy, 1))).toEqual([event?.id]);
    await failing.whenEnded;
    expect(failing.error?.message).toBe('socket gone');
  });
});

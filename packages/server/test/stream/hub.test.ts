import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceUnavailable } from '../../src/catalog/errors.ts';
import { silentLogger, type Logger } from '../../src/logger.ts';
import { RETAINED_EVENTS, type PriceLog, type StoredPriceEvent } from '../../src/prices/price-log.ts';
import { SqlitePriceLog } from '../../src/prices/sqlite/sqlite-price-log.ts';
import { PriceHub } from '../../src/stream/hub.ts';
import { SubscriberOverflow, type StreamItem, type Subscription } from '../../src/stream/subscription.ts';
import { buildPriceEvent, buildPriceEventOnTopic } from '@catalog/contract/testing';
import { parseEventFilter } from '../../src/stream/event-filter.ts';
import { logWhoseFollowFails } from '../prices/failing-log.ts';
import { registry } from '../../src/metrics.ts';
import { itemsOf } from './stream-items.ts';
import { storedJson } from '../../src/catalog/raw-json.ts';

const US = 'price:marketplacea:us';
const NL = 'price:marketplaceb:nl';

/** Up to `count` items, taken one batch at a time from a subscription or its items (itemsOf). */
async function take(subscription: Subscription | AsyncIterator<StreamItem>, count: number): Promise<StreamItem[]> {
  const iterator = Symbol.asyncIterator in subscription ? itemsOf(subscription) : subscription;
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

  const publish = (...topics: string[]): Promise<StoredPriceEvent[]> => log.append(topics.map(buildPriceEventOnTopic));

  it('offers each event only to the subscriptions of its topic', async () => {
    const us = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    const both = await hub.subscribe({ topics: new Set([US, NL]), lastEventId: null });
    const stored = await publish(US, NL, US);
    expect(ids(await take(us, 2))).toEqual([stored[0]?.id, stored[2]?.id]);
    expect(ids(await take(both, 3))).toEqual(stored.map((event) => event.id));
  });

  it('stops offering to a subscription once it ends, and goes on offering its topics to the others', async () => {
    const ended = await hub.subscribe({ topics: new Set([US, NL]), lastEventId: null });
    const us = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    ended.end();
    const nl = await hub.subscribe({ topics: new Set([NL]), lastEventId: null });
    const stored = await publish(US, NL, US, NL);
    expect(ids(await take(us, 2))).toEqual([stored[0]?.id, stored[2]?.id]);
    expect(ids(await take(nl, 2))).toEqual([stored[1]?.id, stored[3]?.id]);
    expect(await take(ended, 1)).toEqual([]);
    expect(hub.subscriberCount).toBe(2);
  });

  it('shows in catalog_price_log_lag_seconds the age of the newest event it read', async () => {
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    await log.append([buildPriceEvent({ source: 'marketplacea', market: 'US', timestamp: hourAgo })]);
    await take(subscription, 1);
    const lag = (await registry.getSingleMetric('catalog_price_log_lag_seconds')!.get()).values[0]?.value;
    expect(lag).toBeGreaterThanOrEqual(3600);
    expect(lag).toBeLessThan(3660);
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
    const iterator = itemsOf(subscription);
    const first = await take(iterator, 1);
    const during = await publish(US, NL, US);
    const rest = await take(iterator, 5);
    const expected = [...before.slice(1), ...during].filter((event) => event.topic === US).map((event) => event.id);
    expect(ids([...first, ...rest])).toEqual(expected);
  });

  it('sends a reset where the retained window moves past a replay still being read, then goes on', async () => {
    const before = await publish(US, US, US, US, US, US);
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: before[0]?.id ?? 0 });
    const iterator = itemsOf(subscription);
    // The first page (three events) is read; the rest of the replay is pruned before it is read.
    const first = await take(iterator, 1);
    await log.append(Array.from({ length: RETAINED_EVENTS + 2 }, () => buildPriceEventOnTopic(NL)));
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
    const broken = new PriceHub(logWhoseFollowFails(), silentLogger);
    const subscription = await broken.subscribe({ topics: new Set([US]), lastEventId: null });
    await expect(take(subscription, 1)).rejects.toBeInstanceOf(ServiceUnavailable);
    await broken.stop();
  });

  it('follows the log in the async context it was made in, not in that of the subscriber that starts the follow', async () => {
    const request = new AsyncLocalStorage<string>();
    const followedIn: (string | undefined)[] = [];
    const quiet: PriceLog = {
      ...logWhoseFollowFails(),
      follow: async function* (_afterId, signal) {
        followedIn.push(request.getStore());
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        yield* [];
      },
    };
    const own = new PriceHub(quiet, silentLogger);
    await request.run('a request', () => own.subscribe({ topics: new Set([US]), lastEventId: null }));
    expect(followedIn).toEqual([undefined]);
    await own.stop();
  });
});

describe('Subscription batches', () => {
  let dir: string;
  let log: SqlitePriceLog;
  let hub: PriceHub;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hub-batches-'));
    log = new SqlitePriceLog(path.join(dir, 'catalog.db'));
    hub = new PriceHub(log, silentLogger, { replayPageSize: 2 });
  });
  afterEach(async () => {
    await hub.stop();
    await log.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const batchIds = (batch: readonly StreamItem[]): number[] => ids([...batch]);

  it('yields the replay a page at a time, then every live event queued since the last pull, with no gap and no duplicate', async () => {
    const before = await log.append([buildPriceEventOnTopic(US), buildPriceEventOnTopic(US), buildPriceEventOnTopic(NL), buildPriceEventOnTopic(US)]);
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: 0 });
    const batches = subscription[Symbol.asyncIterator]();
    const first = await batches.next();
    // Appended while the replay is read: reaches both the replay and the live queue.
    const during = await log.append([buildPriceEventOnTopic(US), buildPriceEventOnTopic(NL), buildPriceEventOnTopic(US)]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const taken: (readonly StreamItem[])[] = [first.value as readonly StreamItem[]];
    const us = (events: StoredPriceEvent[]): number[] => events.filter((event) => event.topic === US).map((event) => event.id);
    while (taken.flatMap(batchIds).length < us([...before, ...during]).length) taken.push((await batches.next()).value as readonly StreamItem[]);
    expect(batchIds(taken[0] ?? [])).toEqual(us(before.slice(0, 2)));
    expect(taken.flatMap(batchIds)).toEqual(us([...before, ...during]));
    // Live: everything appended in one go comes in one batch.
    const after = await log.append([buildPriceEventOnTopic(US), buildPriceEventOnTopic(NL), buildPriceEventOnTopic(US), buildPriceEventOnTopic(US)]);
    expect(batchIds((await batches.next()).value as readonly StreamItem[])).toEqual(us(after));
  });

  it('waits only when nothing is queued, and hands a waiting consumer the events of one turn as one batch', async () => {
    const subscription = await hub.subscribe({ topics: new Set([US, NL]), lastEventId: null });
    const batches = subscription[Symbol.asyncIterator]();
    const waiting = batches.next();
    const stored = await log.append([buildPriceEventOnTopic(US), buildPriceEventOnTopic(NL), buildPriceEventOnTopic(US)]);
    expect(batchIds((await waiting).value as readonly StreamItem[])).toEqual(stored.map((event) => event.id));
    expect(subscription.pendingBytes).toBe(0);
  });

  it('counts queued bytes until they are taken, and aborts its signal when it ends', async () => {
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    const batches = subscription[Symbol.asyncIterator]();
    const [event] = await log.append([buildPriceEventOnTopic(US)]);
    await expect.poll(() => subscription.pendingBytes).toBe((event?.data.length ?? 0) + US.length);
    expect(batchIds((await batches.next()).value as readonly StreamItem[])).toEqual([event?.id]);
    expect(subscription.signal.aborted).toBe(false);
    await batches.return?.();
    expect(subscription.signal.aborted).toBe(true);
    expect(await batches.next()).toEqual({ done: true, value: undefined });
  });

  it('tells a consumer waiting with whenReadable once events are queued, and again when it ends', async () => {
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    const batches = subscription[Symbol.asyncIterator]();
    let told = 0;
    expect(subscription.whenReadable(() => (told += 1))).toBe(false);
    const [event] = await log.append([buildPriceEventOnTopic(US)]);
    await expect.poll(() => told).toBe(1);
    expect(subscription.whenReadable(() => (told += 1))).toBe(true);
    expect(batchIds((await batches.next()).value as readonly StreamItem[])).toEqual([event?.id]);
    expect(subscription.whenReadable(() => (told += 1))).toBe(false);
    subscription.end();
    expect(told).toBe(2);
    expect(await batches.next()).toEqual({ done: true, value: undefined });
  });

  it('maps each batch as it settles, the end with done(), and an error through failed()', async () => {
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    let ended = 0;
    const counts = subscription.map<string>({
      batch: (items) => `${items.length} events`,
      failed: (error) => ({ done: false, value: `failed: ${error.name}` }),
      done: () => (ended += 1),
    });
    const waiting = counts.next();
    await log.append([buildPriceEventOnTopic(US), buildPriceEventOnTopic(NL), buildPriceEventOnTopic(US)]);
    expect(await waiting).toEqual({ done: false, value: '2 events' });
    const failing = counts.next();
    subscription.end(new SubscriberOverflow(10));
    expect(await failing).toEqual({ done: false, value: 'failed: SubscriberOverflow' });
    expect(ended).toBe(0);
    expect(await counts.next()).toEqual({ done: true, value: undefined });
    expect(ended).toBe(1);
  });

  it('resumes more waiting consumers than one slice holds, each with every event in order', async () => {
    const subscriptions = await Promise.all(Array.from({ length: 1_200 }, () => hub.subscribe({ topics: new Set([US]), lastEventId: null })));
    const waiting = subscriptions.map((subscription) => subscription[Symbol.asyncIterator]().next());
    const stored = await log.append([buildPriceEventOnTopic(US), buildPriceEventOnTopic(US)]);
    const batches = await Promise.all(waiting);
    expect(new Set(batches.map((result) => JSON.stringify(batchIds(result.value as readonly StreamItem[]))))).toEqual(new Set([JSON.stringify(stored.map((event) => event.id))]));
  });

  describe('with a Filter', () => {
    const priced = (product_id: string, price: number) => buildPriceEvent({ product_id, price, source: 'marketplacea', market: 'US' });

    it('offers live events only when the filter matches, indexed by product id or evaluated', async () => {
      const byProduct = await hub.subscribe({ topics: new Set([US]), lastEventId: null, filter: parseEventFilter('product_id IN [p1, p3]') });
      const byPrice = await hub.subscribe({ topics: new Set([US]), lastEventId: null, filter: parseEventFilter('price < 100') });
      const stored = await log.append([priced('p1', 150), priced('p2', 50), priced('p3', 20), priced('p2', 150)]);
      expect(ids(await take(byProduct, 2))).toEqual([stored[0]?.id, stored[2]?.id]);
      expect(ids(await take(byPrice, 2))).toEqual([stored[1]?.id, stored[2]?.id]);
    });

    it('applies the filter to the Last-Event-ID replay too, then continues live without a gap', async () => {
      const before = await log.append([priced('p1', 1), priced('p2', 2), priced('p1', 3), priced('p2', 4), priced('p1', 5)]);
      const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: before[0]?.id ?? 0, filter: parseEventFilter('product_id = P1') });
      const after = await log.append([priced('p2', 6), priced('p1', 7)]);
      expect(ids(await take(subscription, 3))).toEqual([before[2]?.id, before[4]?.id, after[1]?.id]);
    });

    it('forgets a filtered subscription once it ends', async () => {
      const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: null, filter: parseEventFilter('product_id = p1') });
      subscription.end();
      await log.append([priced('p1', 1)]);
      expect(hub.subscriberCount).toBe(0);
    });
  });
});


/**
 * A price log scripted by the test: `bounds` answers what the test set (or fails), follow() yields
 * what the test pushes, and every follow's starting id is recorded.
 */
function scriptedLog() {
  const state = {
    bounds: null as { oldestId: number; newestId: number } | null,
    boundsFail: false,
    followedFrom: [] as number[],
  };
  let queue: (StoredPriceEvent | Error)[] = [];
  let wake: (() => void) | null = null;
  const log: PriceLog = {
    append: async () => [],
    readAfter: async () => [],
    latestPrices: async () => ({ data: storedJson('[]'), position: 0 }),
    bounds: async () => {
      if (state.boundsFail) throw new Error('connection refused');
      return state.bounds;
    },
    follow: async function* (afterId: number, signal: AbortSignal) {
      state.followedFrom.push(afterId);
      signal.addEventListener('abort', () => wake?.());
      while (!signal.aborted) {
        const next = queue.shift();
        if (next instanceof Error) throw next;
        if (next !== undefined) yield next;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    },
    ping: async () => {},
    close: async () => {},
  };
  const push = (...items: (StoredPriceEvent | Error)[]): void => {
    queue = [...queue, ...items];
    wake?.();
  };
  return { log, state, push };
}

const eventWithId = (id: number): StoredPriceEvent => ({ id, topic: US, data: JSON.stringify(buildPriceEventOnTopic(US)) });

/** A logger that keeps its error calls. */
function recordingLogger() {
  const errors: { message: string; fields: Record<string, unknown> | undefined }[] = [];
  const logger: Logger = { ...silentLogger, error: (message, fields) => errors.push({ message, fields }), child: () => logger };
  return { logger, errors };
}

describe('PriceHub on a scripted log', () => {
  const hubs: PriceHub[] = [];
  afterEach(async () => {
    for (const hub of hubs.splice(0)) await hub.stop();
  });
  const open = (log: PriceLog, logger: Logger = silentLogger): PriceHub => {
    const hub = new PriceHub(log, logger);
    hubs.push(hub);
    return hub;
  };

  it('ends every stream with ServiceUnavailable and logs PriceLogLost when ids jump past the window and the log lost the events between', async () => {
    const { log, state, push } = scriptedLog();
    const { logger, errors } = recordingLogger();
    const hub = open(log, logger);
    const subscription = await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    const iterator = itemsOf(subscription);
    state.bounds = { oldestId: 5, newestId: 5 };
    push(eventWithId(5));
    expect(ids(await take(iterator, 1))).toEqual([5]);
    const jump = 5 + RETAINED_EVENTS + 10;
    state.bounds = { oldestId: jump - 4, newestId: jump };
    push(eventWithId(jump));
    const ended = await iterator.next().catch((error: unknown) => error);
    expect(ended).toBeInstanceOf(ServiceUnavailable);
    expect((ended as Error).message).toBe('The price log is unavailable; retry shortly.');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toBe('price log follow stopped; ending all streams');
    const lost = errors[0]?.fields?.['error'] as Error;
    expect(lost.name).toBe('PriceLogLost');
    expect(lost.message).toBe(`the price log lost the events after 5; its oldest id is now ${jump - 4}`);
    // The next subscribe follows again from just before the log's oldest id, not past the jump.
    await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    expect(state.followedFrom).toEqual([0, jump - 5]);
  });

  it('goes on without a loss when ids jump past the window but the log still holds the event after the last one offered', async () => {
    const { log, state, push } = scriptedLog();
    const { logger, errors } = recordingLogger();
    const hub = open(log, logger);
    const iterator = itemsOf(await hub.subscribe({ topics: new Set([US]), lastEventId: null }));
    push(eventWithId(5));
    expect(ids(await take(iterator, 1))).toEqual([5]);
    const jump = 5 + RETAINED_EVENTS + 10;
    state.bounds = { oldestId: 6, newestId: jump };
    push(eventWithId(jump), eventWithId(jump + 1));
    expect(ids(await take(iterator, 2))).toEqual([jump, jump + 1]);
    expect(errors).toEqual([]);
  });

  it('does not ask the log when ids jump by exactly the retained window', async () => {
    const { log, state, push } = scriptedLog();
    const hub = open(log);
    const iterator = itemsOf(await hub.subscribe({ topics: new Set([US]), lastEventId: null }));
    push(eventWithId(5));
    expect(ids(await take(iterator, 1))).toEqual([5]);
    state.bounds = { oldestId: 5 + RETAINED_EVENTS, newestId: 5 + RETAINED_EVENTS };
    push(eventWithId(5 + RETAINED_EVENTS));
    expect(ids(await take(iterator, 1))).toEqual([5 + RETAINED_EVENTS]);
  });

  it('logs the failure and follows again from the last event offered once a follow failed', async () => {
    const { log, state, push } = scriptedLog();
    const { logger, errors } = recordingLogger();
    const hub = open(log, logger);
    const iterator = itemsOf(await hub.subscribe({ topics: new Set([US]), lastEventId: null }));
    push(eventWithId(1), eventWithId(2), eventWithId(3));
    expect(ids(await take(iterator, 3))).toEqual([1, 2, 3]);
    const failure = new Error('disk gone');
    push(failure);
    await expect(iterator.next()).rejects.toBeInstanceOf(ServiceUnavailable);
    expect(errors).toEqual([{ message: 'price log follow stopped; ending all streams', fields: { error: failure } }]);
    state.bounds = { oldestId: 1, newestId: 5 };
    await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    expect(state.followedFrom).toEqual([0, 3]);
  });

  it('logs nothing when stopped', async () => {
    const { log } = scriptedLog();
    const { logger, errors } = recordingLogger();
    const hub = open(log, logger);
    const iterating = take(await hub.subscribe({ topics: new Set([US]), lastEventId: null }), 1);
    await hub.stop();
    expect(await iterating).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toEqual([]);
    await expect(hub.subscribe({ topics: new Set([US]), lastEventId: null })).rejects.toThrow('The price stream is unavailable; retry shortly.');
  });

  it('refuses a subscribe with ServiceUnavailable naming the cause when the log fails on start, and starts on the next one', async () => {
    const { log, state, push } = scriptedLog();
    const hub = open(log);
    state.boundsFail = true;
    const refused = await hub.subscribe({ topics: new Set([US]), lastEventId: null }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServiceUnavailable);
    expect((refused as Error).message).toBe('The price log is unavailable; retry shortly.');
    expect(((refused as Error).cause as Error).message).toBe('connection refused');
    state.boundsFail = false;
    const iterator = itemsOf(await hub.subscribe({ topics: new Set([US]), lastEventId: null }));
    push(eventWithId(1));
    expect(ids(await take(iterator, 1))).toEqual([1]);
  });

  it('refuses a subscribe with ServiceUnavailable naming the cause and keeps no subscription when the log fails after start', async () => {
    const { log, state } = scriptedLog();
    const hub = open(log);
    await hub.subscribe({ topics: new Set([US]), lastEventId: null, signal: AbortSignal.abort() });
    expect(hub.subscriberCount).toBe(0);
    state.boundsFail = true;
    const refused = await hub.subscribe({ topics: new Set([US]), lastEventId: null }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServiceUnavailable);
    expect((refused as Error).message).toBe('The price log is unavailable; retry shortly.');
    expect(((refused as Error).cause as Error).message).toBe('connection refused');
    expect(hub.subscriberCount).toBe(0);
  });

  it('delivers to a subscription whose signal has not aborted', async () => {
    const { log, push } = scriptedLog();
    const hub = open(log);
    const controller = new AbortController();
    const iterator = itemsOf(await hub.subscribe({ topics: new Set([US]), lastEventId: null, signal: controller.signal }));
    push(eventWithId(1));
    expect(ids(await take(iterator, 1))).toEqual([1]);
  });

  it('wakes again the consumers offered events while a wake of more than one slice was under way', async () => {
    const { log, push } = scriptedLog();
    const hub = open(log);
    const subscriptions = await Promise.all(Array.from({ length: 1_200 }, () => hub.subscribe({ topics: new Set([US]), lastEventId: null })));
    const received = subscriptions.map(() => [] as number[]);
    const consuming = subscriptions.map(async (subscription, index) => {
      for await (const batch of subscription) {
        received[index]?.push(...ids([...batch]));
        if (received[index]?.length === 2) return;
      }
    });
    push(eventWithId(1));
    // The first slice is woken in the next turn; the second event arrives in the turn after, when
    // the first slice waits again and the last slice is not yet woken.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    push(eventWithId(2));
    await Promise.race([Promise.all(consuming), new Promise((resolve) => setTimeout(resolve, 3_000))]);
    expect(new Set(received.map((taken) => taken.join(',')))).toEqual(new Set(['1,2']));
  });

  it('follows from the newest event of the log when it first starts', async () => {
    const { log, state } = scriptedLog();
    state.bounds = { oldestId: 1, newestId: 10 };
    await open(log).subscribe({ topics: new Set([US]), lastEventId: null });
    expect(state.followedFrom).toEqual([10]);
  });

  it.each([
    ['is empty', null, 0],
    ['lost the events after the last one offered', { oldestId: 10, newestId: 12 }, 12],
    ['holds fewer events than were offered', { oldestId: 1, newestId: 2 }, 2],
  ])('follows from the log newest event when it restarts after a failure and the log %s', async (_, bounds, expected) => {
    const { log, state, push } = scriptedLog();
    const hub = open(log);
    const iterator = itemsOf(await hub.subscribe({ topics: new Set([US]), lastEventId: null }));
    push(eventWithId(1), eventWithId(2), eventWithId(3));
    expect(ids(await take(iterator, 3))).toEqual([1, 2, 3]);
    push(new Error('connection lost'));
    await expect(iterator.next()).rejects.toBeInstanceOf(ServiceUnavailable);
    state.bounds = bounds;
    await hub.subscribe({ topics: new Set([US]), lastEventId: null });
    expect(state.followedFrom).toEqual([0, expected]);
  });

  it('delivers a burst larger than the slice it offers between turns of the event loop', async () => {
    const { log, push } = scriptedLog();
    const iterator = itemsOf(await open(log).subscribe({ topics: new Set([US]), lastEventId: null }));
    const burst = Array.from({ length: 300 }, (_, index) => ({ id: index + 1, topic: US, data: JSON.stringify({ padding: 'x'.repeat(500) }) }));
    push(...burst);
    expect(ids(await take(iterator, 300))).toEqual(burst.map((event) => event.id));
  });
});

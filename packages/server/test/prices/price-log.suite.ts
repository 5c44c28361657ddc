// The one conformance suite every PriceLog adapter passes (SqlitePriceLog, RedisPriceLog, …):
// the port's guarantees, then two fast-check properties checked against an in-memory model.
// The properties use a fixed seed, printed; FC_SEED overrides it to replay a failure.
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceUnavailable } from '../../src/catalog/errors.ts';
import { silentLogger } from '../../src/logger.ts';
import { RETAINED_EVENTS, type LatestPrices, type PriceLog, type StoredPriceEvent } from '../../src/prices/price-log.ts';
import { PriceHub } from '../../src/stream/hub.ts';
import type { StreamItem } from '../../src/stream/subscription.ts';
import { itemsOf } from '../stream/stream-items.ts';
import { buildPriceEvent, PRICE_TOPICS, buildPriceEventOnTopic } from '@catalog/contract/testing';

/** A latest-prices answer as its payloads, and events as theirs: what the answer is compared by. */
const payloadsOf = (latest: LatestPrices): unknown[] => JSON.parse(latest.data) as unknown[];
const payloads = (events: readonly (StoredPriceEvent | undefined)[]): unknown[] => events.map((event) => JSON.parse(event?.data ?? 'null') as unknown);

export interface PriceLogFixture {
  log: PriceLog;
  /** Opens another instance on the same storage, as another process or a restart would. */
  reopen?: () => Promise<PriceLog>;
  cleanup(): Promise<void>;
}

export const FC_SEED = Number(process.env['FC_SEED'] ?? 20261123);
// Cases per property and adapter: each test's name says how many ran. FC_RUNS sets both (more to
// explore further from a seed; fewer under mutation testing, where every mutant re-runs them).
const FC_RUNS = process.env['FC_RUNS'] === undefined ? undefined : Math.max(1, Number(process.env['FC_RUNS']));
const HUB_RUNS = FC_RUNS ?? 150;
const LOG_RUNS = FC_RUNS ?? 200;
/** The hand-over property appends twice and reads twice per case: a sixth of the log's cases (whole: fast-check does not end a fractional count). */
const HANDOVER_RUNS = Math.ceil(LOG_RUNS / 6);
/** The properties run long on a loaded machine; they are bounded by their run counts instead. */
const PROPERTY_TIMEOUT_MS = 180_000;

export function describePriceLogConformance(name: string, factory: () => Promise<PriceLogFixture>): void {
  describe(`PriceLog conformance: ${name}`, () => {
    let fixture: PriceLogFixture;
    const opened: PriceLog[] = [];
    const reopen = async (): Promise<PriceLog> => {
      if (fixture.reopen === undefined) throw new Error(`${name} offers no reopen()`);
      const log = await fixture.reopen();
      opened.push(log);
      return log;
    };

    beforeEach(async () => {
      fixture = await factory();
    });
    afterEach(async () => {
      for (const log of opened.splice(0)) await log.close();
      await fixture.log.close();
      await fixture.cleanup();
    });

    it('assigns strictly increasing ids across all topics', async () => {
      const first = await fixture.log.append([buildPriceEventOnTopic(PRICE_TOPICS[0]), buildPriceEventOnTopic(PRICE_TOPICS[1])]);
      const second = await fixture.log.append([buildPriceEventOnTopic(PRICE_TOPICS[2])]);
      const ids = [...first, ...second].map((event) => event.id);
      expect(ids.every((id, index) => Number.isInteger(id) && id >= 1 && (index === 0 || id > (ids[index - 1] ?? 0)))).toBe(true);
    });

    it('stores a published string byte for byte and derives the topic from source and market', async () => {
      const text = '{"source":"marketplaceb","product_id":"p","variant_id":"v","size":"10.5","price":189.90,"currency":"EUR","market":"NL","sku":"Ünïcödé-✓","timestamp":"2026-11-23T14:03:07.123456789Z"}';
      const [stored] = await fixture.log.append([text]);
      const [read] = await fixture.log.readAfter(0, 10);
      expect(stored?.topic).toBe('price:marketplaceb:nl');
      expect(read).toEqual({ id: stored?.id, topic: 'price:marketplaceb:nl', data: text });
    });

    it('serialises a published object as JSON', async () => {
      const event = buildPriceEvent({ source: 'marketplacea', market: 'UK' });
      const [stored] = await fixture.log.append([event]);
      expect(stored?.topic).toBe('price:marketplacea:uk');
      expect(JSON.parse(stored?.data ?? '')).toEqual(event);
    });

    it('refuses a batch holding an event without source or market and stores none of it', async () => {
      await expect(fixture.log.append([JSON.stringify(buildPriceEventOnTopic(PRICE_TOPICS[0])), '{"price":1}'])).rejects.toThrow(/source/);
      await expect(fixture.log.append(['not json'])).rejects.toThrow(/JSON/);
      expect(await fixture.log.bounds()).toBeNull();
    });

    it('reads events after an id in ascending order, at most limit', async () => {
      const stored = await fixture.log.append(Array.from({ length: 10 }, (_, i) => buildPriceEventOnTopic(PRICE_TOPICS[i % PRICE_TOPICS.length])));
      const page = await fixture.log.readAfter(stored[3]?.id ?? 0, 4);
      expect(page.map((event) => event.id)).toEqual(stored.slice(4, 8).map((event) => event.id));
      expect(await fixture.log.readAfter(stored[9]?.id ?? 0, 10)).toEqual([]);
      expect(await fixture.log.bounds()).toEqual({ oldestId: stored[0]?.id, newestId: stored[9]?.id });
    });

    it(`replays only the newest ${RETAINED_EVENTS} events even when more are stored`, async () => {
      const stored: StoredPriceEvent[] = [];
      for (let batch = 0; batch < 6; batch += 1) {
        stored.push(...(await fixture.log.append(Array.from({ length: 1000 }, (_, i) => buildPriceEventOnTopic(PRICE_TOPICS[i % PRICE_TOPICS.length])))));
      }
      const retained = stored.slice(-RETAINED_EVENTS);
      expect(await fixture.log.bounds()).toEqual({ oldestId: retained[0]?.id, newestId: retained.at(-1)?.id });
      const all: StoredPriceEvent[] = [];
      for (let page = await fixture.log.readAfter(0, 2000); page.length > 0; page = await fixture.log.readAfter(all.at(-1)?.id ?? 0, 2000)) {
        all.push(...page);
      }
      expect(all.map((event) => event.id)).toEqual(retained.map((event) => event.id));
    });

    it('follows appends made after the start id, in order, until aborted', async () => {
      const [before] = await fixture.log.append([buildPriceEventOnTopic(PRICE_TOPICS[0])]);
      const controller = new AbortController();
      const seen: number[] = [];
      const following = (async () => {
        for await (const event of fixture.log.follow(before?.id ?? 0, controller.signal)) {
          seen.push(event.id);
          if (seen.length === 3) controller.abort();
        }
      })();
      const appended = [...(await fixture.log.append([buildPriceEventOnTopic(PRICE_TOPICS[1]), buildPriceEventOnTopic(PRICE_TOPICS[2])])), ...(await fixture.log.append([buildPriceEventOnTopic(PRICE_TOPICS[3])]))];
      await following;
      expect(seen).toEqual(appended.map((event) => event.id));
    });

    it('follows appends made by another instance on the same storage', async () => {
      if (fixture.reopen === undefined) return;
      const other = await reopen();
      const controller = new AbortController();
      const following = (async () => {
        for await (const event of fixture.log.follow(0, controller.signal)) {
          controller.abort();
          return event;
        }
        return null;
      })();
      const [appended] = await other.append([buildPriceEventOnTopic(PRICE_TOPICS[2])]);
      expect(await following).toEqual(appended);
    });

    it('never reuses an id after close and reopen, even when every row was pruned', async () => {
      if (fixture.reopen === undefined) return;
      const before = await fixture.log.append(Array.from({ length: RETAINED_EVENTS + 1200 }, () => buildPriceEventOnTopic(PRICE_TOPICS[0])));
      await fixture.log.close();
      const restarted = await reopen();
      const [after] = await restarted.append([buildPriceEventOnTopic(PRICE_TOPICS[1])]);
      expect(after?.id).toBeGreaterThan(before.at(-1)?.id ?? Infinity);
      expect((await restarted.readAfter(0, 1)).at(0)?.id).toBe(before.at(-RETAINED_EVENTS + 1)?.id);
    });

    it('keeps the latest event of each variant, source and market of a product, with the newest id', async () => {
      const product = 'product-latest';
      expect(await fixture.log.latestPrices(product)).toEqual({ data: '[]', position: 0 });
      const [first, , third, other, fourth] = await fixture.log.append([
        buildPriceEvent({ product_id: product, variant_id: 'v1', source: 'marketplacea', market: 'US', price: 100 }),
        buildPriceEvent({ product_id: product, variant_id: 'v1', source: 'marketplacea', market: 'UK', price: 90 }),
        buildPriceEvent({ product_id: product, variant_id: 'v1', source: 'marketplacea', market: 'UK', price: 91 }),
        buildPriceEvent({ product_id: 'another-product', variant_id: 'v1', source: 'marketplacea', market: 'US', price: 5 }),
        buildPriceEvent({ product_id: product, variant_id: 'v2', source: 'marketplaceb', market: 'US', price: 120 }),
      ]);
      const [newest] = await fixture.log.append([buildPriceEvent({ product_id: product, variant_id: 'v1', source: 'marketplacea', market: 'US', price: 101 })]);
      const latest = await fixture.log.latestPrices(product);
      expect(payloadsOf(latest)).toEqual(payloads([third, fourth, newest]));
      expect(latest.position).toBe(newest?.id);
      expect(payloadsOf(await fixture.log.latestPrices('another-product'))).toEqual(payloads([other]));
      // Narrowed by source, by market (lowercase, as in topics), or both.
      expect(payloadsOf(await fixture.log.latestPrices(product, { source: 'marketplacea' }))).toEqual(payloads([third, newest]));
      expect(payloadsOf(await fixture.log.latestPrices(product, { market: 'us' }))).toEqual(payloads([fourth, newest]));
      expect(payloadsOf(await fixture.log.latestPrices(product, { source: 'marketplaceb', market: 'us' }))).toEqual(payloads([fourth]));
      expect(await fixture.log.latestPrices(product, { source: 'marketplaceb', market: 'uk' })).toEqual({ data: '[]', position: newest?.id });
      expect(payloadsOf(await fixture.log.latestPrices(product, { market: 's' }))).toEqual([]);
      expect(payloadsOf(await fixture.log.latestPrices(product, { source: 'marketplace' }))).toEqual([]);
      expect(first?.id).toBeLessThan(newest?.id ?? 0);
    });

    it('keeps latest prices older than the retained window, and across a reopen', async () => {
      const [kept] = await fixture.log.append([buildPriceEvent({ product_id: 'old-product', variant_id: 'v1' })]);
      const flood = await fixture.log.append(Array.from({ length: RETAINED_EVENTS + 10 }, () => buildPriceEventOnTopic(PRICE_TOPICS[1])));
      expect((await fixture.log.readAfter(0, 1))[0]?.id).toBeGreaterThan(kept?.id ?? Infinity);
      expect(await fixture.log.latestPrices('old-product')).toEqual({ data: `[${kept?.data}]`, position: flood.at(-1)?.id });
      if (fixture.reopen === undefined) return;
      await fixture.log.close();
      const restarted = await reopen();
      expect(await restarted.latestPrices('old-product')).toEqual({ data: `[${kept?.data}]`, position: flood.at(-1)?.id });
    });

    it(`hands over from a snapshot at its position to the events after it without a gap (${HANDOVER_RUNS} runs)`, async () => {
      console.log(`fast-check seed ${FC_SEED} (set FC_SEED to override)`);
      const log = fixture.log;
      const history: StoredPriceEvent[] = [];
      type Payload = Record<string, unknown>;
      const payloadOf = (event: StoredPriceEvent): Payload => JSON.parse(event.data) as Payload;
      const keyOf = ({ variant_id, source, market }: Payload): string => `${String(variant_id)}|${String(source)}|${String(market)}`;
      const priced = fc.record({
        product: fc.constantFrom('p1', 'p2'),
        variant: fc.constantFrom('v1', 'v2', 'v3'),
        topic: fc.integer({ min: 0, max: PRICE_TOPICS.length - 1 }),
        price: fc.integer({ min: 1, max: 1000 }),
      });
      const toEvent = ({ product, variant, topic, price }: { product: string; variant: string; topic: number; price: number }) => {
        const [, source, market = 'us'] = (PRICE_TOPICS[topic] ?? PRICE_TOPICS[0]).split(':');
        return buildPriceEvent({ product_id: product, variant_id: variant, source: source as 'marketplacea', market: market.toUpperCase(), price });
      };
      await fc.assert(
        fc.asyncProperty(fc.array(priced, { maxLength: 6 }), fc.array(priced, { maxLength: 6 }), fc.constantFrom('p1', 'p2'), async (before, after, product) => {
          history.push(...(await log.append(before.map(toEvent))));
          // Appends racing the snapshot read: each lands wholly before or wholly after its position.
          const [snapshot, racing] = await Promise.all([log.latestPrices(product), log.append(after.map(toEvent))]);
          history.push(...racing);
          // The snapshot's payloads, then the events after its position: the latest of each key.
          const latest = new Map((JSON.parse(snapshot.data) as Payload[]).map((payload) => [keyOf(payload), payload]));
          for (const event of await log.readAfter(snapshot.position, RETAINED_EVENTS)) {
            const payload = payloadOf(event);
            if (payload['product_id'] === product) latest.set(keyOf(payload), payload);
          }
          const expected = new Map<string, StoredPriceEvent>();
          for (const event of history) if (payloadOf(event)['product_id'] === product) expected.set(keyOf(payloadOf(event)), event);
          const byKey = (map: Map<string, unknown>): [string, unknown][] => [...map].sort(([a], [b]) => a.localeCompare(b));
          expect(byKey(latest)).toEqual(byKey(new Map([...expected].map(([key, event]) => [key, payloadOf(event)]))));
          expect(payloadsOf(await log.latestPrices(product))).toEqual(payloads([...expected.values()].sort((a, b) => a.id - b.id)));
        }),
        { numRuns: HANDOVER_RUNS, seed: FC_SEED },
      );
    }, PROPERTY_TIMEOUT_MS);

    it('answers ping while open and fails with ServiceUnavailable once closed', async () => {
      await expect(fixture.log.ping()).resolves.toBeUndefined();
      await fixture.log.close();
      await expect(fixture.log.ping()).rejects.toBeInstanceOf(ServiceUnavailable);
      await expect(fixture.log.append([buildPriceEventOnTopic(PRICE_TOPICS[0])])).rejects.toBeInstanceOf(ServiceUnavailable);
    });

    it(`reads back what the model holds for random batches, reads and restarts (${LOG_RUNS} runs)`, async () => {
      console.log(`fast-check seed ${FC_SEED} (set FC_SEED to override)`);
      let log = fixture.log;
      const model: StoredPriceEvent[] = [];
      const step = fc.record({
        batch: fc.array(fc.integer({ min: 0, max: PRICE_TOPICS.length - 1 }), { maxLength: 8 }),
        readBack: fc.nat({ max: 40 }),
        limit: fc.integer({ min: 1, max: 30 }),
        restart: fc.nat({ max: 9 }).map((n) => n === 0 && fixture.reopen !== undefined),
      });
      await fc.assert(
        fc.asyncProperty(step, async ({ batch, readBack, limit, restart }) => {
          if (restart) {
            await log.close();
            log = await reopen();
          }
          const newestBefore = model.at(-1)?.id ?? 0;
          const stored = await log.append(batch.map((topic) => buildPriceEventOnTopic(PRICE_TOPICS[topic])));
          expect(stored.every((event, i) => event.id > (i === 0 ? newestBefore : (stored[i - 1]?.id ?? 0)))).toBe(true);
          model.push(...stored);
          const retained = model.slice(-RETAINED_EVENTS);
          const after = Math.max(0, (model.at(-1)?.id ?? 0) - readBack);
          const expected = retained.filter((event) => event.id > after).slice(0, limit);
          expect(await log.readAfter(after, limit)).toEqual(expected);
        }),
        { numRuns: LOG_RUNS, seed: FC_SEED },
      );
    }, PROPERTY_TIMEOUT_MS);

    it(`delivers exactly the retained ids above the resume point on the subscribed topics (${HUB_RUNS} runs)`, async () => {
      console.log(`fast-check seed ${FC_SEED} (set FC_SEED to override)`);
      const log = fixture.log;
      const hub = new PriceHub(log, silentLogger, { replayPageSize: 64 });
      const model: StoredPriceEvent[] = [];
      const publish = async (topics: readonly number[]): Promise<void> => {
        if (topics.length > 0) model.push(...(await log.append(topics.map((topic) => buildPriceEventOnTopic(PRICE_TOPICS[topic])))));
      };
      const topicIndex = fc.integer({ min: 0, max: PRICE_TOPICS.length - 1 });
      const scenario = fc.record({
        before: fc.array(topicIndex, { maxLength: 12 }),
        subscribed: fc.uniqueArray(topicIndex, { minLength: 1, maxLength: PRICE_TOPICS.length }),
        resume: fc.oneof(
          { weight: 2, arbitrary: fc.constant<'live'>('live') },
          { weight: 1, arbitrary: fc.constant<'start'>('start') },
          { weight: 6, arbitrary: fc.nat({ max: 30 }) },
        ),
        during: fc.array(fc.array(topicIndex, { minLength: 1, maxLength: 4 }), { maxLength: 3 }),
        disconnectAfter: fc.option(fc.nat({ max: 12 }), { nil: null }),
      });
      try {
        await fc.assert(
          fc.asyncProperty(scenario, async ({ before, subscribed, resume, during, disconnectAfter }) => {
            await publish(before);
            const topics = new Set(subscribed.map((i) => PRICE_TOPICS[i] as string));
            const newest = model.at(-1)?.id ?? 0;
            const requested = resume === 'live' ? null : resume === 'start' ? 0 : Math.max(0, newest - resume);
            const retained = model.slice(-RETAINED_EVENTS);
            const oldest = retained[0]?.id ?? 0;
            const expectReset = requested !== null && retained.length > 0 && requested < oldest - 1;
            const replayed = requested === null ? [] : retained.filter((e) => e.id > requested && topics.has(e.topic));
            const firstLive = model.length;

            let subscription = await hub.subscribe({ topics, lastEventId: requested });
            let iterator = itemsOf(subscription);
            const items: StreamItem[] = [];
            const delivered: number[] = [];
            const take = async (): Promise<void> => {
              const item = await nextWithin(iterator, 5000);
              items.push(item);
              if (item.kind === 'event') delivered.push(item.event.id);
            };
            let disconnected = false;
            let expectedResets = expectReset ? 1 : 0;
            /** Events that left the window while disconnected: (resumed, oldest) are lost, as documented. */
            let lost = { after: Infinity, before: -Infinity };
            const maybeDisconnect = async (): Promise<void> => {
              if (disconnected || disconnectAfter === null || delivered.length < disconnectAfter) return;
              const last = delivered.at(-1) ?? requested;
              if (last === null) return;
              disconnected = true;
              await iterator.return?.();
              const oldestNow = model.slice(-RETAINED_EVENTS)[0]?.id ?? 0;
              if (last < oldestNow - 1) {
                expectedResets += 1;
                lost = { after: last, before: oldestNow };
              }
              subscription = await hub.subscribe({ topics, lastEventId: last });
              iterator = itemsOf(subscription);
            };
            let memo = { key: '', ids: [] as number[] };
            const expectedNow = (): number[] => {
              const key = `${model.length}:${lost.after}`;
              if (memo.key !== key) {
                const ids = [...replayed, ...model.slice(firstLive).filter((e) => topics.has(e.topic))]
                  .map((e) => e.id)
                  .filter((id) => !(id > lost.after && id < lost.before));
                memo = { key, ids };
              }
              return memo.ids;
            };
            // Publish while the replay is being read, pulling one item between appends.
            for (const chunk of during) {
              if (delivered.length < expectedNow().length) await take();
              await maybeDisconnect();
              await publish(chunk);
            }
            while (delivered.length < expectedNow().length) {
              await take();
              await maybeDisconnect();
            }
            // Nothing extra was queued: the next item is the next event published.
            const sentinel = [...topics][0] as string;
            await publish([PRICE_TOPICS.indexOf(sentinel as (typeof PRICE_TOPICS)[number])]);
            await take();
            await iterator.return?.();

            expect(delivered).toEqual(expectedNow());
            expect(delivered.at(-1)).toBe(model.at(-1)?.id);
            expect(items.filter((item) => item.kind === 'reset')).toHaveLength(expectedResets);
            if (expectReset) expect(items[0]).toEqual({ kind: 'reset', requestedId: requested, oldestId: oldest });
          }),
          { numRuns: HUB_RUNS, seed: FC_SEED },
        );
      } finally {
        await hub.stop();
      }
    }, PROPERTY_TIMEOUT_MS);
  });
}

async function nextWithin<T>(iterator: AsyncIterator<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no item within ${ms} ms`)), ms);
  });
  try {
    const result = await Promise.race([iterator.next(), timeout]);
    if (result.done === true) throw new Error('the subscription ended early');
    return result.value;
  } finally {
    clearTimeout(timer);
  }
}

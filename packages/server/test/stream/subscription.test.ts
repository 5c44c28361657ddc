// stream/subscription.ts on its own, with a log held in an array: the replay after Last-Event-ID,
// the hand-over to live events, resets, the queue limit and the ways a subscription ends.
import { describe, expect, it } from 'vitest';
import { ServiceUnavailable } from '../../src/catalog/errors.ts';
import type { StoredPriceEvent } from '../../src/prices/price-log.ts';
import { SubscriberOverflow, Subscription, type EventItem, type StreamItem, type SubscriptionOptions } from '../../src/stream/subscription.ts';

const US = 'price:marketplacea:us';
const NL = 'price:marketplaceb:nl';

const stored = (id: number, topic = US): StoredPriceEvent => ({ id, topic, data: `{"id":${id}}` });
const item = (event: StoredPriceEvent): EventItem => ({ kind: 'event', event });

/** A log of the given events (ids ascending); `readAfter` fails when `failing` is set. */
function logOf(events: StoredPriceEvent[], failing = false): SubscriptionOptions['log'] {
  return {
    readAfter: async (afterId, limit) => {
      if (failing) throw new ServiceUnavailable('price log');
      return events.filter((event) => event.id > afterId).slice(0, limit);
    },
    bounds: async () => (events.length === 0 ? null : { oldestId: events[0]!.id, newestId: events.at(-1)!.id }),
  };
}

function subscription(overrides: Partial<SubscriptionOptions> & { events?: StoredPriceEvent[] } = {}): { subscription: Subscription; ended: Subscription[] } {
  const events = overrides.events ?? [];
  const ended: Subscription[] = [];
  const log = overrides.log ?? logOf(events);
  return {
    ended,
    subscription: new Subscription({
      topics: new Set([US]),
      lastEventId: null,
      liveAfter: events.at(-1)?.id ?? 0,
      bounds: events.length === 0 ? null : { oldestId: events[0]!.id, newestId: events.at(-1)!.id },
      log,
      replayPageSize: 2,
      maxQueuedBytes: 1_000,
      onEnd: (s) => ended.push(s),
      ...overrides,
    }),
  };
}

const ids = (items: readonly StreamItem[]): (number | string)[] =>
  items.map((i) => (i.kind === 'event' ? i.event.id : `reset ${i.requestedId}→${i.oldestId}`));

/** Offers events as the hub does: offer each, then wake once if an offer asked for it. */
function deliver(s: Subscription, ...events: StoredPriceEvent[]): void {
  let wake = false;
  for (const event of events) wake = s.offer(item(event)) || wake;
  if (wake) s.wake();
}

describe('Subscription', () => {
  it('yields every queued live event in one batch, in id order', async () => {
    const { subscription: s } = subscription();
    const iterator = s[Symbol.asyncIterator]();
    deliver(s, stored(1), stored(2), stored(3));
    expect(s.pendingBytes).toBeGreaterThan(0);
    expect(ids(((await iterator.next()) as IteratorYieldResult<readonly StreamItem[]>).value)).toEqual([1, 2, 3]);
    expect(s.pendingBytes).toBe(0);
  });

  it('settles a waiting next() when the hub wakes it, with all the turn offered', async () => {
    const { subscription: s } = subscription();
    const iterator = s[Symbol.asyncIterator]();
    const pending = iterator.next();
    expect(s.offer(item(stored(1)))).toBe(true);
    expect(s.offer(item(stored(2)))).toBe(false);
    s.wake();
    expect(ids(((await pending) as IteratorYieldResult<readonly StreamItem[]>).value)).toEqual([1, 2]);
  });

  it('replays after Last-Event-ID a page at a time, then hands over to live events without a gap or a duplicate', async () => {
    const events = [stored(1), stored(2), stored(3, NL), stored(4), stored(5)];
    const { subscription: s } = subscription({ events, lastEventId: 1, liveAfter: 4 });
    // Offered during the replay: 5 is in the log too, and must come once.
    deliver(s, stored(5), stored(6));
    const batches: (number | string)[][] = [];
    const iterator = s[Symbol.asyncIterator]();
    while (batches.flat().length < 4) batches.push(ids(((await iterator.next()) as IteratorYieldResult<readonly StreamItem[]>).value));
    expect(batches.flat()).toEqual([2, 4, 5, 6]);
    expect(batches[0]).toEqual([2]);
  });

  it('starts with a reset when Last-Event-ID is older than the retained window', async () => {
    const { subscription: s } = subscription({ events: [stored(5), stored(6)], lastEventId: 2 });
    const first = ((await s[Symbol.asyncIterator]().next()) as IteratorYieldResult<readonly StreamItem[]>).value;
    expect(ids(first)).toEqual(['reset 2→5', 5, 6]);
  });

  it('starts with a reset when Last-Event-ID is newer than any id the log issued', async () => {
    const { subscription: s } = subscription({ events: [stored(1)], lastEventId: 9 });
    const iterator = s[Symbol.asyncIterator]();
    expect(ids(((await iterator.next()) as IteratorYieldResult<readonly StreamItem[]>).value)).toEqual(['reset 9→2']);
    deliver(s, stored(2));
    expect(ids(((await iterator.next()) as IteratorYieldResult<readonly StreamItem[]>).value)).toEqual([2]);
  });

  it('sends one reset when the log, empty when the subscription was opened, starts above the resume point by the time the replay reads it', async () => {
    // A log that lost its data starts its ids far above the old ones (redis-price-log.ts); the
    // first events after such a restart can land between the subscribe's bounds and the replay's
    // first page. The client learns of the loss once, with the id the new events start at.
    const events = [stored(1_000_001), stored(1_000_002)];
    const { subscription: s } = subscription({ events, bounds: null, liveAfter: 0, lastEventId: 3 });
    const iterator = s[Symbol.asyncIterator]();
    const [reset, ...rest] = ((await iterator.next()) as IteratorYieldResult<readonly StreamItem[]>).value;
    expect(reset).toEqual({ kind: 'reset', requestedId: 3, oldestId: 1_000_001 });
    expect(ids(rest)).toEqual([1_000_001, 1_000_002]);
  });

  it('replays from the start of an empty log without a reset when Last-Event-ID is 0', async () => {
    const { subscription: s } = subscription({ lastEventId: 0 });
    const pending = s[Symbol.asyncIterator]().next();
    deliver(s, stored(1));
    expect(ids(((await pending) as IteratorYieldResult<readonly StreamItem[]>).value)).toEqual([1]);
  });

  it('replays from the start the events appended after it found the log empty, when Last-Event-ID is 0', async () => {
    const { subscription: s } = subscription({ events: [stored(1), stored(2)], bounds: null, liveAfter: 0, lastEventId: 0 });
    expect(ids(((await s[Symbol.asyncIterator]().next()) as IteratorYieldResult<readonly StreamItem[]>).value)).toEqual([1, 2]);
  });

  it('reports no reset for a gap in the ids that pruning does not explain', async () => {
    // Ids 3 and 4 were never issued (the port allows an engine to skip ids); the resume point is retained.
    const { subscription: s } = subscription({ events: [stored(2), stored(5), stored(6)], lastEventId: 2, replayPageSize: 10 });
    expect(ids(((await s[Symbol.asyncIterator]().next()) as IteratorYieldResult<readonly StreamItem[]>).value)).toEqual([5, 6]);
  });

  it('delivers a page without a reset when the log is empty again by the time a gap in it is checked', async () => {
    const log: SubscriptionOptions['log'] = { readAfter: async (afterId) => (afterId < 5 ? [stored(5)] : []), bounds: async () => null };
    const { subscription: s } = subscription({ events: [stored(2)], lastEventId: 2, log });
    expect(ids(((await s[Symbol.asyncIterator]().next()) as IteratorYieldResult<readonly StreamItem[]>).value)).toEqual([5]);
  });

  it('ends only its own subscription when a readable listener throws', async () => {
    const { subscription: s } = subscription();
    const iterator = s[Symbol.asyncIterator]();
    const broken = new Error('listener failed');
    expect(
      s.whenReadable(() => {
        throw broken;
      }),
    ).toBe(false);
    deliver(s, stored(1));
    expect(s.signal.aborted).toBe(true);
    await expect(iterator.next()).rejects.toBe(broken);
  });

  it('skips a replay page that holds none of its topics rather than yield an empty batch', async () => {
    const { subscription: s } = subscription({ events: [stored(1, NL), stored(2, NL), stored(3)], lastEventId: 0 });
    expect(ids(((await s[Symbol.asyncIterator]().next()) as IteratorYieldResult<readonly StreamItem[]>).value)).toEqual([3]);
  });

  it('replays when next() is called without asking for the iterator first', async () => {
    const { subscription: s } = subscription({ events: [stored(1), stored(2)], lastEventId: 1 });
    expect(ids(((await s.next()) as IteratorYieldResult<readonly StreamItem[]>).value)).toEqual([2]);
  });

  it('ends with SubscriberOverflow when more than maxQueuedBytes wait while no consumer does', async () => {
    const { subscription: s, ended } = subscription({ maxQueuedBytes: 30 });
    const iterator = s[Symbol.asyncIterator]();
    deliver(s, stored(1), stored(2));
    expect(s.signal.aborted).toBe(true);
    expect(ended).toEqual([s]);
    await expect(iterator.next()).rejects.toBeInstanceOf(SubscriberOverflow);
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
  });

  it('holds exactly maxQueuedBytes, asks no wake while no consumer waits, and names the limit when it ends', async () => {
    // Each event is 29 bytes (8 of data, 21 of topic).
    const { subscription: s } = subscription({ maxQueuedBytes: 58 });
    const iterator = s[Symbol.asyncIterator]();
    expect(s.offer(item(stored(1)))).toBe(false);
    expect(s.offer(item(stored(2)))).toBe(false);
    expect(s.signal.aborted).toBe(false);
    s.offer(item(stored(3)));
    expect(s.signal.aborted).toBe(true);
    await expect(iterator.next()).rejects.toThrow('more than 58 bytes of events were waiting for this subscriber');
  });

  it('takes no event offered after its end', async () => {
    const { subscription: s } = subscription();
    const iterator = s[Symbol.asyncIterator]();
    s.end();
    expect(s.offer(item(stored(1)))).toBe(false);
    expect(s.pendingBytes).toBe(0);
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
  });

  it('does not count events against the limit while a consumer waits for them', async () => {
    const { subscription: s } = subscription({ maxQueuedBytes: 30 });
    const pending = s[Symbol.asyncIterator]().next();
    deliver(s, stored(1), stored(2), stored(3));
    expect(ids(((await pending) as IteratorYieldResult<readonly StreamItem[]>).value)).toEqual([1, 2, 3]);
    expect(s.signal.aborted).toBe(false);
  });

  it('ends the iteration when the replay cannot read the log, throwing its error once', async () => {
    const { subscription: s } = subscription({ events: [stored(1), stored(2)], lastEventId: 0, log: logOf([], true) });
    const iterator = s[Symbol.asyncIterator]();
    await expect(iterator.next()).rejects.toBeInstanceOf(ServiceUnavailable);
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
    expect(s.signal.aborted).toBe(true);
  });

  it('ends cleanly on end() and on return(), dropping what was queued, and calls onEnd once', async () => {
    const { subscription: s, ended } = subscription();
    const iterator = s[Symbol.asyncIterator]();
    const pending = iterator.next();
    s.end();
    expect(await pending).toEqual({ done: true, value: undefined });
    const other = subscription();
    deliver(other.subscription, stored(1));
    expect(await other.subscription[Symbol.asyncIterator]().return!()).toEqual({ done: true, value: undefined });
    expect(other.subscription.pendingBytes).toBe(0);
    s.end();
    expect(ended).toEqual([s]);
    expect(other.ended).toEqual([other.subscription]);
  });

  it('can be iterated once', () => {
    const { subscription: s } = subscription();
    s[Symbol.asyncIterator]();
    expect(() => s[Symbol.asyncIterator]()).toThrow('a subscription can be iterated once');
  });

  it('maps each batch, and turns the ending error into a last result when the mapping says how', async () => {
    const { subscription: s } = subscription();
    let done = 0;
    const iterator = s.map({ batch: (items) => ids(items).join(','), failed: (error) => ({ done: false, value: `failed: ${error.name}` }), done: () => (done += 1) });
    deliver(s, stored(1), stored(2));
    expect(await iterator.next()).toEqual({ done: false, value: '1,2' });
    s.end(new SubscriberOverflow(1));
    expect(await iterator.next()).toEqual({ done: false, value: 'failed: SubscriberOverflow' });
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
    expect(done).toBe(1);
  });
});

// The readiness protocol (stream/readiness.ts), end to end in one file: a body is an
// AsyncIterable to everyone, and only the writer reads its Readiness; what a subscription, the
// encoded body and the writer each do with pendingBytes, signal and whenReadable.
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { encodeEvent, encodeRetry } from '@catalog/contract/stream';
import { ServiceUnavailable } from '../../src/catalog/errors.ts';
import { writeFrames } from '../../src/http/event-stream-writer.ts';
import { silentLogger } from '../../src/logger.ts';
import type { StoredPriceEvent } from '../../src/prices/price-log.ts';
import { BatchEncoder } from '../../src/stream/batch-encoder.ts';
import { encodeSubscription } from '../../src/stream/encoded-subscription.ts';
import { closeBody, isStreamBody, READINESS, readinessOf, type Readiness, type StreamBody } from '../../src/stream/readiness.ts';
import { SubscriberOverflow, Subscription } from '../../src/stream/subscription.ts';
import { controlledBody, serveBody, slowResponse, turns, WRITING } from '../http/frame-writer-harness.ts';
import { openStream } from '../http/sse-client.ts';

const US = 'price:marketplacea:us';
const stored = (id: number): StoredPriceEvent => ({ id, topic: US, data: `{"id":${id}}` });

function liveSubscription(maxQueuedBytes = 1_000_000): Subscription {
  return new Subscription({
    topics: new Set([US]),
    lastEventId: null,
    liveAfter: 0,
    bounds: null,
    log: { readAfter: async () => [], bounds: async () => null },
    replayPageSize: 10,
    maxQueuedBytes,
    onEnd: () => {},
  });
}

/** Offers events as the hub does: offer each, then wake once if an offer asked for it. */
function deliver(subscription: Subscription, ...events: StoredPriceEvent[]): void {
  let wake = false;
  for (const event of events) wake = subscription.offer({ kind: 'event', event }) || wake;
  if (wake) subscription.wake();
}

/**
 * A controlled body with a Readiness the test drives (readable at once when `alwaysReadable`);
 * what the test puts in `handOver` is taken with take(), the rest pulled with next().
 */
function readyBody(pendingBytes = 0, alwaysReadable = false) {
  const body = controlledBody();
  const handOver: string[] = [];
  const ended = new AbortController();
  let listener: (() => void) | null = null;
  const readiness: Readiness = {
    get pendingBytes() {
      return pendingBytes;
    },
    signal: ended.signal,
    whenReadable(onReadable) {
      if (alwaysReadable || body.state.returned || handOver.length > 0) return true;
      listener = onReadable;
      return false;
    },
    take() {
      const frame = handOver.shift();
      return frame === undefined ? null : { done: false, value: frame };
    },
  };
  const withReadiness: StreamBody = { [READINESS]: readiness, [Symbol.asyncIterator]: () => body[Symbol.asyncIterator]() };
  return { body: withReadiness, feed: body, handOver, ended, readable: () => listener?.() };
}

describe('readinessOf', () => {
  it('finds no Readiness on a plain AsyncIterable, and the one a body carries', () => {
    expect(readinessOf(controlledBody())).toBeUndefined();
    const subscription = liveSubscription();
    expect(readinessOf(subscription)).toBe(subscription);
  });
});

describe('Subscription as a Readiness', () => {
  it('counts the bytes of events offered and not taken, and aborts its signal when it ends', async () => {
    const subscription = liveSubscription();
    const batches = subscription[Symbol.asyncIterator]();
    deliver(subscription, stored(1));
    expect(subscription.pendingBytes).toBe('{"id":1}'.length + US.length);
    await batches.next();
    expect(subscription.pendingBytes).toBe(0);
    expect(subscription.signal.aborted).toBe(false);
    subscription.end();
    expect(subscription.signal.aborted).toBe(true);
  });

  it('tells a consumer waiting with whenReadable once, when events arrive or it ends', () => {
    const subscription = liveSubscription();
    subscription.map({ batch: (items) => items });
    let told = 0;
    expect(subscription.whenReadable(() => (told += 1))).toBe(false);
    deliver(subscription, stored(1));
    expect(told).toBe(1);
    expect(subscription.whenReadable(() => (told += 1))).toBe(true);
    const idle = liveSubscription();
    idle.map({ batch: (items) => items });
    let ends = 0;
    expect(idle.whenReadable(() => (ends += 1))).toBe(false);
    idle.end();
    expect(ends).toBe(1);
  });

  it('does not count events against its limit while a consumer waits with whenReadable', () => {
    const subscription = liveSubscription(10);
    subscription.map({ batch: (items) => items });
    expect(subscription.whenReadable(() => {})).toBe(false);
    deliver(subscription, stored(1), stored(2));
    expect(subscription.signal.aborted).toBe(false);
  });
});

describe('Subscription.take', () => {
  it('hands over what a next() would settle with at once: the queued events, then the end; null while a next() would wait', () => {
    const subscription = liveSubscription();
    // Not iterated yet: next() maps it first.
    expect(subscription.take()).toBeNull();
    subscription.map({ batch: (items) => items.map((item) => (item.kind === 'event' ? item.event.id : item.kind)) });
    expect(subscription.take()).toBeNull();
    deliver(subscription, stored(1), stored(2));
    expect(subscription.take()).toEqual({ done: false, value: [1, 2] });
    expect(subscription.pendingBytes).toBe(0);
    expect(subscription.take()).toBeNull();
    deliver(subscription, stored(3));
    subscription.end();
    // The end drops what was queued, as next() does.
    expect(subscription.take()).toEqual({ done: true, value: undefined });
  });

  it('gives null during a replay, which next() reads from the log', async () => {
    const events = [stored(1), stored(2)];
    const subscription = new Subscription({
      topics: new Set([US]),
      lastEventId: 0,
      liveAfter: 2,
      bounds: { oldestId: 1, newestId: 2 },
      log: { readAfter: async (afterId) => events.filter((event) => event.id > afterId), bounds: async () => ({ oldestId: 1, newestId: 2 }) },
      replayPageSize: 10,
      maxQueuedBytes: 1_000,
      onEnd: () => {},
    });
    const batches = subscription.map({ batch: (items) => items.map((item) => (item.kind === 'event' ? item.event.id : item.kind)) });
    deliver(subscription, stored(3));
    expect(subscription.take()).toBeNull();
    expect(await batches.next()).toEqual({ done: false, value: [1, 2] });
    expect(subscription.take()).toBeNull();
    expect(await batches.next()).toEqual({ done: false, value: [3] });
  });

  it('throws the ending error once when the mapping does not turn it into a result, as next() rejects, then gives the end', () => {
    const subscription = liveSubscription();
    subscription.map({ batch: (items) => items });
    subscription.end(new SubscriberOverflow(1));
    expect(() => subscription.take()).toThrow(SubscriberOverflow);
    expect(subscription.take()).toEqual({ done: true, value: undefined });
  });
});

describe('encodeSubscription as a StreamBody', () => {
  it('hands its live batches over with take() once the opening frame is out, encoded; the opening and the end after a retry hint go through next()', async () => {
    const subscription = liveSubscription();
    const body = encodeSubscription(subscription, new BatchEncoder(), { opening: 'retry: 2000\n\n', unavailableRetryMs: 5000, log: silentLogger });
    const readiness = readinessOf(body)!;
    const frames = body[Symbol.asyncIterator]();
    expect(readiness.take()).toBeNull();
    expect((await frames.next()).value).toBe('retry: 2000\n\n');
    expect(readiness.take()).toBeNull();
    deliver(subscription, stored(1), stored(2));
    const taken = readiness.take() as IteratorYieldResult<Buffer>;
    expect(taken.done).toBe(false);
    expect(taken.value.toString()).toBe(encodeEvent({ id: 1, event: US, data: '{"id":1}' }) + encodeEvent({ id: 2, event: US, data: '{"id":2}' }));
    subscription.end(new ServiceUnavailable('price log'));
    expect(readiness.take()).toEqual({ done: false, value: encodeRetry(5000) });
    expect(readiness.take()).toBeNull();
    expect(await frames.next()).toEqual({ done: true, value: undefined });
  });


  it('after its opening frame, is not readable until events arrive (no pull, so no pending next(), while idle)', async () => {
    const subscription = liveSubscription();
    const body = encodeSubscription(subscription, new BatchEncoder(), { opening: 'retry: 2000\n\n', unavailableRetryMs: 5000, log: silentLogger });
    const readiness = readinessOf(body)!;
    await body[Symbol.asyncIterator]().next();
    let told = 0;
    expect(readiness.whenReadable(() => (told += 1))).toBe(false);
    deliver(subscription, stored(1));
    expect(told).toBe(1);
  });

  it('is readable at once for its opening frame, then as its subscription is; its pending bytes and signal are the subscription’s', async () => {
    const subscription = liveSubscription();
    const body = encodeSubscription(subscription, new BatchEncoder(), { opening: 'retry: 2000\n\n', unavailableRetryMs: 5000, log: silentLogger });
    const readiness = readinessOf(body)!;
    const frames = body[Symbol.asyncIterator]();
    expect(readiness.whenReadable(() => {})).toBe(true);
    expect((await frames.next()).value).toBe('retry: 2000\n\n');
    deliver(subscription, stored(1));
    await frames.next();
    let told = 0;
    expect(readiness.whenReadable(() => (told += 1))).toBe(false);
    deliver(subscription, stored(2));
    expect(told).toBe(1);
    expect(readiness.pendingBytes).toBe(subscription.pendingBytes);
    expect(readiness.pendingBytes).toBeGreaterThan(0);
    subscription.end(new SubscriberOverflow(1));
    expect(readiness.signal.aborted).toBe(true);
    expect(readiness.whenReadable(() => {})).toBe(true);
  });
});

describe('writeFrames with a Readiness', () => {
  it('pulls only when the body says a pull would not wait, and writes what it then takes', async () => {
    const { body, feed, readable } = readyBody();
    feed.push('retry: 1000\n\n');
    const { url, written } = await serveBody(body);
    const stream = await openStream(url, {});
    await stream.frames(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The opening frame was pulled, and then nothing until the body is readable.
    expect(feed.state.pulls).toBe(1);
    feed.push('id: 1\ndata: a\n\n');
    readable();
    expect(await stream.frames(1)).toEqual([{ id: '1', data: 'a', comments: [] }]);
    expect(feed.state.pulls).toBe(2);
    stream.close();
    expect(await written).toBe('resolved');
    expect(feed.state.returned).toBe(true);
  });

  it('writes what the body hands over with take() without asking next()', async () => {
    const { body, feed, handOver, readable } = readyBody();
    feed.push('retry: 1000\n\n');
    const { url, written } = await serveBody(body);
    const stream = await openStream(url, {});
    await stream.frames(1);
    handOver.push('id: 1\ndata: a\n\n', 'id: 2\ndata: b\n\n');
    readable();
    expect(await stream.frames(2)).toEqual([
      { id: '1', data: 'a', comments: [] },
      { id: '2', data: 'b', comments: [] },
    ]);
    // Only the opening frame was pulled with next().
    expect(feed.state.pulls).toBe(1);
    stream.close();
    expect(await written).toBe('resolved');
  });

  it('counts pendingBytes toward the limit, cuts the consumer over it, and returns the body', async () => {
    const { body, feed } = readyBody(2000);
    const { url, lines, written } = await serveBody(body, { maxBufferBytes: 1000 });
    const stream = await openStream(url, {});
    feed.push(': x\n\n');
    expect(await stream.ended()).toBe('aborted');
    expect(await written).toBe('resolved');
    expect(feed.state.returned).toBe(true);
    expect(lines).toMatchObject([{ msg: 'slow subscriber disconnected', kernel_bytes: 0 }]);
  });

  it('stops waiting for a write when the signal says the body ended meanwhile, and cuts a body that overflowed', async () => {
    const { body, feed, ended } = readyBody(0, true);
    const { res, written } = slowResponse();
    const done = writeFrames(res as unknown as ServerResponse, body, WRITING);
    feed.push('id: 1\ndata: a\n\n');
    await turns();
    expect(written).toEqual(['id: 1\ndata: a\n\n']);
    // The client never reads; the body overflows upstream and ends.
    feed.push(new SubscriberOverflow(10));
    ended.abort();
    await done;
    expect(res.destroyed).toBe(true);
    expect(written).toEqual(['id: 1\ndata: a\n\n']);
  });
});

describe('isStreamBody and closeBody', () => {
  it('tells a stream body from the other bodies a handler returns', () => {
    expect(isStreamBody(controlledBody())).toBe(true);
    expect(isStreamBody({ [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true, value: undefined }) }) })).toBe(true);
    expect(isStreamBody({ items: [] })).toBe(false);
    expect(isStreamBody(null)).toBe(false);
    expect(isStreamBody('text')).toBe(false);
    expect(isStreamBody(undefined)).toBe(false);
  });

  it('ends a body through its iterator return(), and accepts an iterator without one', async () => {
    let returned = 0;
    const body: StreamBody = {
      [Symbol.asyncIterator]: () => ({
        next: async () => ({ done: true, value: undefined }),
        return: async () => {
          returned += 1;
          return { done: true, value: undefined };
        },
      }),
    };
    await closeBody(body);
    expect(returned).toBe(1);
    await expect(closeBody({ [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true, value: undefined }) }) })).resolves.toBeUndefined();
  });
});

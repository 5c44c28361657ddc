// The readiness protocol (stream/readiness.ts), end to end in one file: a body is an
// AsyncIterable to everyone, and only the writer reads its Readiness; what a subscription, the
// encoded body and the writer each do with pendingBytes, signal and whenReadable.
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
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

/** A controlled body with a Readiness the test drives (readable at once when `alwaysReadable`). */
function readyBody(pendingBytes = 0, alwaysReadable = false) {
  const body = controlledBody();
  const ended = new AbortController();
  let listener: (() => void) | null = null;
  const readiness: Readiness = {
    get pendingBytes() {
      return pendingBytes;
    },
    signal: ended.signal,
    whenReadable(onReadable) {
      if (alwaysReadable || body.state.returned) return true;
      listener = onReadable;
      return false;
    },
  };
  const withReadiness: StreamBody = { [READINESS]: readiness, [Symbol.asyncIterator]: () => body[Symbol.asyncIterator]() };
  return { body: withReadiness, feed: body, ended, readable: () => listener?.() };
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

describe('encodeSubscription as a StreamBody', () => {
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

// The client against the stream mock (@catalog/stream-mock), which serves the AsyncAPI document with
// the server's frame encoder: what a consumer team sees when it builds against `pnpm mock`.
import { afterEach, describe, expect, it } from 'vitest';
import { startStreamMock, type StreamMock } from '@catalog/stream-mock';
import { PriceStreamError, createCatalogClient } from '../src/index.ts';
import type { PriceStreamItem, PriceStreamOptions } from '../src/index.ts';
import { take } from './support/fake-stream-server.ts';

let mock: StreamMock | undefined;
afterEach(async () => {
  await mock?.close();
  mock = undefined;
});

function stream(url: string, options: Partial<PriceStreamOptions> & { apiKey?: string } = {}): AsyncGenerator<PriceStreamItem, void, undefined> {
  const { apiKey = 'pro-key', ...rest } = options;
  const client = createCatalogClient({ baseUrl: 'http://127.0.0.1:1', sseUrl: url, apiKey });
  return client.priceStream({ topics: ['price:marketplacea:us', 'price:marketplaceb:nl'], random: () => 0, ...rest });
}

describe('priceStream against the stream mock', () => {
  it('yields generated events on the subscribed topics in id order, through heartbeats', async () => {
    mock = await startStreamMock({ eventIntervalMs: 40, heartbeatMs: 10 });
    const items = await take(stream(mock.url), 6);
    expect(items.every((item) => item.type === 'price' && ['price:marketplacea:us', 'price:marketplaceb:nl'].includes(item.topic))).toBe(true);
    const ids = items.map((item) => item.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('resumes after a data loss with a reset, then every new event', async () => {
    const current = await startStreamMock({ eventIntervalMs: 60_000 });
    mock = current;
    const first = current.publish('price:marketplacea:us');
    const items = await take(stream(current.url, { lastEventId: first - 1 }), 4, (seen) => {
      if (seen.length === 1) {
        current.loseData();
        setTimeout(() => [current.publish('price:marketplacea:us'), current.publish('price:marketplaceb:nl')], 50);
      }
    });
    expect(items[0]).toMatchObject({ type: 'price', id: first });
    expect(items[1]).toMatchObject({ type: 'reset', requestedId: first });
    expect(items.slice(2).map((item) => item.type)).toEqual(['price', 'price']);
    expect(items[2]?.id).toBeGreaterThan(first);
  });

  it('throws PriceStreamError at once for a free key and for a bad topic', async () => {
    mock = await startStreamMock();
    await expect(take(stream(mock.url, { apiKey: 'free-key' }), 1)).rejects.toMatchObject({ name: 'PriceStreamError', status: 403, code: 'forbidden' });
    await expect(take(stream(mock.url, { topics: ['price:shop:us'] }), 1)).rejects.toMatchObject({ status: 400, code: 'invalid_topics' });
  });

  it('waits out Retry-After while the key holds its maximum of streams, then subscribes', async () => {
    const current = await startStreamMock({ maxStreamsPerKey: 1, retryAfterSeconds: 1, eventIntervalMs: 60_000 });
    mock = current;
    const holder = new AbortController();
    const held = take(stream(current.url, { signal: holder.signal }), 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const refusals: unknown[] = [];
    const second = take(stream(current.url, { onReconnect: ({ error }) => refusals.push(error) }), 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    holder.abort();
    await held;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    current.publish('price:marketplacea:us');
    expect(await second).toHaveLength(1);
    expect(refusals[0]).toBeInstanceOf(PriceStreamError);
    expect(refusals[0]).toMatchObject({ status: 429, code: 'too_many_streams', retryAfterMs: 1000 });
  });
});

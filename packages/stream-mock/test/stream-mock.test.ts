import { afterEach, describe, expect, it } from 'vitest';
import { startStreamMock, type StreamMock } from '../src/stream-mock.ts';

let mock: StreamMock | undefined;
afterEach(async () => {
  await mock?.close();
  mock = undefined;
});

const PRO = { Authorization: 'Bearer pro-key' };

/** Reads the stream as text until `done(text)` holds, then cancels it. */
async function readUntil(url: string, headers: Record<string, string>, done: (text: string) => boolean): Promise<string> {
  const response = await fetch(`${url}/v1/stream`, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!done(text)) {
    const { done: ended, value } = await reader.read();
    if (ended) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return text;
}

const idsOf = (text: string): number[] => [...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));

describe('streamPrices (mock)', () => {
  it('sends retry first, then generated events validated against the document, with 16-digit increasing ids, and heartbeats', async () => {
    mock = await startStreamMock({ heartbeatMs: 30, eventIntervalMs: 50 });
    const text = await readUntil(mock.url, { ...PRO, Topics: 'price:marketplacea:us, price:marketplaceb:nl' }, (t) => idsOf(t).length >= 4 && t.includes(': heartbeat\n\n'));
    expect(text.startsWith('retry: 2000\n\n')).toBe(true);
    const ids = idsOf(text);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids.every((id) => String(id).length === 16 && Number.isSafeInteger(id))).toBe(true);
    const frame = /id: \d+\nevent: (price:[a-z]+:[a-z]{2})\ndata: (\{.*\})\n\n/.exec(text);
    expect(['price:marketplacea:us', 'price:marketplaceb:nl']).toContain(frame?.[1]);
    expect(JSON.parse(frame?.[2] ?? '{}')).toMatchObject({ source: expect.stringMatching(/^marketplace[ab]$/), currency: 'USD' });
  });

  it('replays after Last-Event-ID, and answers an id older than the log or above it with a reset first', async () => {
    mock = await startStreamMock({ eventIntervalMs: 60_000 });
    const ids = [mock.publish('price:marketplacea:us'), mock.publish('price:marketplaceb:nl'), mock.publish('price:marketplacea:us')];
    const topics = { ...PRO, Topics: 'price:marketplacea:us' };
    const resumed = await readUntil(mock.url, { ...topics, 'Last-Event-ID': String(ids[0]) }, (t) => t.includes(`id: ${ids[2]}\n`));
    expect(idsOf(resumed)).toEqual([ids[2]]);
    expect(resumed).not.toContain('event: reset');
    const old = await readUntil(mock.url, { ...topics, 'Last-Event-ID': '1' }, (t) => t.includes(`id: ${ids[2]}\n`));
    expect(old).toContain(`retry: 2000\n\nevent: reset\ndata: {"requested_id":1,"oldest_id":${ids[0]}}\n\nid: ${ids[0]}\n`);
    const above = String((ids[2] ?? 0) + 100);
    const ahead = await readUntil(mock.url, { ...topics, 'Last-Event-ID': above }, (t) => t.includes('event: reset'));
    expect(ahead).toBe(`retry: 2000\n\nevent: reset\ndata: {"requested_id":${above},"oldest_id":${(ids[2] ?? 0) + 1}}\n\n`);
  });

  it('applies a Filter to the replay and to live events, like the server', async () => {
    mock = await startStreamMock({ eventIntervalMs: 60_000 });
    const first = mock.publish('price:marketplacea:us');
    mock.publish('price:marketplaceb:nl');
    const headers = { ...PRO, Topics: 'price:marketplacea:us, price:marketplaceb:nl', Filter: 'market = "nl" OR price < 0', 'Last-Event-ID': String(first - 1) };
    const current = mock;
    let livePublished = false;
    const text = await readUntil(mock.url, headers, (t) => {
      // Once the replay is in, publish live events: the filter must narrow those too.
      if (idsOf(t).length === 1 && !livePublished) {
        livePublished = true;
        current.publish('price:marketplacea:us');
        current.publish('price:marketplaceb:nl');
      }
      return idsOf(t).length >= 2;
    });
    expect(idsOf(text)).toEqual([first + 1, first + 3]);
    expect(text).not.toContain('"market":"US"');
  });

  it('after a data loss, ends open streams with retry: 5000, as the server does, and starts ids above every earlier one', async () => {
    const current = await startStreamMock({ eventIntervalMs: 60_000 });
    mock = current;
    const before = current.publish('price:marketplacea:us');
    const response = await fetch(`${current.url}/v1/stream`, { headers: { ...PRO, Topics: 'price:marketplacea:us' } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await fetch(`${current.url}/_mock/lose-data`, { method: 'POST' });
    expect(await response.text()).toBe('retry: 2000\n\nretry: 5000\n\n');
    expect(current.publish('price:marketplacea:us')).toBeGreaterThan(before);
  });

  it.each([
    ['401 without a key', {}, 401, 'unauthorized'],
    ['403 for a free key', { Authorization: 'Bearer free-key', Topics: 'price:marketplacea:us' }, 403, 'forbidden'],
    ['400 for a bad topic', { ...PRO, Topics: 'price:shop:us' }, 400, 'invalid_topics'],
    ['400 for a bad Last-Event-ID', { ...PRO, Topics: 'price:marketplacea:us', 'Last-Event-ID': 'abc' }, 400, 'invalid_request'],
    ['400 for a Filter with a syntax error', { ...PRO, Topics: 'price:marketplacea:us', Filter: 'price <' }, 400, 'invalid_filter'],
    ['400 for a Filter naming an unknown field', { ...PRO, Topics: 'price:marketplacea:us', Filter: 'colour = red' }, 400, 'invalid_filter'],
  ])('refuses with %s, as an ErrorBody', async (_name, headers, status, code) => {
    mock = await startStreamMock();
    const response = await fetch(`${mock.url}/v1/stream`, { headers });
    expect(response.status).toBe(status);
    expect(await response.json()).toMatchObject({ status: 'error', error: code, message: expect.any(String), data: null, meta: null });
  });

  it('refuses a key its stream beyond maxStreamsPerKey with 429 too_many_streams and Retry-After', async () => {
    mock = await startStreamMock({ maxStreamsPerKey: 1, retryAfterSeconds: 3 });
    const headers = { ...PRO, Topics: 'price:marketplacea:us' };
    const first = await fetch(`${mock.url}/v1/stream`, { headers });
    expect(first.status).toBe(200);
    const second = await fetch(`${mock.url}/v1/stream`, { headers });
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('3');
    expect(await second.json()).toMatchObject({ error: 'too_many_streams' });
    expect((await fetch(`${mock.url}/v1/stream`, { headers: { Authorization: 'Bearer other-key', Topics: 'price:marketplacea:us' } })).status).toBe(200);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { PriceStreamError, createCatalogClient } from '../src/index.ts';
import type { PriceStreamItem, PriceStreamOptions } from '../src/index.ts';
import { encodeComment, encodeEvent, encodeReset, encodeRetry } from '@catalog/contract/stream';
import { fixedPriceEvent, priceFrame, startFakeStreamServer, take, until } from './support/fake-stream-server.ts';
import type { FakeStreamServer, StreamConnection } from './support/fake-stream-server.ts';

let server: FakeStreamServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(onConnect: (connection: StreamConnection) => void, port = 0): Promise<FakeStreamServer> {
  server = await startFakeStreamServer(onConnect, port);
  return server;
}

function stream(url: string, options: Partial<PriceStreamOptions> = {}): AsyncGenerator<PriceStreamItem, void, undefined> {
  const client = createCatalogClient({ baseUrl: 'http://127.0.0.1:1', sseUrl: url, apiKey: 'pro-key' });
  return client.priceStream({ topics: ['price:marketplacea:us', 'price:marketplaceb:nl'], random: () => 0, ...options });
}

const ids = (items: PriceStreamItem[]) => items.map((item) => (item.type === 'price' ? item.id : `reset:${item.oldestId}`));

describe('priceStream', () => {
  it('subscribes with Topics and a bearer key and yields typed price items', async () => {
    const { url, connections } = await serve((c) => c.open('retry: 2000\n\n', ': heartbeat\n\n', priceFrame(4212, 'price:marketplaceb:nl', fixedPriceEvent({ source: 'marketplaceb', market: 'NL' }))));

    const items = await take(stream(url), 1);

    expect(items).toEqual([{ type: 'price', id: 4212, topic: 'price:marketplaceb:nl', data: fixedPriceEvent({ source: 'marketplaceb', market: 'NL' }) }]);
    expect(connections[0]?.headers['topics']).toBe('price:marketplacea:us, price:marketplaceb:nl');
    expect(connections[0]?.headers['authorization']).toBe('Bearer pro-key');
    expect(connections[0]?.headers['accept']).toBe('text/event-stream');
    expect(connections[0]?.headers['last-event-id']).toBeUndefined();
  });

  it('sends the given lastEventId on the first request', async () => {
    const { url, connections } = await serve((c) => c.open(priceFrame(42)));
    await take(stream(url, { lastEventId: 41 }), 1);
    expect(connections[0]?.headers['last-event-id']).toBe('41');
  });

  it('resumes with Last-Event-ID after an abrupt disconnect and after a clean close, losing and repeating nothing', async () => {
    const log = Array.from({ length: 9 }, (_, i) => i + 1);
    const { url, connections } = await serve((c) => {
      const after = Number(c.headers['last-event-id'] ?? '0');
      const frames = log.filter((id) => id > after).slice(0, 3).map((id) => priceFrame(id));
      if (c.index === 1) {
        // A frame split across writes must still arrive whole.
        const [first, second, third] = frames as [string, string, string];
        c.open(first, second.slice(0, 9));
        setTimeout(() => {
          c.res.write(second.slice(9));
          c.res.end(third);
        }, 20);
        return;
      }
      c.open('retry: 10\n\n', ...frames);
    });
    const acknowledged: number[] = [];

    const items = await take(stream(url, { onLastEventId: (id) => acknowledged.push(id) }), 9, (seen) => {
      if (seen.length === 3) connections[0]?.res.socket?.destroy();
    });

    expect(ids(items)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(connections.map((c) => c.headers['last-event-id'])).toEqual([undefined, '3', '6']);
    // The loop left at event 9, so 9 was never acknowledged.
    expect(acknowledged).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('reconnects with Last-Event-ID when nothing arrives within idleTimeoutMs', async () => {
    const { url, connections } = await serve((c) => (c.index === 0 ? c.open(priceFrame(1)) : c.open(priceFrame(2))));
    const reconnects: unknown[] = [];

    const items = await take(stream(url, { idleTimeoutMs: 100, onReconnect: ({ error }) => reconnects.push(error) }), 2);

    expect(ids(items)).toEqual([1, 2]);
    expect(connections.map((c) => c.headers['last-event-id'])).toEqual([undefined, '1']);
    expect(String(reconnects[0])).toMatch(/nothing received for 100 ms/);
    await connections[0]?.closed;
  });

  it('does not count the time the consumer spends on an item as idle', async () => {
    const { url, connections } = await serve((c) => {
      if (c.headers['last-event-id'] !== undefined) return c.open(priceFrame(2));
      c.open(priceFrame(1));
      setTimeout(() => c.res.write(priceFrame(2)), 500);
    });
    const items: PriceStreamItem[] = [];
    for await (const item of stream(url, { idleTimeoutMs: 300 })) {
      items.push(item);
      if (items.length === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 400)); // slower than the idle timeout
    }
    expect(ids(items)).toEqual([1, 2]);
    expect(connections).toHaveLength(1);
  });

  it('keeps a connection that only sends heartbeats', async () => {
    const { url, connections } = await serve((c) => {
      c.open(priceFrame(1));
      const beat = setInterval(() => c.res.write(encodeComment('heartbeat')), 20);
      setTimeout(() => c.res.write(priceFrame(2)), 700);
      c.res.once('close', () => clearInterval(beat));
    });
    expect(ids(await take(stream(url, { idleTimeoutMs: 300 }), 2))).toEqual([1, 2]);
    expect(connections).toHaveLength(1);
  });

  it('names the topic from the payload when a frame has no event field', async () => {
    const { url } = await serve((c) => c.open(`id: 9\ndata: ${JSON.stringify(fixedPriceEvent({ source: 'marketplaceb', market: 'NL' }))}\n\n`));
    const [item] = await take(stream(url), 1);
    expect(item).toMatchObject({ type: 'price', id: 9, topic: 'price:marketplaceb:nl' });
  });

  it('follows the stream across two server restarts, waiting out the refused connections between them', async () => {
    const log = Array.from({ length: 9 }, (_, i) => i + 1);
    const replay = (c: StreamConnection) => {
      const after = Number(c.headers['last-event-id'] ?? '0');
      c.open('retry: 20\n\n', ...log.filter((id) => id > after).slice(0, 3).map((id) => priceFrame(id)));
    };
    let current = await serve(replay);
    const port = Number(new URL(current.url).port);
    const lastEventIds: (string | undefined)[] = [];
    const refusedAttempts: number[] = [];

    const restart = async () => {
      lastEventIds.push(...current.connections.map((c) => c.headers['last-event-id'] as string | undefined));
      await current.close();
      await new Promise((resolve) => setTimeout(resolve, 150));
      current = await serve(replay, port);
    };
    let restarting = Promise.resolve();
    const items = await take(
      stream(current.url, { random: () => 0.5, maxRetryDelayMs: 100, onReconnect: ({ attempt }) => refusedAttempts.push(attempt) }),
      9,
      (seen) => {
        if (seen.length === 3 || seen.length === 6) restarting = restart();
      },
    );
    await restarting;
    lastEventIds.push(...current.connections.map((c) => c.headers['last-event-id'] as string | undefined));

    expect(ids(items)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(lastEventIds).toEqual([undefined, '3', '6']);
    expect(Math.max(...refusedAttempts)).toBeGreaterThan(1);
  });

  it('drops an event the server sends again after a resume', async () => {
    const { url } = await serve((c) => {
      if (c.index === 0) c.openAndEnd(priceFrame(1), priceFrame(2));
      else c.open(priceFrame(2), priceFrame(3));
    });
    expect(ids(await take(stream(url), 3))).toEqual([1, 2, 3]);
  });

  it('honours retry: from the server for the reconnect delay', async () => {
    const { url, connections } = await serve((c) => {
      if (c.index === 0) c.openAndEnd('retry: 300\n\n', priceFrame(1));
      else if (c.index === 1) c.openAndEnd('retry: 20\n\n', priceFrame(2));
      else c.open(priceFrame(3));
    });

    await take(stream(url, { random: () => 0.999 }), 3);

    const [first, second, third] = connections as [StreamConnection, StreamConnection, StreamConnection];
    expect(second.openedAt - first.openedAt).toBeGreaterThanOrEqual(280);
    expect(third.openedAt - second.openedAt).toBeLessThan(250);
  });

  it('backs off exponentially while refused with 503, and starts over after a successful connect', async () => {
    const { url } = await serve((c) => {
      if (c.index === 0 || c.index === 4) c.openAndEnd('retry: 10\n\n', priceFrame(c.index + 1));
      else if (c.index < 4) c.refuse(503, 'service_unavailable', 'The price log is unreachable.');
      else c.open(priceFrame(100));
    });
    const reconnects: { attempt: number; delayMs: number; error: unknown }[] = [];

    const items = await take(stream(url, { random: () => 0.999, onReconnect: (info) => reconnects.push(info) }), 3);

    expect(ids(items)).toEqual([1, 5, 100]);
    expect(reconnects.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 1]);
    expect(reconnects.map((r) => r.delayMs)).toEqual([9, 19, 39, 79, 9]);
    expect(reconnects[1]?.error).toMatchObject({ status: 503, code: 'service_unavailable' });
  });

  it('caps one backoff delay at maxRetryDelayMs', async () => {
    const { url } = await serve((c) => {
      if (c.index < 3) c.refuse(500, 'internal_error', 'boom');
      else c.open(priceFrame(1));
    });
    const delays: number[] = [];
    await take(stream(url, { random: () => 0.999, maxRetryDelayMs: 50, onReconnect: ({ delayMs }) => delays.push(delayMs) }), 1);
    expect(delays).toEqual([49, 49, 49]);
  });

  it.each([
    [400, 'invalid_topics', 'Topic "price:nowhere:us" is not price:<source>:<market>.'],
    [401, 'unauthorized', 'Send your API key in the Authorization header.'],
    [403, 'forbidden', 'The price stream needs the pro plan.'],
  ] as const)('stops at once with PriceStreamError on %i', async (status, code, message) => {
    const { url, connections } = await serve((c) => c.refuse(status, code, message));

    const error = await take(stream(url), 1).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PriceStreamError);
    expect(error).toMatchObject({ status, code, message, requestId: `refused-${status}` });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(connections).toHaveLength(1);
  });

  it('yields a reset notice before the replayed events', async () => {
    const { url } = await serve((c) => c.open('event: reset\ndata: {"requested_id":1200,"oldest_id":7001}\n\n', priceFrame(7001), priceFrame(7002)));

    const acknowledged: number[] = [];
    const items = await take(stream(url, { lastEventId: '1200', onLastEventId: (id) => acknowledged.push(id) }), 3);

    expect(items[0]).toEqual({ type: 'reset', requestedId: 1200, oldestId: 7001, id: 7000, topic: 'reset' });
    // A reset is not an event to acknowledge; the loop left at 7002.
    expect(acknowledged).toEqual([7001]);
    expect(ids(items.slice(1))).toEqual([7001, 7002]);
  });

  it('ends the iterator and closes the connection when the signal aborts mid-stream', async () => {
    const { url, connections } = await serve((c) => c.open(priceFrame(1)));
    const controller = new AbortController();
    const items: PriceStreamItem[] = [];
    let reconnects = 0;

    const done = (async () => {
      for await (const item of stream(url, { signal: controller.signal, onReconnect: () => (reconnects += 1) })) items.push(item);
    })();
    await until(() => items.length === 1);
    const abortedAt = Date.now();
    controller.abort();
    await done;

    expect(Date.now() - abortedAt).toBeLessThan(500);
    await connections[0]?.closed;
    expect(connections).toHaveLength(1);
    expect(reconnects).toBe(0);
  });

  it('ends at once when the signal aborts during a backoff', async () => {
    const { url, connections } = await serve((c) => c.refuse(503, 'service_unavailable', 'down'));
    const controller = new AbortController();

    const done = take(stream(url, { signal: controller.signal, random: () => 0.999, maxRetryDelayMs: 60_000 }), 1);
    await until(() => connections.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const abortedAt = Date.now();
    controller.abort();

    expect(await done).toEqual([]);
    expect(Date.now() - abortedAt).toBeLessThan(500);
  });

  it('closes the connection when the loop is left early', async () => {
    const { url, connections } = await serve((c) => c.open(priceFrame(1), priceFrame(2)));
    await take(stream(url), 1);
    await connections[0]?.closed;
    expect(connections[0]?.res.destroyed || connections[0]?.res.writableEnded).toBe(true);
  });

  it('stops at once on 404, and retries 408 like a server error', async () => {
    const refusedForGood = await serve((c) => c.refuse(404, 'not_found', 'No such stream.'));
    await expect(take(stream(refusedForGood.url), 1)).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await refusedForGood.close();
    const { url, connections } = await serve((c) => (c.index === 0 ? c.refuse(408, 'invalid_request', 'Too slow.') : c.open(priceFrame(1))));
    const reconnects: unknown[] = [];
    expect(ids(await take(stream(url, { onReconnect: ({ error }) => reconnects.push(error) }), 1))).toEqual([1]);
    expect(reconnects[0]).toMatchObject({ status: 408 });
    expect(connections).toHaveLength(2);
  });

  it('waits out a Retry-After given as an HTTP date, and ignores one it cannot read', async () => {
    const { url } = await serve((c) => {
      if (c.index === 0) c.refuse(503, 'service_unavailable', 'down', { 'Retry-After': new Date(Date.now() + 3_000).toUTCString() });
      else if (c.index === 1) c.refuse(503, 'service_unavailable', 'down', { 'Retry-After': 'soon' });
      else c.open(priceFrame(1));
    });
    const refusals: { delayMs: number; error: unknown }[] = [];
    await take(stream(url, { onReconnect: (info) => refusals.push(info) }), 1);
    expect(refusals[0]?.delayMs).toBeGreaterThan(1_000);
    expect(refusals[0]?.delayMs).toBeLessThanOrEqual(3_000);
    expect(refusals[1]).toMatchObject({ delayMs: 0, error: { retryAfterMs: undefined } });
  });

  it('sends the filter as UTF-8 bytes, a trimmed lastEventId, and asks the stream path under a base URL with trailing slashes', async () => {
    const { url, connections } = await serve((c) => c.open(priceFrame(42)));
    await take(stream(`${url}//`, { filter: 'size = "½"', lastEventId: ' 41 ' }), 1);
    expect(Buffer.from(String(connections[0]?.headers['filter']), 'latin1').toString('utf8')).toBe('size = "½"');
    expect(connections[0]?.headers['last-event-id']).toBe('41');
    expect(connections[0]?.res.req.url).toBe('/v1/stream');
  });

  it('skips frames the contract does not define: an id that is not a number, a reset without its ids, data that is not a JSON object', async () => {
    const { url } = await serve((c) =>
      c.open(
        `id: x1\nevent: price:marketplacea:us\ndata: ${JSON.stringify(fixedPriceEvent())}\n\n`,
        'event: reset\ndata: {"requested_id":1}\n\n',
        'event: reset\ndata: not json\n\n',
        'event: reset\ndata: null\n\n',
        'event: reset\ndata: {"oldest_id":5}\n\n',
        `id: 5x\nevent: price:marketplacea:us\ndata: ${JSON.stringify(fixedPriceEvent())}\n\n`,
        `id: 12345678901234567\nevent: price:marketplacea:us\ndata: ${JSON.stringify(fixedPriceEvent())}\n\n`,
        'id: 1\nevent: price:marketplacea:us\ndata: null\n\n',
        'id: 2\nevent: price:marketplacea:us\ndata: [1]\n\n',
        'id: 3\nevent: price:marketplacea:us\ndata: 7\n\n',
        priceFrame(4),
      ),
    );
    expect(ids(await take(stream(url), 1))).toEqual([4]);
  });

  it('reports a clean end of the response as the reason to reconnect, never sooner than 10 ms a step after retry: 0', async () => {
    const { url } = await serve((c) => (c.index < 2 ? c.openAndEnd('retry: 0\n\n', priceFrame(c.index + 1)) : c.open(priceFrame(3))));
    const reconnects: { delayMs: number; error: unknown }[] = [];
    await take(stream(url, { random: () => 0.999, onReconnect: (info) => reconnects.push(info) }), 3);
    expect(String(reconnects[0]?.error)).toMatch(/the server closed the stream/);
    expect(reconnects.map((r) => r.delayMs)).toEqual([9, 9]);
  });

  it('refuses a lastEventId of more than 16 digits or with a sign', async () => {
    await expect(take(stream('http://127.0.0.1:1', { lastEventId: '12345678901234567' }), 1)).rejects.toThrow('lastEventId must be a non-negative integer, got "12345678901234567"');
    await expect(take(stream('http://127.0.0.1:1', { lastEventId: -1 }), 1)).rejects.toThrow(TypeError);
  });

  it('takes topics given as the header value as they are', async () => {
    const { url, connections } = await serve((c) => c.open(priceFrame(1)));
    await take(stream(url, { topics: 'price:marketplacea:us,price:marketplaceb:nl' }), 1);
    expect(connections[0]?.headers['topics']).toBe('price:marketplacea:us,price:marketplaceb:nl');
  });

  it('reads a Retry-After of several digits as seconds, and one with more after its digits as unreadable', async () => {
    const controller = new AbortController();
    const { url } = await serve((c) => c.refuse(503, 'service_unavailable', 'down', { 'Retry-After': ['3 s', 'x12', '12'][c.index] ?? '' }));
    const delays: number[] = [];
    let abortedAt = 0;
    const abort = () => ((abortedAt = Date.now()), controller.abort());
    await take(stream(url, { signal: controller.signal, onReconnect: ({ delayMs }) => (delays.push(delayMs), delays.length === 3 && abort()) }), 1);
    expect(delays).toEqual([0, 0, 12_000]);
    // Aborted from onReconnect, just before the 12 s wait: the stream ends at once.
    expect(Date.now() - abortedAt).toBeLessThan(500);
  });

  it('retries a refusal below 400 that fetch did not follow', async () => {
    const { url } = await serve((c) => {
      if (c.index > 0) return c.open(priceFrame(1));
      c.res.writeHead(300, { 'Content-Type': 'text/plain' });
      c.res.end('Multiple choices');
    });
    const reconnects: unknown[] = [];
    expect(ids(await take(stream(url, { onReconnect: ({ error }) => reconnects.push(error) }), 1))).toEqual([1]);
    expect(reconnects[0]).toMatchObject({ status: 300, message: 'HTTP 300: Multiple choices' });
  });

  it('retries an answer without a body as a refusal of its status', async () => {
    const { url } = await serve((c) => {
      if (c.index > 0) return c.open(priceFrame(1));
      c.res.writeHead(204);
      c.res.end();
    });
    const reconnects: unknown[] = [];
    await take(stream(url, { onReconnect: ({ error }) => reconnects.push(error) }), 1);
    expect(reconnects[0]).toMatchObject({ status: 204 });
  });

  it('quotes a refusal whose body is not JSON', async () => {
    const { url } = await serve((c) => {
      if (c.index > 0) return c.open(priceFrame(1));
      c.res.writeHead(502, { 'Content-Type': 'text/html' });
      c.res.end('<html>Bad gateway</html>');
    });
    const reconnects: unknown[] = [];
    await take(stream(url, { onReconnect: ({ error }) => reconnects.push(error) }), 1);
    expect(reconnects[0]).toMatchObject({ status: 502, code: 'service_unavailable', message: 'HTTP 502: <html>Bad gateway</html>' });
  });

  it('reconnects when a connection sends nothing at all within idleTimeoutMs', async () => {
    const { url, connections } = await serve((c) => (c.index === 0 ? c.open() : c.open(priceFrame(1))));
    expect(ids(await take(stream(url, { idleTimeoutMs: 200 }), 1))).toEqual([1]);
    expect(connections).toHaveLength(2);
  });

  it('reports the network error, not a clean end, when the connection breaks', async () => {
    const { url, connections } = await serve((c) => c.open(priceFrame(c.index + 1)));
    const reconnects: unknown[] = [];
    await take(stream(url, { onReconnect: ({ error }) => reconnects.push(error) }), 2, (seen) => {
      if (seen.length === 1) connections[0]?.res.socket?.destroy();
    });
    expect(String(reconnects[0])).not.toMatch(/the server closed the stream/);
  });

  it('decodes a character whose UTF-8 bytes are split across two chunks', async () => {
    const frame = Buffer.from(priceFrame(1, 'price:marketplacea:us', fixedPriceEvent({ size: '½' })), 'utf8');
    const cut = frame.indexOf(Buffer.from('½', 'utf8')) + 1;
    const { url } = await serve((c) => {
      c.open();
      c.res.write(frame.subarray(0, cut));
      setTimeout(() => c.res.write(frame.subarray(cut)), 20);
    });
    const [item] = await take(stream(url), 1);
    expect(item?.data).toMatchObject({ size: '½' });
  });

  it('ignores fields it does not know and a retry: that is not digits, on one connection', async () => {
    const { url, connections } = await serve((c) => {
      c.open('foo: bar\n\n', 'retry: soon\n\n');
      // Later, so a connection ended by those lines would be gone before the events.
      setTimeout(() => c.res.write(`id: 1\nevent: price:marketplacea:us\nx-trace: abc\ndata: ${JSON.stringify(fixedPriceEvent())}\n\n${priceFrame(2)}`), 50);
    });
    const reconnects: unknown[] = [];
    expect(ids(await take(stream(url, { onReconnect: ({ error }) => reconnects.push(error) }), 2))).toEqual([1, 2]);
    expect(connections).toHaveLength(1);
    expect(reconnects).toEqual([]);
  });

  it('reconnects when a frame grows past 4 MiB', async () => {
    const { url, connections } = await serve((c) => (c.index === 0 ? c.open(`data: ${'x'.repeat(4.5 * 1024 * 1024)}`) : c.open(priceFrame(1))));
    const reconnects: unknown[] = [];
    expect(ids(await take(stream(url, { onReconnect: ({ error }) => reconnects.push(error) }), 1))).toEqual([1]);
    expect(connections).toHaveLength(2);
    expect(String(reconnects[0])).toMatch(/exceeded max buffer size/);
  });

  it('rejects a lastEventId that is not a non-negative integer', async () => {
    await expect(take(stream('http://127.0.0.1:1', { lastEventId: 'abc' }), 1)).rejects.toThrow(TypeError);
  });
});

// The server's own encoder, so these tests see the bytes the real server sends, not a tidy double.
describe('priceStream on the exact stream bytes', () => {
  it('keeps one connection through heartbeats on a quiet topic, idle timeout after idle timeout', async () => {
    const { url, connections } = await serve((c) => {
      c.open(encodeRetry(2000), encodeEvent({ id: 1, event: 'price:marketplacea:us', data: JSON.stringify(fixedPriceEvent({ price: 1 })) }));
      const beat = setInterval(() => c.res.write(encodeComment('heartbeat')), 60);
      // Event 2 comes after several idle timeouts: only the heartbeats keep the connection. The
      // timeout is ten heartbeats long, so a loaded machine's stalled timers do not cut it.
      setTimeout(() => c.res.write(encodeEvent({ id: 2, event: 'price:marketplacea:us', data: JSON.stringify(fixedPriceEvent({ price: 2 })) })), 1600);
      c.res.once('close', () => clearInterval(beat));
    });
    expect(ids(await take(stream(url, { idleTimeoutMs: 600 }), 2))).toEqual([1, 2]);
    expect(connections).toHaveLength(1);
  });

  it('counts any bytes as life, even a comment whose frame never completes', async () => {
    const { url, connections } = await serve((c) => {
      c.open(priceFrame(1));
      const beat = setInterval(() => c.res.write(': still here\n'), 60);
      setTimeout(() => c.res.write(`\n${priceFrame(2)}`), 1600);
      c.res.once('close', () => clearInterval(beat));
    });
    expect(ids(await take(stream(url, { idleTimeoutMs: 600 }), 2))).toEqual([1, 2]);
    expect(connections).toHaveLength(1);
  });

  it('reads CRLF line ends cut between CR and LF across chunks as one frame', async () => {
    const frame = priceFrame(7).replaceAll('\n', '\r\n');
    const cut = frame.indexOf('\r\n', frame.indexOf('data:')) + 1;
    const { url, connections } = await serve((c) => {
      c.open(frame.slice(0, frame.indexOf('\r') + 1));
      setTimeout(() => c.res.write(frame.slice(frame.indexOf('\r') + 1, cut)), 20);
      setTimeout(() => c.res.write(frame.slice(cut)), 40);
      setTimeout(() => c.res.write(priceFrame(8)), 60);
    });
    const items = await take(stream(url), 2);
    expect(ids(items)).toEqual([7, 8]);
    expect(items[0]).toMatchObject({ type: 'price', id: 7, topic: 'price:marketplacea:us', data: fixedPriceEvent({ price: 7 }) });
    expect(connections).toHaveLength(1);
  });

  it('takes `data:` with no space, and removes only one space after the colon', async () => {
    const event = fixedPriceEvent({ sku: '  two spaces' });
    const { url } = await serve((c) =>
      c.open(`id: 3\nevent:price:marketplacea:us\ndata:${JSON.stringify(event)}\n\n`, `id: 4\nevent: price:marketplacea:us\ndata: {"source":"marketplacea",\ndata:  "market":"US"}\n\n`),
    );
    const items = await take(stream(url), 2);
    expect(items[0]).toEqual({ type: 'price', id: 3, topic: 'price:marketplacea:us', data: event });
    expect(items[1]).toEqual({ type: 'price', id: 4, topic: 'price:marketplacea:us', data: { source: 'marketplacea', market: 'US' } });
  });

  it('after a reset for an id above the newest, yields every new event even with lower ids', async () => {
    const { url } = await serve((c) => c.open(encodeReset({ requested_id: 9000, oldest_id: 11 }), priceFrame(11), priceFrame(12)));
    const items = await take(stream(url, { lastEventId: 9000 }), 3);
    expect(ids(items)).toEqual(['reset:11', 11, 12]);
  });

  it('waits out Retry-After when refused with 429 too_many_streams, and reports the refusal', async () => {
    const { url, connections } = await serve((c) =>
      c.index === 0
        ? c.refuse(429, 'too_many_streams', 'This key already has 2 open price streams, the most allowed.', { 'Retry-After': '1' })
        : c.open(priceFrame(5)),
    );
    const refusals: unknown[] = [];
    const delays: number[] = [];
    const items = await take(stream(url, { onReconnect: ({ error, delayMs }) => (refusals.push(error), delays.push(delayMs)) }), 1);
    expect(ids(items)).toEqual([5]);
    expect(refusals[0]).toBeInstanceOf(PriceStreamError);
    expect(refusals[0]).toMatchObject({ status: 429, code: 'too_many_streams', retryAfterMs: 1000 });
    expect(delays).toEqual([1000]);
    expect((connections[1]?.openedAt ?? 0) - (connections[0]?.openedAt ?? 0)).toBeGreaterThanOrEqual(990);
  });
});

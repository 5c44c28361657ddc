import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createContractAjv } from '@catalog/contract/ajv';
import { afterEach, describe, expect, it } from 'vitest';
import type { Plan } from '../../src/catalog/model.ts';
import { openapiDocument } from '@catalog/contract/documents';
import { createStreamServer } from '../../src/http/stream-server.ts';
import { KernelSendQueues } from '../../src/http/kernel-send-queue.ts';
import { createRateLimiter, type RateLimiter } from '../../src/http/rate-limit.ts';
import { REFUSALS_LOGGED_PER_WINDOW } from '../../src/http/refusal-log.ts';
import { createLogger, silentLogger, type Logger } from '../../src/logger.ts';
import { registry } from '../../src/metrics.ts';
import { RETAINED_EVENTS, type PriceLog, type StoredPriceEvent } from '../../src/prices/price-log.ts';
import { SqlitePriceLog } from '../../src/prices/sqlite/sqlite-price-log.ts';
import type { KeyStore } from '../../src/store/key-store.ts';
import { buildPriceEvent } from '@catalog/contract/testing';
import { openStream, type SseFrame, type SseStream } from './sse-client.ts';

const PRO = 'ck_pro_test_key';
const FREE = 'ck_free_test_key';
const SERVER_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function fakeKeyStore(plans: Record<string, Plan>): KeyStore {
  return {
    createKey: async () => {
      throw new Error('not used');
    },
    findPlan: async (key) => plans[key] ?? null,
  };
}

const components = (openapiDocument['components'] as { schemas: Record<string, object> }).schemas;
const validateErrorBody = createContractAjv().compile(components['ErrorBody'] as object);

interface Harness {
  url: string;
  log: PriceLog;
  file: string;
  close(): Promise<void>;
  /** Closes the stream server only, leaving clients connected until it ends their streams. */
  closeServer(): Promise<void>;
  drain(): void;
  streams: SseStream[];
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startServer(
  options: {
    heartbeatMs?: number;
    maxBufferBytes?: number;
    maxStreamsPerKey?: number;
    rateLimiter?: RateLimiter;
    logger?: Logger;
    kernelQueues?: Pick<KernelSendQueues, 'bytes'>;
    requestTimeoutMs?: number;
    keys?: KeyStore;
    /** What the stream server reads instead of the log itself (the harness's `log` stays the real one). */
    wrapLog?: (log: PriceLog) => PriceLog;
  } = {},
): Promise<Harness> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stream-server-'));
  const file = path.join(dir, 'catalog.db');
  const log = new SqlitePriceLog(file);
  const stream = createStreamServer({
    priceLog: options.wrapLog?.(log) ?? log,
    keys: options.keys ?? fakeKeyStore({ [PRO]: 'pro', [FREE]: 'free' }),
    logger: options.logger ?? (process.env['DEBUG_STREAM'] ? createLogger({ level: 'debug' }) : silentLogger),
    heartbeatMs: options.heartbeatMs ?? 15_000,
    maxBufferBytes: options.maxBufferBytes ?? 1024 * 1024,
    ...(options.maxStreamsPerKey === undefined ? {} : { maxStreamsPerKey: options.maxStreamsPerKey }),
    ...(options.rateLimiter === undefined ? {} : { rateLimiter: options.rateLimiter }),
    ...(options.kernelQueues === undefined ? {} : { kernelQueues: options.kernelQueues }),
    ...(options.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.requestTimeoutMs }),
  });
  await new Promise<void>((resolve) => stream.server.listen(0, '127.0.0.1', resolve));
  const { port } = stream.server.address() as AddressInfo;
  const streams: SseStream[] = [];
  let closed = false;
  const harness: Harness = {
    url: `http://127.0.0.1:${port}`,
    log,
    file,
    streams,
    closeServer: () => stream.close(),
    drain: () => stream.drain(),
    close: async () => {
      if (closed) return;
      closed = true;
      for (const s of streams) s.close();
      await stream.close();
      await log.close();
    },
  };
  cleanups.push(async () => {
    await harness.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return harness;
}

async function subscribe(harness: Harness, topics: string, extra: Record<string, string> = {}): Promise<SseStream> {
  const stream = await openStream(`${harness.url}/v1/stream`, { Authorization: `Bearer ${PRO}`, Topics: topics, ...extra });
  harness.streams.push(stream);
  expect(stream.status).toBe(200);
  expect(await stream.frames(1)).toEqual([{ retry: '2000', comments: [] }]);
  return stream;
}

/** A published line, exactly as a feed would write it (not re-serialised). */
function line(source: string, market: string, extra = '', sku = 'DD1391-100'): string {
  const event = buildPriceEvent({ source: source as 'marketplacea', market, sku });
  return JSON.stringify(event).replace('"price":189.99', `"price":189.90${extra}`);
}

function eventFrame(event: StoredPriceEvent): SseFrame {
  return { id: String(event.id), event: event.topic, data: event.data, comments: [] };
}

/** `log` with some of its methods replaced. */
function withOverrides(log: PriceLog, overrides: Partial<PriceLog>): PriceLog {
  return {
    append: (events) => log.append(events),
    readAfter: (afterId, limit) => log.readAfter(afterId, limit),
    latestPrices: (productId) => log.latestPrices(productId),
    bounds: () => log.bounds(),
    follow: (afterId, signal) => log.follow(afterId, signal),
    ping: () => log.ping(),
    close: () => log.close(),
    ...overrides,
  };
}

/** A series' value in this thread's registry (0 when it has none yet). */
async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  const values = (await registry.getSingleMetric(name)?.get())?.values ?? [];
  return values.find((value) => Object.entries(labels).every(([label, wanted]) => value.labels[label] === wanted))?.value ?? 0;
}

/** A logger whose lines land, parsed, in `lines`. */
function capturingLogger(level: 'debug' | 'info' | 'warn', lines: Record<string, unknown>[]): Logger {
  return createLogger({ level, write: (text) => lines.push(JSON.parse(text) as Record<string, unknown>) });
}

async function refusal(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const response = await fetch(url, init);
  // Checked first: the body of a stream opened by mistake would never end.
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await response.json()) as Record<string, unknown>;
  expect(validateErrorBody(body), JSON.stringify(validateErrorBody.errors)).toBe(true);
  expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  return { status: response.status, headers: response.headers, body };
}

describe('streamPrices', () => {
  describe('refusals', () => {
    const valid = { Authorization: `Bearer ${PRO}`, Topics: 'price:marketplacea:us' };
    it.each([
      ['no key', { Topics: valid.Topics }, 401, 'unauthorized', /Bearer/],
      ['a key without the Bearer scheme', { ...valid, Authorization: PRO }, 401, 'unauthorized', /bearer credential/],
      ['an unknown key', { ...valid, Authorization: 'Bearer nope' }, 401, 'unauthorized', /not recognised/],
      ['a free plan key', { ...valid, Authorization: `Bearer ${FREE}` }, 403, 'forbidden', /needs the pro plan; your key is on the free plan/],
      ['no Topics', { Authorization: valid.Authorization }, 400, 'invalid_topics', /missing/],
      ['empty Topics', { ...valid, Topics: ' ' }, 400, 'invalid_topics', /empty/],
      ['an uppercase topic', { ...valid, Topics: 'price:marketplacea:us, price:marketplaceA:uk' }, 400, 'invalid_topics', /"price:marketplaceA:uk".*lowercase/],
      ['an unknown source', { ...valid, Topics: 'price:shop:us' }, 400, 'invalid_topics', /"price:shop:us".*unknown source/],
      ['an unknown event type', { ...valid, Topics: 'stock:marketplacea:us' }, 400, 'invalid_topics', /unknown event type/],
      ['a bad market', { ...valid, Topics: 'price:marketplacea:usa' }, 400, 'invalid_topics', /not two lowercase letters/],
      ['a non-numeric Last-Event-ID', { ...valid, 'Last-Event-ID': 'abc' }, 400, 'invalid_request', /Last-Event-ID/],
      ['a Filter with a syntax error', { ...valid, Filter: 'price <' }, 400, 'invalid_filter', /position 7: expected a value after "<"/],
      ['a Filter naming an unknown field', { ...valid, Filter: 'colour = red' }, 400, 'invalid_filter', /unknown field "colour"/],
      ['a Filter over 8 KiB', { ...valid, Filter: `sku = "${'x'.repeat(8200)}"` }, 400, 'invalid_filter', /Filter/],
      ['a Filter with more than 1,000 values', { ...valid, Filter: `product_id IN [${Array.from({ length: 1001 }, (_, i) => i).join(',')}]` }, 400, 'invalid_filter', /more than 1000 values/],
    ])('refuses %s before any stream bytes', async (_case, headers: Record<string, string>, status, code, message) => {
      const harness = await startServer();
      const { status: got, headers: responseHeaders, body } = await refusal(`${harness.url}/v1/stream?x=1`, { headers });
      expect(got).toBe(status);
      expect(body).toMatchObject({ status: 'error', error: code, query: { x: '1' }, data: null, meta: null });
      expect(body['message']).toMatch(message);
      if (status === 401) expect(responseHeaders.get('www-authenticate')).toMatch(/^Bearer/);
    });

    it('answers 404 for another path and 405 with Allow for another method', async () => {
      const harness = await startServer();
      const notFound = await refusal(`${harness.url}/v1/streams`, { headers: { Authorization: `Bearer ${PRO}` } });
      expect([notFound.status, notFound.body['error']]).toEqual([404, 'not_found']);
      const notAllowed = await refusal(`${harness.url}/v1/stream`, { method: 'POST', headers: { Authorization: `Bearer ${PRO}` } });
      expect([notAllowed.status, notAllowed.body['error']]).toEqual([405, 'method_not_allowed']);
      expect(notAllowed.headers.get('allow')).toBe('GET, HEAD');
    });

    it('refuses a key over its stream cap with 429 too_many_streams and Retry-After, and admits it again once a stream ends', async () => {
      const harness = await startServer({ maxStreamsPerKey: 2 });
      const first = await subscribe(harness, 'price:marketplacea:us');
      await subscribe(harness, 'price:marketplaceb:nl');
      const over = await refusal(`${harness.url}/v1/stream`, { headers: valid });
      expect([over.status, over.body['error']]).toEqual([429, 'too_many_streams']);
      expect(over.body['message']).toMatch(/maximum of 2 concurrent streams/);
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // HEAD checks admission without holding a stream.
      expect((await fetch(`${harness.url}/v1/stream`, { method: 'HEAD', headers: valid })).status).toBe(200);
      first.close();
      await expect.poll(async () => {
        const response = await fetch(`${harness.url}/v1/stream`, { headers: valid });
        await response.body?.cancel();
        return response.status;
      }).toBe(200);
    });

    it('takes each stream attempt from the key quota, with RateLimit headers, and limits failed authentication per address', async () => {
      const rateLimiter = createRateLimiter({ perMinute: { free: 1, pro: 1 }, authFailuresPerMinute: 2 });
      const harness = await startServer({ rateLimiter });
      const opened = await openStream(`${harness.url}/v1/stream`, valid);
      harness.streams.push(opened);
      expect(opened.status).toBe(200);
      expect(opened.headers['ratelimit-policy']).toBe('"pro";q=1;w=60');
      expect(opened.headers['ratelimit']).toMatch(/^"pro";r=0;t=\d+$/);
      // A request refused before the quota is checked does not count.
      expect((await refusal(`${harness.url}/v1/stream`, { headers: { Authorization: valid.Authorization } })).status).toBe(400);
      const limited = await refusal(`${harness.url}/v1/stream`, { headers: valid });
      expect([limited.status, limited.body['error']]).toEqual([429, 'rate_limited']);
      expect(limited.headers.get('ratelimit')).toMatch(/^"pro";r=0;t=\d+$/);
      for (let i = 0; i < 2; i++) expect((await refusal(`${harness.url}/v1/stream`, { headers: { ...valid, Authorization: 'Bearer nope' } })).status).toBe(401);
      const flooded = await refusal(`${harness.url}/v1/stream`, { headers: { ...valid, Authorization: 'Bearer nope' } });
      expect([flooded.status, flooded.body['error']]).toEqual([429, 'rate_limited']);
      expect(Number(flooded.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    });

    it('logs refusals with their request id, sampled so that a flood writes a bounded number of lines', async () => {
      const lines: Record<string, unknown>[] = [];
      const harness = await startServer({ logger: createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }) });
      const flood = REFUSALS_LOGGED_PER_WINDOW * 3;
      for (let i = 0; i < flood; i++) await refusal(`${harness.url}/v1/stream`, { headers: { ...valid, Authorization: 'Bearer nope' } });
      const logged = lines.filter((line) => line['msg'] === 'stream request');
      expect(logged).toHaveLength(REFUSALS_LOGGED_PER_WINDOW);
      expect(logged[0]).toMatchObject({ level: 'info', status: 401, error: 'unauthorized', path: '/v1/stream' });
      expect(logged[0]!['request_id']).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('asks a subscriber to come back later, with a retry hint, while the price log is down', async () => {
      const lines: Record<string, unknown>[] = [];
      const harness = await startServer({ logger: capturingLogger('warn', lines) });
      const subscribers = await metric('catalog_stream_subscribers');
      await harness.log.close();
      const stream = await openStream(`${harness.url}/v1/stream`, valid);
      harness.streams.push(stream);
      expect(stream.status).toBe(200);
      expect(await stream.ended()).toBe('end');
      expect(stream.raw()).toBe('retry: 5000\n\n: price log unavailable; reconnect with Last-Event-ID\n\n');
      const warned = lines.find((line) => line['msg'] === 'price log unavailable; subscriber asked to retry');
      expect(warned).toMatchObject({ level: 'warn', request_id: stream.headers['x-request-id'] });
      expect(warned?.['error']).toBeDefined();
      expect(await metric('catalog_stream_subscribers')).toBe(subscribers);
    });
  });

  it('ends a live stream cleanly with a retry hint when the price log fails under it', async () => {
    const harness = await startServer();
    const stream = await openStream(`${harness.url}/v1/stream`, { Authorization: `Bearer ${PRO}`, Topics: 'price:marketplacea:us' });
    harness.streams.push(stream);
    await stream.frames(1);
    await harness.log.close();
    expect(await stream.ended()).toBe('end');
    expect(stream.raw()).toBe('retry: 2000\n\nretry: 5000\n\n');
  });

  it('answers a browser preflight without a key, and lets the browser read the request id', async () => {
    const harness = await startServer();
    const preflight = await fetch(`${harness.url}/v1/stream`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization,topics,last-event-id' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toBe('Authorization, Topics, Filter, Last-Event-ID, X-Request-Id');
    const refused = await fetch(`${harness.url}/v1/stream`, { headers: { Topics: 'price:marketplacea:us', origin: 'https://app.example.com' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    expect(refused.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
  });

  it('accepts and ignores query parameters, as some EventSource polyfills add them', async () => {
    const harness = await startServer();
    const stream = await openStream(`${harness.url}/v1/stream?lastEventId=3&_=1732500000`, { Authorization: `Bearer ${PRO}`, Topics: 'price:marketplacea:us' });
    harness.streams.push(stream);
    expect(stream.status).toBe(200);
    expect(await stream.frames(1)).toEqual([{ retry: '2000', comments: [] }]);
  });

  it('opens with the stream headers and a retry field', async () => {
    const harness = await startServer();
    const stream = await openStream(`${harness.url}/v1/stream`, { Authorization: `Bearer ${PRO}`, Topics: 'price:marketplacea:us' });
    harness.streams.push(stream);
    expect(stream.status).toBe(200);
    expect(stream.headers).toMatchObject({
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    expect(stream.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    await stream.frames(1);
    expect(stream.raw()).toBe('retry: 2000\n\n');
  });

  it('answers HEAD with the stream headers and no body', async () => {
    const harness = await startServer();
    const response = await fetch(`${harness.url}/v1/stream`, { method: 'HEAD', headers: { Authorization: `Bearer ${PRO}`, Topics: 'price:marketplacea:us' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(await response.text()).toBe('');
  });

  it('delivers only the subscribed topics, in id order, with the payload exactly as published', async () => {
    const harness = await startServer();
    const stream = await subscribe(harness, 'price:marketplacea:us , price:marketplaceb:nl');
    const published = await harness.log.append([
      line('marketplacea', 'US'),
      line('marketplacea', 'UK'),
      line('marketplaceb', 'NL', '', 'Ünïcödé-✓-日本'),
      line('marketplaceb', 'US'),
      line('marketplacea', 'US'),
    ]);
    const wanted = published.filter((event) => ['price:marketplacea:us', 'price:marketplaceb:nl'].includes(event.topic));
    expect(await stream.frames(3)).toEqual(wanted.map(eventFrame));
    expect(stream.raw()).toContain(`id: ${wanted[0]?.id}\nevent: price:marketplacea:us\ndata: ${wanted[0]?.data}\n\n`);
    expect(JSON.parse(wanted[0]?.data ?? '{}')).toHaveProperty('timestamp', '2026-11-23T14:03:07.123456789Z');
    expect(wanted[0]?.data).toContain('"price":189.90');
    expect(wanted[1]?.data).toContain('"sku":"Ünïcödé-✓-日本"');
  });

  it('starts a stream without Last-Event-ID after the newest stored event, even one the live tail has not delivered yet', async () => {
    // The live tail holds each event until `held` settles, so an event can be stored and not yet
    // delivered when a stream opens.
    let held = Promise.resolve();
    const harness = await startServer({
      wrapLog: (log) =>
        withOverrides(log, {
          follow: async function* (afterId, signal) {
            for await (const event of log.follow(afterId, signal)) {
              await held;
              yield event;
            }
          },
        }),
    });
    await subscribe(harness, 'price:marketplaceb:nl');
    const gate = Promise.withResolvers<void>();
    held = gate.promise;
    cleanups.push(async () => gate.resolve());
    await harness.log.append([line('marketplacea', 'US')]);
    const stream = await subscribe(harness, 'price:marketplacea:us');
    const live = await harness.log.append([line('marketplacea', 'US')]);
    gate.resolve();
    expect(await stream.frames(1)).toEqual(live.map(eventFrame));
  });

  it('delivers only the events its Filter matches, live and in the Last-Event-ID replay, ids skipping the others', async () => {
    const harness = await startServer();
    const event = (product_id: string, price: number) => JSON.stringify(buildPriceEvent({ product_id, price, source: 'marketplacea', market: 'US' }));
    const before = await harness.log.append([event('p1', 10), event('p2', 20), event('p1', 300), event('p1', 40)]);
    const filter = 'product_id IN ["P1", "p3"] AND price < 100';
    const stream = await subscribe(harness, 'price:marketplacea:us', { Filter: filter, 'Last-Event-ID': String((before[0]?.id ?? 1) - 1) });
    const after = await harness.log.append([event('p2', 1), event('p3', 2), event('p1', 200)]);
    expect(await stream.frames(3)).toEqual([before[0], before[3], after[1]].map((stored) => eventFrame(stored as StoredPriceEvent)));
  });

  it('resumes after a disconnect with no gap and no duplicate while events are published', async () => {
    const harness = await startServer();
    const topic = 'price:marketplacea:us';
    const first = await subscribe(harness, topic);
    const before = await harness.log.append([line('marketplacea', 'US'), line('marketplaceb', 'US'), line('marketplacea', 'US')]);
    const received = await first.frames(2);
    first.close();
    const missed = await harness.log.append([line('marketplacea', 'US'), line('marketplacea', 'UK'), line('marketplacea', 'US')]);
    const reconnecting = openStream(`${harness.url}/v1/stream`, { Authorization: `Bearer ${PRO}`, Topics: topic, 'Last-Event-ID': received.at(-1)?.id ?? '' });
    const during = await harness.log.append([line('marketplacea', 'US'), line('marketplacea', 'US')]);
    const second = await reconnecting;
    harness.streams.push(second);
    const after = await harness.log.append([line('marketplacea', 'US')]);
    const expected = [...missed, ...during, ...after].filter((event) => event.topic === topic);
    const frames = await second.frames(1 + expected.length);
    expect(frames).toEqual([{ retry: '2000', comments: [] }, ...expected.map(eventFrame)]);
    expect(received).toEqual(before.filter((event) => event.topic === topic).map(eventFrame));
  });

  it(`sends a reset first, then exactly the ${RETAINED_EVENTS} retained events, for a Last-Event-ID 6,000 back`, async () => {
    const harness = await startServer();
    const stored: StoredPriceEvent[] = [];
    for (let batch = 0; batch < 7; batch += 1) {
      stored.push(...(await harness.log.append(Array.from({ length: 1000 }, (_, i) => line(i % 2 === 0 ? 'marketplacea' : 'marketplaceb', 'US')))));
    }
    const newest = stored.at(-1)?.id ?? 0;
    const requested = newest - 6000;
    const retained = stored.slice(-RETAINED_EVENTS);
    const stream = await subscribe(harness, 'price:marketplacea:us,price:marketplaceb:us', { 'Last-Event-ID': String(requested) });
    const [reset, ...events] = await stream.frames(1 + RETAINED_EVENTS, 20_000);
    expect(reset).toEqual({ event: 'reset', data: JSON.stringify({ requested_id: requested, oldest_id: retained[0]?.id }), comments: [] });
    expect(events.map((frame) => Number(frame.id))).toEqual(retained.map((event) => event.id));
    expect(events.at(-1)).toEqual(eventFrame(stored.at(-1) as StoredPriceEvent));
  }, 60_000);

  it('sends a heartbeat comment every heartbeatMs', async () => {
    const harness = await startServer({ heartbeatMs: 40 });
    const stream = await subscribe(harness, 'price:marketplacea:us');
    expect(await stream.frames(2, 2000)).toEqual([{ comments: ['heartbeat'] }, { comments: ['heartbeat'] }]);
    expect(stream.raw()).toContain('retry: 2000\n\n: heartbeat\n');
  });

  it.each([
    ['counting what the kernel holds, cuts', true],
    ['without counting the kernel, cuts only on what it holds itself', false],
  ])('%s a subscriber that stopped reading once this side holds more than the limit for it', async (_case, counted) => {
    // The client's own receive buffer fills first (this side cannot see it); then this kernel's
    // send queue, until it refuses bytes; from then on the kernel's bytes count at each heartbeat,
    // with the socket's buffer and the queued events.
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'warn', write: (text) => lines.push(JSON.parse(text) as Record<string, unknown>) });
    const kernelQueues = counted ? new KernelSendQueues() : { bytes: () => 0 };
    const limit = 1024 * 1024;
    const harness = await startServer({ maxBufferBytes: limit, heartbeatMs: 20, kernelQueues, logger });
    const slow = await subscribe(harness, 'price:marketplacea:us');
    slow.response.pause();
    const padding = 'x'.repeat(32_000);
    const cutLine = () => lines.find((line) => line['msg'] === 'slow subscriber disconnected');
    for (let batch = 0; batch < 2_000 && cutLine() === undefined; batch += 1) {
      await harness.log.append([line('marketplacea', 'US', `,"pad":"${padding}"`)]);
      // Slower than the heartbeat fills the limit upstream, so the heartbeat's check sees it first.
      await new Promise((resolve) => setTimeout(resolve, 4));
    }
    await expect.poll(cutLine, { timeout: 2_000 }).toBeDefined();
    const cut = cutLine() as { kernel_bytes: number; buffered_bytes: number };
    if (counted) {
      // Cut before this process held the limit itself: the kernel's bytes made the difference.
      expect(cut.kernel_bytes).toBeGreaterThan(0);
      expect(cut.buffered_bytes).toBeLessThan(limit);
    } else {
      expect(cut.kernel_bytes).toBe(0);
    }
  }, 20_000);

  it('disconnects a subscriber that stops reading while the others keep receiving', async () => {
    const harness = await startServer({ maxBufferBytes: 256 * 1024 });
    const slow = await subscribe(harness, 'price:marketplacea:us');
    const fast = await subscribe(harness, 'price:marketplacea:us');
    slow.response.pause();
    const padding = 'x'.repeat(100_000);
    const count = 200;
    const published: StoredPriceEvent[] = [];
    for (let batch = 0; batch < 4; batch += 1) {
      published.push(...(await harness.log.append(Array.from({ length: count / 4 }, () => line('marketplacea', 'US', `,"pad":"${padding}"`)))));
    }
    const frames = await fast.frames(count, 20_000);
    expect(frames.map((frame) => frame.id)).toEqual(published.map((event) => String(event.id)));
    // A client that does not read cannot see the connection close; once it reads again it gets
    // what the kernel held, then the cut.
    slow.response.resume();
    const outcome = await Promise.race([slow.ended(), new Promise((resolve) => setTimeout(() => resolve('still open'), 5000))]);
    expect(outcome).toBe('aborted');
    expect(slow.raw().length).toBeLessThan(count * 100_000);
  }, 60_000);

  it('ends every stream cleanly on close so clients reconnect elsewhere', async () => {
    const harness = await startServer();
    const a = await subscribe(harness, 'price:marketplacea:us');
    const b = await subscribe(harness, 'price:marketplaceb:nl');
    await harness.closeServer();
    expect(await Promise.all([a.ended(), b.ended()])).toEqual(['end', 'end']);
    await expect(fetch(`${harness.url}/v1/stream`)).rejects.toThrow();
  });

  describe('accounting and shutdown', () => {
    const headers = { Authorization: `Bearer ${PRO}`, Topics: 'price:marketplacea:us' };

    it('counts open streams and cap refusals in /metrics, and frees one cap slot per ended stream', async () => {
      const harness = await startServer({ maxStreamsPerKey: 2 });
      const subscribers = await metric('catalog_stream_subscribers');
      const capRefusals = await metric('catalog_rate_limit_refusals_total', { limit: 'streams' });
      const first = await subscribe(harness, 'price:marketplacea:us');
      await subscribe(harness, 'price:marketplaceb:nl');
      expect(await metric('catalog_stream_subscribers')).toBe(subscribers + 2);
      first.close();
      await expect.poll(() => metric('catalog_stream_subscribers')).toBe(subscribers + 1);
      await subscribe(harness, 'price:marketplacea:us');
      const over = await refusal(`${harness.url}/v1/stream`, { headers });
      expect([over.status, over.body['error']]).toEqual([429, 'too_many_streams']);
      expect(await metric('catalog_rate_limit_refusals_total', { limit: 'streams' })).toBe(capRefusals + 1);
    });

    it('logs each opened stream at debug level with its request id, topic count and resume point', async () => {
      const lines: Record<string, unknown>[] = [];
      const harness = await startServer({ logger: capturingLogger('debug', lines) });
      const stream = await subscribe(harness, 'price:marketplacea:us,price:marketplaceb:nl', { 'Last-Event-ID': '0' });
      expect(lines.find((line) => line['msg'] === 'stream opened')).toMatchObject({ level: 'debug', request_id: stream.headers['x-request-id'], topics: 2, lastEventId: 0 });
    });

    it('answers 503 when admission takes longer than requestTimeoutMs', async () => {
      const keys: KeyStore = { createKey: async () => Promise.reject(new Error('not used')), findPlan: () => new Promise<never>(() => {}) };
      const harness = await startServer({ keys, requestTimeoutMs: 100 });
      const late = await refusal(`${harness.url}/v1/stream`, { headers });
      expect([late.status, late.body['error']]).toEqual([503, 'service_unavailable']);
      expect(late.body['message']).toMatch(/within 0\.1 s/);
    });

    it('asks every answer after drain() to close its connection, a stream opened then included', async () => {
      const harness = await startServer();
      harness.drain();
      const stream = await subscribe(harness, 'price:marketplacea:us');
      expect(stream.headers.connection).toBe('close');
    });

    it('refuses with 503 a stream asked for, or admitted, while the server closes', async () => {
      // The price log's first read is held, so the hub has not started when close() begins and
      // close() waits for it: the listener still accepts connections meanwhile.
      const entered = Promise.withResolvers<void>();
      const gate = Promise.withResolvers<void>();
      const harness = await startServer({
        wrapLog: (log) =>
          withOverrides(log, {
            bounds: async () => {
              entered.resolve();
              await gate.promise;
              return log.bounds();
            },
          }),
      });
      // Run before the harness closes, so that a failure here does not leave close() waiting on the gate.
      cleanups.push(async () => gate.resolve());
      const subscribers = await metric('catalog_stream_subscribers');
      // Its connection closes with its answer, so close() need not wait for the client to let go of it.
      const admitted = openStream(`${harness.url}/v1/stream`, { ...headers, Connection: 'close' });
      await entered.promise;
      const closed = harness.closeServer();
      for (const method of ['GET', 'HEAD']) {
        const response = await fetch(`${harness.url}/v1/stream`, { method, headers });
        expect(response.status).toBe(503);
      }
      const late = await refusal(`${harness.url}/v1/stream`, { headers });
      expect([late.status, late.body['error']]).toEqual([503, 'service_unavailable']);
      expect(late.body['message']).toBe('The stream server is shutting down; reconnect shortly.');
      gate.resolve();
      const refused = await admitted;
      expect(refused.status).toBe(503);
      await refused.ended();
      expect(JSON.parse(refused.raw())).toMatchObject({ error: 'service_unavailable' });
      await closed;
      expect(await metric('catalog_stream_subscribers')).toBe(subscribers);
    });
  });

  it('delivers events published by another process (prices publish) promptly', async () => {
    const harness = await startServer();
    const stream = await subscribe(harness, 'price:marketplacea:us,price:marketplaceb:nl');
    const child = spawn(process.execPath, ['src/cli/main.ts', 'prices', 'publish', '--price-log', `sqlite:${harness.file}`, '-'], {
      cwd: SERVER_DIR,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    // Let the child start (loading node:sqlite and the validator) before timing.
    child.stdin.write(`${line('marketplaceb', 'NL')}\n`);
    await stream.frames(1, 20_000);
    const lines: string[] = [];
    const latencies: number[] = [];
    for (let i = 0; i < 30; i += 1) {
      const text = line(i % 2 === 0 ? 'marketplacea' : 'marketplaceb', i % 2 === 0 ? 'US' : 'NL');
      lines.push(text);
      const sent = performance.now();
      child.stdin.write(`${text}\n`);
      const [frame] = await stream.frames(1, 5000);
      latencies.push(performance.now() - sent);
      expect(frame?.data).toBe(text);
    }
    child.stdin.end();
    expect(await exited, output).toBe(0);
    expect(output).toContain('published 31 price events');
    latencies.sort((x, y) => x - y);
    const at = (q: number): string => (latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN).toFixed(1);
    console.log(`cross-process publish-to-receive latency over ${latencies.length} events: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`);
  });
});

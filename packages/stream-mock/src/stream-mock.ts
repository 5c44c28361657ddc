// The price stream as the AsyncAPI document describes it, without a server, a database or a price
// log: what Prism is for the HTTP API (Prism cannot stream). Consumers point an EventSource or
// @catalog/client at it and build against the whole contract.
//
// Guarantees
// - Frames are the server's own bytes, and the Topics, Last-Event-ID, retry and retention rules
//   the server's, all from their one definition (@catalog/contract/stream): `retry: 2000` first, `id`/`event`/`data` per event, `: heartbeat` plus a blank line every
//   `heartbeatMs`, `event: reset` without an id.
// - A `Filter` narrows live events and the replay alike, by the server's own parser and predicate.
// - Events are generated from the document's priceUpdate example, one per subscribed topic every
//   `eventIntervalMs`, and each is validated against the document's PriceEvent schema before it is
//   sent (a schema the generator no longer satisfies fails loudly, not on the consumer's side).
// - Ids follow the documented rule: one strictly increasing sequence, a new log starting at its
//   creation time in ms × 1000; the newest RETAINED_EVENTS are replayed after `Last-Event-ID`,
//   an older or a higher id gets a `reset` first. loseData() (or `POST /_mock/lose-data`) drops
//   the log and starts a new one, as a Redis flush would: open streams end with `retry: 5000`, and
//   resumes get a `reset`.
// - Refusals are the documented ErrorBody answers, before any stream bytes: 401 without a key,
//   403 for a key starting with `free`, 400 `invalid_topics` / `invalid_filter` / `invalid_request`
//   (the server's own Topics, Filter and Last-Event-ID rules), 405, 404, 429 `too_many_streams` with `Retry-After` once a
//   key holds `maxStreamsPerKey` streams. Any other key is a Pro key.
// Limits: one process, in memory; no persistence across restarts (a restart is a data loss).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { createContractAjv } from '@catalog/contract/ajv';
import {
  encodeComment,
  encodeEvent,
  encodeReset,
  encodeRetry,
  HEARTBEAT_MS,
  isTopicsRefusal,
  LAST_EVENT_ID_PATTERN,
  OPENING_RETRY_MS,
  readTopics,
  RETAINED_EVENTS,
  UNAVAILABLE_RETRY_MS,
} from '@catalog/contract/stream';
import { generateSecret, sendExampleWebhooks } from './webhook-mock.ts';
import { eventFieldsOf, filterFromHeader, InvalidFilter, type EventFilter } from '@catalog/server/event-filter';

export { RETAINED_EVENTS } from '@catalog/contract/stream';
const STREAM_PATH = '/v1/stream';
/** The largest `POST /_mock/webhooks` body read. */
const WEBHOOK_REQUEST_MAX_CHARS = 16 * 1024;

export interface StreamMockOptions {
  port?: number;
  host?: string;
  heartbeatMs?: number;
  eventIntervalMs?: number;
  maxStreamsPerKey?: number;
  /** Seconds a 429 asks the client to wait. */
  retryAfterSeconds?: number;
}

export interface StreamMock {
  url: string;
  /** Appends one generated event on `topic` now; resolves with its id. */
  publish(topic: string): number;
  /** Drops the log and starts a new one, as a data loss would; open streams end with `retry:`. */
  loseData(): void;
  close(): Promise<void>;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
interface StoredEvent {
  id: number;
  topic: string;
  data: string;
}
interface OpenStream {
  key: string;
  topics: ReadonlySet<string>;
  filter: EventFilter | null;
  res: http.ServerResponse;
  lastId: number;
}

const wants = (stream: Pick<OpenStream, 'topics' | 'filter'>, event: { topic: string; data: string }): boolean =>
  stream.topics.has(event.topic) && (stream.filter === null || stream.filter.matches(eventFieldsOf(event.data)));

function loadDocument(): { example: Record<string, Json>; validate: (value: unknown) => boolean; errors: () => string } {
  const require = createRequire(import.meta.url);
  const document = JSON.parse(readFileSync(require.resolve('@catalog/specs/asyncapi.json'), 'utf8')) as {
    components: { schemas: { PriceEvent: Record<string, Json> }; messages: { priceUpdate: { examples: { payload: Record<string, Json> }[] } } };
  };
  const example = document.components.messages.priceUpdate.examples[0]?.payload;
  if (example === undefined) throw new Error('the AsyncAPI document has no priceUpdate example to generate events from');
  const ajv = createContractAjv({ allErrors: true });
  const validate = ajv.compile(document.components.schemas.PriceEvent);
  return { example, validate: (value) => validate(value), errors: () => ajv.errorsText(validate.errors) };
}

function errorBody(error: string, message: string): string {
  return JSON.stringify({ status: 'error', error, message, query: {}, data: null, meta: null });
}

export async function startStreamMock(options: StreamMockOptions = {}): Promise<StreamMock> {
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const eventIntervalMs = options.eventIntervalMs ?? 1000;
  const maxStreamsPerKey = options.maxStreamsPerKey ?? 5;
  const retryAfterSeconds = options.retryAfterSeconds ?? 5;
  const { example, validate, errors } = loadDocument();
  let log: StoredEvent[] = [];
  let counter = Date.now() * 1000;
  let sequence = 0;
  const streams = new Set<OpenStream>();

  function generate(topic: string): string {
    const [, source = 'marketplacea', market = 'us'] = topic.split(':');
    sequence += 1;
    const event = {
      ...example,
      source,
      market: market.toUpperCase(),
      price: Math.round((100 + ((sequence * 37) % 200) + (sequence % 100) / 100) * 100) / 100,
      timestamp: new Date().toISOString().replace('Z', '000000Z'),
    };
    if (!validate(event)) throw new Error(`a generated event does not match the AsyncAPI PriceEvent schema: ${errors()}`);
    return JSON.stringify(event);
  }

  function publish(topic: string): number {
    counter += 1;
    const event = { id: counter, topic, data: generate(topic) };
    log.push(event);
    if (log.length > RETAINED_EVENTS) log = log.slice(-RETAINED_EVENTS);
    const frame = encodeEvent({ id: event.id, event: topic, data: event.data });
    for (const stream of streams) {
      if (!wants(stream, event)) continue;
      stream.lastId = event.id;
      stream.res.write(frame);
    }
    return event.id;
  }

  const ticker = setInterval(() => {
    const topics = new Set<string>();
    for (const stream of streams) for (const topic of stream.topics) topics.add(topic);
    for (const topic of [...topics].sort()) publish(topic);
  }, eventIntervalMs);
  ticker.unref();

  function refuse(res: http.ServerResponse, status: number, error: string, message: string, headers: Record<string, string> = {}): void {
    res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers });
    res.end(errorBody(error, message));
  }

  function subscribe(req: http.IncomingMessage, res: http.ServerResponse): void {
    const auth = req.headers.authorization ?? '';
    const key = /^Bearer\s+(\S+)$/i.exec(auth)?.[1];
    const challenge = { 'WWW-Authenticate': 'Bearer realm="price-stream"' };
    if (key === undefined) return refuse(res, 401, 'unauthorized', 'Send your API key as Authorization: Bearer <key>.', challenge);
    if (key.startsWith('free')) return refuse(res, 403, 'forbidden', 'This operation needs the pro plan; your key is on the free plan.');
    const topics = readTopics(typeof req.headers.topics === 'string' ? req.headers.topics : undefined);
    if (isTopicsRefusal(topics)) return refuse(res, 400, 'invalid_topics', topics.message);
    let filter: EventFilter | null;
    try {
      filter = filterFromHeader(typeof req.headers.filter === 'string' ? req.headers.filter : undefined);
    } catch (error) {
      if (error instanceof InvalidFilter) return refuse(res, 400, 'invalid_filter', error.message);
      throw error;
    }
    const rawId = (typeof req.headers['last-event-id'] === 'string' ? req.headers['last-event-id'] : '').trim();
    if (rawId !== '' && !LAST_EVENT_ID_PATTERN.test(rawId)) {
      return refuse(res, 400, 'invalid_request', `Last-Event-ID must be the integer id of an event (1 to 16 digits), got "${rawId}".`);
    }
    const open = [...streams].filter((stream) => stream.key === key).length;
    if (open >= maxStreamsPerKey) {
      return refuse(res, 429, 'too_many_streams', `This key already has ${open} open price streams, the most allowed; close one or retry later.`, {
        'Retry-After': String(retryAfterSeconds),
      });
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' });
    res.write(encodeRetry(OPENING_RETRY_MS));
    const stream: OpenStream = { key, topics, filter, res, lastId: 0 };
    if (rawId !== '') {
      const requested = Number(rawId);
      const oldest = log[0]?.id ?? counter + 1;
      const newest = log.at(-1)?.id ?? 0;
      let after = requested;
      if (requested > newest) {
        res.write(encodeReset({ requested_id: requested, oldest_id: newest + 1 }));
        after = newest;
      } else if (requested < oldest - 1) {
        res.write(encodeReset({ requested_id: requested, oldest_id: oldest }));
      }
      for (const event of log) {
        if (event.id > after && wants(stream, event)) res.write(encodeEvent({ id: event.id, event: event.topic, data: event.data }));
      }
    }
    streams.add(stream);
    const heartbeat = setInterval(() => res.write(encodeComment('heartbeat')), heartbeatMs);
    res.once('close', () => {
      clearInterval(heartbeat);
      streams.delete(stream);
    });
  }

  function loseData(): void {
    log = [];
    counter = Math.max(counter + 1, Date.now() * 1000);
    for (const stream of [...streams]) {
      streams.delete(stream);
      stream.res.end(encodeRetry(UNAVAILABLE_RETRY_MS));
    }
  }

  /**
   * `POST /_mock/webhooks` with `{"url": "...", "secret": "whsec_..."}` (secret optional): the
   * contract's signed priceChanged examples sent to `url` (webhook-mock.ts); answers with the
   * secret and the receiver's statuses, 400 for a bad body, 503 when the receiver cannot be reached.
   */
  async function sendWebhooks(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of req) {
      text += String(chunk);
      if (text.length > WEBHOOK_REQUEST_MAX_CHARS) return refuse(res, 400, 'invalid_request', `The body must be at most ${WEBHOOK_REQUEST_MAX_CHARS} characters.`);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return refuse(res, 400, 'invalid_request', 'Send a JSON body: {"url": "<receiver URL>", "secret": "whsec_…" (optional)}.');
    }
    const { url, secret = generateSecret() } = (typeof body === 'object' && body !== null ? body : {}) as { url?: unknown; secret?: unknown };
    if (typeof url !== 'string' || !/^https?:$/.test(URL.parse(url)?.protocol ?? '')) {
      return refuse(res, 400, 'invalid_request', '"url" must be the receiver\'s http or https URL.');
    }
    if (typeof secret !== 'string' || !secret.startsWith('whsec_')) return refuse(res, 400, 'invalid_request', '"secret", when given, must be a whsec_ secret.');
    try {
      const deliveries = await sendExampleWebhooks(url, secret);
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(JSON.stringify({ secret, deliveries: deliveries.map((delivery) => ({ webhook_id: delivery.webhookId, status: delivery.status })) }));
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      refuse(res, 503, 'service_unavailable', `Could not deliver to ${url}: ${cause?.code ?? cause?.message ?? (error as Error).message}.`);
    }
  }

  const server = http.createServer((req, res) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Expose-Headers', 'Retry-After, X-Request-Id');
    const path = new URL(req.url ?? '/', 'http://mock.invalid').pathname;
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { 'Access-Control-Allow-Methods': 'GET', 'Access-Control-Allow-Headers': 'Authorization, Topics, Last-Event-ID', 'Access-Control-Max-Age': '600' });
      res.end();
      return;
    }
    if (path === '/_mock/lose-data' && req.method === 'POST') {
      loseData();
      res.writeHead(204).end();
      return;
    }
    if (path === '/_mock/webhooks') {
      if (req.method !== 'POST') return refuse(res, 405, 'method_not_allowed', `${req.method ?? 'This method'} is not allowed on ${path}; use POST.`, { Allow: 'POST' });
      void sendWebhooks(req, res);
      return;
    }
    if (path !== STREAM_PATH) return refuse(res, 404, 'not_found', `Nothing is served at ${path}; subscribe with GET ${STREAM_PATH}.`);
    if (req.method !== 'GET') return refuse(res, 405, 'method_not_allowed', `${req.method ?? 'This method'} is not allowed on ${STREAM_PATH}; use GET.`, { Allow: 'GET' });
    subscribe(req, res);
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;

  return {
    url: `http://${address.address}:${address.port}`,
    publish,
    loseData,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(ticker);
        for (const stream of streams) stream.res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

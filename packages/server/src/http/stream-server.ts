// The stream listener: a bare node:http server with one route, `GET /v1/stream` (HEAD too),
// turning a PriceHub subscription into server-sent events. Everything that can be refused is
// refused before the first stream byte, as the contract's ErrorBody with X-Request-Id.
//
// Guarantees and limits:
// - one follow() of the price log per server (the hub); a subscriber costs a queue and a timer;
// - a subscriber that stops reading is disconnected once more than `maxBufferBytes` are buffered
//   for it (socket buffer plus queued live events); the others never wait for it;
// - `close()` ends every stream with a clean end of the chunked body, so EventSource clients
//   reconnect (elsewhere) and resume with Last-Event-ID.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { ErrorCode } from '../catalog/errors.ts';
import { CatalogError, ServiceUnavailable } from '../catalog/errors.ts';
import type { Logger } from '../logger.ts';
import type { PriceLog, StoredPriceEvent } from '../prices/price-log.ts';
import type { KeyStore } from '../store/key-store.ts';
import { encodeComment, encodeEvent, encodeReset, encodeRetry } from '../stream/frames.ts';
import { PriceHub } from '../stream/hub.ts';
import { SubscriberOverflow, type StreamItem, type Subscription } from '../stream/subscription.ts';
import { parseTopics } from '../stream/topics.ts';

export interface StreamServerDeps {
  priceLog: PriceLog;
  keys: KeyStore;
  logger: Logger;
  heartbeatMs: number;
  maxBufferBytes: number;
}

export const STREAM_PATH = '/v1/stream';
export const RETRY_MS = 2000;
const ALLOW = 'GET, HEAD';
const LAST_EVENT_ID = /^[0-9]{1,16}$/;
/** Above this many bytes in the socket buffer the writer waits for 'drain' before taking more. */
const WRITE_HIGH_WATER = 64 * 1024;

const STATUS: Partial<Record<ErrorCode, number>> = {
  invalid_request: 400,
  invalid_topics: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  internal_error: 500,
  service_unavailable: 503,
};

class Refusal extends Error {
  readonly code: ErrorCode;
  readonly headers: Record<string, string>;
  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.code = code;
    this.headers = headers;
  }
}

export function createStreamServer(deps: StreamServerDeps): { server: http.Server; close(): Promise<void> } {
  const { priceLog, keys, logger, heartbeatMs, maxBufferBytes } = deps;
  const hub = new PriceHub(priceLog, logger, { maxQueuedBytes: maxBufferBytes });
  const open = new Map<Subscription, Promise<void>>();
  /** The encoded frame of a live event, shared by all subscribers it goes to. */
  const frames = new WeakMap<StoredPriceEvent, string>();
  let closing = false;

  const frameOf = (event: StoredPriceEvent): string => {
    let frame = frames.get(event);
    if (frame === undefined) {
      frame = encodeEvent({ id: event.id, event: event.topic, data: event.data });
      frames.set(event, frame);
    }
    return frame;
  };

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const requestId = randomUUID();
    const log = logger.child({ requestId });
    res.setHeader('X-Request-Id', requestId);
    const url = new URL(req.url ?? '/', 'http://stream.invalid');
    const query = Object.fromEntries(url.searchParams);
    try {
      const request = await admit(req, url);
      if (closing) throw new Refusal('service_unavailable', 'The stream server is shutting down; reconnect shortly.');
      if (req.method === 'HEAD') {
        await priceLog.ping();
        res.writeHead(200, streamHeaders()).end();
        return;
      }
      const controller = new AbortController();
      const subscription = await hub.subscribe({ ...request, signal: controller.signal });
      if (res.destroyed || closing) {
        subscription.end();
        if (!res.destroyed) throw new Refusal('service_unavailable', 'The stream server is shutting down; reconnect shortly.');
        return;
      }
      res.on('close', () => controller.abort());
      const done = stream(res, subscription, log);
      open.set(subscription, done);
      log.debug('stream opened', { topics: request.topics.size, lastEventId: request.lastEventId });
      await done;
      open.delete(subscription);
    } catch (error) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const refusal = toRefusal(error);
      if (refusal.code === 'internal_error') log.error('stream request failed', { error });
      sendError(res, refusal, query);
    }
  }

  /** Authorisation, Topics and Last-Event-ID, in that order; throws a Refusal. */
  async function admit(req: http.IncomingMessage, url: URL): Promise<{ topics: ReadonlySet<string>; lastEventId: number | null }> {
    if (url.pathname !== STREAM_PATH) {
      throw new Refusal('not_found', `Nothing is served at ${url.pathname}; subscribe with GET ${STREAM_PATH}.`);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw new Refusal('method_not_allowed', `${req.method ?? 'This method'} is not allowed on ${STREAM_PATH}; use GET.`, { Allow: ALLOW });
    }
    const key = apiKeyOf(req.headers.authorization);
    const challenge = { 'WWW-Authenticate': 'Bearer realm="price-stream"' };
    if (key === null) throw new Refusal('unauthorized', 'Send your API key as "Authorization: Bearer <key>".', challenge);
    const plan = await keys.findPlan(key).catch((error: unknown) => {
      throw error instanceof CatalogError ? error : new ServiceUnavailable('key store', { cause: error });
    });
    if (plan === null) throw new Refusal('unauthorized', 'The API key is not known; check it or create a new one.', challenge);
    if (plan !== 'pro') throw new Refusal('forbidden', 'The price stream needs a Pro plan key; this key is on the free plan.');
    const topics = parseTopics(headerOf(req, 'topics'));
    const rawId = headerOf(req, 'last-event-id')?.trim() ?? '';
    if (rawId !== '' && !LAST_EVENT_ID.test(rawId)) {
      throw new Refusal('invalid_request', `Last-Event-ID must be the integer id of an event (1 to 16 digits), got "${rawId}".`);
    }
    return { topics, lastEventId: rawId === '' ? null : Number(rawId) };
  }

  async function stream(res: http.ServerResponse, subscription: Subscription, log: Logger): Promise<void> {
    res.writeHead(200, streamHeaders());
    res.write(encodeRetry(RETRY_MS));
    const tooFull = (): boolean => res.writableLength + subscription.queuedBytes > maxBufferBytes;
    const heartbeat = setInterval(() => {
      res.write(encodeComment('heartbeat'));
      if (tooFull()) overflowed();
    }, heartbeatMs);
    heartbeat.unref();
    const frameOfItem = (item: StreamItem): string =>
      item.kind === 'event' ? frameOf(item.event) : encodeReset({ requested_id: item.requestedId, oldest_id: item.oldestId });
    const overflowed = (): void => {
      log.warn('slow subscriber disconnected', { bufferedBytes: res.writableLength });
      subscription.end(new SubscriberOverflow(maxBufferBytes));
      res.destroy();
    };
    try {
      // Replay (and any backlog) through the iterator, pacing on 'drain'; then live events are
      // written as the hub offers them, and a subscriber that falls too far behind is cut off.
      subscription.handOverTo((item) => {
        res.write(frameOfItem(item));
        if (tooFull()) overflowed();
      });
      for await (const item of subscription) {
        res.write(frameOfItem(item));
        if (tooFull()) throw new SubscriberOverflow(maxBufferBytes);
        if (res.writableLength > WRITE_HIGH_WATER) await drained(res, subscription);
      }
      await subscription.whenEnded;
      if (subscription.error !== null) throw subscription.error;
      res.end();
    } catch (error) {
      if (error instanceof SubscriberOverflow) {
        if (!res.destroyed) log.warn('slow subscriber disconnected', { bufferedBytes: res.writableLength });
      } else {
        log.warn('stream ended by an error', { error });
      }
      res.destroy();
    } finally {
      clearInterval(heartbeat);
    }
  }

  const server = http.createServer((req, res) => {
    void handle(req, res);
  });

  return {
    server,
    async close(): Promise<void> {
      closing = true;
      const pending = [...open.values()];
      for (const subscription of open.keys()) subscription.end();
      await hub.stop();
      await Promise.allSettled(pending);
      if (server.listening) {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
      }
    },
  };
}

function streamHeaders(): http.OutgoingHttpHeaders {
  return {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-store',
    'X-Accel-Buffering': 'no',
    Connection: 'keep-alive',
  };
}

/** `Bearer <key>` or the bare key; null when absent or blank. */
function apiKeyOf(header: string | undefined): string | null {
  if (header === undefined) return null;
  const bearer = /^Bearer\s+(.*)$/i.exec(header.trim());
  const key = (bearer?.[1] ?? header).trim();
  return key === '' ? null : key;
}

function headerOf(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Settles when the socket buffer drains, the connection closes or the subscription ends. */
function drained(res: http.ServerResponse, subscription: Subscription): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
    void subscription.whenEnded.then(done);
  });
}

function toRefusal(error: unknown): Refusal {
  if (error instanceof Refusal) return error;
  if (error instanceof CatalogError && STATUS[error.code] !== undefined) return new Refusal(error.code, error.message);
  return new Refusal('internal_error', 'The stream server failed unexpectedly; retry, and quote the X-Request-Id if it persists.');
}

function sendError(res: http.ServerResponse, refusal: Refusal, query: Record<string, string>): void {
  const body = JSON.stringify({ status: 'error', error: refusal.code, message: refusal.message, query, data: null, meta: null });
  res.writeHead(STATUS[refusal.code] ?? 500, {
    ...refusal.headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
  });
  res.end(body);
}

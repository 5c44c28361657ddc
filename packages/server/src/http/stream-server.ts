// The stream listener: a bare node:http server with one route, `GET /v1/stream` (HEAD too),
// turning a PriceHub subscription into server-sent events. Everything that can be refused is
// refused before the first stream byte, as the contract's ErrorBody with X-Request-Id.
//
// Guarantees and limits:
// - one follow() of the price log per server (the hub); a subscriber costs a queue and a timer;
// - an event's path: hub → subscription (an async iterable of batches) → batch encoder
//   (stream/batch-encoder.ts) → one writer (event-stream-writer.ts, res.write only). Live events
//   offered in one turn of the event loop reach each subscriber in one write, of bytes encoded
//   once and shared by the subscribers with the same topics;
// - a subscriber that stops reading is disconnected once more than `maxBufferBytes` are held for
//   it: queued live events and the response's buffer, checked at every write, plus what the kernel
//   holds unsent or unacknowledged (kernel-send-queue.ts), checked at every heartbeat. Bytes the
//   client's kernel has acknowledged are the client's: a client that stops reading is cut once its
//   own receive buffer is full and this side holds more than `maxBufferBytes`. The others never
//   wait for it;
// - a price log that fails under a stream ends it cleanly with a `retry:` hint
//   (stream/encoded-subscription.ts);
// - keys are checked by the API's authenticator (auth.ts), with the same failed-authentication
//   allowance per address; each attempt takes one request from the key's quota (rate-limit.ts);
// - a key holds at most `maxStreamsPerKey` open streams on this listener; more are refused with
//   429 `too_many_streams` before any stream byte;
// - `close()` ends every stream with a clean end of the chunked body, so EventSource clients
//   reconnect (elsewhere) and resume with Last-Event-ID.
import http from 'node:http';
import { ServiceUnavailable } from '../catalog/errors.ts';
import type { Logger } from '../logger.ts';
import type { PriceLog } from '../prices/price-log.ts';
import type { KeyStore } from '../store/key-store.ts';
import { BatchEncoder } from '../stream/batch-encoder.ts';
import { encodeSubscription } from '../stream/encoded-subscription.ts';
import { encodeComment, encodeRetry } from '../stream/frames.ts';
import { PriceHub } from '../stream/hub.ts';
import type { Subscription } from '../stream/subscription.ts';
import { LAST_EVENT_ID_PATTERN } from '../stream/stream-contract.ts';
import { parseTopics } from '../stream/topics.ts';
import { authorize, clientAddress, createAuthenticator } from './auth.ts';
import { answerPreflight, CORS_HEADERS } from './cors.ts';
import { HttpRefusal, toErrorResponse } from './errors.ts';
import { observeRequest, refused, streamMetrics } from '../metrics.ts';
import { writeFrames } from './event-stream-writer.ts';
import { KernelSendQueues } from './kernel-send-queue.ts';
import { applyListenerLimits, SERVER_OPTIONS, type ListenerLimits } from './listener-limits.ts';
import { createRateLimiter, NO_RATE_LIMITS, type RateLimiter } from './rate-limit.ts';
import { logAnswer } from './refusal-log.ts';
import { requestIdFor } from './request-id.ts';

export interface StreamServerDeps {
  priceLog: PriceLog;
  keys: KeyStore;
  logger: Logger;
  heartbeatMs: number;
  maxBufferBytes: number;
  /** Socket bounds of the listener (listener-limits.ts); defaults to DEFAULT_STREAM_LIMITS. */
  limits?: ListenerLimits;
  /** Quotas and failed-authentication allowances; absent means no limits. */
  rateLimiter?: RateLimiter;
  /** Open streams one key may hold on this listener; DEFAULT_MAX_STREAMS_PER_KEY when absent. */
  maxStreamsPerKey?: number;
  /** What the kernel holds per socket; reads /proc when absent. */
  kernelQueues?: Pick<KernelSendQueues, 'bytes'>;
}

export const DEFAULT_MAX_STREAMS_PER_KEY = 100;
/** Seconds a key at its stream cap is asked to wait before trying again. */
export const TOO_MANY_STREAMS_RETRY_AFTER_SECONDS = 10;

export const DEFAULT_STREAM_LIMITS: ListenerLimits = { maxConnections: 16_384, headersTimeoutMs: 15_000 };

export const STREAM_PATH = '/v1/stream';
export const RETRY_MS = 2000;
/** The reconnect delay suggested when the price log is unreachable. */
export const UNAVAILABLE_RETRY_MS = 5000;
const ALLOW = 'GET, HEAD';
const HEARTBEAT_FRAME = Buffer.from(encodeComment('heartbeat'));

export function createStreamServer(deps: StreamServerDeps): { server: http.Server; close(): Promise<void> } {
  const { priceLog, keys, logger, heartbeatMs, maxBufferBytes } = deps;
  const rateLimiter = deps.rateLimiter ?? createRateLimiter(NO_RATE_LIMITS);
  const authenticator = createAuthenticator(keys, rateLimiter);
  const maxStreamsPerKey = deps.maxStreamsPerKey ?? DEFAULT_MAX_STREAMS_PER_KEY;
  const kernelQueues = deps.kernelQueues ?? new KernelSendQueues();
  /** Open streams by key; a key leaves the map when its last stream ends. */
  const streamsByKey = new Map<string, number>();
  const hub = new PriceHub(priceLog, logger, { maxQueuedBytes: maxBufferBytes });
  const open = new Map<Subscription, Promise<void>>();
  /** Encodes each event, and each run of events a turn sends, once for all subscribers. */
  const encoder = new BatchEncoder();
  let closing = false;

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (answerPreflight(req, res)) return;
    const startedAt = performance.now();
    const requestId = requestIdFor(req.headers['x-request-id']);
    const log = logger.child({ request_id: requestId });
    res.setHeader('X-Request-Id', requestId);
    if (req.headers.origin !== undefined) for (const [name, value] of Object.entries(CORS_HEADERS)) res.setHeader(name, value);
    const url = new URL(req.url ?? '/', 'http://stream.invalid');
    const query = Object.fromEntries(url.searchParams);
    let heldBy: string | null = null;
    try {
      const request = await admit(req, url);
      if (closing) throw new HttpRefusal('service_unavailable', 'The stream server is shutting down; reconnect shortly.');
      if (req.method === 'HEAD') {
        await priceLog.ping();
        res.writeHead(200, streamHeaders(request.limitHeaders)).end();
        return;
      }
      hold(request.key);
      heldBy = request.key;
      const controller = new AbortController();
      let subscription: Subscription;
      try {
        subscription = await hub.subscribe({ topics: request.topics, lastEventId: request.lastEventId, signal: controller.signal });
      } catch (error) {
        if (!(error instanceof ServiceUnavailable)) throw error;
        // An EventSource gives up for good on a non-200 answer, but reconnects after a clean end:
        // while the price log is down, admitted subscribers are told when to come back instead,
        // so they resume with Last-Event-ID once it returns, with no operator action.
        log.warn('price log unavailable; subscriber asked to retry', { error });
        res.writeHead(200, streamHeaders(request.limitHeaders));
        res.end(encodeRetry(UNAVAILABLE_RETRY_MS) + encodeComment('price log unavailable; reconnect with Last-Event-ID'));
        return;
      }
      if (res.destroyed || closing) {
        subscription.end();
        if (!res.destroyed) throw new HttpRefusal('service_unavailable', 'The stream server is shutting down; reconnect shortly.');
        return;
      }
      res.on('close', () => controller.abort());
      const done = stream(res, subscription, log, request.limitHeaders);
      observeRequest('streamPrices', 200, (performance.now() - startedAt) / 1000);
      open.set(subscription, done);
      log.debug('stream opened', { topics: request.topics.size, lastEventId: request.lastEventId });
      await done;
      open.delete(subscription);
    } catch (error) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const response = toErrorResponse(error, query);
      if (response.unexpected) log.error('stream request failed', { error });
      logAnswer(logger, 'stream request', {
        operation: url.pathname === STREAM_PATH ? 'streamPrices' : 'other',
        method: req.method,
        path: url.pathname,
        status: response.status,
        error: response.body.error,
        ms: Math.round((performance.now() - startedAt) * 100) / 100,
        request_id: requestId,
      });
      const body = JSON.stringify(response.body);
      res.writeHead(response.status, {
        ...response.headers,
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(body),
        'Cache-Control': 'no-store',
      });
      res.end(body);
    } finally {
      if (heldBy !== null) release(heldBy);
    }
  }

  /** Counts one open stream for `key`, or throws 429 when it holds its maximum already. */
  function hold(key: string): void {
    const held = streamsByKey.get(key) ?? 0;
    if (held >= maxStreamsPerKey) {
      refused('streams');
      throw new HttpRefusal(
        'too_many_streams',
        `This key already holds its maximum of ${maxStreamsPerKey} concurrent streams; close one, or retry in ${TOO_MANY_STREAMS_RETRY_AFTER_SECONDS} seconds.`,
        { 'retry-after': String(TOO_MANY_STREAMS_RETRY_AFTER_SECONDS) },
      );
    }
    streamsByKey.set(key, held + 1);
    streamMetrics.opened();
  }

  function release(key: string): void {
    streamMetrics.closed();
    const held = (streamsByKey.get(key) ?? 1) - 1;
    if (held <= 0) streamsByKey.delete(key);
    else streamsByKey.set(key, held);
  }

  /** Authentication, the plan, Topics, Last-Event-ID and the key's quota, in that order; throws a Refusal. */
  async function admit(
    req: http.IncomingMessage,
    url: URL,
  ): Promise<{ key: string; topics: ReadonlySet<string>; lastEventId: number | null; limitHeaders: Record<string, string> | null }> {
    if (url.pathname !== STREAM_PATH) {
      throw new HttpRefusal('not_found', `Nothing is served at ${url.pathname}; subscribe with GET ${STREAM_PATH}.`);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw new HttpRefusal('method_not_allowed', `${req.method ?? 'This method'} is not allowed on ${STREAM_PATH}; use GET.`, { Allow: ALLOW });
    }
    const { key, plan } = await authenticator.authenticate(req.headers.authorization, 'bearer', clientAddress(req));
    // The plans come from the contract's operation table, as for every API operation.
    authorize('streamPrices', plan);
    const topics = parseTopics(headerOf(req, 'topics'));
    const rawId = headerOf(req, 'last-event-id')?.trim() ?? '';
    if (rawId !== '' && !LAST_EVENT_ID_PATTERN.test(rawId)) {
      throw new HttpRefusal('invalid_request', `Last-Event-ID must be the integer id of an event (1 to 16 digits), got "${rawId}".`);
    }
    const lastEventId = rawId === '' ? null : Number(rawId);
    const quota = rateLimiter.take(key, plan);
    return { key, topics, lastEventId, limitHeaders: quota === null ? null : await quota };
  }

  async function stream(res: http.ServerResponse, subscription: Subscription, log: Logger, limitHeaders: Record<string, string> | null): Promise<void> {
    res.writeHead(200, streamHeaders(limitHeaders));
    res.write(encodeRetry(RETRY_MS));
    const body = encodeSubscription(subscription, encoder, { unavailableRetryMs: UNAVAILABLE_RETRY_MS, log });
    await writeFrames(res, body, { heartbeatMs, heartbeatFrame: HEARTBEAT_FRAME, maxBufferBytes, kernelQueues, log });
  }

  const server = http.createServer(SERVER_OPTIONS, (req, res) => {
    void handle(req, res);
  });
  applyListenerLimits(server, deps.limits ?? DEFAULT_STREAM_LIMITS, logger);

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

function streamHeaders(limitHeaders: Record<string, string> | null): http.OutgoingHttpHeaders {
  return {
    ...limitHeaders,
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-store',
    'X-Accel-Buffering': 'no',
    Connection: 'keep-alive',
  };
}

function headerOf(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

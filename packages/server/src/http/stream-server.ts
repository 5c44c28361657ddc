// The stream listener: an Express application (express-shell.ts) whose one operation, `streamPrices`, is admitted by
// the same pipeline as every API operation (operation-pipeline.ts: the contract's route, credential,
// plans, parameters and headers, the key's quota, one writer), and whose handler returns the price
// stream as a StreamBody (stream/readiness.ts). Everything that can be refused is refused before the first stream byte,
// as the contract's ErrorBody with X-Request-Id.
//
// Guarantees and limits:
// - one follow() of the price log per server (the hub); a subscriber costs a queue and a timer;
// - an event's path: hub → subscription (an async iterable of batches) → batch encoder
//   (stream/batch-encoder.ts) → the one writer (exchange.ts, event-stream-writer.ts: res.write
//   only). Live events offered in one turn of the event loop reach each subscriber in one write,
//   of bytes encoded once and shared by the subscribers with the same topics that the hub wakes
//   in the same slice;
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
// - after `drain()` (the shutdown delay) every answer, a stream opened then included, says
//   `Connection: close`, so no kept-alive connection outlives the listener;
// - `close()` ends every stream with a clean end of the chunked body, so EventSource clients
//   reconnect (elsewhere) and resume with Last-Event-ID.
import http from 'node:http';
import { ServiceUnavailable } from '../catalog/errors.ts';
import type { Logger } from '../logger.ts';
import { refused, streamMetrics } from '../metrics.ts';
import type { PriceLog } from '../prices/price-log.ts';
import type { KeyStore } from '../store/key-store.ts';
import { BatchEncoder } from '../stream/batch-encoder.ts';
import { encodeSubscription } from '../stream/encoded-subscription.ts';
import { encodeComment, encodeRetry, OPENING_RETRY_MS, UNAVAILABLE_RETRY_MS } from '@catalog/contract/stream';
import type { EventFilter } from '../stream/event-filter.ts';
import { PriceHub } from '../stream/hub.ts';
import type { StreamBody } from '../stream/readiness.ts';
import type { Subscription } from '../stream/subscription.ts';
import { createAuthenticator } from './auth.ts';
import { HttpRefusal } from './errors.ts';
import { streamPrices } from './handlers/stream-prices.ts';
import { KernelSendQueues } from './kernel-send-queue.ts';
import { applyListenerLimits, type ListenerLimits } from './listener-limits.ts';
import { createOperationPipeline, DEFAULT_REQUEST_TIMEOUT_MS } from './operation-pipeline.ts';
import { createRateLimiter, NO_RATE_LIMITS, type RateLimiter } from './rate-limit.ts';
import { requestValidator } from './request-validation.ts';
import { createShell, serverOptionsFor } from './express-shell.ts';
import type { RequestHandler } from 'express';
import { defaultOf } from '../settings.ts';

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
  /** Admission (up to the stream's head) not done after this long gets 503. */
  requestTimeoutMs?: number;
  /** Express middleware run for every request of the listener, before the operation (express-shell.ts). */
  middleware?: readonly RequestHandler[];
}

export const DEFAULT_MAX_STREAMS_PER_KEY = defaultOf('max-streams-per-key');
/** Seconds a key at its stream cap is asked to wait before trying again. */
export const TOO_MANY_STREAMS_RETRY_AFTER_SECONDS = 10;

export const DEFAULT_STREAM_LIMITS: ListenerLimits = { maxConnections: defaultOf('max-stream-connections'), headersTimeoutMs: defaultOf('headers-timeout-ms') };

export const STREAM_PATH = '/v1/stream';
const OPENING = encodeRetry(OPENING_RETRY_MS);

/** What the streamPrices handler opens streams with. */
export interface PriceStreams {
  /**
   * The stream of `topics` after `lastEventId` for the holder of `key`, or throws a refusal (503
   * while shutting down, 429 when the key holds its maximum of streams). A HEAD gets an empty
   * stream once the price log answers; while the log is down a GET gets a stream that only says
   * when to come back.
   */
  open(request: { key: string; topics: ReadonlySet<string>; filter: EventFilter | null; lastEventId: number | null; head: boolean; requestId: string }): Promise<StreamBody>;
}

export function createStreamServer(deps: StreamServerDeps): { server: http.Server; drain(): void; close(): Promise<void> } {
  const { priceLog, logger } = deps;
  const rateLimiter = deps.rateLimiter ?? createRateLimiter(NO_RATE_LIMITS);
  const maxStreamsPerKey = deps.maxStreamsPerKey ?? DEFAULT_MAX_STREAMS_PER_KEY;
  /** Open streams by key; a key leaves the map when its last stream ends. */
  const streamsByKey = new Map<string, number>();
  const hub = new PriceHub(priceLog, logger, { maxQueuedBytes: deps.maxBufferBytes });
  /** Encodes each event, and each run of events a turn sends, once for all subscribers. */
  const encoder = new BatchEncoder();
  /** Open streams, until each body is finished (ended and written, or cut). */
  const open = new Set<Subscription>();
  /** Settled once `closing` and no stream is open. */
  const allClosed = Promise.withResolvers<void>();
  let closing = false;
  let draining = false;

  const shuttingDown = (): HttpRefusal => new HttpRefusal('service_unavailable', 'The stream server is shutting down; reconnect shortly.');

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

  const prices: PriceStreams = {
    async open({ key, topics, filter, lastEventId, head, requestId }) {
      if (closing) throw shuttingDown();
      if (head) {
        await priceLog.ping();
        return fixedFrames([]);
      }
      hold(key);
      let subscription;
      try {
        subscription = await hub.subscribe({ topics, lastEventId, filter });
      } catch (error) {
        release(key);
        if (!(error instanceof ServiceUnavailable)) throw error;
        // An EventSource gives up for good on a non-200 answer, but reconnects after a clean end:
        // while the price log is down, admitted subscribers are told when to come back instead,
        // so they resume with Last-Event-ID once it returns, with no operator action.
        logger.warn('price log unavailable; subscriber asked to retry', { request_id: requestId, error });
        return fixedFrames([encodeRetry(UNAVAILABLE_RETRY_MS) + encodeComment('price log unavailable; reconnect with Last-Event-ID')]);
      }
      if (closing) {
        subscription.end();
        release(key);
        throw shuttingDown();
      }
      open.add(subscription);
      logger.debug('stream opened', { request_id: requestId, topics: topics.size, lastEventId });
      return encodeSubscription(subscription, encoder, {
        opening: OPENING,
        unavailableRetryMs: UNAVAILABLE_RETRY_MS,
        log: logger,
        requestId,
        onClose: () => {
          open.delete(subscription);
          release(key);
          if (closing && open.size === 0) allClosed.resolve();
        },
      });
    },
  };

  const operations = createOperationPipeline({
    listener: 'stream',
    handlers: { streamPrices },
    services: { prices },
    authenticator: createAuthenticator(deps.keys, rateLimiter),
    rateLimiter,
    validate: requestValidator(),
    logger,
    requestTimeoutMs: deps.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    streaming: {
      heartbeatMs: deps.heartbeatMs,
      heartbeatFrame: Buffer.from(encodeComment('heartbeat')),
      maxBufferBytes: deps.maxBufferBytes,
      kernelQueues: deps.kernelQueues ?? new KernelSendQueues(),
    },
  });

  const app = createShell({
    listener: 'stream',
    logger,
    middleware: deps.middleware,
    routes: [operations],
    notFound: (path) => `Nothing is served at ${path}; subscribe with GET ${STREAM_PATH}.`,
  });
  const server = http.createServer(serverOptionsFor(app), app);
  applyListenerLimits(server, deps.limits ?? DEFAULT_STREAM_LIMITS, logger);
  server.prependListener('request', (_req, res) => {
    if (draining) res.shouldKeepAlive = false;
  });

  return {
    server,
    drain(): void {
      draining = true;
    },
    async close(): Promise<void> {
      closing = true;
      if (open.size === 0) allClosed.resolve();
      for (const subscription of [...open]) subscription.end();
      await hub.stop();
      await allClosed.promise;
      if (server.listening) {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
      }
    },
  };
}

/** A body of fixed frames. */
function fixedFrames(texts: readonly string[]): StreamBody {
  return {
    async *[Symbol.asyncIterator]() {
      yield* texts;
    },
  };
}

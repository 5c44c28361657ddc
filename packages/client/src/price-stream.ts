/*
 * The resumable price stream: one `fetch` per connection to the `streamPrices` operation, its body
 * parsed by the WHATWG server-sent-events rules (eventsource-parser: CR, LF and CRLF line ends even
 * when cut across chunks, one optional space after `field:`, comments, `retry:`).
 *
 * Guarantees: every price event is yielded at most once per iterator and in id order (ids are
 * strictly increasing, so an id at or below the last one yielded is dropped, except after a
 * `reset`, which starts the order again); after ANY disconnect, including a clean end of the
 * response, it reconnects with `Last-Event-ID` set to the last id yielded, so the server replays
 * what was missed; events the server no longer has are announced by a `reset` item instead.
 * Refusals that retrying cannot fix (400, 401, 403 and other 4xx except 408 and 429) throw a
 * `PriceStreamError` at once; anything else (network errors, 5xx, 429 such as `too_many_streams`)
 * is retried forever with exponential backoff and full jitter, starting from the server's `retry:`,
 * never sooner than a refusal's `Retry-After`, and reset by every successful connect. Any bytes
 * received (events, heartbeat comments, partial frames) count as life for `idleTimeoutMs`.
 * Aborting `signal`, or leaving the loop, cancels the request and any backoff timer; the iterator
 * then ends without an error.
 *
 * Why not the generated SSE reader: it acts only on complete frames (a heartbeat without a
 * following blank line never reached it), throws a bare `Error` on refusals, retries refusals
 * forever, stops for good on a clean close and yields only `data`. The request still follows the
 * generated operation's types (`StreamPricesData`).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { ResetFrameFields, ResetNotice } from '@catalog/contract/stream-types';
import type { PriceEvent, StreamPricesData } from '@catalog/contract/types';
import { PriceStreamError, parseBody } from './errors.js';

/** One price event: `id` is the stream's global event number, `topic` the full `price:<source>:<market>`. */
export interface PriceStreamPrice {
  type: 'price';
  id: number;
  topic: string;
  data: PriceEvent;
}

/**
 * Events after `requestedId` and before `oldestId` left the server's replay window and were not
 * delivered; replay continues at `oldestId`. `id` (`oldestId - 1`, never a delivered id) and
 * `topic` are present so that code reading `ev.id` and `ev.topic` without first checking `type`
 * still typechecks.
 */
export interface PriceStreamReset {
  type: ResetFrameFields['event'];
  /** The AsyncAPI document's `ResetNotice.requested_id`. */
  requestedId: ResetNotice['requested_id'];
  /** The AsyncAPI document's `ResetNotice.oldest_id`. */
  oldestId: ResetNotice['oldest_id'];
  id: number;
  topic: ResetFrameFields['event'];
  data?: undefined;
}

export type PriceStreamItem = PriceStreamPrice | PriceStreamReset;

export interface PriceStreamOptions {
  /** Topics `price:<source>:<market>`, e.g. `['price:marketplacea:us']`, or the comma-separated header value. */
  topics: readonly string[] | string;
  /**
   * A filter expression over the price event's fields (`product_id`, `variant_id`, `sku`, `size`,
   * `price`, `currency`, `source`, `market`), e.g. `product_id IN ["…"] AND price < 200`: only the
   * matching events of `topics` arrive, replayed and live. A bad one throws a `PriceStreamError`
   * (400 `invalid_filter`) without retrying.
   */
  filter?: string | undefined;
  /** Resume after this id (the last one you processed); the server replays the retained events after it. */
  lastEventId?: number | string | undefined;
  /** Ends the stream: the request and any pending backoff are cancelled and the loop ends without an error. */
  signal?: AbortSignal | undefined;
  /**
   * Called with an event's id once your loop asks for the next item, i.e. after it finished with
   * the event. Persist it and pass it back as `lastEventId` to resume after a restart. An event
   * whose loop body leaves the loop (break, return, throw) is not acknowledged (at-least-once).
   */
  onLastEventId?: ((id: number) => void) | undefined;
  /** Called before each reconnect with the reason and the chosen delay; for logging. */
  onReconnect?: ((info: { attempt: number; delayMs: number; error: unknown }) => void) | undefined;
  /** Upper bound of one backoff delay. Default 30 000 ms. */
  maxRetryDelayMs?: number | undefined;
  /**
   * Reconnect when nothing, not even the 15-second heartbeat, arrived for this long: a connection
   * whose peer vanished without closing it would otherwise wait forever. Default 45 000 ms.
   */
  idleTimeoutMs?: number | undefined;
  /** Jitter source in [0, 1); defaults to `Math.random`. Tests pin it. */
  random?: (() => number) | undefined;
}

export interface PriceStreamConfig {
  sseUrl: string;
  apiKey: string;
  fetch?: typeof fetch | undefined;
}

/** The path of the `streamPrices` operation, checked against the generated types. */
const STREAM_PATH: StreamPricesData['url'] = '/v1/stream';
/** Reconnect delay before the server has sent `retry:`. */
const DEFAULT_RETRY_MS = 1000;
const DEFAULT_MAX_RETRY_DELAY_MS = 30_000;
const MIN_BACKOFF_BASE_MS = 10;
/** Three missed heartbeats (the server sends one every 15 s). */
const DEFAULT_IDLE_TIMEOUT_MS = 45_000;
/** A frame larger than this ends the connection (a broken or hostile server), which is retried. */
const MAX_FRAME_CHARS = 4 * 1024 * 1024;

function isFatalStatus(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

/** `Retry-After` in seconds or as an HTTP date, in milliseconds; undefined when absent or unreadable. */
function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^[0-9]{1,9}$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function normaliseLastEventId(value: number | string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = String(value).trim();
  if (!/^[0-9]{1,16}$/.test(text)) throw new TypeError(`lastEventId must be a non-negative integer, got ${JSON.stringify(value)}`);
  return Number(text);
}

/** Resolves after `ms`, or at once when `signal` aborts; never leaves a timer behind. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function readResetNotice(data: unknown): { requestedId: number; oldestId: number } | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const notice = data as Partial<Record<keyof ResetNotice, unknown>>;
  const requestedId = notice.requested_id;
  const oldestId = notice.oldest_id;
  if (typeof requestedId !== 'number' || typeof oldestId !== 'number') return undefined;
  return { requestedId, oldestId };
}

/** Binds the stream to a server and key; the result opens one independent subscription per call. */
export function createPriceStream(config: PriceStreamConfig) {
  const url = `${config.sseUrl.replace(/\/+$/, '')}${STREAM_PATH}`;
  const baseFetch = config.fetch;

  return async function* priceStream(options: PriceStreamOptions): AsyncGenerator<PriceStreamItem, void, undefined> {
    const topics = typeof options.topics === 'string' ? options.topics : options.topics.join(', ');
    // Header values are bytes: the contract sends the filter as UTF-8, so each byte goes as one Latin-1 character.
    const filter = options.filter === undefined ? undefined : String.fromCharCode(...new TextEncoder().encode(options.filter));
    const maxDelay = options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS;
    const random = options.random ?? Math.random;
    const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    const outer = options.signal;
    let lastId = normaliseLastEventId(options.lastEventId);
    let retryMs = DEFAULT_RETRY_MS;
    let failures = 0;

    // A function, not a property read: TypeScript would keep the narrowing of `outer.aborted` across awaits.
    const aborted = () => outer?.aborted === true;
    while (!aborted()) {
      const connection = new AbortController();
      const abortConnection = () => connection.abort();
      outer?.addEventListener('abort', abortConnection, { once: true });

      let connected = false;
      let refusal: PriceStreamError | undefined;
      let streamError: unknown;
      let idleTimer: ReturnType<typeof setTimeout> | undefined;
      const armIdleTimer = () => {
        clearTimeout(idleTimer);
        idleTimer = setTimeout(() => {
          streamError = new Error(`nothing received for ${idleTimeoutMs} ms`);
          connection.abort();
        }, idleTimeoutMs);
      };
      const frames: EventSourceMessage[] = [];
      const parser = createParser({
        maxBufferSize: MAX_FRAME_CHARS,
        onEvent: (frame) => frames.push(frame),
        onRetry: (ms) => {
          retryMs = ms;
        },
        // The SSE rules ignore a field they do not know and a `retry:` that is not digits; only a
        // frame past the size limit ends the connection (and the stream resumes after it).
        onError: (error) => {
          if (error.type !== 'max-buffer-size-exceeded') return;
          streamError ??= error;
          connection.abort();
        },
      });

      const headers: Record<string, string> = { Authorization: `Bearer ${config.apiKey}`, Accept: 'text/event-stream', Topics: topics };
      if (lastId !== undefined) headers['Last-Event-ID'] = String(lastId);
      if (filter !== undefined) headers['Filter'] = filter;
      let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
      try {
        const response = await (baseFetch ?? globalThis.fetch)(url, { headers, signal: connection.signal, cache: 'no-store' });
        if (!response.ok || response.body === null) {
          const body = parseBody(await response.text());
          const requestId = response.headers.get('X-Request-Id') ?? undefined;
          refusal = new PriceStreamError({ status: response.status, body, requestId, retryAfterMs: retryAfterMs(response.headers.get('Retry-After')) });
        } else {
          connected = true;
          armIdleTimer();
          reader = response.body.getReader();
          const decoder = new TextDecoder();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            // Any bytes are life: a heartbeat, or half a frame, resets the idle clock.
            armIdleTimer();
            parser.feed(decoder.decode(value, { stream: true }));
            while (frames.length > 0) {
              const frame = frames.shift() as EventSourceMessage;
              const item = toItem(frame);
              if (item === undefined) continue;
              // The idle clock measures the server, not the consumer: it stops while the item is being handled.
              clearTimeout(idleTimer);
              if (item.type === 'reset') {
                // Ids start again after the events the server no longer has.
                lastId = item.id;
                yield item;
              } else {
                lastId = item.id;
                yield item;
                options.onLastEventId?.(item.id);
              }
              armIdleTimer();
            }
          }
        }
      } catch (error) {
        streamError ??= error;
      } finally {
        clearTimeout(idleTimer);
        outer?.removeEventListener('abort', abortConnection);
        // Leaving early (break, abort) must close the socket.
        connection.abort();
        await reader?.cancel().catch(() => {});
      }

      if (aborted()) return;
      if (refusal !== undefined && isFatalStatus(refusal.status)) throw refusal;

      if (connected) failures = 0;
      failures += 1;
      // The floor keeps `retry: 0` from turning repeated failures into a busy loop.
      const ceiling = Math.min(maxDelay, Math.max(retryMs, MIN_BACKOFF_BASE_MS) * 2 ** (failures - 1));
      const delayMs = Math.max(Math.floor(random() * ceiling), refusal?.retryAfterMs ?? 0);
      options.onReconnect?.({ attempt: failures, delayMs, error: refusal ?? streamError ?? new Error('the server closed the stream') });
      await sleep(delayMs, outer ?? new AbortController().signal);
    }

    /** The item a frame carries, or undefined for a frame to skip (a duplicate, or one the contract does not define). */
    function toItem(frame: EventSourceMessage): PriceStreamItem | undefined {
      const data = parseJson(frame.data);
      if (frame.event === 'reset') {
        const notice = readResetNotice(data);
        return notice === undefined ? undefined : { type: 'reset', ...notice, id: notice.oldestId - 1, topic: 'reset' };
      }
      const id = Number(frame.id);
      if (frame.id === undefined || !/^[0-9]{1,16}$/.test(frame.id) || typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
      if (lastId !== undefined && id <= lastId) return undefined;
      const event = data as PriceEvent;
      // The contract always names the topic in `event`; rebuild it from the payload if a frame lacks it.
      const topic = frame.event ?? `price:${event.source}:${event.market.toLowerCase()}`;
      return { type: 'price', id, topic, data: event };
    }
  };
}

/*
 * The resumable price stream, on top of the generated `streamPrices` SSE call.
 *
 * Guarantees: every price event is yielded at most once per iterator and in id order (ids are
 * strictly increasing, so an id at or below the last one yielded is dropped); after ANY disconnect,
 * including a clean end of the response, it reconnects with `Last-Event-ID` set to the last id
 * yielded, so the server replays what was missed; events older than the server's replay window are
 * announced by a `reset` item instead. Refusals that retrying cannot fix (400, 401, 403 and other
 * 4xx except 408 and 429) throw a `PriceStreamError` at once; anything else (network errors, 5xx,
 * 429) is retried forever with exponential backoff and full jitter, starting from the server's
 * `retry:` and reset by every successful connect. Aborting `signal`, or leaving the loop, cancels
 * the request and any backoff timer; the iterator then ends without an error.
 *
 * Why the generated reader is wrapped rather than used alone: it throws a bare `Error` on refusals
 * (no status, no body), retries refusals forever, stops for good on a clean close, and yields
 * only `data` without the frame's `id` and `event`. So each connection is one generated
 * `streamPrices` call with its own retry loop switched off (`sseMaxRetryAttempts: 1`); a wrapped
 * `fetch` records the status and error body, `onSseEvent` records each frame's id, event and
 * retry, and the loop here owns reconnects, backoff and `Last-Event-ID`.
 */
import { createClient } from './generated/client/index.js';
import type { StreamEvent } from './generated/core/serverSentEvents.gen.js';
import { streamPrices } from './generated/sdk.gen.js';
import type { PriceEvent } from './generated/types.gen.js';
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
  type: 'reset';
  requestedId: number;
  oldestId: number;
  id: number;
  topic: 'reset';
  data?: undefined;
}

export type PriceStreamItem = PriceStreamPrice | PriceStreamReset;

export interface PriceStreamOptions {
  /** Topics `price:<source>:<market>`, e.g. `['price:marketplacea:us']`, or the comma-separated header value. */
  topics: readonly string[] | string;
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

/** Reconnect delay before the server has sent `retry:`. */
const DEFAULT_RETRY_MS = 1000;
const DEFAULT_MAX_RETRY_DELAY_MS = 30_000;
const MIN_BACKOFF_BASE_MS = 10;
/** Three missed heartbeats (the server sends one every 15 s). */
const DEFAULT_IDLE_TIMEOUT_MS = 45_000;

function isFatalStatus(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
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

function readResetNotice(data: unknown): { requestedId: number; oldestId: number } | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const notice = data as Record<string, unknown>;
  const requestedId = notice['requested_id'];
  const oldestId = notice['oldest_id'];
  if (typeof requestedId !== 'number' || typeof oldestId !== 'number') return undefined;
  return { requestedId, oldestId };
}

/** Binds the stream to a server and key; the result opens one independent subscription per call. */
export function createPriceStream(config: PriceStreamConfig) {
  const client = createClient({ baseUrl: config.sseUrl, auth: config.apiKey });
  const baseFetch = config.fetch;

  return async function* priceStream(options: PriceStreamOptions): AsyncGenerator<PriceStreamItem, void, undefined> {
    const topics = typeof options.topics === 'string' ? options.topics : options.topics.join(', ');
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
      let frame: StreamEvent | undefined;
      let idleTimer: ReturnType<typeof setTimeout> | undefined;
      const armIdleTimer = () => {
        clearTimeout(idleTimer);
        idleTimer = setTimeout(() => {
          streamError = new Error(`nothing received for ${idleTimeoutMs} ms`);
          connection.abort();
        }, idleTimeoutMs);
      };

      const recordingFetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
        const response = await (baseFetch ?? globalThis.fetch)(input, init);
        if (response.ok) {
          connected = true;
          armIdleTimer();
        } else {
          const body = parseBody(await response.text());
          const requestId = response.headers.get('X-Request-Id') ?? undefined;
          refusal = new PriceStreamError({ status: response.status, body, requestId });
        }
        return response;
      };

      const headers: { Topics: string; 'Last-Event-ID'?: string } = { Topics: topics };
      if (lastId !== undefined) headers['Last-Event-ID'] = String(lastId);

      const { stream } = await streamPrices({
        client,
        headers,
        signal: connection.signal,
        fetch: recordingFetch,
        sseMaxRetryAttempts: 1,
        sseDefaultRetryDelay: retryMs,
        onSseEvent: (event) => {
          armIdleTimer();
          frame = event;
          if (typeof event.retry === 'number' && event.retry >= 0) retryMs = event.retry;
        },
        onSseError: (error) => {
          streamError ??= error;
        },
      });

      try {
        for await (const data of stream as AsyncGenerator<unknown>) {
          const current = frame;
          if (current === undefined) continue;
          if (current.event === 'reset') {
            const notice = readResetNotice(data);
            if (notice === undefined) continue;
            clearTimeout(idleTimer);
            yield { type: 'reset', ...notice, id: notice.oldestId - 1, topic: 'reset' };
            armIdleTimer();
            continue;
          }
          const id = Number(current.id);
          if (current.id === undefined || !Number.isSafeInteger(id) || typeof data !== 'object' || data === null) continue;
          if (lastId !== undefined && id <= lastId) continue;
          lastId = id;
          const event = data as PriceEvent;
          // The contract always names the topic in `event`; rebuild it from the payload if a frame lacks it.
          const topic = current.event ?? `price:${event.source}:${event.market.toLowerCase()}`;
          // The idle clock measures the server, not the consumer: it stops while the item is being handled.
          clearTimeout(idleTimer);
          yield { type: 'price', id, topic, data: event };
          armIdleTimer();
          options.onLastEventId?.(id);
        }
      } finally {
        clearTimeout(idleTimer);
        outer?.removeEventListener('abort', abortConnection);
        // Leaving early (break, abort) must close the socket: ending the generated reader alone only releases its lock.
        connection.abort();
        await stream.return(undefined);
      }

      if (aborted()) return;
      if (refusal !== undefined && isFatalStatus(refusal.status)) throw refusal;

      if (connected) failures = 0;
      failures += 1;
      // The floor keeps `retry: 0` from turning repeated failures into a busy loop.
      const ceiling = Math.min(maxDelay, Math.max(retryMs, MIN_BACKOFF_BASE_MS) * 2 ** (failures - 1));
      const delayMs = Math.floor(random() * ceiling);
      options.onReconnect?.({ attempt: failures, delayMs, error: refusal ?? streamError ?? new Error('the server closed the stream') });
      await sleep(delayMs, outer ?? new AbortController().signal);
    }
  };
}

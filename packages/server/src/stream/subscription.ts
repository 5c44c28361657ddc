// One subscriber's view of the price log: a replay of retained events after its Last-Event-ID,
// then the live events the hub offers, as one AsyncIterable in id order with no gap and no
// duplicate. The hub registers the subscription BEFORE the replay reads the log, so every event
// appended during the replay reaches the live queue too; the iterator drops any id it has already
// yielded, which makes the hand-over exact however replay and live overlap.
import type { PriceLog, StoredPriceEvent } from '../prices/price-log.ts';

export type StreamItem =
  | { kind: 'reset'; requestedId: number; oldestId: number }
  | { kind: 'event'; event: StoredPriceEvent };

/** Live events piled up beyond the limit while the subscriber was not taking them. */
export class SubscriberOverflow extends Error {
  constructor(limitBytes: number) {
    super(`more than ${limitBytes} bytes of events were waiting for this subscriber`);
    this.name = 'SubscriberOverflow';
  }
}

export interface SubscriptionOptions {
  topics: ReadonlySet<string>;
  /** The client's Last-Event-ID; null subscribes to live events only. */
  lastEventId: number | null;
  /** The newest id the hub had offered when the subscription was registered. */
  liveAfter: number;
  /** The log's bounds read after registration (null when empty). */
  bounds: { oldestId: number; newestId: number } | null;
  log: Pick<PriceLog, 'readAfter' | 'bounds'>;
  replayPageSize: number;
  maxQueuedBytes: number;
  onEnd: (subscription: Subscription) => void;
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

const sizeOf = (event: StoredPriceEvent): number => event.data.length + event.topic.length;

/** The iterator result for a live event; read-only, so one may be shared by every subscriber. */
export function liveResult(event: StoredPriceEvent): IteratorYieldResult<StreamItem> {
  return { done: false, value: { kind: 'event', event } };
}

export class Subscription implements AsyncIterable<StreamItem> {
  readonly topics: ReadonlySet<string>;
  readonly #options: SubscriptionOptions;
  /** Live events not yet taken; `#head` is the next one (the array is compacted as it drains). */
  #queue: StoredPriceEvent[] = [];
  #head = 0;
  #queuedBytes = 0;
  #lastYielded = 0;
  /** The replay still to be read, or null once live. */
  #replay: AsyncGenerator<StreamItem> | null = null;
  /** A consumer waiting in next() while live and the queue is empty. */
  #waiting: { resolve(result: IteratorResult<StreamItem>): void; reject(error: unknown): void } | null = null;
  /** The push-mode consumer: registered by handOverTo(), active once the iterator is done. */
  #pendingSink: ((item: StreamItem) => void) | null = null;
  #sink: ((item: StreamItem) => void) | null = null;
  #ended = false;
  #error: Error | null = null;
  #errorDelivered = false;
  #iterating = false;
  readonly #endedSignal = Promise.withResolvers<void>();

  constructor(options: SubscriptionOptions) {
    this.topics = options.topics;
    this.#options = options;
  }

  /** Bytes of live events waiting to be taken. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Settles when the subscription ends, however it ends. */
  get whenEnded(): Promise<void> {
    return this.#endedSignal.promise;
  }

  /** Why the subscription ended, when an error ended it. */
  get error(): Error | null {
    return this.#error;
  }

  /**
   * The fast path for a consumer that can take events synchronously (the SSE writer). The
   * iterator still yields the replay and any backlog; where it would next wait for a live event
   * it finishes instead (done), and from then on the hub's offer() calls `sink` directly, in id
   * order, without a promise per event, until the subscription ends (see whenEnded and error).
   */
  handOverTo(sink: (item: StreamItem) => void): void {
    this.#pendingSink = sink;
    const waiting = this.#waiting;
    if (waiting !== null) {
      this.#waiting = null;
      this.#sink = sink;
      waiting.resolve(DONE);
    }
  }

  /**
   * Called by the hub for each event on one of this subscription's topics; never waits. `result`
   * is the iterator result to hand out, which the hub builds once per event for all subscribers.
   */
  offer(event: StoredPriceEvent, result: IteratorYieldResult<StreamItem> = liveResult(event)): void {
    if (this.#ended) return;
    if (this.#sink !== null) {
      if (event.id <= this.#lastYielded) return;
      this.#lastYielded = event.id;
      try {
        this.#sink(result.value);
      } catch (error) {
        // A failing consumer ends its own subscription, never the hub's loop.
        this.end(error instanceof Error ? error : new Error(String(error)));
      }
      return;
    }
    const waiting = this.#waiting;
    if (waiting !== null && this.#replay === null) {
      // Live and the consumer is waiting: hand the event over directly (or drop a duplicate).
      if (event.id <= this.#lastYielded) return;
      this.#waiting = null;
      this.#lastYielded = event.id;
      waiting.resolve(result);
      return;
    }
    this.#queue.push(event);
    this.#queuedBytes += sizeOf(event);
    if (this.#queuedBytes > this.#options.maxQueuedBytes) this.end(new SubscriberOverflow(this.#options.maxQueuedBytes));
  }

  /** Ends the iteration: cleanly without an error, or by throwing `error` to the consumer. */
  end(error?: Error): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error ?? null;
    this.#queue = [];
    this.#head = 0;
    this.#queuedBytes = 0;
    this.#options.onEnd(this);
    this.#endedSignal.resolve();
    const waiting = this.#waiting;
    this.#waiting = null;
    if (waiting !== null) this.#finish().then(waiting.resolve, waiting.reject);
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamItem> {
    if (this.#iterating) throw new Error('a subscription can be iterated once');
    this.#iterating = true;
    const { lastEventId, liveAfter, bounds } = this.#options;
    if (lastEventId === null) {
      // Live only: from the newest event in the log, which the hub may not have offered yet.
      this.#lastYielded = Math.max(liveAfter, bounds?.newestId ?? 0);
    } else {
      this.#replay = this.#replayFrom(lastEventId);
    }
    return {
      next: () => (this.#replay !== null ? this.#nextReplayed() : this.#nextLive()),
      return: async () => {
        this.end();
        await this.#replay?.return(undefined);
        return DONE;
      },
    };
  }

  async #nextReplayed(): Promise<IteratorResult<StreamItem>> {
    const replay = this.#replay;
    if (replay === null) return this.#nextLive();
    let result: IteratorResult<StreamItem>;
    try {
      result = await replay.next();
    } catch (error) {
      this.end(error instanceof Error ? error : new Error(String(error)));
      return this.#finish();
    }
    if (this.#ended) return this.#finish();
    if (result.done !== true) return result;
    this.#replay = null;
    return this.#nextLive();
  }

  #nextLive(): Promise<IteratorResult<StreamItem>> {
    while (this.#head < this.#queue.length) {
      const event = this.#queue[this.#head] as StoredPriceEvent;
      this.#head += 1;
      this.#queuedBytes -= sizeOf(event);
      if (this.#head === this.#queue.length) {
        this.#queue = [];
        this.#head = 0;
      }
      if (event.id <= this.#lastYielded) continue;
      this.#lastYielded = event.id;
      return Promise.resolve(liveResult(event));
    }
    if (this.#ended) return this.#finish();
    if (this.#pendingSink !== null) {
      this.#sink = this.#pendingSink;
      return Promise.resolve(DONE);
    }
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  /** After the end: the error once (if any), then done. */
  #finish(): Promise<IteratorResult<StreamItem>> {
    if (this.#error !== null && !this.#errorDelivered) {
      this.#errorDelivered = true;
      return Promise.reject(this.#error);
    }
    return Promise.resolve(DONE);
  }

  /**
   * Whether events after `cursor` have been pruned. Asked only when a page skips ids: ids are
   * consecutive in practice, so this costs one bounds() read in the rare case, and an id gap
   * that is not pruning (an engine that skips ids) is not reported.
   */
  async #prunedPast(cursor: number): Promise<boolean> {
    const bounds = await this.#options.log.bounds();
    return bounds !== null && bounds.oldestId > cursor + 1;
  }

  async *#replayFrom(requestedId: number): AsyncGenerator<StreamItem> {
    const { bounds, liveAfter, topics, log, replayPageSize } = this.#options;
    let cursor: number;
    const newestId = bounds?.newestId ?? 0;
    if (requestedId > newestId) {
      // An id this log never issued: it lost its data (and is empty, or the clock went back) or
      // belongs to another deployment. Say so, then deliver every event from here on.
      yield { kind: 'reset', requestedId, oldestId: newestId + 1 };
      cursor = newestId;
    } else if (bounds === null) {
      cursor = Math.min(requestedId, liveAfter);
    } else if (requestedId < bounds.oldestId - 1) {
      yield { kind: 'reset', requestedId, oldestId: bounds.oldestId };
      cursor = bounds.oldestId - 1;
    } else {
      cursor = requestedId;
    }
    this.#lastYielded = cursor;
    for (;;) {
      if (this.#ended) return;
      const page = await log.readAfter(cursor, replayPageSize);
      const first = page[0];
      if (first !== undefined && first.id > cursor + 1 && (await this.#prunedPast(cursor))) {
        // The window moved past this replay while it was read (a slow client, a burst of
        // appends): say so, as at the start, rather than skip the pruned events in silence.
        yield { kind: 'reset', requestedId: cursor, oldestId: first.id };
      }
      for (const event of page) {
        cursor = event.id;
        if (this.#ended) return;
        if (event.id <= this.#lastYielded || !topics.has(event.topic)) continue;
        this.#lastYielded = event.id;
        yield { kind: 'event', event };
      }
      if (page.length < replayPageSize) return;
    }
  }
}

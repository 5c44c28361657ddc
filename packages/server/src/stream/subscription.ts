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
  log: Pick<PriceLog, 'readAfter'>;
  replayPageSize: number;
  maxQueuedBytes: number;
  onEnd: (subscription: Subscription) => void;
}

export class Subscription implements AsyncIterable<StreamItem> {
  readonly topics: ReadonlySet<string>;
  readonly #options: SubscriptionOptions;
  #queue: StoredPriceEvent[] = [];
  #queuedBytes = 0;
  #lastYielded = 0;
  #wake: (() => void) | null = null;
  #ended = false;
  #error: Error | null = null;
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

  /** Called by the hub for each event on one of this subscription's topics; never waits. */
  offer(event: StoredPriceEvent): void {
    if (this.#ended) return;
    this.#queue.push(event);
    this.#queuedBytes += event.data.length + event.topic.length;
    if (this.#queuedBytes > this.#options.maxQueuedBytes) {
      this.end(new SubscriberOverflow(this.#options.maxQueuedBytes));
      return;
    }
    this.#signal();
  }

  /** Ends the iteration: cleanly without an error, or by throwing `error` to the consumer. */
  end(error?: Error): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error ?? null;
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#options.onEnd(this);
    this.#endedSignal.resolve();
    this.#signal();
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamItem> {
    if (this.#iterating) throw new Error('a subscription can be iterated once');
    this.#iterating = true;
    return this.#run();
  }

  async *#run(): AsyncGenerator<StreamItem> {
    try {
      const { lastEventId, liveAfter } = this.#options;
      if (lastEventId === null) {
        this.#lastYielded = liveAfter;
      } else {
        yield* this.#replay(lastEventId);
      }
      for (;;) {
        const batch = this.#queue;
        this.#queue = [];
        this.#queuedBytes = 0;
        for (const event of batch) {
          if (this.#ended) break;
          if (event.id <= this.#lastYielded) continue;
          this.#lastYielded = event.id;
          yield { kind: 'event', event };
        }
        if (this.#ended) break;
        if (this.#queue.length === 0) await new Promise<void>((resolve) => (this.#wake = resolve));
      }
      if (this.#error !== null) throw this.#error;
    } finally {
      this.end();
    }
  }

  async *#replay(requestedId: number): AsyncGenerator<StreamItem> {
    const { bounds, liveAfter, topics, log, replayPageSize } = this.#options;
    let cursor: number;
    if (bounds === null) {
      cursor = Math.min(requestedId, liveAfter);
    } else if (requestedId > bounds.newestId) {
      // An id this log never issued (another deployment's): continue from the newest event.
      cursor = bounds.newestId;
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

  #signal(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
}

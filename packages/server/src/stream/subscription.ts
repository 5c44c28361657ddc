// One subscriber's view of the price log, pulled only: an AsyncIterable of batches. Each next()
// resolves with every item there is at that moment: a page of the replay after Last-Event-ID, or
// all the live events the hub queued since the last pull, in id order, with no gap and no
// duplicate. It waits only when there is nothing to take.
//
// Guarantees and failure modes:
// - the hub registers the subscription BEFORE the replay reads the log, so every event appended
//   during the replay reaches the live queue too; ids already yielded are dropped when the queue
//   is taken, which makes the hand-over from replay to live exact however the two overlap;
// - a Last-Event-ID older than the retained window, newer than any id the log issued, or overtaken
//   by pruning while the replay is read is answered with a `reset` item before the events that
//   follow it: nothing is skipped in silence;
// - the hub's offer() never waits: it appends to the queue (O(1)) and, when more than
//   `maxQueuedBytes` wait while the consumer is not waiting for them (it is busy, or paced by a
//   slow socket), ends the subscription with SubscriberOverflow;
// - end(error?) ends it; iterating then throws `error` once (SubscriberOverflow, or the log's
//   ServiceUnavailable when reading a replay page or following the log fails), else it is done.
//   Queued items not yet taken are dropped. `signal` is aborted at that moment.
import type { PriceLog, StoredPriceEvent } from '../prices/price-log.ts';

export type StreamItem = { kind: 'reset'; requestedId: number; oldestId: number } | EventItem;

/** An event as a stream item; the hub builds one per live event and offers it to every subscriber. */
export interface EventItem {
  readonly kind: 'event';
  readonly event: StoredPriceEvent;
}

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

const sizeOf = ({ event }: EventItem): number => event.data.length + event.topic.length;

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

export class Subscription implements AsyncIterable<readonly StreamItem[]> {
  readonly topics: ReadonlySet<string>;
  readonly #options: SubscriptionOptions;
  readonly #ended = new AbortController();
  /** The error to throw once to the consumer; null after a clean end or once thrown. */
  #error: Error | null = null;
  /** Live events offered and not yet taken, in id order. */
  #queue: EventItem[] = [];
  #queuedBytes = 0;
  /** The newest id handed out (or skipped by the replay's start): nothing at or below it again. */
  #lastId = 0;
  /** Pages still to replay; null once live; undefined until iterated. */
  #replay: AsyncGenerator<StreamItem[]> | null | undefined = undefined;
  /** Resumes a consumer waiting for live events; set while it waits. */
  #wake: (() => void) | null = null;

  constructor(options: SubscriptionOptions) {
    this.topics = options.topics;
    this.#options = options;
  }

  /** Bytes of live events waiting to be taken. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** Aborted when the subscription ends, however it ends. */
  get signal(): AbortSignal {
    return this.#ended.signal;
  }

  /**
   * Called by the hub for each event on one of this subscription's topics, in id order; never
   * waits. Returns the function that resumes a consumer waiting for live events, for the first
   * event offered while it waits (else null): the hub calls it once the current turn's events
   * are all offered, so that the consumer takes them in one batch.
   */
  offer(item: EventItem): (() => void) | null {
    if (this.#ended.signal.aborted) return null;
    this.#queue.push(item);
    this.#queuedBytes += sizeOf(item);
    // A consumer that waits takes the whole queue at the end of this turn, so the limit is for
    // events piling up while it does not (a turn offers a bounded slice, see hub.ts).
    if (this.#wake !== null) return this.#queue.length === 1 ? this.#wake : null;
    if (this.#queuedBytes > this.#options.maxQueuedBytes) this.end(new SubscriberOverflow(this.#options.maxQueuedBytes));
    return null;
  }

  /** Ends the iteration: cleanly without an error, or by throwing `error` to the consumer once. */
  end(error?: Error): void {
    if (this.#ended.signal.aborted) return;
    this.#error = error ?? null;
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#options.onEnd(this);
    this.#ended.abort();
    this.#wake?.();
  }

  [Symbol.asyncIterator](): AsyncIterator<readonly StreamItem[]> {
    if (this.#replay !== undefined) throw new Error('a subscription can be iterated once');
    const { lastEventId, liveAfter, bounds } = this.#options;
    if (lastEventId === null) {
      // Live only: from the newest event in the log, which the hub may not have offered yet.
      this.#lastId = Math.max(liveAfter, bounds?.newestId ?? 0);
      this.#replay = null;
    } else {
      this.#replay = this.#replayFrom(lastEventId);
    }
    return {
      next: () => this.#next(),
      return: async () => {
        this.end();
        await this.#replay?.return(undefined);
        return DONE;
      },
    };
  }

  #next(): Promise<IteratorResult<readonly StreamItem[]>> {
    return this.#replay != null ? this.#nextReplayed() : this.#nextLive();
  }

  async #nextReplayed(): Promise<IteratorResult<readonly StreamItem[]>> {
    for (;;) {
      const replay = this.#replay;
      if (this.#ended.signal.aborted) return this.#finished();
      if (replay == null) return this.#nextLive();
      let page: IteratorResult<StreamItem[]>;
      try {
        page = await replay.next();
      } catch (error) {
        this.end(asError(error));
        continue;
      }
      if (page.done === true) this.#replay = null;
      else if (page.value.length > 0 && !this.#ended.signal.aborted) return { done: false, value: page.value };
    }
  }

  /**
   * Live: what is queued, or a promise that the wake settles directly with the batch. Written
   * without an async function: a subscriber waits like this between every two turns with events,
   * and a wait that holds only one promise and one closure keeps what survives a garbage
   * collection small.
   */
  #nextLive(): Promise<IteratorResult<readonly StreamItem[]>> {
    const live = this.#takeQueue();
    if (live.length > 0) return Promise.resolve({ done: false, value: live });
    if (this.#ended.signal.aborted) return this.#finished();
    return new Promise((resolve, reject) => {
      const wake = (): void => {
        if (this.#wake !== wake) return;
        this.#wake = null;
        const batch = this.#takeQueue();
        if (batch.length > 0) resolve({ done: false, value: batch });
        else if (this.#ended.signal.aborted) this.#finished().then(resolve, reject);
        else this.#wake = wake;
      };
      this.#wake = wake;
    });
  }

  /**
   * The queued live events not yet handed out: the replay may have yielded the first ones, and
   * only those, as ids only grow. The queue itself is the batch (no copy) in the common case.
   */
  #takeQueue(): readonly EventItem[] {
    const queue = this.#queue;
    if (queue.length === 0) return queue;
    this.#queue = [];
    this.#queuedBytes = 0;
    let start = 0;
    while (start < queue.length && (queue[start] as EventItem).event.id <= this.#lastId) start += 1;
    this.#lastId = Math.max(this.#lastId, (queue.at(-1) as EventItem).event.id);
    return start === 0 ? queue : queue.slice(start);
  }

  /** After the end: the error once (if any), then done. */
  #finished(): Promise<IteratorResult<readonly StreamItem[]>> {
    const error = this.#error;
    if (error === null) return Promise.resolve(DONE);
    this.#error = null;
    return Promise.reject(error);
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

  /** The replay, one batch per page read (a `reset` goes in front of the events it precedes). */
  async *#replayFrom(requestedId: number): AsyncGenerator<StreamItem[]> {
    const { bounds, liveAfter, topics, log, replayPageSize } = this.#options;
    let cursor: number;
    let batch: StreamItem[] = [];
    const newestId = bounds?.newestId ?? 0;
    if (requestedId > newestId) {
      // An id this log never issued: it lost its data (and is empty, or the clock went back) or
      // belongs to another deployment. Say so, then deliver every event from here on.
      batch.push({ kind: 'reset', requestedId, oldestId: newestId + 1 });
      cursor = newestId;
    } else if (bounds === null) {
      cursor = Math.min(requestedId, liveAfter);
    } else if (requestedId < bounds.oldestId - 1) {
      batch.push({ kind: 'reset', requestedId, oldestId: bounds.oldestId });
      cursor = bounds.oldestId - 1;
    } else {
      cursor = requestedId;
    }
    this.#lastId = cursor;
    for (;;) {
      if (this.#ended.signal.aborted) return;
      const page = await log.readAfter(cursor, replayPageSize);
      const first = page[0];
      if (first !== undefined && first.id > cursor + 1 && (await this.#prunedPast(cursor))) {
        // The window moved past this replay while it was read (a slow client, a burst of
        // appends): say so, as at the start, rather than skip the pruned events in silence.
        batch.push({ kind: 'reset', requestedId: cursor, oldestId: first.id });
      }
      for (const event of page) {
        cursor = event.id;
        if (event.id <= this.#lastId || !topics.has(event.topic)) continue;
        this.#lastId = event.id;
        batch.push({ kind: 'event', event });
      }
      if (this.#ended.signal.aborted) return;
      yield batch;
      batch = [];
      if (page.length < replayPageSize) return;
    }
  }
}

// One subscriber's view of the price log, pulled only: an AsyncIterable of batches. Each next()
// resolves with every item there is at that moment: a page of the replay after Last-Event-ID, or
// all the live events the hub queued since the last pull, in id order, with no gap and no
// duplicate. It waits only when there is nothing to take. Its readiness (pending bytes, end
// signal, whenReadable) and map() are the readiness protocol's (stream/readiness.ts).
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
import { resumePoint, type PriceLog, type StoredPriceEvent } from '../prices/price-log.ts';
import { Batch, READINESS, type BatchMapping, type BatchSource, type Readiness } from './readiness.ts';

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
  /** The subscriber's Filter for the replay (the hub applies it to live events); absent: all. */
  accepts?: (event: StoredPriceEvent) => boolean;
  replayPageSize: number;
  maxQueuedBytes: number;
  onEnd: (subscription: Subscription) => void;
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

const NOTHING: readonly EventItem[] = [];

const AS_IS: BatchMapping<StreamItem, readonly StreamItem[]> = { batch: (items) => items };

const sizeOf = ({ event }: EventItem): number => event.data.length + event.topic.length;

const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

export class Subscription implements BatchSource<StreamItem>, Readiness {
  readonly topics: ReadonlySet<string>;
  readonly #options: SubscriptionOptions;
  readonly #ended = new AbortController();
  /**
   * Whether the subscription ended: `#ended.signal.aborted`, kept in a field of this object, which
   * every offer, wake and take reads (not two more objects per delivery, see bench/README.md).
   */
  #isEnded = false;
  /** The error to throw once to the consumer; null after a clean end or once thrown. */
  #error: Error | null = null;
  /**
   * Live events offered and not yet taken, in id order: the first `#queued` entries. The array
   * keeps its room from one take to the next rather than being replaced per take (why: see
   * bench/README.md, "The stream's memory").
   */
  readonly #queue: (EventItem | undefined)[] = [];
  #queued = 0;
  #queuedBytes = 0;
  /** The newest id handed out (or skipped by the replay's start): nothing at or below it again. */
  #lastId = 0;
  /** Pages still to replay; null once live; undefined until iterated. */
  #replay: AsyncGenerator<StreamItem[]> | null | undefined = undefined;
  /** Told once when a next() would settle at once (see whenReadable). */
  #readable: (() => void) | null = null;
  /** How to resume a consumer whose next() waits for live events; null when none waits. */
  #resolveWait: ((result: IteratorResult<unknown>) => void) | null = null;
  #rejectWait: ((error: Error) => void) | null = null;
  #mapping: BatchMapping<StreamItem, unknown> = AS_IS;
  readonly #onEnd: (subscription: Subscription) => void;

  constructor(options: SubscriptionOptions) {
    this.topics = options.topics;
    this.#options = options;
    this.#onEnd = options.onEnd;
  }

  get [READINESS](): Readiness {
    return this;
  }

  /** Readiness: bytes of live events waiting to be taken. */
  get pendingBytes(): number {
    return this.#queuedBytes;
  }

  /** Readiness: aborted when the subscription ends, however it ends. */
  get signal(): AbortSignal {
    return this.#ended.signal;
  }

  /**
   * Called by the hub for each event on one of this subscription's topics, in id order; never
   * waits. Returns true for the first event offered while a consumer waits for live events: the
   * hub then calls wake() once the current turn's events are all offered, so that the consumer
   * takes them in one batch.
   */
  offer(item: EventItem): boolean {
    if (this.#isEnded) return false;
    this.#queue[this.#queued++] = item;
    this.#queuedBytes += sizeOf(item);
    // A consumer that waits takes the whole queue when the hub wakes it (within a few turns, see
    // hub.ts), so the limit is for events piling up while it does not wait.
    if (this.#resolveWait !== null || this.#readable !== null) return this.#queued === 1;
    if (this.#queuedBytes > this.#options.maxQueuedBytes) this.end(new SubscriberOverflow(this.#options.maxQueuedBytes));
    return false;
  }

  /** Ends the iteration: cleanly without an error, or by throwing `error` to the consumer once. */
  end(error?: Error): void {
    if (this.#isEnded) return;
    this.#error = error ?? null;
    this.#queue.fill(undefined, 0, this.#queued);
    this.#queued = 0;
    this.#queuedBytes = 0;
    this.#onEnd(this);
    this.#isEnded = true;
    this.#ended.abort();
    this.wake();
  }

  [Symbol.asyncIterator](): AsyncIterator<readonly StreamItem[]> {
    return this.map(AS_IS);
  }

  /**
   * Readiness: true when a next() would settle without waiting for live events (some are queued,
   * a replay is under way, or the subscription ended); otherwise false, and `listener` is called
   * once, when the hub wakes it for the events that make it so, or at the end. Not for a
   * consumer with a next() pending.
   */
  whenReadable(listener: () => void): boolean {
    if (this.#queued > 0 || this.#replay !== null || this.#isEnded) return true;
    this.#readable = listener;
    return false;
  }

  /**
   * Readiness: next()'s result taken at once when it would settle at once on live events (some
   * are queued, or the subscription ended); null before iteration, during a replay, or when
   * nothing is queued. Throws what next() would reject with.
   */
  take(): IteratorResult<unknown> | null {
    if (this.#replay !== null) return null;
    const live = this.#takeQueue();
    return live.length > 0 || this.#isEnded ? this.#resultFor(live) : null;
  }

  /**
   * Iterates the batches through `mapping`: next() yields `mapping.batch(items)` for each batch,
   * and, when the subscription ended with an error, `mapping.failed(error)` instead of rejecting
   * (a mapping without `failed`, or whose `failed` throws, rejects). A consumer that turns each
   * batch into something else (the bytes of its frames) does so here, without a second promise
   * per batch. The subscription can be iterated once, through this or [Symbol.asyncIterator];
   * the iterator is the subscription itself (its next() and return()), so that iterating it
   * allocates nothing that lives as long as the stream.
   */
  map<T>(mapping: BatchMapping<StreamItem, T>): AsyncIterator<T> {
    if (this.#replay !== undefined) throw new Error('a subscription can be iterated once');
    const { lastEventId, liveAfter, bounds } = this.#options;
    if (lastEventId === null) {
      // Live only: from the newest event in the log, which the hub may not have offered yet.
      this.#lastId = Math.max(liveAfter, bounds?.newestId ?? 0);
      this.#replay = null;
    } else {
      this.#replay = this.#replayFrom(lastEventId);
    }
    this.#mapping = mapping as BatchMapping<StreamItem, unknown>;
    return this as AsyncIterator<T>;
  }

  /** The iterator's next(): the next batch through the mapping (AS_IS if not iterated yet). */
  next(): Promise<IteratorResult<unknown>> {
    if (this.#replay === undefined) this.map(AS_IS);
    return this.#replay != null ? this.#nextReplayed() : this.#nextLive();
  }

  /** The iterator's return(): ends the subscription and its replay. */
  async return(): Promise<IteratorResult<unknown>> {
    this.end();
    await this.#replay?.return(undefined);
    return DONE;
  }

  async #nextReplayed(): Promise<IteratorResult<unknown>> {
    for (;;) {
      const replay = this.#replay;
      // After the end: the error once (if any, through the mapping's `failed`), then done.
      if (this.#isEnded) return this.#settledWith(NOTHING);
      if (replay == null) return this.#nextLive();
      let page: IteratorResult<StreamItem[]>;
      try {
        page = await replay.next();
      } catch (error) {
        this.end(asError(error));
        continue;
      }
      if (page.done === true) this.#replay = null;
      else if (page.value.length > 0 && !this.#isEnded) return new Batch(this.#mapping.batch(page.value));
    }
  }

  /**
   * Live: what is queued, or a promise that the wake settles directly with the mapped batch.
   * The stream's writer does not wait here: it waits with whenReadable, and pulls only what
   * settles at once.
   */
  #nextLive(): Promise<IteratorResult<unknown>> {
    const live = this.#takeQueue();
    if (live.length > 0 || this.#isEnded) return this.#settledWith(live);
    return new Promise((resolve, reject) => {
      this.#resolveWait = resolve;
      this.#rejectWait = reject;
    });
  }

  /**
   * Resumes the waiting consumer with what is queued, or with the end; a no-op when none waits.
   * The hub calls it after offer() returned true.
   */
  wake(): void {
    const readable = this.#readable;
    if (readable !== null) {
      if (this.#queued === 0 && !this.#isEnded) return;
      this.#readable = null;
      // Called from the hub's wake loop: a listener that throws ends this subscription only.
      try {
        readable();
      } catch (error) {
        this.end(asError(error));
      }
      return;
    }
    const resolve = this.#resolveWait;
    const reject = this.#rejectWait as (error: Error) => void;
    if (resolve === null) return;
    const batch = this.#takeQueue();
    if (batch.length === 0 && !this.#isEnded) return;
    this.#resolveWait = null;
    this.#rejectWait = null;
    try {
      resolve(this.#resultFor(batch));
    } catch (error) {
      reject(asError(error));
    }
  }

  /**
   * next()'s result for a batch taken from the queue: the mapped batch, or once the queue is
   * empty and the subscription ended, the end: the error once, if any, then done. Throws what next() rejects with.
   */
  #resultFor(batch: readonly StreamItem[]): IteratorResult<unknown> {
    if (batch.length > 0) return new Batch(this.#mapping.batch(batch));
    const error = this.#error;
    if (error === null) {
      this.#mapping.done?.();
      return DONE;
    }
    this.#error = null;
    const mapping = this.#mapping;
    if (mapping.failed === undefined) throw error;
    return mapping.failed(error);
  }

  /**
   * The queued live events not yet handed out, as a new array: the replay may have yielded the
   * first ones, and only those, as ids only grow.
   */
  #takeQueue(): readonly EventItem[] {
    const count = this.#queued;
    if (count === 0) return NOTHING;
    const queue = this.#queue;
    this.#queued = 0;
    this.#queuedBytes = 0;
    let start = 0;
    while (start < count && (queue[start] as EventItem).event.id <= this.#lastId) start += 1;
    this.#lastId = Math.max(this.#lastId, (queue[count - 1] as EventItem).event.id);
    const batch = queue.slice(start, count) as EventItem[];
    queue.fill(undefined, 0, count);
    return batch;
  }

  /** #resultFor(batch) as next()'s promise: resolved with the result, or rejected with what it throws. */
  #settledWith(batch: readonly StreamItem[]): Promise<IteratorResult<unknown>> {
    try {
      return Promise.resolve(this.#resultFor(batch));
    } catch (error) {
      return Promise.reject(asError(error));
    }
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
    const { bounds, liveAfter, topics, log, replayPageSize, accepts } = this.#options;
    let batch: StreamItem[] = [];
    // An id this log never issued (it lost its data, the clock went back, another deployment's)
    // or one older than the retained window: say so, then deliver every event from there on.
    const resumed = resumePoint(requestedId, bounds);
    if (resumed.resetOldestId !== null) batch.push({ kind: 'reset', requestedId, oldestId: resumed.resetOldestId });
    let cursor = bounds === null && resumed.resetOldestId === null ? Math.min(requestedId, liveAfter) : resumed.cursor;
    this.#lastId = cursor;
    for (;;) {
      if (this.#isEnded) return;
      const page = await log.readAfter(cursor, replayPageSize);
      const first = page[0];
      if (first !== undefined && first.id > cursor + 1 && (await this.#prunedPast(cursor))) {
        // The window moved past this replay while it was read (a slow client, a burst of
        // appends): say so, as at the start, rather than skip the pruned events in silence. Right
        // after the opening reset (a log, empty at subscribe, that restarted its ids above the
        // resume point since), that reset moves its oldest id instead: one reset per loss.
        const last = batch.at(-1);
        if (last?.kind === 'reset') batch[batch.length - 1] = { ...last, oldestId: first.id };
        else batch.push({ kind: 'reset', requestedId: cursor, oldestId: first.id });
      }
      for (const event of page) {
        cursor = event.id;
        if (event.id <= this.#lastId || !topics.has(event.topic) || (accepts !== undefined && !accepts(event))) continue;
        this.#lastId = event.id;
        batch.push({ kind: 'event', event });
      }
      if (this.#isEnded) return;
      yield batch;
      batch = [];
      if (page.length < replayPageSize) return;
    }
  }
}

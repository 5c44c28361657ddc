// The in-process fan-out: ONE follow() of the price log per process feeds every subscription,
// filtered by topic. Offering an event to a subscription only appends to its queue (O(1), never
// waits), so a slow subscriber never delays the others; a subscription whose queue exceeds
// `maxQueuedBytes` is ended with SubscriberOverflow. Consumers waiting for live events are woken
// once the events of the current turn of the event loop are all offered, a slice of them per
// turn (see #wakeAll), so each takes them as one batch, and the subscribers of a slice with the
// same topics take the same run of events. When the log fails, every subscription ends with
// ServiceUnavailable (clients reconnect and resume) and the next subscribe starts over.
// A log that lost its data (Redis flushed or restarted empty) starts its ids above every earlier
// id (see price-log.ts), so the next event jumps past the retained window: the hub ends every
// subscription the same way, and each resume point, now below the log's oldest id, is answered
// with a `reset` before the new events: one per subscriber per loss, also when the follow gave up
// before the loss showed (see #start). Nothing is skipped in silence.
// Subscribers with a `Filter` are kept apart (filtered-subscribers.ts): those narrowed to ids are
// found by the event's ids, not by evaluating each filter; their replay applies the same filter.
import { AsyncLocalStorage } from 'node:async_hooks';
import { streamMetrics } from '../metrics.ts';
import { ServiceUnavailable } from '../catalog/errors.ts';
import type { Logger } from '../logger.ts';
import { RETAINED_EVENTS, type PriceLog } from '../prices/price-log.ts';
import { eventFieldsOf, type EventFilter } from './event-filter.ts';
import { FilteredSubscribers } from './filtered-subscribers.ts';
import { Subscription, type EventItem, type SubscriptionOptions } from './subscription.ts';

const YIELD_EVERY_BYTES = 64 * 1024;

const WAKE_SLICE = 500;

/** The log no longer holds the events after the last one the hub offered. */
class PriceLogLost extends Error {
  constructor(lastSeenId: number, oldestId: number) {
    super(`the price log lost the events after ${lastSeenId}; its oldest id is now ${oldestId}`);
    this.name = 'PriceLogLost';
  }
}

export interface PriceHubOptions {
  replayPageSize?: number;
  maxQueuedBytes?: number;
}

export class PriceHub {
  readonly #log: PriceLog;
  readonly #logger: Logger;
  readonly #replayPageSize: number;
  readonly #maxQueuedBytes: number;
  readonly #subscriptions = new Set<Subscription>();
  /**
   * The subscriptions without a filter, by topic: an event is offered to those of its topic only,
   * so that its cost follows its own subscribers, not every subscriber of every topic. A
   * subscription is in the set of each of its topics; an event has one topic.
   */
  readonly #unfiltered = new Map<string, Set<Subscription>>();
  readonly #filtered = new FilteredSubscribers<Subscription>();
  /** The id of the newest event offered to subscribers. */
  #lastSeenId = 0;
  #started: Promise<void> | null = null;
  /**
   * Runs a function in the async context the hub was made in (start-up), not in the subscriber's
   * that happens to start the follow: the follow outlives every request, and must not carry one's
   * context (its trace, when tracing is on) for the life of the process.
   */
  readonly #inOwnContext = AsyncLocalStorage.snapshot();
  /** Every subscription's onEnd: one function for all of them. */
  readonly #forget = (subscription: Subscription): void => {
    this.#subscriptions.delete(subscription);
    for (const topic of subscription.topics) {
      const subscribers = this.#unfiltered.get(topic);
      if (subscribers?.delete(subscription) === true && subscribers.size === 0) this.#unfiltered.delete(topic);
    }
    this.#filtered.delete(subscription);
  };
  readonly #offerItem = (subscription: Subscription): void => {
    // Woken in the check phase of this turn of the event loop, after its I/O: every event
    // read so far is queued by then, and a log that delivers events one by one (Redis)
    // gets those that arrived meanwhile into the same batch.
    if (!subscription.offer(this.#item as EventItem)) return;
    this.#toWake[this.#toWakeCount++] = subscription;
    if (!this.#wakeScheduled) {
      this.#wakeScheduled = true;
      setImmediate(this.#wakeAll);
    }
  };
  /** The item being offered (#offerItem is one function for every event, not a closure per event). */
  #item: EventItem | null = null;
  #controller: AbortController | null = null;
  #stopped = false;
  /**
   * Consumers to resume once the events of this turn are all offered. They are resumed
   * WAKE_SLICE at a time, a slice per turn of the event loop (setImmediate), so one round of
   * events reaches the last of N consumers N / WAKE_SLICE turns after the first (why:
   * bench/README.md, "The stream's memory"). Offers append to `#toWake`; a run resumes `#waking`
   * from `#wakeFrom`, and takes over what was appended meanwhile once it is through. Both arrays
   * keep their room from run to run.
   */
  #toWake: (Subscription | undefined)[] = [];
  #toWakeCount = 0;
  #waking: (Subscription | undefined)[] = [];
  #wakingCount = 0;
  #wakeFrom = 0;
  #wakeScheduled = false;
  readonly #wakeAll = (): void => {
    if (this.#wakeFrom === this.#wakingCount) {
      const appended = this.#toWake;
      this.#toWake = this.#waking;
      this.#waking = appended;
      this.#wakingCount = this.#toWakeCount;
      this.#toWakeCount = 0;
      this.#wakeFrom = 0;
    }
    const waking = this.#waking;
    const end = Math.min(this.#wakingCount, this.#wakeFrom + WAKE_SLICE);
    for (let at = this.#wakeFrom; at < end; at += 1) {
      const subscription = waking[at] as Subscription;
      waking[at] = undefined;
      subscription.wake();
    }
    this.#wakeFrom = end;
    if (end < this.#wakingCount || this.#toWakeCount > 0) {
      setImmediate(this.#wakeAll);
      return;
    }
    this.#wakeFrom = 0;
    this.#wakingCount = 0;
    this.#wakeScheduled = false;
  };

  constructor(log: PriceLog, logger: Logger, options: PriceHubOptions = {}) {
    this.#log = log;
    this.#logger = logger;
    this.#replayPageSize = options.replayPageSize ?? 500;
    this.#maxQueuedBytes = options.maxQueuedBytes ?? 1024 * 1024;
  }

  get subscriberCount(): number {
    return this.#subscriptions.size;
  }

  /**
   * Opens a subscription. Throws ServiceUnavailable when the log cannot answer, before the
   * caller has sent anything. `signal` ends the subscription.
   */
  async subscribe(request: { topics: ReadonlySet<string>; lastEventId: number | null; filter?: EventFilter | null; signal?: AbortSignal }): Promise<Subscription> {
    if (this.#stopped) throw new ServiceUnavailable('price stream');
    await this.#ensureStarted();
    const liveAfter = this.#lastSeenId;
    const options: SubscriptionOptions = {
      topics: request.topics,
      lastEventId: request.lastEventId,
      liveAfter,
      bounds: null,
      log: this.#log,
      replayPageSize: this.#replayPageSize,
      maxQueuedBytes: this.#maxQueuedBytes,
      onEnd: this.#forget,
    };
    const filter = request.filter ?? null;
    if (filter !== null) options.accepts = (event) => filter.matches(eventFieldsOf(event.data));
    const subscription = new Subscription(options);
    // Registered before the log is read, so nothing appended from here on can be missed.
    this.#subscriptions.add(subscription);
    if (filter === null) {
      for (const topic of request.topics) {
        let subscribers = this.#unfiltered.get(topic);
        if (subscribers === undefined) this.#unfiltered.set(topic, (subscribers = new Set()));
        subscribers.add(subscription);
      }
    }
    else this.#filtered.add(subscription, filter);
    try {
      // The subscription reads its bounds from `options` only once iterated, i.e. after this.
      options.bounds = await this.#log.bounds();
    } catch (error) {
      subscription.end();
      throw error instanceof ServiceUnavailable ? error : new ServiceUnavailable('price log', { cause: error });
    }
    const { signal } = request;
    if (signal !== undefined) {
      if (signal.aborted) subscription.end();
      else signal.addEventListener('abort', () => subscription.end(), { once: true });
    }
    return subscription;
  }

  /** Stops following the log and ends every subscription cleanly. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#controller?.abort();
    for (const subscription of [...this.#subscriptions]) subscription.end();
    await this.#started?.catch(() => {});
  }

  /**
   * Asked only when ids jump by more than the retained window, which pruning cannot explain (a
   * replay that the window overtakes is told by its own `reset`): throws, after moving the hub
   * past the gap, when the events after the last one offered are gone from the log.
   */
  async #checkNotLost(nextId: number): Promise<void> {
    const bounds = await this.#log.bounds();
    if (bounds === null || bounds.oldestId <= this.#lastSeenId + 1) return;
    const lastSeenId = this.#lastSeenId;
    this.#lastSeenId = Math.min(nextId, bounds.oldestId) - 1;
    throw new PriceLogLost(lastSeenId, bounds.oldestId);
  }

  #ensureStarted(): Promise<void> {
    this.#started ??= this.#inOwnContext(() => this.#start()).catch((error: unknown) => {
      this.#started = null;
      throw error instanceof ServiceUnavailable ? error : new ServiceUnavailable('price log', { cause: error });
    });
    return this.#started;
  }

  async #start(): Promise<void> {
    const bounds = await this.#log.bounds();
    const lost = bounds === null || bounds.oldestId > this.#lastSeenId + 1 || bounds.newestId < this.#lastSeenId;
    if (this.#lastSeenId === 0 || lost) {
      // A restart after the log lost the events after the last one offered (Redis restarted empty
      // while the follow had given up): every subscription opened from here replays from its own
      // resume point and gets its own `reset`, so live delivery starts at the log's newest event
      // rather than at a jump that would end those streams, and send a second reset, again.
      this.#lastSeenId = bounds?.newestId ?? 0;
    }
    const controller = new AbortController();
    this.#controller = controller;
    void this.#follow(controller.signal);
  }

  async #follow(signal: AbortSignal): Promise<void> {
    let failure: unknown = null;
    try {
      let offeredBytes = 0;
      for await (const event of this.#log.follow(this.#lastSeenId, signal)) {
        if (event.id > this.#lastSeenId + RETAINED_EVENTS && this.#lastSeenId > 0) await this.#checkNotLost(event.id);
        this.#lastSeenId = event.id;
        streamMetrics.read(event.data);
        this.#item = { kind: 'event', event };
        const unfiltered = this.#unfiltered.get(event.topic);
        if (unfiltered !== undefined) for (const subscription of unfiltered) this.#offerItem(subscription);
        this.#filtered.forEachMatch(event, this.#offerItem);
        // A burst is offered in slices with I/O in between, so sockets drain and readers keep up
        // instead of every queue filling at once.
        offeredBytes += event.data.length;
        if (offeredBytes >= YIELD_EVERY_BYTES) {
          offeredBytes = 0;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    } catch (error) {
      failure = error;
    }
    if (signal.aborted) return;
    this.#logger.error('price log follow stopped; ending all streams', { error: failure });
    this.#started = null;
    for (const subscription of [...this.#subscriptions]) subscription.end(new ServiceUnavailable('price log'));
  }
}

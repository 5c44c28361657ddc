// A subscription as the stream operation's response body: the `retry:` field first, then each
// item's frame, built once per event and shared by every subscriber it goes to. When the price log
// fails under a subscriber the body ends cleanly with a `retry:` hint, so EventSource clients come
// back later and resume with Last-Event-ID; an overflow (SubscriberOverflow) is thrown to the
// writer, which cuts the connection. Returning the iterator, iterated or not, ends the
// subscription and runs `onClose` once.
import { ServiceUnavailable } from '../catalog/errors.ts';
import type { Logger } from '../logger.ts';
import { streamMetrics } from '../metrics.ts';
import type { StoredPriceEvent } from '../prices/price-log.ts';
import type { FrameStream } from './frame-stream.ts';
import { encodeEvent, encodeReset, encodeRetry } from './frames.ts';
import type { StreamItem, Subscription } from './subscription.ts';

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/** The encoded frame of a live event, shared by all subscribers it goes to. */
const frames = new WeakMap<StoredPriceEvent, string>();

function frameOf(item: StreamItem): string {
  if (item.kind === 'reset') return encodeReset({ requested_id: item.requestedId, oldest_id: item.oldestId });
  let frame = frames.get(item.event);
  if (frame === undefined) {
    frame = encodeEvent({ id: item.event.id, event: item.event.topic, data: item.event.data });
    frames.set(item.event, frame);
  }
  return frame;
}

/** A body of fixed frames. */
export function framesOf(texts: readonly string[]): FrameStream {
  return {
    pendingBytes: 0,
    async *[Symbol.asyncIterator]() {
      yield* texts;
    },
  };
}

export interface SubscriptionFramesOptions {
  retryMs: number;
  unavailableRetryMs: number;
  log: Logger;
  onClose: () => void;
}

export class SubscriptionFrames implements FrameStream {
  readonly #subscription: Subscription;
  readonly #options: SubscriptionFramesOptions;
  readonly #closed = Promise.withResolvers<void>();
  #isClosed = false;

  constructor(subscription: Subscription, options: SubscriptionFramesOptions) {
    this.#subscription = subscription;
    this.#options = options;
  }

  get pendingBytes(): number {
    return this.#subscription.queuedBytes;
  }

  /** Settles once the body is closed (its iterator returned, or ended and drained). */
  get closed(): Promise<void> {
    return this.#closed.promise;
  }

  /** Ends the subscription: the body finishes cleanly after what it already holds. */
  end(): void {
    this.#subscription.end();
  }

  [Symbol.asyncIterator](): AsyncIterator<string> {
    const items = this.#subscription[Symbol.asyncIterator]();
    let state: 'retry' | 'items' | 'done' = 'retry';
    return {
      next: async () => {
        if (state === 'retry') {
          state = 'items';
          return { done: false, value: encodeRetry(this.#options.retryMs) };
        }
        if (state === 'done') return DONE;
        try {
          const next = await items.next();
          if (next.done === true) {
            this.#close();
            return DONE;
          }
          streamMetrics.delivered();
          return { done: false, value: frameOf(next.value) };
        } catch (error) {
          this.#close();
          state = 'done';
          if (!(error instanceof ServiceUnavailable)) throw error;
          // The price log went away mid-stream: end cleanly with a hint, so clients come back later.
          this.#options.log.warn('price log unavailable; stream ended with a retry hint', { error });
          return { done: false, value: encodeRetry(this.#options.unavailableRetryMs) };
        }
      },
      return: async () => {
        state = 'done';
        this.#close();
        return DONE;
      },
    };
  }

  #close(): void {
    if (this.#isClosed) return;
    this.#isClosed = true;
    this.#subscription.end();
    this.#options.onClose();
    this.#closed.resolve();
  }
}
